// The server side of the MCP tests: the real `@modelcontextprotocol/server-everything` from npm,
// started the way MCP configs start servers, through a chain of wrappers:
// sh -c  ->  launcher.mjs (a plain, non-detached child, like npx)  ->  node <server>.
import { existsSync } from 'node:fs';
import type { Readable, Stream } from 'node:stream';
import { FIXTURES, REPO_ROOT } from '../helpers/processes.js';

export const SERVER_ENTRY = `${REPO_ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const LAUNCHER = `${FIXTURES}mcp/launcher.mjs`;
export const CLIENT_FIXTURE = 'mcp/client.mjs';

export interface ServerCommand {
  command: string;
  args: string[];
}

/** `sh -c` that stays in the chain (the `; exit` keeps dash from exec-ing the launcher). */
export function wrappedServer(): ServerCommand {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`missing dev dependency: ${SERVER_ENTRY} (run npm ci)`);
  return {
    command: 'sh',
    args: ['-c', '"$@"; exit $?', 'sh', process.execPath, LAUNCHER, SERVER_ENTRY, 'stdio'],
  };
}

/** The pids the launcher reports on the server's stderr ("leash-test-tree {...}"). */
export class TreeReport {
  launcher: number | undefined;
  server: number | undefined;
  text = '';

  constructor(stderr: Stream | null) {
    if (!stderr) throw new Error('the transport has no stderr stream (use stderr: "pipe")');
    const stream = stderr as Readable;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      for (const line of chunk.split('\n')) {
        if (!line.startsWith('leash-test-tree ')) continue;
        const tree = JSON.parse(line.slice('leash-test-tree '.length)) as { launcher: number; server: number };
        this.launcher = tree.launcher;
        this.server = tree.server;
      }
    });
  }
}
