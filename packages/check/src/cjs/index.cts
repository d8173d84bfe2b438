// CommonJS entry of 'proc-leash-check': the same module instance `import` gets.
import type * as Check from '../index.js' with { 'resolution-mode': 'import' };
import { requireEsm } from './load.cjs';

const check: typeof Check = requireEsm(() => require('../index.js') as typeof Check, 'proc-leash-check');
// The types of the ES entry, for CommonJS code.
declare namespace check {
  export type Finding = Check.Finding;
  export type Language = Check.Language;
  export type About = Check.About;
}
export = check;
