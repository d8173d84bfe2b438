// The Python analyser gives the parser only the top-level statements that can matter: the
// statement splitter's edge cases, when it declines, and the same findings as a whole-file parse
// on every Python fixture.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type * as Rules from '../../packages/check/src/check/python-rules.js';
import type * as Statements from '../../packages/check/src/check/python-statements.js';
import { FIXTURES, REPO_ROOT } from '../helpers/processes.js';

// Internals of proc-leash-check, not part of its exports: loaded from its build by path.
const internal = (name: string): Promise<unknown> => import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check', name)).href);
const { analysePython, pythonParses } = (await internal('python-rules.js')) as typeof Rules;
const { topLevelStatements } = (await internal('python-statements.js')) as typeof Statements;

const texts = (source: string) => topLevelStatements(source)?.map((s) => source.slice(s.start, s.end));

test('top-level statements: blocks, decorators, continuations and comments', () => {
  const source = [
    'import os',
    '',
    '# a comment',
    'class A:',
    '    def f(self):',
    '        pass',
    '',
    '    # an indented comment after the block',
    '',
    '@decorator',
    '# a comment between decorator and function',
    'def g():',
    '    x = 1',
    '# a comment at column 0 inside the body',
    '    return x',
    'if x:',
    '    pass',
    'elif y:',
    '    pass',
    'else:',
    '    pass',
    'try:',
    '    pass',
    'except (KeyError,',
    '        ValueError):',
    '    pass',
    'finally:',
    '    pass',
    'elsewhere = 1',
    'x = (1,',
    '2)',
    'y = 1 + \\',
    '2',
    'z = """',
    'def h():',
    '    os.setsid()',
    '"""',
    '',
  ].join('\n');
  assert.deepEqual(texts(source), [
    'import os\n',
    'class A:\n    def f(self):\n        pass\n',
    '@decorator\n# a comment between decorator and function\ndef g():\n    x = 1\n# a comment at column 0 inside the body\n    return x\n',
    'if x:\n    pass\nelif y:\n    pass\nelse:\n    pass\n',
    'try:\n    pass\nexcept (KeyError,\n        ValueError):\n    pass\nfinally:\n    pass\n',
    'elsewhere = 1\n',
    'x = (1,\n2)\n',
    'y = 1 + \\\n2\n',
    'z = """\ndef h():\n    os.setsid()\n"""\n',
  ]);
});

test('top-level statements: string prefixes, escapes and f-strings', () => {
  const source = [
    `a = rb'\\\\' + b"\\"" + R'''x''' + u"y" + Br"\\"" + '#' + "("`,
    `b = f"{x!r:>{width}} {{ }} {'}'} {d["k"]:{'<'}10} {(lambda: 1)()} {a[1:2]}"`,
    "c = f'''",
    '{x}',
    'def not_a_statement(): pass',
    "'''",
    'def e():',
    '    return"{" + xf"{"',
    'd = 1',
  ].join('\n');
  assert.deepEqual(texts(source), [
    `a = rb'\\\\' + b"\\"" + R'''x''' + u"y" + Br"\\"" + '#' + "("\n`,
    `b = f"{x!r:>{width}} {{ }} {'}'} {d["k"]:{'<'}10} {(lambda: 1)()} {a[1:2]}"\n`,
    "c = f'''\n{x}\ndef not_a_statement(): pass\n'''\n",
    'def e():\n    return"{" + xf"{"\n',
    'd = 1',
  ]);
});

test('top-level statements: rows and columns with CRLF, tabs and no final newline', () => {
  assert.deepEqual(topLevelStatements('import os\r\ndef f():\r\n\tif x:\r\n\t\tpass\r\n\r\nx = 1'), [
    { start: 0, end: 11, startRow: 0, endRow: 1, endColumn: 0 },
    { start: 11, end: 37, startRow: 1, endRow: 4, endColumn: 0 },
    { start: 39, end: 44, startRow: 5, endRow: 5, endColumn: 5 },
  ]);
});

test('top-level statements: whatever the splitter is unsure of is declined', () => {
  const unsure = {
    'an unterminated string': 'x = "abc\ny = 1\n',
    'an unterminated triple-quoted string': 'x = """abc\ny = 1\n',
    'an unclosed bracket': 'x = (1,\ny = 2\n',
    'mismatched brackets': 'x = (1]\n',
    'a byte-order mark': '\uFEFFimport os\n',
    'a lone carriage return': 'x = 1\ry = 2\n',
    'a form feed at a line start': '\fx = 1\n',
    'a t-string': 'x = t"{a}"\n',
    'a word in another script before a quote': 'x = é"{"\n',
    'a named escape in an f-string': 'x = f"\\N{EM DASH}{y}"\n',
    'a quote in a format spec': `x = f"{a:'>10}"\n`,
    'code indented before any statement': '    x = 1\n',
    'a continuation header with nothing to continue': 'else:\n    pass\n',
    'a backslash that continues nothing': 'x = 1 \\ y\n',
    'undecodable bytes': 'x = "\uFFFD"\n',
  };
  for (const [what, source] of Object.entries(unsure)) assert.equal(topLevelStatements(source), undefined, what);
});

test('top-level statements: nesting 10,000 deep is no stack overflow (brackets are counted, nested f-strings declined)', async () => {
  const deep = 10_000;
  const brackets = `import os\nx = ${'(['.repeat(deep)}os.setsid()${'])'.repeat(deep)}\ny = 1\n`;
  assert.equal(topLevelStatements(brackets)?.length, 3);
  let fstrings = 'os.setsid()';
  for (let k = 0; k < deep; k++) fstrings = `f"{${fstrings}}"`;
  assert.equal(topLevelStatements(`import os\nx = ${fstrings}\n`), undefined, 'nested f-strings');
  let specs = '1';
  for (let k = 0; k < deep; k++) specs = `f"{x:{${specs}}}"`;
  const text = `import os\nos.setsid()\ny = ${specs}\n`;
  assert.equal(topLevelStatements(text), undefined, 'nested format specs');
  // Python itself stops at 150 nested f-strings; the whole-file parse still judges the file.
  const rules = (await analysePython(text)).map((f) => `${f.line} ${f.rule}`);
  assert.ok(rules.includes('2 py-os-detach'), rules.join(', '));
  let shallow = 'os.setsid()';
  for (let k = 0; k < 20; k++) shallow = `f"{${shallow}}"`;
  assert.equal(topLevelStatements(`import os\nx = ${shallow}\n`)?.length, 2, 'nesting as deep as real code goes is split');
});

const pythonFixtures = () =>
  readdirSync(join(FIXTURES, 'check', 'python'))
    .filter((name) => name.endsWith('.py'))
    .map((name) => ({ name, text: readFileSync(join(FIXTURES, 'check', 'python', name), 'utf8') }));

test('parsing only the statements that matter finds what a whole-file parse finds, on every Python fixture', async () => {
  for (const { name, text } of pythonFixtures()) {
    for (const [variant, source] of [
      ['as is', text],
      ['with CRLF line ends', text.replace(/\r?\n/g, '\r\n')],
    ] as const) {
      const whole = await analysePython(source, { whole: true });
      const partial = await analysePython(source);
      assert.deepEqual(partial, whole, `${name} ${variant}`);
    }
  }
});

test('the chunking fixtures are judged from their statements, the fallback one from the whole file', async () => {
  for (const { name, text } of pythonFixtures().filter((f) => f.name.startsWith('chunking'))) {
    const before = { ...pythonParses };
    await analysePython(text);
    const fellBack = pythonParses.wholeAfterStatements - before.wholeAfterStatements;
    assert.equal(pythonParses.statements - before.statements, 1, name);
    assert.equal(fellBack, name === 'chunking_fallback.py' ? 1 : 0, name);
  }
});

test('a syntax error is reported where it was parsed, and not from a statement left out', async () => {
  const inParsed = 'import os\n\ndef spawn_it():\n    os.setsid() = = 1\n\ndef unrelated():\n    return 1\n';
  const before = pythonParses.wholeAfterStatements;
  const rules = (await analysePython(inParsed)).map((f) => `${f.line} ${f.rule}`);
  assert.ok(rules.includes('4 parse-error'), rules.join());
  assert.equal(pythonParses.wholeAfterStatements, before + 1, 'the whole file was parsed again, so the error is placed as before');

  // `return = 1` cannot parse, but its statement holds no trigger word and is never parsed.
  const inLeftOut = 'import os\nos.setsid()\n\ndef unrelated():\n    return = 1\n';
  assert.deepEqual((await analysePython(inLeftOut)).map((f) => `${f.line} ${f.rule}`), ['2 py-os-detach']);
  assert.deepEqual((await analysePython(inLeftOut, { whole: true })).map((f) => `${f.line} ${f.rule}`).sort(), ['2 py-os-detach', '5 parse-error']);
});

test('a runner call is parsed only where its statement holds shell text or names a name holding some', async () => {
  const source = [
    'import subprocess',
    '',
    'SERVER = "server --port 8080 &"',
    '',
    'def starts_server():',
    '    subprocess.run(SERVER, shell=True)',
    '',
    'def starts_inline():',
    '    subprocess.run("worker &", shell=True)',
    '',
    'def builds():',
    '    subprocess.run(["make", "-j8"], check=True) = = 1',
    '',
  ].join('\n');
  const whole = (await analysePython(source, { whole: true })).map((f) => `${f.line} ${f.rule}`).sort();
  // The case is real: the whole parse sees the error in the runner-only statement.
  assert.deepEqual(whole, ['12 parse-error', '3 shell-background', '9 shell-background']);
  const before = { ...pythonParses };
  const partial = (await analysePython(source)).map((f) => `${f.line} ${f.rule}`);
  // The held text is found through the runner that names it; the statement that only runs `make` is not parsed.
  assert.deepEqual(partial, ['3 shell-background', '9 shell-background']);
  assert.equal(pythonParses.wholeAfterStatements, before.wholeAfterStatements);
  assert.ok(pythonParses.statementsText - before.statementsText < source.indexOf('def builds'), 'the last statement was left out');
});

test('a class is parsed with only its members that matter, the same findings as a whole parse', async () => {
  const source = [
    'import subprocess',
    '',
    '',
    '@dataclass',
    'class Launcher:',
    '    """Starts things."""',
    '    name = "launcher"',
    '',
    '    @property',
    '    def label(self):',
    '        return self.name.title() = = 1',
    '',
    '    @staticmethod',
    '    def start(cmd):',
    '        # The one member that matters: a new session.',
    '        return subprocess.Popen(cmd, start_new_session=True)',
    '',
    '    def stop(self):',
    '        """A docstring at the body\'s level',
    '    def fake(self):',
    '        """',
    '        return None',
    '',
  ].join('\n');
  const whole = (await analysePython(source, { whole: true })).map((f) => `${f.line} ${f.rule}`).sort();
  // The case is real: the whole parse sees the error in a member that holds no trigger.
  assert.deepEqual(whole, ['11 parse-error', '16 py-new-session']);
  const before = { ...pythonParses };
  const partial = (await analysePython(source)).map((f) => `${f.line} ${f.rule}`);
  assert.deepEqual(partial, ['16 py-new-session']);
  assert.equal(pythonParses.wholeAfterStatements, before.wholeAfterStatements, 'the parts parsed without error');
  assert.ok(pythonParses.statementsText - before.statementsText < source.length - source.indexOf('    @property') - 100, 'members were left out');

  // `sp` is bound to subprocess: its uses are triggers, so the member holding one is parsed.
  const watched = [
    'import subprocess as sp',
    '',
    'class Runner:',
    '    def quiet(self):',
    '        return 1',
    '',
    '    def start(self, cmd):',
    '        return sp.Popen(cmd, start_new_session=True)',
    '',
  ].join('\n');
  assert.deepEqual((await analysePython(watched)).map((f) => `${f.line} ${f.rule}`), ['8 py-new-session']);
  assert.deepEqual((await analysePython(watched)).map((f) => `${f.line} ${f.rule}`), (await analysePython(watched, { whole: true })).map((f) => `${f.line} ${f.rule}`));

  // `except`, `else` and `finally` at the body's level belong to the member above them: given
  // together, the parts parse without error (no whole parse after them).
  const clauses = ['import subprocess', '', 'class X:', '    try:', '        import a', '    except ImportError:', '        subprocess.Popen(cmd, start_new_session=True)', '', '    def f(self):', '        return 1', ''].join('\n');
  const reparsed = pythonParses.wholeAfterStatements;
  assert.deepEqual((await analysePython(clauses)).map((f) => `${f.line} ${f.rule}`), ['7 py-new-session']);
  assert.equal(pythonParses.wholeAfterStatements, reparsed, 'the try and its except were given together');

  // A class indented by tabs, or with one member, is given whole.
  for (const body of ['\tdef a(self):\n\t\treturn 1\n\tdef b(self, cmd):\n\t\treturn subprocess.Popen(cmd, start_new_session=True)\n', '    def b(self, cmd):\n        return subprocess.Popen(cmd, start_new_session=True)\n']) {
    const text = `import subprocess\n\nclass C:\n${body}`;
    const statement = topLevelStatements(text)?.[1];
    assert.ok(statement, 'the class is a statement');
    const parsed = pythonParses.statementsText;
    assert.deepEqual((await analysePython(text)).map((f) => f.rule), ['py-new-session']);
    assert.ok(pythonParses.statementsText - parsed >= statement.end - statement.start, 'the class was parsed whole');
  }
});

test('a file binding 20,000 names from a watched module is judged in one pass per text, not one per name', async () => {
  // A search of the whole text per imported name, and a sort of every trigger per name, took 17 s.
  const names = Array.from({ length: 20_000 }, (_, i) => `a${i}`).join(', ');
  const text = `import subprocess\nfrom os import (${names})\nsubprocess.Popen(["x"], start_new_session=True)\na19999()\n`;
  const started = Date.now();
  const rules = (await analysePython(text)).map((f) => `${f.line} ${f.rule}`);
  const seconds = (Date.now() - started) / 1000;
  assert.deepEqual(rules, (await analysePython(text, { whole: true })).map((f) => `${f.line} ${f.rule}`));
  assert.ok(rules.length > 0, 'the detached Popen is found');
  assert.ok(seconds < 8, `${seconds} s`); // about 0.3 s on a loaded 2-core machine
});
