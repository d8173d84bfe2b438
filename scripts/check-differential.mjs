// Differential check of the chunked parses of `leash check` against the whole-file parse: on a
// corpus of real files and of mutated copies of them, the findings of the statements-only parse
// (python-statements.ts, js-chunks.ts), past the prefilter, must be those of parsing each file whole. Not run by
// `npm test` (minutes, not seconds); run it after changing a splitter:
//
//   node scripts/check-differential.mjs [--lang js|python] [--mutations N] [--seed S]
//        [--limit FILES] [--max-bytes B] [--save DIR] [--quiet] [--dist DIR] [PATH...]
//
// Corpus without PATHs: the repository's own sources and tests, its node_modules (.js .mjs .cjs .ts .mts .cts .jsx .tsx) and
// CPython's standard library under /usr/lib/python3* and ~/.pyenv/versions (deduplicated by
// content). Mutations insert what a splitter must get right (quotes, backticks, braces, `\`, `#`,
// `"""`, line continuations, CRLF, tabs, a lone `from`/`import` line, decorators, JSX, regular
// expressions after a value or a `}`) and a trigger naming one of the file's names, so that the
// chunk closure decides something. Python files are compared when they pass the prefilter or hold
// an option it may judge harmless (start_new_session, process_group, creationflags), the chunked
// side through the prefilter; JS/TS files always, the chunked side through the prefilter
// as the CLI and the ESLint rule run it, so that a file the prefilter (or its spawn gate) turns away
// with a finding in it is a difference.
//
// A difference is reported unless it is the documented one: a syntax error that only the parser
// sees, in a statement left out of the chunked parse (docs/check.md). Exit 1 on any other.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir, loadavg } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));
// --dist DIR: another build of proc-leash-check's dist/ (an older checkout's, say), for a before/after.
const distAt = process.argv.indexOf('--dist');
const DIST = join(distAt >= 0 ? process.argv.splice(distAt, 2)[1] : join(REPO, 'packages/check/dist'), 'check');
const load = async (name) => import(pathToFileURL(join(DIST, name)).href);
const { analyseJs } = await load('js-rules.js');
const { analysePython } = await load('python-rules.js');
const { mayMatter, languageOf } = await load('checker.js');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = args[at + 1];
  args.splice(at, 2);
  return value;
};
const only = option('--lang', undefined);
const mutations = Number(option('--mutations', '3'));
let seed = Number(option('--seed', '1')) >>> 0;
const firstSeed = seed;
const limit = Number(option('--limit', 'Infinity'));
const maxBytes = Number(option('--max-bytes', String(512 * 1024)));
const saveDir = option('--save', undefined);
const quietAt = args.indexOf('--quiet');
const quiet = quietAt >= 0;
if (quiet) args.splice(quietAt, 1);

/** mulberry32: a seeded generator, so that a run can be repeated exactly. */
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];

// --- corpus --------------------------------------------------------------------------------------

function* walk(root) {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop();
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) stack.push(path);
      else if (entry.isFile() && languageOf(entry.name)) yield path;
    }
  }
}

function corpusRoots() {
  if (args.length > 0) return args;
  // The repository's own sources first: TypeScript, and full of spawns, `detached` and `unref`.
  const roots = ['src', 'packages/check/src', 'test', 'bench', 'demo', 'scripts'].map((dir) => join(REPO, dir)).concat(join(REPO, 'node_modules'));
  for (const dir of ['/usr/lib']) {
    try {
      for (const name of readdirSync(dir)) if (/^python3/.test(name)) roots.push(join(dir, name));
    } catch {}
  }
  try {
    for (const name of readdirSync(join(homedir(), '.pyenv/versions'))) roots.push(join(homedir(), '.pyenv/versions', name, 'lib'));
  } catch {}
  return roots;
}

function corpus() {
  const seen = new Set();
  const files = [];
  for (const root of corpusRoots()) {
    for (const path of walk(root)) {
      const language = languageOf(path);
      if (only && language !== only) continue;
      let size;
      try {
        size = statSync(path).size;
      } catch {
        continue;
      }
      if (size > maxBytes) continue;
      const text = readFileSync(path, 'utf8');
      const hash = createHash('sha1').update(text).digest('hex');
      if (seen.has(hash)) continue;
      seen.add(hash);
      files.push({ path, language });
      if (files.length >= limit) return files;
    }
  }
  return files;
}

// --- mutations -----------------------------------------------------------------------------------

const NAME = /[A-Za-z_$][\w$]*/g;
const lineStarts = (text) => {
  const starts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
};
const insertAt = (text, at, piece) => text.slice(0, at) + piece + text.slice(at);
const someName = (text) => {
  const names = text.match(NAME) ?? ['x'];
  return pick(names.slice(0, 5000));
};
/** Somewhere: a line start half the time (where statements begin), else any offset. */
const somewhere = (text) => (random() < 0.5 ? pick(lineStarts(text)) : Math.floor(random() * (text.length + 1)));

const COMMON = [
  ['quote', (t) => insertAt(t, somewhere(t), pick(["'", '"']))],
  ['brace', (t) => insertAt(t, somewhere(t), pick(['{', '}', '(', ')', '[', ']']))],
  ['backslash', (t) => insertAt(t, somewhere(t), '\\')],
  ['crlf', (t) => t.replace(/\r?\n/g, '\r\n')],
  ['tabs', (t) => t.replace(/^( {2})+/gm, (s) => '\t'.repeat(s.length / 2))],
  ['lone-from', (t) => insertAt(t, pick(lineStarts(t)), 'from\n')],
  ['lone-import', (t) => insertAt(t, pick(lineStarts(t)), 'import\n')],
  ['decorator', (t) => insertAt(t, pick(lineStarts(t)), `@${someName(t)}\n`)],
  ['cut-line', (t) => insertAt(t, somewhere(t), '\n')],
];

const JS_MUTATIONS = [
  ...COMMON,
  ['backtick', (t) => insertAt(t, somewhere(t), '`')],
  ['template', (t) => insertAt(t, pick(lineStarts(t)), `const __t = \`a \${\`b \${${someName(t)}}\`} c\`\n`)],
  ['hash', (t) => insertAt(t, somewhere(t), '#')],
  ['from-next-line', (t) => t.replace(/\}\s*from\s*(['"])/, (m, q) => `}\nfrom ${q}`)],
  ['jsx', (t) => insertAt(t, pick(lineStarts(t)), `const __j = <div a={${someName(t)}}>{x}</div>;\n`)],
  ['regex-after-value', (t) => insertAt(t, pick(lineStarts(t)), `${someName(t)}\n/ 2 /g.test(${someName(t)})\n`)],
  ['regex-after-brace', (t) => insertAt(t, pick(lineStarts(t)), `if (a) {}\n/x/.test(${someName(t)})\n`)],
  ['division', (t) => insertAt(t, pick(lineStarts(t)), `const __d = ${someName(t)} / 2 / ${someName(t)}\n`)],
  ['no-semicolons', (t) => t.replace(/;\n/g, '\n')],
  ['unref', (t) => insertAt(t, pick(lineStarts(t)), `${someName(t)}.unref();\n`)],
  ['detached', (t) => insertAt(t, pick(lineStarts(t)), `${someName(t)}(${someName(t)}, { detached: true })\n`)],
  ['spawn-import', (t) => insertAt(t, pick(lineStarts(t)), `import { spawn as ${someName(t)} } from 'node:child_process'\n`)],
  ['shell-text', (t) => insertAt(t, pick(lineStarts(t)), `${someName(t)}('nohup x &')\n`)],
  // Paired `&` is no trigger of its own (js-chunks.ts): joined to a name, or with a lone one beside it.
  ['shell-and', (t) => {
    const name = someName(t);
    const call = pick([`'make && make test' + ${name}`, `'a &' + '& b' + ${name}`, `\`x && \${${name}}\``, `'a && b &' + ${name}`]);
    return insertAt(t, pick(lineStarts(t)), `${someName(t)}(${call})\n`);
  }],
];

const PYTHON_MUTATIONS = [
  ...COMMON,
  ['hash', (t) => insertAt(t, somewhere(t), '#')],
  ['triple-quote', (t) => insertAt(t, somewhere(t), pick(['"""', "'''"]))],
  ['continuation', (t) => insertAt(t, somewhere(t), '\\\n')],
  ['fstring', (t) => insertAt(t, pick(lineStarts(t)), `x = f"{${someName(t)}!r:>{w}} {{}}"\n`)],
  ['indent', (t) => insertAt(t, pick(lineStarts(t)), '    ')],
  ['else', (t) => insertAt(t, pick(lineStarts(t)), 'else:\n    pass\n')],
  ['setsid', (t) => insertAt(t, pick(lineStarts(t)), `${someName(t)}.setsid()\n`)],
  ['session', (t) => insertAt(t, pick(lineStarts(t)), `${someName(t)}.Popen(x, start_new_session=True)\n`)],
  ['import-as', (t) => insertAt(t, pick(lineStarts(t)), `import subprocess as ${someName(t)}\n`)],
  ['from-os', (t) => insertAt(t, pick(lineStarts(t)), `from os import setsid as ${someName(t)}\n`)],
  // Creation flags the prefilter takes for harmless (python-flags.ts), and some it must not.
  ['flags', (t) => {
    const value = pick([someName(t), 'subprocess.CREATE_NO_WINDOW', `${someName(t)} | 0x200`, '0x08000000', `${someName(t)}.x | 8`, 'DETACHED_PROCESS', '0b1000', '1_0', '0o10', '16777216', '8.0', '1.5']);
    return insertAt(t, pick(lineStarts(t)), `subprocess.run(x, creationflags=${value}${pick([',', ')', ' ,', '\n', ' # DETACHED_PROCESS\n'])}${pick(['', ' check=True)', ')'])}\n`);
  }],
];

/** The mutations that add something the analysers look for. */
const JS_TRIGGERS = new Set(['unref', 'detached', 'spawn-import', 'shell-text']);
const PYTHON_TRIGGERS = new Set(['setsid', 'session', 'import-as', 'from-os']);

// --- comparison ----------------------------------------------------------------------------------

const show = (findings) => findings.map((f) => `${f.line}:${f.column} ${f.rule} ${f.severity} ${f.message} [${f.spans.map((s) => s.join('-')).join(',')}]`);

/** Words of the options whose harmless values the Python prefilter passes over (checker.ts, python-flags.ts). */
const HARMLESS_PYTHON_WORDS = /start_new_session|process_group|creationflags/;

async function findings(text, path, language, whole) {
  if (language === 'python') {
    // As the CLI runs it: past the prefilter only.
    if (!whole && !mayMatter(text, language)) return [];
    return show(await analysePython(text, { whole }));
  }
  // As the CLI and the ESLint rule run it: past the prefilter (with its spawn gate) only.
  if (!whole && !mayMatter(text, language)) return [];
  return show(analyseJs(text, path, dirname(path), whole ? 'whole' : 'chunks'));
}

async function attempt(run) {
  try {
    return { found: await run() };
  } catch (error) {
    return { crash: error instanceof Error ? (error.stack ?? error.message).split('\n').slice(0, 3).join(' | ') : String(error) };
  }
}

/** 'same', 'blanked-syntax-error' (documented), or 'different'. */
function compare(chunked, whole) {
  if (chunked.join('\n') === whole.join('\n')) return 'same';
  const isParseError = (line) => / parse-error /.test(line);
  const chunkedErrors = chunked.filter(isParseError);
  const wholeErrors = whole.filter(isParseError);
  // The whole file has a syntax error the chunked parse did not see (it lies in a statement left
  // out); with it, the whole file fails anyway, so no other finding is compared.
  if (wholeErrors.length > 0 && chunkedErrors.length === 0) return 'blanked-syntax-error';
  return 'different';
}

const counts = { files: 0, bytes: 0, comparisons: 0, mutated: 0, same: 0, 'blanked-syntax-error': 0, different: 0, crashed: 0 };
const byMutation = new Map();
const started = Date.now();
const files = corpus();
// Stopped early (a time limit): the counts so far are still a result.
process.once('SIGTERM', summary);
process.once('SIGINT', summary);
const report = (line) => {
  if (!quiet) process.stdout.write(`${line}\n`);
};

let lastProgress = Date.now();
for (const { path, language } of files) {
  const original = readFileSync(path, 'utf8');
  counts.files++;
  await new Promise(setImmediate); // lets a signal in (the analysis awaits only settled promises)
  if (Date.now() - lastProgress > 30_000) {
    lastProgress = Date.now();
    process.stderr.write(`... ${counts.files}/${files.length} files, ${counts.comparisons} compared, ${counts.different} different, ${counts.crashed} crashed\n`);
  }
  counts.bytes += original.length;
  const variants = [['original', original]];
  const list = language === 'python' ? PYTHON_MUTATIONS : JS_MUTATIONS;
  const triggers = language === 'python' ? PYTHON_TRIGGERS : JS_TRIGGERS;
  for (let k = 0; k < mutations; k++) {
    let [name, mutate] = pick(list);
    let text = mutate(original);
    // Half the time a trigger as well, so that an edge the splitter must get right lands in a file
    // the analyser reads (most files hold no trigger and are never parsed).
    if (random() < 0.5 && !triggers.has(name)) {
      const [second, add] = pick(list.filter(([other]) => triggers.has(other)));
      text = add(text);
      name = `${name}+${second}`;
    }
    if (text !== original) variants.push([name, text]);
  }
  for (const [mutation, text] of variants) {
    // A Python file the prefilter turns away is compared only where it holds a harmless option (the
    // prefilter's own judgement, checked here); the analyser never sees the others.
    if (language === 'python' && !mayMatter(text, language) && !HARMLESS_PYTHON_WORDS.test(text)) continue;
    counts.comparisons++;
    if (mutation !== 'original') counts.mutated++;
    let outcome;
    let detail = '';
    const chunked = await attempt(() => findings(text, path, language, false));
    const whole = await attempt(() => findings(text, path, language, true));
    if (chunked.crash !== undefined) {
      // The CLI would fail closed (exit 2), but the whole-file parse judged the file: a difference.
      outcome = whole.crash !== undefined ? 'same' : 'crashed';
      detail = `\n    ${chunked.crash}`;
    } else if (whole.crash !== undefined) {
      // A parser crash is a syntax error the parser could not even report; seen only whole, it lies
      // in a statement left out (see compare).
      outcome = chunked.found.some((line) => / parse-error /.test(line)) ? 'different' : 'blanked-syntax-error';
      detail = `\n    whole crashed: ${whole.crash}\n    chunked: ${chunked.found.join('\n             ')}`;
    } else {
      outcome = compare(chunked.found, whole.found);
      detail = `\n    chunked: ${chunked.found.join('\n             ')}\n    whole:   ${whole.found.join('\n             ')}`;
    }
    counts[outcome]++;
    const tally = byMutation.get(mutation) ?? { compared: 0, different: 0 };
    tally.compared++;
    if (outcome === 'different' || outcome === 'crashed') {
      tally.different++;
      report(`${outcome}: ${path} (${mutation})${detail}`);
      if (saveDir) {
        mkdirSync(saveDir, { recursive: true });
        const name = `${counts.different + counts.crashed}-${mutation}-${basename(path)}`;
        writeFileSync(join(saveDir, name), text);
      }
    }
    byMutation.set(mutation, tally);
  }
}

summary();

function summary() {
  const seconds = (Date.now() - started) / 1000;
  console.log(`\ncorpus: ${counts.files} files, ${(counts.bytes / 1e6).toFixed(1)} MB (${only ?? 'js+python'}, at most ${maxBytes} bytes each, seed ${firstSeed}, ${mutations} mutations a file)`);
  console.log(`compared: ${counts.comparisons} (${counts.comparisons - counts.mutated} originals, ${counts.mutated} mutated copies) in ${seconds.toFixed(0)} s, load average ${loadavg()[0].toFixed(2)}`);
  console.log(`same ${counts.same}, syntax error only in left-out text (documented) ${counts['blanked-syntax-error']}, different ${counts.different}, crashed ${counts.crashed}`);
  // By the first mutation of each variant (a `+trigger` added or not).
  const byFirst = new Map();
  for (const [name, tally] of byMutation) {
    const first = name.split('+')[0];
    const sum = byFirst.get(first) ?? { compared: 0, different: 0 };
    sum.compared += tally.compared;
    sum.different += tally.different;
    byFirst.set(first, sum);
  }
  console.log('\nmutation              compared  different');
  for (const [name, tally] of [...byFirst].sort()) console.log(`${name.padEnd(20)} ${String(tally.compared).padStart(9)} ${String(tally.different).padStart(10)}`);
  process.exit(counts.different + counts.crashed > 0 ? 1 : 0);
}
