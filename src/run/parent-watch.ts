// --die-with-parent, the parent's side. PR_SET_PDEATHSIG wakes leash at once, but fires when the
// *thread* that forked it exits (and again at each reparenting), so it only prompts a getppid()
// check; a check once a second covers a lost signal.
import { getParentPid, nativeLoaded, setParentDeathSignal } from '../sys/native.js';
import { processIsEnding } from '../sys/procfs.js';
import { signalNumber } from '../sys/verified-signal.js';
import { PARENT_DEATH_PROMPT } from './signals.js';

const PARENT_CHECK_MS = 1000;

export class ParentWatch {
  /** Read at leash's start (process.ppid is getppid() at each read): a parent that died since must still show. */
  private readonly original = process.ppid;
  private timer: NodeJS.Timeout | undefined;
  private readonly onPrompt = () => this.check(true);

  constructor(private readonly onGone: () => void) {}

  /** Arms the kernel's signal and the periodic check; false when the parent is already gone (the fork race). */
  arm(): boolean {
    process.on(PARENT_DEATH_PROMPT, this.onPrompt);
    if (nativeLoaded()) setParentDeathSignal(signalNumber(PARENT_DEATH_PROMPT));
    if (this.isGone(false)) return false;
    this.timer = setInterval(() => this.check(false), PARENT_CHECK_MS);
    return true;
  }

  stop(): void {
    process.removeListener(PARENT_DEATH_PROMPT, this.onPrompt);
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  isGone(signalled: boolean): boolean {
    const now = nativeLoaded() ? getParentPid() : process.ppid;
    // Outside our pid namespace the parent reads as 0: then only the kernel's signal can tell.
    if (this.original === 0) return signalled;
    // Still our parent (getppid() says so: the pid names it) but ending as a whole: a SIGKILLed
    // client's main thread, which forked us, is gone and prompted the signal, while its other
    // threads take up to tens of ms more (measured on 2 busy cores) to let the reparenting come.
    // Read on the signal only: the once-a-second look stays one getppid().
    return now !== this.original || (signalled && processIsEnding(this.original));
  }

  private check(signalled: boolean): void {
    if (this.isGone(signalled)) this.onGone();
  }
}
