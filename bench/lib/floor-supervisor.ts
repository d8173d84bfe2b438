// The least a death supervisor that goes by EOF can do, as a floor for leash's own (which may
// hear of the owner's death sooner: sys/parent-death.ts, whose SIGURG this script leaves at its
// default, ignored): block in read(2) on stdin,
// remember the groups named by `register` lines, and at EOF send each one SIGTERM by number (no
// identity proof, no freeze, no walk for escapees). The owner library runs it in place of
// `leash supervise` through LEASH_SUPERVISOR_EXEC/LEASH_SUPERVISOR_FILE, so the owner, the tree
// and the measurement stay exactly those of the real mode. Python, for a reaction that no event
// loop sits in front of; a bench with no python3 skips the floor.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realPython } from './python.js';

const SCRIPT = `import os, signal, sys, time
groups = set()
pending = b''
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    pending += chunk
    *lines, pending = pending.split(b'\\n')
    for line in lines:
        words = line.split()
        if len(words) >= 2 and words[1].isdigit():
            if words[0] == b'register':
                groups.add(int(words[1]))
            elif words[0] in (b'unregister', b'disown'):
                groups.discard(int(words[1]))
        elif words == [b'release']:
            groups.clear()
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGTERM)
    except OSError:
        pass
deadline = time.monotonic() + 3
while groups and time.monotonic() < deadline:
    time.sleep(0.005)
    for pgid in list(groups):
        try:
            os.killpg(pgid, 0)
        except OSError:
            groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
`;

/** The owner's environment additions that make it start the floor, or a note saying why there is none. */
export function floorSupervisorEnv(): { env: Record<string, string> } | { note: string } {
  const python = realPython();
  if (!python) return { note: 'no floor: python3 is missing' };
  const dir = mkdtempSync(join(tmpdir(), 'leash-floor-'));
  const file = join(dir, 'floor_supervisor.py');
  writeFileSync(file, SCRIPT);
  return { env: { LEASH_SUPERVISOR_EXEC: python, LEASH_SUPERVISOR_FILE: file } };
}
