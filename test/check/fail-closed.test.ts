// `leash check` fails closed on every file: a file it cannot judge is exit 2 by name with the other
// findings still reported; it never opens a non-regular file, never prints a stack trace for a
// closed output, checks named folders whatever their name, and says what it did not follow.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_ENTRY, killMarked, markedEnv, newMark } from '../helpers/processes.js';
import { gitInit, project, runCheck } from './harness.js';

const DETACHED = "import { spawn } from 'node:child_process';\nspawn('a', [], { detached: true });\n";

interface JsonReport {
  findings: Array<{ path: string; rule: string; line: number }>;
  failures: Array<{ path: string; reason: string }>;
  notes: string[];
  failed: boolean;
}

test('leash check fails closed', async (t) => {
  const mark = newMark();
  const dirs: string[] = [];
  t.after(async () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await killMarked(mark);
  });
  const make = (files: Record<string, string>) => {
    const dir = project(files, 'leash-check-closed-');
    dirs.push(dir);
    return dir;
  };

  await t.test('a file no analyser can judge is exit 2 by name; the other findings are still reported', async () => {
    const dir = make({
      'src/a.mjs': DETACHED,
      // The TypeScript parser recurses per parenthesis; this many overflow it (in a statement that
      // is parsed: one with nothing to flag and no name of one that has is blanked, never parsed).
      'src/parens.mjs': `${DETACHED}const x = ${'('.repeat(3000)}{ detached: true }${')'.repeat(3000)};\n`,
      'src/b.py': 'import os\nos.setsid()\n',
    });
    const run = await runCheck(['--format', 'json', 'src'], dir, mark);
    assert.equal(run.code, 2, run.stderr);
    assert.doesNotMatch(run.stderr, /at .*\.js:\d+/, 'no stack trace');
    const report = JSON.parse(run.stdout) as JsonReport;
    assert.deepEqual(report.failures.map((f) => f.path).sort(), ['src/parens.mjs']);
    assert.deepEqual(report.findings.map((f) => `${f.path}:${f.line}`).sort(), ['src/a.mjs:2', 'src/b.py:2']);
    const text = await runCheck(['src'], dir, mark);
    assert.equal(text.code, 2);
    assert.match(text.stdout, /^src\/parens\.mjs: cannot check: /m);
    assert.match(text.stdout, /1 file\(s\) that could not be checked/);
  });

  await t.test('long call chains and long concatenations are walked, not a crash', async () => {
    const terms = Array.from({ length: 3000 }, (_, i) => `'s${i}'`).join(' + ');
    const dir = make({
      'chain.mjs': `${DETACHED}x${'.a()'.repeat(3000)};\n`,
      'concat.mjs': `${DETACHED}const s = ${terms};\n`,
      'calls.mjs': `${DETACHED}f${'()'.repeat(3000)};\n`,
      // The Python walk too: a chain of 4,000 calls is valid Python 3.13; 20,000 parentheses and
      // a 50,000-part dotted name are not Python, but are judged all the same.
      'chain.py': `import os\nx = os.setsid()${'.a()'.repeat(4000)}\n`,
      'parens.py': `import os\nx = ${'('.repeat(20000)}os.setsid()${')'.repeat(20000)}\n`,
      'dotted.py': `import os\nx = os${'.a'.repeat(50000)}.b()\nos.setsid()\n`,
      'flags.py': `import subprocess\nsubprocess.Popen(x, creationflags=${'1 | '.repeat(5000)}0x8)\n`,
    });
    const run = await runCheck(['--format', 'json', '.'], dir, mark);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const report = JSON.parse(run.stdout) as JsonReport;
    assert.deepEqual(report.failures, []);
    assert.deepEqual(report.findings.map((f) => `${f.path}:${f.line} ${f.rule}`).sort(), [
      'calls.mjs:2 js-detached-spawn',
      'chain.mjs:2 js-detached-spawn',
      'chain.py:2 py-os-detach',
      'concat.mjs:2 js-detached-spawn',
      'dotted.py:3 py-os-detach',
      'flags.py:2 py-windows-detach',
      'parens.py:2 py-os-detach',
    ]);
  });

  await t.test('long command strings of program names, format fields or blanks are read in linear time', async () => {
    // Each of these took 1-14 s (time growing with the square of the length) before the spans
    // between a command's words were bounded; each is a fraction of a second now.
    const dir = make({
      'screen.py': `import os\nos.system("${'screen '.repeat(40000)}")\n`,
      'tmux.py': `import os\nos.system("${'tmux new '.repeat(40000)}")\n`,
      'daemon.py': `import os\nos.system("${'start-stop-daemon '.repeat(40000)}")\n`,
      'percent.py': `import subprocess\n# nohup\nsubprocess.run("${'%('.repeat(80000)}" % d, shell=True)\n`,
      'blanks.mjs': `import { exec } from 'node:child_process';\nexec('x${' '.repeat(80000)}&');\n`,
      'start.py': `import os\nos.system("start " + "${'echo start '.repeat(40000)}")\n`,
      // Quoted words: the head before each quote was sliced from the output so far (16 s).
      'quoted.py': `import os\nos.system("${"'a' ".repeat(120000)}&")\n`,
      // A name written 20,000 times and run 2,000 times: each use read every write (17 s).
      'uses.mjs': `import { exec } from 'node:child_process';\nsetTimeout(() => {}, 1).unref();\nlet c = 'x';\n${"c = 'tmux ls';\n".repeat(20000)}${'exec(c);\n'.repeat(2000)}`,
      // A helper's `detached` kept in 3,000 names, the helper called 3,000 times: each name's uses
      // were sought over the whole body, for each call (over 11 minutes; 20 s once per helper).
      'helper.mjs': `import { spawn } from 'node:child_process';\nfunction many(options) {\n${Array.from({ length: 3000 }, (_, i) => `  const d${i} = options.detached;\n  if (d${i}) log(${i});\n`).join('')}}\n${"many({ cwd: '.', detached: true });\n".repeat(3000)}`,
      // 5,000 spawns of options whose `detached` only an inner function's own `options` reads: each
      // spawn looked at every read, and each read scanned the body's statements (over 10 minutes).
      'shadowed.mjs': `import { spawn } from 'node:child_process';\nexport function outer(options) {\n  const inner = (options) => {\n${'    if (options.detached) log();\n'.repeat(5000)}  };\n${"  spawn('x', [], options);\n".repeat(5000)}  return inner;\n}\n`,
      // A wrapper handing its own `start_new_session` on 4,000 times: each keyword walked the
      // whole body for a rebinding (110 s; one answer per wrapper and name now).
      'wrapper.py': `import subprocess\n\ndef run(cmd, start_new_session=False):\n${'    subprocess.Popen(cmd, start_new_session=start_new_session)\n'.repeat(4000)}`,
      // 4,000 unrefs of one child in a block that kills it last: each unref read the statements
      // after it (3 s; a block's kills are read once now).
      'kills.mjs': `import { spawn } from 'node:child_process';\nexport function stop() {\n  const cp = spawn('x');\n${'  cp.unref();\n'.repeat(4000)}  cp.kill();\n}\n`,
      // A name assigned 3,000 lists and handed 3,000 times to a project function: each call read
      // every list to know whether the callee was worth looking up (28 s; once a name now).
      'held.mjs': `import { run } from './w.mjs';\nsetTimeout(() => {}, 1).unref();\nlet words = ['-NoProfile'];\n${"words = ['-NoProfile', '-Command', 'Start-Sleep 1'];\n".repeat(3000)}${'run(words);\n'.repeat(3000)}`,
      'w.mjs': "import { spawn } from 'node:child_process';\nexport const run = (words) => spawn('powershell', words);\n",
      // The eighth round's reads, each once per function, name or statement: a name of the option's
      // name handed on 4,000 times, 3,000 forks in one function, a held flag read by 3,000 spawns
      // (in both languages), and 3,000 runner statements beside 3,000 names holding shell text.
      'handed.py': `def run(cmd):\n    start_new_session = False\n${'    run_raw(cmd, start_new_session)\n'.repeat(4000)}`,
      'forks.py': `import os\n\ndef many():\n${'    if os.fork():\n        log()\n'.repeat(3000)}`,
      'words.py': `import subprocess\n\ndef many():\n    opts = "-a"\n${"    subprocess.Popen(['mnexec', opts, 'env'])\n".repeat(3000)}`,
      'words.mjs': `import { spawn } from 'node:child_process';\n${"let opts = '-a';\n".repeat(3000)}${"spawn('mnexec', [opts, 'env']);\n".repeat(3000)}`,
      // A line of one long dotted name beside a detaching program's name: the lookup binding's
      // callee was read with unbounded runs (4 s for 120,000 characters, 16 s for twice as many; bounded now).
      'lookup.py': `import subprocess\nNAME = "systemd-run"\nx = ${'a.'.repeat(120000)}b\ny = ${'exe'.repeat(120000)}\n`,
      'runners.py': `import subprocess\n${Array.from({ length: 3000 }, (_, i) => `C${i} = "server &"\n`).join('')}${Array.from({ length: 3000 }, (_, i) => `def r${i}(cmd):\n    subprocess.run(["make", cmd])\n`).join('')}`,
      // The ninth round's documented programs, each 1-11 s before its spans were bounded: a flag
      // cluster split every way, options whose words took in the next quote, and a path or a value
      // read on from every parenthesis.
      'cluster.py': `import os\nos.system("sshd -${'D'.repeat(40000)}1")\n`,
      'verbs.py': `import os\nos.system("pm2${" -'pm2".repeat(40000)} y")\n`,
      'paths.mjs': `import { exec } from 'node:child_process';\nexec('${'(a/'.repeat(40000)}x elevate -daemon.sh');\n`,
      'agent.py': `import os\nos.system("${'(ssh-agent -a '.repeat(16000)}x y")\n`,
      // One held argument list handed to 20,000 spawns: each read the text back to its declaration (24 s).
      'held-args.mjs': `import { spawn } from 'node:child_process';\nexport function f(host) {\n  const args = ['-N', host, '-o', 'ControlPersist=no', '-M'];\n${"  spawn('ssh', args);\n".repeat(20000)}}\n`,
      // Programs held in members, thousands of them run: each class's text is read once, not once a member.
      'members.mjs': `import { spawn } from 'node:child_process';\nclass C {\n  constructor() {\n${Array.from({ length: 5000 }, (_, i) => `    this.m${i} = 'tmux';\n`).join('')}  }\n  run(x) {\n${Array.from({ length: 5000 }, (_, i) => `    spawn(this.m${i}, [x]);\n`).join('')}  }\n}\n`,
      'members.py': `import subprocess\n\nclass C:\n    def __init__(self):\n${Array.from({ length: 5000 }, (_, i) => `        self.m${i} = "tmux"\n`).join('')}\n    def run(self, x):\n${Array.from({ length: 5000 }, (_, i) => `        subprocess.call([self.m${i}, x])\n`).join('')}`,
      // A held list changed on 40,000 lines, and a line of 40,000 quoted programs where commands start.
      'changes.py': `import subprocess\nargs = ["tmux", "ls"]\n${'args += ["-v"]\n'.repeat(40000)}subprocess.call(args)\n`,
      'programs.py': `import os\nos.system('${'; "a b" '.repeat(40000)}')\n`,
      // Wine's loader and 150,000 blanks before a word (two blank patterns split them every way:
      // 8.5 s), and one name held and run in 4,000 functions (every binding read at every use, and
      // each report's line counted from the start: 51 s).
      'wine.py': `import subprocess\n# start\nx = 'wine${' '.repeat(150000)}x'\n`,
      'held.py': `import subprocess\n${Array.from({ length: 4000 }, (_, i) => `def f${i}(p):\n    cmd = ["tmux", "-p", p]\n    subprocess.call(cmd)\n`).join('')}`,
      // A module's program name run 5,000 times in one function: the function's bindings read once.
      'module-name.py': `import subprocess\nTMUX = "tmux"\n\ndef many(x):\n${'    subprocess.call([TMUX, x])\n'.repeat(5000)}`,
      // The eleventh round's own runners: a function running its parameter 20,000 times (each call
      // read the body for a rebinding: 15 s in both languages), 20,000 runner calls after a class of
      // 20,000 methods (each walked back over every method), and an inner script spliced 40,000 times.
      'own-body.py': `import subprocess\n\ndef sh(cmd):\n${'    subprocess.run(cmd, shell=True)\n'.repeat(20000)}`,
      'own-body.mjs': `import { execSync } from 'node:child_process';\nexport function sh(cmd) {\n${'  execSync(cmd);\n'.repeat(20000)}}\n`,
      'own-class.py': `import subprocess\n\nclass C:\n${Array.from({ length: 20000 }, (_, i) => `    def m${i}(self):\n        return ${i}\n`).join('')}\ncmd = "make"\n${'subprocess.run(cmd, shell=True)\n'.repeat(20000)}`,
      'spliced.mjs': `import { exec } from 'node:child_process';\nexec(\`sh -c "${'a"\${v}"'.repeat(40000)}"\`);\n`,
      // The twelfth round's reads: a returning function of 4,000 statements called 4,000 times (its
      // returns walked at each call: 10 s at half the size), a name bound to functions 5,000 times
      // and called 5,000 times (9.6 s), a name assigned 8,000 lists and joined 8,000 times (29 s), a
      // chain of 4,000 calls to the returned text (out of stack), and 20,000 names holding a
      // function's result, each run (as many parser ranges: 2.9 s; the whole text is parsed now).
      // (Each JS one inside one function with an unref, so that the chunker keeps it whole.)
      'returns.mjs': `import { exec } from 'node:child_process';\nexport function main(p) {\n  setTimeout(() => {}, 1).unref();\n  function cmd(x) {\n${'    if (x === 0) log(0);\n'.repeat(4000)}    return \`make \${x}\`;\n  }\n${'  exec(cmd(0));\n'.repeat(4000)}}\n`,
      'bound.mjs': `import { exec } from 'node:child_process';\nexport function main(p) {\n  setTimeout(() => {}, 1).unref();\n  function a() { return 'make a'; }\n  function b() { return 'make b'; }\n  let open = null;\n${'  if (p === 0) open = a; else open = b;\n'.repeat(5000)}${'  exec(open(0));\n'.repeat(5000)}}\n`,
      'joins.mjs': `import { exec } from 'node:child_process';\nexport function main(p) {\n  setTimeout(() => {}, 1).unref();\n  let a = ['make', 'x'];\n${"  a = ['make', 'y'];\n".repeat(8000)}${"  exec(a.join(' '));\n".repeat(8000)}}\n`,
      'chain.mjs': `import { exec } from 'node:child_process';\nexport function main() {\n  setTimeout(() => {}, 1).unref();\n${Array.from({ length: 4000 }, (_, i) => `  function c${i}() { return c${i + 1}(); }\n`).join('')}  function c4000() { return 'make'; }\n  exec(c0());\n}\n`,
      'results.py': `import os\n\ndef cmd(x):\n    return "server &"\n${Array.from({ length: 20000 }, (_, i) => `c${i} = cmd(${i})\nos.system(c${i})\n`).join('')}`,
    });
    const started = Date.now();
    const run = await runCheck(['--format', 'json', '.'], dir, mark);
    const tookMs = Date.now() - started;
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const report = JSON.parse(run.stdout) as JsonReport;
    assert.deepEqual(report.failures, []);
    // cluster.py's `-DDD…1` is no flag cluster (a digit ends it), so sshd is read without -D.
    assert.deepEqual(report.findings.map((f) => `${f.path}:${f.line} ${f.rule}`).sort(), ['blanks.mjs:2 shell-background', 'cluster.py:2 shell-background', 'quoted.py:2 shell-background', 'results.py:4 shell-background']);
    assert.ok(tookMs < 12_000, `${tookMs} ms for forty-two files (about 7 s now; over 35 s for the first six before, 16 and 17 s for the next two, minutes for the two after, 110, 3 and 28 s for the last three)`);
  });

  await t.test('never opens a FIFO: named is exit 2, met in a walk or in git mode is a note', async () => {
    const dir = make({ 'src/a.mjs': DETACHED, 'src/tracked.py': 'import os\n' });
    execFileSync('mkfifo', [join(dir, 'src/pipe.py')]);
    const named = await runCheck(['src/pipe.py'], dir, mark);
    assert.equal(named.code, 2);
    assert.match(named.stderr, /src\/pipe\.py: not a regular file/);

    const walked = await runCheck(['--format', 'json', 'src'], dir, mark);
    assert.equal(walked.code, 1, walked.stderr);
    const report = JSON.parse(walked.stdout) as JsonReport;
    assert.deepEqual(report.notes, ['src/pipe.py: not a regular file, skipped']);
    assert.deepEqual(report.findings.map((f) => f.path), ['src/a.mjs']);

    // A tracked file replaced by a FIFO after the commit.
    unlinkSync(join(dir, 'src/pipe.py'));
    gitInit(dir);
    unlinkSync(join(dir, 'src/tracked.py'));
    execFileSync('mkfifo', [join(dir, 'src/tracked.py')]);
    const git = await runCheck(['--format', 'json'], dir, mark);
    assert.equal(git.code, 1, git.stderr);
    assert.deepEqual((JSON.parse(git.stdout) as JsonReport).notes, ['src/tracked.py: not a regular file, skipped']);

    // The configuration and the baseline, read by default when present, are read the same way.
    for (const name of ['.leash-check.json', '.leash-check-baseline.json']) {
      execFileSync('mkfifo', [join(dir, name)]);
      const settings = await runCheck(['src/a.mjs'], dir, mark);
      assert.equal(settings.code, 2, `${name}: ${settings.stderr}`);
      assert.match(settings.stderr, new RegExp(`${name.replace(/\./g, '\\.')}: not a regular file`));
      unlinkSync(join(dir, name));
    }
  });

  await t.test('a closed output is no finding and no stack trace', async () => {
    const many = `import { spawn } from 'node:child_process';\n${"spawn('a', [], { detached: true });\n".repeat(20000)}`;
    const dir = make({ 'src/a.mjs': many });
    const child = spawn(process.execPath, [CLI_ENTRY, 'check', 'src'], { cwd: dir, env: markedEnv(mark), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Like `| head -1`: read a little, then close the read end.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error('leash check did not exit within 60 s')), 60_000);
      child.on('exit', (exitCode) => {
        clearTimeout(deadline);
        resolve(exitCode);
      });
    });
    assert.equal(stderr, '');
    assert.equal(code, 2);
  });

  await t.test('a file over the size limit is exit 2 by name, never read whole; --max-file-size raises the limit', async () => {
    const dir = make({ 'src/a.mjs': DETACHED, 'src/huge.py': 'import os\nos.setsid()\n', 'src/big.py': 'x = 1\n' });
    // Sparse files: the test writes a few bytes, not gigabytes.
    truncateSync(join(dir, 'src/huge.py'), 2 ** 31);
    truncateSync(join(dir, 'src/big.py'), 17 * 2 ** 20);
    const run = await runCheck(['--format', 'json', 'src'], dir, mark);
    assert.equal(run.code, 2, run.stderr);
    const report = JSON.parse(run.stdout) as JsonReport;
    assert.deepEqual(report.findings.map((f) => f.path), ['src/a.mjs']);
    assert.deepEqual(report.failures.map((f) => f.path), ['src/big.py', 'src/huge.py']);
    for (const failure of report.failures) assert.match(failure.reason, /^(?:17 MiB|2 GiB), over the 16 MiB limit on a checked file \(raise it with --max-file-size/);
    const raised = await runCheck(['--format', 'json', '--max-file-size', '32M', 'src'], dir, mark);
    assert.equal(raised.code, 2, raised.stderr);
    assert.deepEqual((JSON.parse(raised.stdout) as JsonReport).failures.map((f) => f.path), ['src/huge.py']);
    const bad = await runCheck(['--max-file-size', '12x', 'src'], dir, mark);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--max-file-size takes a size such as 64M or 1G, not '12x'/);
  });

  await t.test('--config takes an absolute path', async () => {
    const dir = make({ 'src/a.mjs': DETACHED, 'src/helper.mjs': DETACHED });
    const config = join(make({}), 'leash.json');
    writeFileSync(config, JSON.stringify({ helpers: ['src/helper.mjs'] }));
    const run = await runCheck(['--format', 'json', '--config', config, 'src'], dir, mark);
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual((JSON.parse(run.stdout) as JsonReport).findings.map((f) => f.path), ['src/a.mjs']);
  });

  await t.test('a folder named on the command line is checked even when its name is a default skip', async () => {
    const dir = make({ 'build/a.mjs': DETACHED, 'scripts/b.py': 'import os\nos.setsid()\n', 'build/test/t.mjs': DETACHED });
    const run = await runCheck(['--format', 'json', 'build', 'scripts'], dir, mark);
    assert.equal(run.code, 1, run.stderr);
    // Folders under the named one still get the default skips.
    assert.deepEqual((JSON.parse(run.stdout) as JsonReport).findings.map((f) => f.path).sort(), ['build/a.mjs', 'scripts/b.py']);
    const skipped = make({ 'gen/a.mjs': DETACHED, '.leash-check.json': JSON.stringify({ skip: ['gen'] }) });
    const configured = await runCheck(['gen'], skipped, mark);
    assert.equal(configured.code, 0);
    assert.match(configured.stdout, /^note: gen: skipped, it matches the configuration's "helpers" or "skip"$/m);
  });

  await t.test('symlinks met while listing are not followed, in git mode and walk mode alike, and are noted', async () => {
    const outside = make({ 'real.mjs': DETACHED, 'dir/x.mjs': DETACHED });
    const dir = make({ 'src/a.mjs': DETACHED });
    symlinkSync(join(outside, 'real.mjs'), join(dir, 'src/link.mjs'));
    symlinkSync(join(outside, 'dir'), join(dir, 'src/linked-dir'));
    const walked = await runCheck(['--format', 'json', 'src'], dir, mark);
    const report = JSON.parse(walked.stdout) as JsonReport;
    assert.deepEqual(report.findings.map((f) => f.path), ['src/a.mjs']);
    assert.deepEqual(report.notes.sort(), [
      'src/link.mjs: a symbolic link, not followed (name its target to check it)',
      'src/linked-dir: a symbolic link, not followed (name its target to check it)',
    ]);
    gitInit(dir);
    const git = JSON.parse((await runCheck(['--format', 'json'], dir, mark)).stdout) as JsonReport;
    assert.deepEqual(git.findings.map((f) => f.path), ['src/a.mjs']);
    assert.deepEqual(git.notes.sort(), report.notes);
    // Named on the command line, a link is followed: the user asked for it.
    const named = JSON.parse((await runCheck(['--format', 'json', 'src/link.mjs'], dir, mark)).stdout) as JsonReport;
    assert.deepEqual(named.findings.map((f) => f.path), ['src/link.mjs']);
  });
});
