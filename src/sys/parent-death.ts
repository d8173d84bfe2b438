// The kernel's word that a process's parent is ending, without native code. PR_SET_PDEATHSIG
// fires when the *thread* that started a process exits. A SIGKILLed owner's main thread exits at
// once, while the owner as a whole still has its other threads and its memory to tear down (a
// Node owner: 5-60 ms here, more under load) before its descriptors close and the supervisor's
// pipe reaches EOF. util-linux's `setpriv --pdeathsig SIG -- CMD` sets the signal and execs CMD,
// so a supervisor started through it hears of the death that much sooner. Which signal is the
// caller's to say (the supervisor's protocol names it).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { readRegularFileBounded } from './bounded-read.js';

/** A setpriv binary is tens of KB; busybox, which may provide one, a few MB. */
const LAUNCHER_MAX_BYTES = 8 * 1024 * 1024;

const found = new Map<string, readonly string[] | undefined>();

/**
 * The words that start a command with `signal` armed as its parent-death signal
 * (`setpriv --pdeathsig SIGNAL --`),
 * or undefined: not Linux, no setpriv on PATH (nor in /usr/bin, /bin), or one too old to know
 * --pdeathsig (util-linux before 2.33; busybox's). The option is looked for in the binary's text
 * rather than by running it, which would cost a process start on the owner's first spawn.
 */
export function parentDeathLauncher(path: string | undefined, signal: NodeJS.Signals): readonly string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  const key = `${signal}:${path ?? ''}`;
  if (found.has(key)) return found.get(key);
  let launcher: readonly string[] | undefined;
  const folders = [...(path ?? '').split(delimiter).filter((folder) => folder.startsWith('/')), '/usr/bin', '/bin'];
  for (const folder of new Set(folders)) {
    const candidate = join(folder, 'setpriv');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const binary = readRegularFileBounded(candidate, LAUNCHER_MAX_BYTES);
    // Run by its absolute path: any setpriv that knows the option will do, the first on PATH or not.
    if (binary.ok && binary.text.includes('pdeathsig')) {
      launcher = [candidate, '--pdeathsig', signal, '--'];
      break;
    }
  }
  found.set(key, launcher);
  return launcher;
}
