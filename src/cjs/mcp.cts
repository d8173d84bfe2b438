// CommonJS entry of 'proc-leash/mcp': the same module instance `import` gets.
import type * as Mcp from '../mcp/index.js';
import { requireEsm } from './load.cjs';

const mcp: typeof Mcp = requireEsm(() => require('../mcp/index.js') as typeof Mcp, 'proc-leash/mcp');
export = mcp;
