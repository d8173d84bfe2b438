// The death supervisor's import path for its diagnostics writer; the one implementation lives in
// safe-output.ts (output that can never end or stall the process).
export { openStderrWriter, type StderrWriter } from './safe-output.js';
