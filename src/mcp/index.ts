// leash/mcp: MCP stdio servers that die with their client. The only part of leash that touches
// @modelcontextprotocol/sdk (an optional peer dependency); leash's core never imports this file.
export {
  OwnedStdioClientTransport,
  DEFAULT_EOF_GRACE_MS,
  DEFAULT_TERM_GRACE_MS,
  type OwnedStdioServerParameters,
} from './owned-stdio-transport.js';
