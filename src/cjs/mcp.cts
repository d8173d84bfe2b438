// CommonJS entry of 'proc-leash/mcp': the same module instance `import` gets.
import type * as Mcp from '../mcp/index.js' with { 'resolution-mode': 'import' };
import { requireEsm } from './load.cjs';

const mcp: typeof Mcp = requireEsm(() => require('../mcp/index.js') as typeof Mcp, 'proc-leash/mcp');
// The types of the ES entry, for CommonJS code.
declare namespace mcp {
  export type OwnedStdioServerParameters = Mcp.OwnedStdioServerParameters;
  export type OwnedStdioClientTransport = Mcp.OwnedStdioClientTransport;
}
export = mcp;
