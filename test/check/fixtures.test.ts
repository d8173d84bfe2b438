// The fixture suites through the whole `leash check` process: every annotated finding, nothing else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { killMarked, newMark } from '../helpers/processes.js';
import { copyFixtures, key, runCheck, type Expectation } from './harness.js';

for (const suite of ['js', 'js-chunks', 'python']) {
  test(`leash check reports exactly the annotated findings of the ${suite} fixtures`, async (t) => {
    const mark = newMark();
    const fixtures = copyFixtures(suite);
    t.after(async () => {
      fixtures.remove();
      await killMarked(mark);
    });
    const run = await runCheck(['--format', 'json', '--all', ...fixtures.files], fixtures.dir, mark);
    assert.equal(run.stderr, '');
    assert.equal(run.code, 1, 'the suites hold failing cases');
    const report = JSON.parse(run.stdout) as { findings: Array<{ path: string; line: number; rule: string; column: number; severity: string; message: string }> };
    const got: Expectation[] = report.findings.map((f) => ({ file: f.path, line: f.line, rule: f.rule }));
    assert.deepEqual(got.map(key).sort(), fixtures.expected.map(key).sort());
    for (const finding of report.findings) {
      assert.ok(finding.column >= 1 && finding.message.length > 0 && ['error', 'warning'].includes(finding.severity));
    }
  });
}
