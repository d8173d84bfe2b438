// The prefilter decides which files are never parsed: every shell command the fixtures expect a
// finding on must, on its own line, pass it, or a file holding only that command would go unchecked.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { languageOf, mayMatter } from 'proc-leash-check';
import { FIXTURES } from '../helpers/processes.js';

/** A JS text from a file that binds a spawn module: what the tests below are about, past the gate. */
const spawning = (text: string) => `import { exec, spawn } from 'node:child_process';\n${text}`;
/** Python's counterpart: shell text counts only in a file that can hand it to a command runner. */
const running = (text: string) => `import subprocess\n${text}`;

test('every backgrounding shell command of the fixtures passes the prefilter on its own line', () => {
  let lines = 0;
  for (const suite of ['js', 'python']) {
    for (const name of readdirSync(join(FIXTURES, 'check', suite))) {
      const language = languageOf(name.replace(/\.fixture$/, ''));
      if (!language) continue;
      const fileLines = readFileSync(join(FIXTURES, 'check', suite, name), 'utf8').split('\n');
      for (const [index, line] of fileLines.entries()) {
        const rules = [...line.matchAll(/expect: ([\w-]+)/g)].map((m) => m[1]);
        // A program held in a name bound on another line (`expect: shell-background, held`): a file
        // holding only this line names no program, and could report nothing.
        if (!rules.includes('shell-background') || /expect: shell-background, held\b/.test(line)) continue;
        // The annotation itself names a rule, so it is cut off before testing.
        let code = line.replace(/\s*(?:\/\/|#) expect: .*$/, '');
        // A command in a multi-line string opened on this line (the annotation a shell comment in
        // it) is tested with the rest of its string.
        const opener = code.endsWith('`') ? '`' : /("""|''')$/.exec(code)?.[1];
        if (opener) {
          const close = fileLines.findIndex((later, at) => at > index && later.includes(opener));
          code = `${code}\n${fileLines.slice(index + 1, close + 1).join('\n')}`;
        }
        assert.ok(mayMatter(language === 'js' ? spawning(code) : running(code), language), `${suite}/${name}: ${code}`);
        lines++;
      }
    }
  }
  assert.ok(lines >= 10, `${lines} lines tested`);
});

test('harmless literals, bitwise and intersection `&` and prose do not make a file worth parsing', () => {
  assert.equal(mayMatter(spawning("spawn('a', [], { detached: false });\nconst m = flags & MASK;\ntype T = A & B;\n// this & that\n"), 'js'), false);
  assert.equal(mayMatter('subprocess.run(["a"], start_new_session=False, process_group=None)\nx = a & b\n', 'python'), false);
  assert.equal(mayMatter(spawning("spawn('a', [], { detached: false, ...rest, detached: on });\n"), 'js'), true);
  assert.equal(mayMatter(spawning('const cmd = `\n  server &\n`;\n'), 'js'), true);
  // A word after the `&` and no quote before it on its line: in a multi-line string it counts, in code not.
  assert.equal(mayMatter(spawning('const cmd = `\n  server & echo started\n`;\n'), 'js'), true);
  assert.equal(mayMatter(running('cmd = """\nserver & echo started\n"""\n'), 'python'), true);
  assert.equal(mayMatter(spawning("const cmd = `a ${x}`; // it's\nconst m = flags & MASK;\nconst t = '`';\ntype T = A & B;\n"), 'js'), false);
  // Backticks in a comment, a regular expression or a substitution's string do not open a template; a division is no regular expression.
  assert.equal(mayMatter(spawning("// a ` here\nconst re = /`/, h = a / b / c, u = `${'`'}`;\nconst cmd = `\n  server & echo started\n`;\n"), 'js'), true);
  assert.equal(mayMatter(spawning("// a ` here\nconst re = /`/, h = a / b / c, u = `${'`'}`;\nconst m = flags & MASK;\n"), 'js'), false);
  assert.equal(mayMatter(running("# a ''' here\nx = '\"\"\"'\ncmd = '''\nserver & echo started\n'''\n"), 'python'), true);
  // A one-line string continued by a backslash crosses the line break too.
  assert.equal(mayMatter(spawning("exec('server --port \\\n8080 & echo started');\n"), 'js'), true);
  assert.equal(mayMatter("os.system('server --port \\\r\n8080 & echo started')\n", 'python'), true);
  assert.equal(mayMatter(spawning("const m = flags \\\n& MASK;\nconst n = a & b;\n"), 'js'), false);
  assert.equal(mayMatter("cmd = \"\"\"a\"\"\"  # it's\nx = a & b\ny = \"'''\"\nz = b & c\n", 'python'), false);
});

test('Python shell text makes a file worth parsing only where a command runner or a detaching program can take it', () => {
  const text = 'html = "<a href=\'x?a=1&b=2\'>start page</a> & more"\ncmd = "server &"\nmsg = "start /b server"\n';
  assert.equal(mayMatter(text, 'python'), false, 'no runner: nothing could report it');
  for (const runner of ['import subprocess\n', 'import asyncio\n', 'os.system(cmd)\n', 'from os import system\n', 'import os as o\n', 'from daemonize import Daemonize\n']) {
    assert.equal(mayMatter(runner + text, 'python'), true, runner);
  }
  // `import os` alone hands shell text to nothing (os.path, os.environ): not enough.
  assert.equal(mayMatter(`import os\npath = os.path.join("a", "b")\n${text}`, 'python'), false);
});

test('creation flags that can hold no detach bit do not make a file worth parsing; any that can still do', () => {
  const run = (value: string) => `import subprocess\nflags = subprocess.CREATE_NO_WINDOW if os.name == "nt" else 0\nsubprocess.run(args, creationflags=${value}, check=True)\n`;
  for (const value of ['flags', 'subprocess.CREATE_NO_WINDOW', 'flags | 0x20', '0x08000000', 'a.b | 0o40 | 3_2', '0', '1.5']) {
    assert.equal(mayMatter(run(value), 'python'), false, value);
  }
  // A detach bit in a literal (however written), a flag's name, or a value the prefilter cannot read whole.
  const detaching = ['0x8', 'flags | 8', '0b1000', '0o1000', '16777216', '0x0000_0200', '8L', '8.0', 'DETACHED_PROCESS', 'subprocess.CREATE_NEW_PROCESS_GROUP', 'flags if x else 8', 'get(8)'];
  for (const value of detaching) assert.equal(mayMatter(run(value), 'python'), true, value);
  assert.equal(mayMatter('subprocess.run(args, creationflags=flags\n    | 0x8)\n', 'python'), true, 'a value going on past its line');
  assert.equal(mayMatter('subprocess.run(args, creationflags=flags)  # DETACHED_PROCESS elsewhere\n', 'python'), true, 'a flag named after it');
  assert.equal(mayMatter('kw = {"creationflags": flags}\n', 'python'), true, 'a key, not a keyword');
});

test('a trigger word only in whole-line comments does not make a file worth parsing', () => {
  assert.equal(mayMatter('import os\n# the worker is not started with start_new_session\n    # nor with process_group\nos.getpid()\n', 'python'), false);
  assert.equal(mayMatter(spawning("// spawned detached elsewhere\n  // then .unref() it\nconst a = 1;\n"), 'js'), false);
  // Code after a comment on the same line, or an expression in an f-string or template literal, still counts.
  assert.equal(mayMatter('x = 1  # ok\nsubprocess.Popen(["a"], start_new_session=True)  # detaches\n', 'python'), true);
  assert.equal(mayMatter('cmd = f"""\n# {subprocess.Popen(["a"], start_new_session=True)}\n"""\n', 'python'), true);
  assert.equal(mayMatter(spawning("const s = `\n// ${spawn('a', [], { detached: true })}\n`;\n"), 'js'), true);
  assert.equal(mayMatter(spawning("spawn('a', [], { // comment\n  detached: true });\n"), 'js'), true);
});

test('the shell prefilter is linear in the text: a 5 MB line of bitwise `&` is read in seconds, not hours', () => {
  // Each `&` here goes on with a word and has no quote before it on its line: the case that once
  // sliced the rest of the line and looked back to its start for every `&`.
  const js = 'const m = a & b, n = c & d;'.repeat(200_000);
  const python = 'x = a & b; '.repeat(500_000);
  const started = Date.now();
  assert.equal(mayMatter(spawning(js), 'js'), false);
  assert.equal(mayMatter(python, 'python'), false);
  const seconds = (Date.now() - started) / 1000;
  assert.ok(seconds < 10, `${seconds} s for 10.9 MB`); // about 1 s on a loaded 2-core machine; hours before
});

test('a JS/TS file that binds no spawn function is not parsed, whatever it says about detached, unref or `&`', () => {
  const body = "/* a detached node */ const s = '&'; timer.unref(); spawn('a', [], { detached: true }); exec('nohup x &');\n";
  assert.equal(mayMatter(body, 'js'), false, 'no spawn module, no project module, no typed options');
  for (const binding of ["const cp = require('child_process');", "import { execa } from 'execa';", "import { run } from './run.js';", "const { start } = require('../start');", "const m = await import('./m.js');", 'const o: SpawnOptions = x;']) {
    assert.equal(mayMatter(`${binding}\n${body}`, 'js'), true, binding);
  }
  // A marker is still checked for use (a stale one is reported).
  assert.equal(mayMatter('// detached-spawn: ok — kept for the updater\n', 'js'), true);
});

test('`screen` the name of a thing (a testing-library query, a window, a screenshot) does not make a file worth parsing; `screen` run does', () => {
  // (The import of testing-library's `screen` passes: a word followed by a blank, as in a command.)
  assert.equal(mayMatter(spawning("expect(screen.getByText('ok')).toBeTruthy();\nconst screenshot = await page.screenshot();\n"), 'js'), false);
  assert.equal(mayMatter('self.screen.blit(image, (0, 0))\nscreen_size = (640, 480)\n', 'python'), false);
  assert.equal(mayMatter(spawning("exec('screen -S web -Adm server');\n"), 'js'), true);
  assert.equal(mayMatter('subprocess.run(["screen", "-md", "server"])\n', 'python'), true);
});

test('a harmless-looking option value that goes on past its line, ptyprocess alone, unref written with ?. and a project import of `.` make a file worth parsing', () => {
  assert.equal(mayMatter('subprocess.Popen(["s"], start_new_session=False\n    or detach)\n', 'python'), true);
  assert.equal(mayMatter('subprocess.Popen(["s"], process_group=None\n    or 0)\n', 'python'), true);
  assert.equal(mayMatter(spawning("spawn('s', [], { detached: false\n  || detach });\n"), 'js'), true);
  assert.equal(mayMatter('from ptyprocess import PtyProcess\nPtyProcess.spawn(["bash"])\n', 'python'), true);
  assert.equal(mayMatter(spawning("const c = spawn('s');\nc.unref?.();\n"), 'js'), true);
  assert.equal(mayMatter("import { start } from '..';\nstart().unref();\n", 'js'), true);
  assert.equal(mayMatter("const { start } = require('.');\nstart().unref();\n", 'js'), true);
  // Still harmless on one line, and before a closing bracket on the next.
  assert.equal(mayMatter('subprocess.Popen(["s"], start_new_session=False\n)\n', 'python'), false);
  assert.equal(mayMatter(spawning("spawn('s', [], { detached: false\n});\n"), 'js'), false);
});

test('a PTY spawn known only by its terminal size makes a file worth parsing, as the analyser reports it', () => {
  // tabby's shape: a PTY proxy from a project module, none of the prefilter's words in the file.
  const proxy = "import { Pty } from './api';\nexport async function open(p) {\n  return p.spawn(cmd, args, { cols: 80, rows: 24 });\n}\n";
  assert.equal(mayMatter(proxy, 'js'), true);
  // The negative twins: half a size, or a size with no spawn (a terminal widget).
  assert.equal(mayMatter(proxy.replace('rows: 24', 'height: 24'), 'js'), false);
  assert.equal(mayMatter("import { T } from './t';\nnew T({ cols: 80, rows: 24 });\n", 'js'), false);
});
