// The demo's owner, the stand-in for an agent harness or MCP client: it starts the server tree,
// either through leash (argv[2] === 'leash') or with plain child_process.spawn, then idles
// until the demo SIGKILLs it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnOwned } from '../src/index.js';

const server = fileURLToPath(new URL('./server.js', import.meta.url));
const wrapper = `"${process.execPath}" "${server}"; exit $?`;
const child =
  process.argv[2] === 'leash'
    ? spawnOwned('sh', ['-c', wrapper], { stdio: 'ignore' })
    : spawn('sh', ['-c', wrapper], { stdio: 'ignore' });
process.stdout.write(`${child.pid}\n`);
setInterval(() => {}, 1 << 30);
