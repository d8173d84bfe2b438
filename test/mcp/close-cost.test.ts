// What close() costs the client while it waits for a server's group to leave: a group whose
// leader runs is settled by a probe and one stat read, never by a look through the whole process
// table on the event loop (fifty transports closed at once used to hold the loop for 0.3-0.9 s,
// bench/mcp-close-stall.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OwnedStdioClientTransport } from '../../src/mcp/index.js';
import { killMarked, markedPids, newMark } from '../helpers/processes.js';
import { countProcListings } from '../helpers/proc-listings.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

test('close() waiting out eofGraceMs on servers that ignore stdin lists no /proc', async (t) => {
  const mark = newMark();
  t.after(() => killMarked(mark));
  // `sleep` never reads stdin: the groups live through the whole EOF grace, leaders running.
  const transports = Array.from(
    { length: 5 },
    () => new OwnedStdioClientTransport({ command: 'sleep', args: ['1000'], env: { LEASH_TEST_MARK: mark }, stderr: 'ignore', eofGraceMs: 3000, graceMs: 1000 }),
  );
  await Promise.all(transports.map((transport) => transport.start()));
  assert.equal(markedPids(mark).length, 5);
  const listings = countProcListings();
  let duringGrace: number;
  try {
    const closing = Promise.all(transports.map((transport) => transport.close()));
    // Well inside the 3 s grace, even on a loaded machine: no signal was sent yet, only the waits ran.
    await sleep(800);
    duringGrace = listings.count();
    assert.equal(markedPids(mark).length, 5, 'the servers were still in their EOF grace');
    await closing;
  } finally {
    listings.stop();
  }
  assert.equal(duringGrace, 0, `the waits listed /proc ${duringGrace} times in 800 ms`);
  assert.deepEqual(markedPids(mark), []);
});
