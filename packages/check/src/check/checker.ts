// One file in, its findings out: language by extension, a text prefilter, the language's
// analyser, then exemption markers.
import { dirname, join } from 'node:path';
import { findMarkers, MARKER_TEXT } from './markers.js';
import { withoutHarmlessFlagKeywords } from './python-flags.js';
import { importsAliasedModule, projectMayBindSpawn, SPAWN_MODULE_WORDS } from './project-reach.js';
import { isRegularFile } from './regular-file.js';
import { backgroundMayMatter, DETACHING_PROGRAM_NAMES, QUOTED_PROGRAMS, SHELL_WORDS, shellMayMatter, startOrRunasIn } from './shell.js';
import type { Finding, Language, RawFinding } from './types.js';
import { preloadTypeScript } from './typescript-cache.js';

// Grouped by first letter, as shell.ts's words are (a long alternation scans slower).
const PYTHON_PREFILTER =
  /s(?:tart_new_|et(?:sid|pg(?:id|rp|roup))|sh_?(?:opts|options|args|flags)\s*=)|process_group|windows_detach_popen_kwargs|\bp(?:ty(?:process)?|expect)\b|fork(?:pty|\(\s*\))|D(?:aemonContext|ETACHED_PROCESS|etached\s*\()|\bdimensions\s*=|CREATE_(?:NEW_(?:PROCESS_GROUP|CONSOLE)|BREAKAWAY_FROM_JOB)|creationflags|SIGHUP\s*,\s*(?:\w+\.)?SIG_IGN|PtyFlags|StartTransientUnit/;
// `detach`, not `detached`: a key spelled in parts (`['detach' + 'ed']`) is folded by the analyser.
// `unref` as a word: `.unref()`, `.unref?.()`, `['unref']()`.
// `node-pty` (and its forks' names): every spawn of a PTY library is a finding, options or not.
// `'daemon'` quoted: npm's daemon package, named by its specifier (every call of it detaches).
// `setpgrp(`/`setpgid(0`: Python code given to an interpreter's -c (shell.ts: DETACHING_CODE), or a
// POSIX binding's own (`setpgid?.(0, 0)` from posix-node; `setsid` is a shell word).
const JS_PREFILTER = /detach|\bunref\b|node-pty|['"`]daemon['"`]|setpg(?:rp(?:\?\.)?\(|id(?:\?\.)?\(\s*0)|StartTransientUnit/;

/** A `.childProcess` member, which is a child whatever it is a member of (js-rules.ts: OWN_NAME_CHILD_MEMBERS). */
const CHILD_PROCESS_MEMBER = /\.(?:nodeC|c)hildProcess\b/;
/**
 * An argument vector of a detaching program, first in an array literal (`["systemd-run",
 * "--no-block", …]`): js-rules.ts reads it wherever it is built (checkProgramVector).
 */
const PROGRAM_VECTOR = String.raw`\[\s*['"\x60](?:[\w.\/-]*\/)?(?:${DETACHING_PROGRAM_NAMES})['"\x60]\s*,`;
/**
 * Every JS/TS finding hangs on a spawn function, bound from a spawn module (its name is in the
 * text), from a project module (a relative specifier, or a bare one the project's config maps:
 * passesSpawnGate), on options typed as spawn options, or on a
 * `.childProcess` member, or is a detaching program's argument vector. A file with none of these
 * can report nothing, whatever it says about `detached`: a minified bundle that mentions detached
 * nodes in its comments is not parsed (a megabyte of them was a second of CPU).
 */
const PROGRAM_VECTOR_TEST = new RegExp(`${PROGRAM_VECTOR}|StartTransientUnit`);
const JS_SPAWN_GATE = new RegExp(`${SPAWN_MODULE_WORDS.source}|${CHILD_PROCESS_MEMBER.source}|(?:from|require\\s*\\(|import\\s*\\()\\s*['"\`]\\.\\.?[/'"\`]|${PROGRAM_VECTOR}|StartTransientUnit`);

/**
 * Every word any later test looks for, in one expression: most files hold none of them, and one
 * pass over their text costs less than the four it replaces (the Python words, the shell words,
 * `start /b` in any case, the marker): the whole prefilter is 40 against 50 ms of CPU on the
 * 15.8 MB of the realistic bench tree's Python part. A file it passes over is judged on its lone
 * `&`s alone.
 */
const anyOf = (...sources: string[]): RegExp => new RegExp(sources.join('|'));
const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * Shell text in Python is reported only where a command runner of `subprocess`, `os` or `asyncio`
 * (or a project's own runner by its name, `RunCmd`, `run_command`) receives it (python-rules.ts: COMMAND_RUNNERS, names resolved through the imports), or where an
 * argument vector starts with a detaching program (`["twistd", ...]`, python-daemonize's
 * `Daemonize`) or holds cmd's `start` after `/c` or with its empty title (`['start', '', cmd]`),
 * built anywhere: a file naming none of these can hold a `&` or a `start` in its strings and still
 * have nothing to report. Such files (HTML and URLs in strings, `"Start %s"` messages) were a
 * third of the Python text parsed on the corpus.
 */
const PYTHON_SHELL_GATE =
  /\b(?:subprocess|asyncio)\b|\bos\s*\.\s*(?:system|popen|spawn|exec|posix_spawn)|RunCmd|run_?c(?:md|ommand)|\bfrom\s+os\s+import\b|\bimport\s+os\s+as\b|daemonize|twistd|systemd-run|start-stop-daemon|tmux|screen|\bssh\b|runas|p[sa]exec|["']\/[ck]["'][ \t]*,\s*[rub]?["']start["']|["']start["'][ \t]*,[ \t]*(?:""|''|"''"|'""')/i;
/**
 * A command runner named (Python's subprocess or os's, JS's child_process, execa or any spawn),
 * joined to the first scan as a group of its own: where it is the first word found, the rest of the
 * text is searched for the other words alone, and a file with none of them is read on only for the
 * documented daemonizing programs (shell.ts: QUOTED_PROGRAMS). Joined to the first scan they cost
 * it nothing; the programs' own words joined to it slowed it by half.
 */
const PYTHON_RUNNER_WORDS = String.raw`subprocess|\bos\.(?:system|popen|spawn|exec)|RunCmd|run_?c(?:md|ommand)`;
const JS_RUNNER_WORDS = 'child_process|execa|spawn';
const PYTHON_CORE = anyOf(PYTHON_PREFILTER.source, SHELL_WORDS.source, escaped(MARKER_TEXT));
// The marker holds `detach`, so the JS words already cover it.
const JS_CORE = anyOf(JS_PREFILTER.source, SHELL_WORDS.source);
const PYTHON_WORDS = new RegExp(`${PYTHON_CORE.source}|${PYTHON_RUNNER_WORDS}`, 'g');
const JS_WORDS = new RegExp(`${JS_CORE.source}|${JS_RUNNER_WORDS}`, 'g');
// Whether the word found is a runner's: read off the match (a group in the scan slowed it a tenth).
const RUNNER_WORD = new RegExp(`^(?:${PYTHON_RUNNER_WORDS}|${JS_RUNNER_WORDS})$`.replace('\\b', ''));
const PYTHON_CORE_FROM = new RegExp(PYTHON_CORE.source, 'g');
const JS_CORE_FROM = new RegExp(JS_CORE.source, 'g');

/** What the first scan found: a word of the prefilter's, only a command runner's, or nothing. */
function firstScan(text: string, words: RegExp, core: RegExp): 'word' | 'runner' | undefined {
  words.lastIndex = 0;
  const found = words.exec(text);
  if (!found) return undefined;
  if (!RUNNER_WORD.test(found[0])) return 'word';
  // No word of the others ends before the runner's word (the scan takes the first match), but one
  // may start inside it or after it.
  core.lastIndex = found.index;
  return core.test(text) ? 'word' : 'runner';
}

export function languageOf(path: string): Language | undefined {
  if (/\.py$/i.test(path)) return 'python';
  if (/\.(?:[cm]?[jt]s|[jt]sx)$/i.test(path) && !/\.d\.[cm]?ts$/i.test(path)) return 'js';
  return undefined;
}

/**
 * Option values that keep the child in its owner's group, written as literals: on their own they
 * can never be flagged, so a file whose only trigger is one of them is not worth parsing (a file
 * passing `detached: false` or `start_new_session=False` everywhere is common, and was most of
 * the parsing done for nothing).
 */
const HARMLESS_JS = /\bdetached\s*:\s*(?:false|null|undefined|0|void 0)(?=\s*[,}])/g;
const HARMLESS_PYTHON = /(?:\bstart_new_session\s*=\s*(?:False|None|0)|\bprocess_group\s*=\s*None)(?=\s*[,)])/g;
// `creationflags=flags`, `creationflags=subprocess.CREATE_NO_WINDOW`: python-flags.ts.

/**
 * Whole-line comments (`# ...`, `// ...`): a trigger word in prose ("never calls setsid", "spawned
 * detached so that ...") is not a reason to parse. A line that could be inside an f-string or a
 * template literal with an expression in it (`{` in Python, `${` in JS) is kept; any other string
 * such a line could belong to is plain text, whose only reportable content, shell backgrounding,
 * is tested on the whole text before this.
 */
const COMMENT_LINE_PYTHON = /^[ \t]*#[^\n{]*$/gm;
const COMMENT_LINE_JS = /^[ \t]*\/\/[^\n]*$/gm;
const withoutCommentLines = (text: string, language: Language): string =>
  language === 'python' ? text.replace(COMMENT_LINE_PYTHON, '') : text.replace(COMMENT_LINE_JS, (line) => (line.includes('${') ? line : ''));

/** Where a checked file is: its path (relative to the working directory) and the root its imports are read in. */
export interface FilePlace {
  path: string;
  root: string;
}

/**
 * The spawn gate: a spawn module's word, a relative specifier, ... (JS_SPAWN_GATE), or an import of
 * a project module by a bare name the project's config maps (`from 'backend/utils'`), read only
 * when the words are not there and the file's place is known.
 */
function passesSpawnGate(text: string, place: FilePlace | undefined): boolean {
  return JS_SPAWN_GATE.test(text) || (place !== undefined && importsAliasedModule(place.path, text, place.root));
}

/**
 * Whether a file could hold anything the analysers flag; most files cannot and are never parsed.
 * Without `place`, a JS file that imports project modules by bare names alone is turned away.
 */
export function mayMatter(text: string, language: Language, place?: FilePlace): boolean {
  if (language === 'js') {
    // A PTY spawn known by its size needs no spawn module in its file (the PTY library may be handed
    // in from elsewhere, terminalizer's `di.pty.spawn(cmd, args, { cols, rows })`): past the gate.
    const pty = ptySizeMayMatter(text);
    const scan = firstScan(text, JS_WORDS, JS_CORE_FROM);
    if (scan !== 'word' && !startOrRunasIn(text)) return pty || ((backgroundMayMatter(text, language) || (scan === 'runner' && QUOTED_PROGRAMS.test(text))) && passesSpawnGate(text, place));
    // The marker holds `detached`: a JS file the prefilter finds nothing in has no marker either,
    // so most files are read one time less.
    const words = JS_PREFILTER.test(text) || pty;
    if (words && text.includes(MARKER_TEXT)) return true; // its markers must be checked for use
    if (pty) return true;
    const shell = shellMayMatter(text, language);
    // The gate last: an alternation of many words, read only for the few files that got this far.
    if ((!words && !shell) || !passesSpawnGate(text, place)) return false;
    if (shell) return true;
  } else {
    const scan = firstScan(text, PYTHON_WORDS, PYTHON_CORE_FROM);
    if (scan !== 'word' && !startOrRunasIn(text)) return (backgroundMayMatter(text, language) || (scan === 'runner' && QUOTED_PROGRAMS.test(text))) && PYTHON_SHELL_GATE.test(text);
    if (text.includes(MARKER_TEXT)) return true;
    if (shellMayMatter(text, language) && PYTHON_SHELL_GATE.test(text)) return true;
    if (!PYTHON_PREFILTER.test(text)) return false;
  }
  if (language === 'js') return JS_PREFILTER.test(withoutCommentLines(text, language).replace(HARMLESS_JS, '')) || ptySizeMayMatter(text);
  return PYTHON_PREFILTER.test(withoutHarmlessFlagKeywords(withoutCommentLines(text, language).replace(HARMLESS_PYTHON, '')));
}

// The analysers load on first use: TypeScript's parser (about 2 MB of JavaScript) and the Python grammar
// (a WebAssembly module) cost far more start-up time than scanning a tree whose files mostly fail
// the prefilter, and a pure-Python or pure-JS repository never needs the other one.
let jsAnalyser: Promise<typeof import('./js-rules.js')> | undefined;
let pythonAnalyser: Promise<typeof import('./python-rules.js')> | undefined;

async function analyse(text: string, path: string, language: Language): Promise<RawFinding[]> {
  if (language === 'js') {
    if (!jsAnalyser) {
      preloadTypeScript(); // compiled from a code cache, before js-rules.ts requires it
      jsAnalyser = import('./js-rules.js');
    }
    return (await jsAnalyser).analyseJs(text, path);
  }
  pythonAnalyser ??= import('./python-rules.js');
  return (await pythonAnalyser).analysePython(text, { ownCopies: ownLibraryCopies(path, text) });
}

/** An import of a library whose spawns the Python analyser knows by name, which a project may keep a copy of. */
const IMPORTS_COPIED = /^[ \t]*(?:import|from)[ \t]+(ptyprocess|pexpect|daemon|daemonize)\b/gm;

/**
 * The libraries a Python file imports that its own folder holds a copy of (`ptyprocess/__init__.py`
 * or `ptyprocess.py` beside it: extraterm's PTY server, run as a script, imports its copy). The copy
 * is checked where it spawns; a call of it is the project's own, as of any other helper. Only in a
 * folder that is no package (no `__init__.py`): a script's own folder is first on `sys.path`, but a
 * package module's absolute `import pexpect` finds the installed library, whatever lies beside it,
 * so a planted `pexpect.py` there hides nothing.
 */
function ownLibraryCopies(path: string, text: string): Set<string> | undefined {
  let copies: Set<string> | undefined;
  const folder = dirname(path);
  let script: boolean | undefined;
  for (const match of text.matchAll(IMPORTS_COPIED)) {
    const name = match[1] as string;
    if (copies?.has(name)) continue;
    script ??= !isRegularFile(join(folder, '__init__.py'));
    if (!script) return undefined;
    if (isRegularFile(join(folder, name, '__init__.py')) || isRegularFile(join(folder, `${name}.py`))) (copies ??= new Set()).add(name);
  }
  return copies;
}

export async function checkText(path: string, text: string, language: Language): Promise<Finding[]> {
  if (!mayMatter(text, language, { path, root: process.cwd() })) return [];
  if (language === 'js' && !spawnReachable(path, text)) return applyMarkers(path, text, []);
  return applyMarkers(path, text, await analyse(text, path, language));
}

/**
 * Whether a JS/TS file that passed the spawn gate by a project specifier alone can report
 * anything: every finding but four kinds hangs on a spawn function or handle, which such a file can only
 * get from a project module, and the project modules reachable from it are read for a spawn
 * module's name (project-reach.ts) before the parser is loaded. The others: a loose `detached`
 * literal, reported in any file with a binding (a project import is one), a PTY spawn known by
 * its `cols` and `rows`, `.childProcess.unref()`, and a detaching program's argument vector; a
 * file that may hold any is parsed as before. A file not parsed here
 * has no syntax error reported, as for any file the prefilter turns away.
 */
function spawnReachable(path: string, text: string): boolean {
  if (SPAWN_MODULE_WORDS.test(text) || DETACHED_KEY.test(text) || CHILD_PROCESS_MEMBER.test(text) || (COLS.test(text) && ROWS.test(text)) || PROGRAM_VECTOR_TEST.test(text)) return true;
  return projectMayBindSpawn(path, text);
}

/**
 * Where a property the analyser reads as `detached` may be: the word whole, or `detach` ending a
 * piece of a key it folds (`'detach' + 'ed'`, `` `detach${x}` ``, an escape). Not a method or a
 * name that goes on (`node.detach()`, `detachReporter`), which were most files holding `detach`.
 */
const DETACHED_KEY = /\bdetached\b|detach(?=['"`\\$])/;
/**
 * A PTY spawn known by its shape (js-rules.ts: a `spawn` call whose options hold `cols` and
 * `rows`, node-pty's signature, from whatever module): no other word of the prefilter need be in
 * its file (tabby's `this.ptyInterface.spawn(cmd, args, { cols, rows })`, which the prefilter
 * turned away while the analyser reports it).
 */
function ptySizeMayMatter(text: string): boolean {
  return text.includes('cols') && text.includes('spawn') && COLS.test(text) && ROWS.test(text);
}
/** `cols` and `rows` as names or keys of their own, not in CSS classes (`grid-cols-2`, `auto-rows-fr`). */
const COLS = /(?<![\w$-])cols(?![\w$-])/;
const ROWS = /(?<![\w$-])rows(?![\w$-])/;

/** Exempts findings covered by a marker with a reason, and reports markers that exempt nothing. */
export function applyMarkers(path: string, text: string, raw: RawFinding[]): Finding[] {
  const markers = findMarkers(text);
  const byLine = new Map(markers.filter((m) => m.reason !== '').map((m) => [m.line, m]));
  const used = new Set<number>();
  const findings: Finding[] = raw.map((hit) => {
    const finding: Finding = { path, line: hit.line, column: hit.column, rule: hit.rule, severity: hit.severity, message: hit.message };
    // The flagged line and the call's span first, the line above last: a marker that ends the
    // previous statement belongs to that statement when it has a finding of its own.
    const ranges: Array<[number, number]> = [[hit.line, hit.line], ...hit.spans, [hit.line - 1, hit.line - 1]];
    search: for (const [from, to] of ranges) {
      for (let line = from; line <= to; line++) {
        const marker = byLine.get(line);
        if (marker) {
          finding.suppressed = { kind: 'marker', reason: marker.reason };
          used.add(line);
          break search;
        }
      }
    }
    return finding;
  });
  for (const marker of markers) {
    if (marker.reason === '') {
      findings.push({ path, line: marker.line, column: marker.column, rule: 'unused-marker', severity: 'warning', message: `\`${MARKER_TEXT}\` without a reason after a dash exempts nothing` });
    } else if (!used.has(marker.line)) {
      findings.push({ path, line: marker.line, column: marker.column, rule: 'unused-marker', severity: 'warning', message: `\`${MARKER_TEXT}\` marker exempts nothing here; remove it` });
    }
  }
  return findings.sort((a, b) => a.line - b.line || a.column - b.column);
}
