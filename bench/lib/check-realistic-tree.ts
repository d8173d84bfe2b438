// A tree shaped like the code `leash check` is for: agent and tooling modules of 6-13 KB, most of
// which import subprocess/os or child_process and use them in ordinary ways (run a tool, stream
// its output, stop it, a shell command with `&&`, a timer unref'd, Windows creation flags), about
// 1 % of which detach; some long modules; and a few large minified bundles that mention
// "detached" in comments and strings. Generated at bench time, deterministic.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RealisticTree {
  dir: string;
  /** The Python part: a git repository laid out as the reference checker expects (its script in scripts/). */
  python: { dir: string; files: number; bytes: number; detaching: number };
  /** JS/TS modules and the bundles, beside it. */
  js: { dir: string; files: number; bytes: number; detaching: number };
  bundles: string[];
  bundleBytes: number;
}

/** A module's size in bytes: 6-13 KB, a fiftieth of them long (40-60 KB). */
function sizeOf(i: number): number {
  if (i % 50 === 7) return 40_000 + ((i * 7919) % 20_000);
  return 6_000 + ((i * 7919) % 7_000);
}

const PY_HEADER = (i: number) =>
  `"""Tool adapter ${i}: runs external commands for the agent and reports their output."""\n` +
  'from __future__ import annotations\n\nimport asyncio\nimport json\nimport logging\nimport os\nimport shlex\nimport signal\nimport subprocess\nfrom pathlib import Path\n\n' +
  'logger = logging.getLogger(__name__)\nDEFAULT_TIMEOUT = 60\n\n\n';

const PY_PARTS: Array<(n: string) => string> = [
  (n) =>
    `def run_${n}(cmd, cwd=None, timeout=DEFAULT_TIMEOUT):\n    """Run a tool command and return its standard output."""\n    logger.debug("running %s in %s", cmd, cwd)\n` +
    `    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)\n    if result.returncode != 0:\n` +
    `        logger.warning("command failed (%d): %s", result.returncode, result.stderr[-500:])\n    return result.stdout\n\n\n`,
  (n) =>
    `def stream_${n}(args, env=None):\n    proc = subprocess.Popen(\n        args,\n        stdout=subprocess.PIPE,\n        stderr=subprocess.STDOUT,\n` +
    `        env={**os.environ, **(env or {})},\n        bufsize=1,\n        text=True,\n    )\n    lines = []\n    assert proc.stdout is not None\n` +
    `    for line in proc.stdout:\n        lines.append(line.rstrip())\n    proc.wait(timeout=120)\n    return proc.returncode, lines\n\n\n`,
  (n) =>
    `def stop_${n}(proc, grace=5.0):\n    """Stop a tool and its group: TERM, then KILL after the grace."""\n    if proc.poll() is not None:\n        return proc.returncode\n` +
    `    try:\n        os.killpg(os.getpgid(proc.pid), signal.SIGTERM)\n    except ProcessLookupError:\n        return proc.returncode\n` +
    `    try:\n        return proc.wait(timeout=grace)\n    except subprocess.TimeoutExpired:\n        os.killpg(os.getpgid(proc.pid), signal.SIGKILL)\n        return proc.wait()\n\n\n`,
  (n) =>
    `def repo_state_${n}(repo: Path) -> list[str]:\n    out = subprocess.check_output("git status --porcelain && git rev-parse HEAD", shell=True, cwd=repo, text=True)\n` +
    `    return [line for line in out.splitlines() if line.strip()]\n\n\n`,
  (n) =>
    `class Result${n}:\n    def __init__(self, name: str, code: int, output: str) -> None:\n        self.name = name\n        self.code = code\n        self.output = output\n\n` +
    `    def to_json(self) -> str:\n        return json.dumps({"name": self.name, "code": self.code, "output": self.output[:2000]})\n\n` +
    `    @classmethod\n    def parse(cls, text: str) -> "Result${n}":\n        data = json.loads(text)\n        return cls(data["name"], int(data.get("code", 0)), data.get("output", ""))\n\n\n`,
  (n) =>
    `async def run_async_${n}(*args: str, cwd: str | None = None) -> tuple[int, bytes]:\n    proc = await asyncio.create_subprocess_exec(*args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)\n` +
    `    out, err = await asyncio.wait_for(proc.communicate(), timeout=DEFAULT_TIMEOUT)\n    if proc.returncode:\n        logger.info("%s: %s", args[0], err.decode(errors="replace")[:200])\n    return proc.returncode or 0, out\n\n\n`,
  (n) =>
    `def quote_${n}(parts: list[str]) -> str:\n    """Join a command for the log; the command itself is run without a shell."""\n    return " ".join(shlex.quote(part) for part in parts)\n\n\n` +
    `def env_for_${n}(extra: dict[str, str] | None = None) -> dict[str, str]:\n    env = dict(os.environ)\n    env.setdefault("LANG", "C.UTF-8")\n    env.update(extra or {})\n    return env\n\n\n`,
];
/** A tenth of the modules: Windows creation flags, as cross-platform tools write them. */
const PY_WINDOWS = (n: string) =>
  `def run_hidden_${n}(args):\n    flags = subprocess.CREATE_NO_WINDOW if os.name == "nt" else 0\n    return subprocess.run(args, creationflags=flags, check=True)\n\n\n`;
const PY_DETACH = (n: string) =>
  `def launch_daemon_${n}(args):\n    return subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\n\n`;

const JS_HEADER = (i: number, ts: boolean) =>
  `// Tool runner ${i}: starts external commands for the agent and collects their output.\n` +
  `import { ${ts ? 'type ChildProcess, ' : ''}exec, execFile, spawn } from 'node:child_process';\nimport { promisify } from 'node:util';\nimport { join } from 'node:path';\n\n` +
  `const execFileAsync = promisify(execFile);\n\n`;

const JS_PARTS: Array<(n: string, ts: boolean) => string> = [
  (n, ts) =>
    `export function run${n}(command${ts ? ': string' : ''}, args${ts ? ': string[]' : ''}, cwd${ts ? ': string' : ''})${ts ? ': Promise<string>' : ''} {\n  return new Promise((resolve, reject) => {\n` +
    `    const child = spawn(command, args, { cwd, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });\n    let out = '';\n` +
    `    child.stdout.on('data', (chunk${ts ? ': Buffer' : ''}) => (out += chunk.toString()));\n    child.on('error', reject);\n` +
    `    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(\`\${command} exited \${code}\`))));\n  });\n}\n\n`,
  (n, ts) =>
    `export async function head${n}(cwd${ts ? ': string' : ''})${ts ? ': Promise<string>' : ''} {\n  const { stdout } = await execFileAsync('git', ['rev-parse', 'HEAD'], { cwd, timeout: 30_000 });\n  return stdout.trim();\n}\n\n`,
  (n, ts) =>
    `export function stopAfter${n}(child${ts ? ': ChildProcess' : ''}, ms${ts ? ': number' : ''})${ts ? ': void' : ''} {\n  if (child.exitCode !== null) return;\n` +
    `  child.kill('SIGTERM');\n  const force = () => child.kill('SIGKILL');\n  child.once('exit', () => clearTimeout(timer${n}));\n  const timer${n} = setTimeout(force, ms);\n}\n\n`,
  (n, ts) =>
    `export function build${n}(cwd${ts ? ': string' : ''}, done${ts ? ': (error: Error | null, output: string) => void' : ''})${ts ? ': void' : ''} {\n` +
    `  exec('npm run build && npm test -- --reporter dot', { cwd, maxBuffer: 16 << 20 }, (error, stdout, stderr) => done(error, stdout + stderr));\n}\n\n`,
  (n, ts) =>
    `export class Task${n} {\n  private readonly started = Date.now();\n  constructor(readonly name${ts ? ': string' : ''}, readonly args${ts ? ': string[]' : ''} = []) {}\n` +
    `  describe()${ts ? ': string' : ''} {\n    return \`\${this.name} \${this.args.join(' ')} (\${Math.round((Date.now() - this.started) / 1000)} s)\`;\n  }\n` +
    `  logFile(dir${ts ? ': string' : ''})${ts ? ': string' : ''} {\n    return join(dir, \`\${this.name.replace(/[^a-z0-9]+/gi, '-')}.log\`);\n  }\n}\n\n`,
  (n, ts) =>
    `export function parseStatus${n}(text${ts ? ': string' : ''})${ts ? ': Map<string, string>' : ''} {\n  const entries = new Map${ts ? '<string, string>' : ''}();\n` +
    `  for (const line of text.split('\\n')) {\n    const match = /^(..) (.+)$/.exec(line);\n    if (match) entries.set(match[2], match[1].trim());\n  }\n  return entries;\n}\n\n`,
];
/** A sixth of the modules: a watchdog timer unref'd, so it never holds the process (passes the prefilter, no finding). */
const JS_TIMER = (n: string) =>
  `export function watchdog${n}(onStall${': () => void'}) {\n  const timer = setInterval(onStall, 30_000);\n  timer.unref();\n  return () => clearInterval(timer);\n}\n\n`;
const JS_DETACH = (n: string) =>
  `export function launchDaemon${n}(script${': string'}) {\n  const child = spawn(process.execPath, [script], { detached: true, stdio: 'ignore' });\n  child.unref();\n  return child.pid;\n}\n\n`;

function pythonModule(i: number): { text: string; detaches: boolean } {
  let text = PY_HEADER(i);
  const size = sizeOf(i);
  const detaches = i % 100 === 3;
  if (i % 10 === 5) text += PY_WINDOWS(`${i}`);
  if (detaches) text += PY_DETACH(`${i}`);
  for (let n = 0; text.length < size; n++) text += (PY_PARTS[(i + n) % PY_PARTS.length] as (n: string) => string)(`${i}_${n}`);
  return { text, detaches };
}

function jsModule(i: number, ts: boolean): { text: string; detaches: boolean } {
  let text = JS_HEADER(i, ts);
  const size = sizeOf(i);
  const detaches = i % 100 === 3;
  const strip = (part: string) => (ts ? part : part.replace(/: \(\) => void|: string/g, ''));
  if (i % 6 === 1) text += strip(JS_TIMER(`${i}`));
  if (detaches) text += strip(JS_DETACH(`${i}`));
  for (let n = 0; text.length < size; n++) text += (JS_PARTS[(i + n) % JS_PARTS.length] as (n: string, ts: boolean) => string)(`${i}_${n}`, ts);
  return { text, detaches };
}

/** A minified bundle of about `bytes`: one line, one function after another, "detached" in its comments and error strings. */
export function minifiedBundle(k: number, bytes: number): string {
  let out = `/*! app bundle ${k} | MIT licensed parts; see LICENSES.txt. A detached node is never rendered. */\n!function(){"use strict";`;
  for (let n = 0; out.length < bytes; n++) {
    const f = `f${k}_${n.toString(36)}`;
    out +=
      `function ${f}(e,t){if(null==e)throw Error("Cannot update a detached node: "+t);var r=e.child,n=0;for(;null!==r;)n+=r.lanes|r.flags,r=r.sibling;return{node:e,count:n,key:t+"-${n % 97}"}}` +
      `var ${f}v=[${n % 13},${(n * 7) % 31},"${f}"].map(function(e){return"string"==typeof e?e.length:e&255});` +
      (n % 40 === 0 ? `/* detached trees are unmounted by the next commit (${n}) */` : '');
  }
  return `${out}}();\n`;
}

function write(path: string, text: string): number {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return Buffer.byteLength(text);
}

/**
 * The tree: `python/` (agent/ and tools/, under git, with the reference's script in scripts/) and
 * `js/` (src/ TypeScript, lib/ JavaScript, public/assets/ the bundles).
 */
export function generateRealisticTree(counts: { py: number; ts: number; js: number; bundles: number }, referenceScript?: string): RealisticTree {
  const dir = mkdtempSync(join(tmpdir(), 'leash-bench-check-realistic-'));
  const python = { dir: join(dir, 'python'), files: 0, bytes: 0, detaching: 0 };
  for (let i = 0; i < counts.py; i++) {
    const { text, detaches } = pythonModule(i);
    python.bytes += write(join(python.dir, i % 3 === 0 ? 'tools' : 'agent', `pkg${i % 30}`, `adapter_${i}.py`), text);
    python.files++;
    if (detaches) python.detaching++;
  }
  if (referenceScript !== undefined) write(join(python.dir, 'scripts/check_detached_spawns.py'), referenceScript);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', ...args], { cwd: python.dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'bench');
  const js = { dir: join(dir, 'js'), files: 0, bytes: 0, detaching: 0 };
  for (let i = 0; i < counts.ts + counts.js; i++) {
    const ts = i < counts.ts;
    const { text, detaches } = jsModule(i, ts);
    js.bytes += write(join(js.dir, ts ? 'src' : 'lib', `m${i % 30}`, `runner${i}.${ts ? 'ts' : 'mjs'}`), text);
    js.files++;
    if (detaches) js.detaching++;
  }
  const bundles: string[] = [];
  let bundleBytes = 0;
  for (let k = 0; k < counts.bundles; k++) {
    const path = join(js.dir, 'public/assets', `app-${k}.js`);
    const size = write(path, minifiedBundle(k, 1_000_000 + k * 50_000));
    bundles.push(path);
    bundleBytes += size;
    js.bytes += size;
    js.files++;
  }
  return { dir, python, js, bundles, bundleBytes };
}
