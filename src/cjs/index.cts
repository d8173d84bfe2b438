// CommonJS entry of 'proc-leash': the same module instance `import` gets.
import type * as Core from '../index.js' with { 'resolution-mode': 'import' };
import { requireEsm } from './load.cjs';

const core: typeof Core = requireEsm(() => require('../index.js') as typeof Core, 'proc-leash');
// The types of the ES entry, for `import type { TerminateResult } from 'proc-leash'` in CommonJS code.
declare namespace core {
  export type TerminateOptions = Core.TerminateOptions;
  export type TerminateResult = Core.TerminateResult;
  export type ExecCallback = Core.ExecCallback;
  export type OwnedExecFileOptions = Core.OwnedExecFileOptions;
  export type OwnedExecOptions = Core.OwnedExecOptions;
}
export = core;
