// The prefilter decides which files are never parsed: every shell command the fixtures expect a
// finding on must, on its own line, pass it, or a file holding only that command would go unchecked.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { languageOf, mayMatter } from 'proc-leash-check';
import { FIXTURES } from '../helpers/processes.js';

test('every backgrounding shell command of the fixtures passes the prefilter on its own line', () => {
  let lines = 0;
  for (const suite of ['js', 'python']) {
    for (const name of readdirSync(join(FIXTURES, 'check', suite))) {
      const language = languageOf(name.replace(/\.fixture$/, ''));
      if (!language) continue;
      for (const line of readFileSync(join(FIXTURES, 'check', suite, name), 'utf8').split('\n')) {
        const rules = [...line.matchAll(/expect: ([\w-]+)/g)].map((m) => m[1]);
        if (!rules.includes('shell-background')) continue;
        // The annotation itself names a rule, so it is cut off before testing.
        const code = line.replace(/\s*(?:\/\/|#) expect: .*$/, '');
        assert.ok(mayMatter(code, language), `${suite}/${name}: ${code}`);
        lines++;
      }
    }
  }
  assert.ok(lines >= 10, `${lines} lines tested`);
});

test('harmless literals, bitwise and intersection `&` and prose do not make a file worth parsing', () => {
  assert.equal(mayMatter("spawn('a', [], { detached: false });\nconst m = flags & MASK;\ntype T = A & B;\n// this & that\n", 'js'), false);
  assert.equal(mayMatter('subprocess.run(["a"], start_new_session=False, process_group=None)\nx = a & b\n', 'python'), false);
  assert.equal(mayMatter("spawn('a', [], { detached: false, ...rest, detached: on });\n", 'js'), true);
  assert.equal(mayMatter('const cmd = `\n  server &\n`;\n', 'js'), true);
});

test('a trigger word only in whole-line comments does not make a file worth parsing', () => {
  assert.equal(mayMatter('import os\n# the worker is not started with start_new_session\n    # nor with process_group\nos.getpid()\n', 'python'), false);
  assert.equal(mayMatter("// spawned detached elsewhere\n  // then .unref() it\nconst a = 1;\n", 'js'), false);
  // Code after a comment on the same line, or an expression in an f-string or template literal, still counts.
  assert.equal(mayMatter('x = 1  # ok\nsubprocess.Popen(["a"], start_new_session=True)  # detaches\n', 'python'), true);
  assert.equal(mayMatter('cmd = f"""\n# {subprocess.Popen(["a"], start_new_session=True)}\n"""\n', 'python'), true);
  assert.equal(mayMatter("const s = `\n// ${spawn('a', [], { detached: true })}\n`;\n", 'js'), true);
  assert.equal(mayMatter("spawn('a', [], { // comment\n  detached: true });\n", 'js'), true);
});
