// The demo's "server": a long-lived process that starts the kinds of helpers real servers
// leave behind. It is started through an `sh -c` wrapper, as launchers like npx do.
import { spawn } from 'node:child_process';

const helpers: Array<[string, string[]]> = [
  // An ordinary helper.
  ['sleep', ['1000']],
  // A helper that ignores SIGTERM: only SIGKILL ends it.
  ['sh', ['-c', "trap '' TERM; exec sleep 1001"]],
  // A helper that leaves the group and the session: no group signal can reach it.
  ['setsid', ['sleep', '1002']],
];
for (const [command, args] of helpers) spawn(command, args, { stdio: 'ignore' });
setInterval(() => {}, 1 << 30);
