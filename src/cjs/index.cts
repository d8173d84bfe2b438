// CommonJS entry of 'proc-leash': the same module instance `import` gets.
import type * as Core from '../index.js';
import { requireEsm } from './load.cjs';

const core: typeof Core = requireEsm(() => require('../index.js') as typeof Core, 'proc-leash');
export = core;
