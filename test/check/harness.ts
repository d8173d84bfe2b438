// Test plumbing for `leash check`: run the built CLI as a real process, and read a fixture
// suite's `expect:` annotations.
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_ENTRY, FIXTURES, markedEnv } from '../helpers/processes.js';

export interface CheckRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `leash check ARGS` in `cwd`; the process is killed if it outlives its deadline. */
export function runCheck(args: string[], cwd: string, mark: string, env: NodeJS.ProcessEnv = {}): Promise<CheckRun> {
  return new Promise((resolve) => {
    const scrubbed = { ...markedEnv(mark, env) };
    if (!('GITHUB_ACTIONS' in env)) delete scrubbed.GITHUB_ACTIONS;
    execFile(process.execPath, [CLI_ENTRY, 'check', ...args], { cwd, env: scrubbed, timeout: 60_000, maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Expectation {
  file: string;
  line: number;
  rule: string;
}

export interface FixtureCopy {
  dir: string;
  files: string[];
  expected: Expectation[];
  remove(): void;
}

/**
 * Copies test/fixtures/check/<suite> to a temporary folder, dropping the `.fixture` suffix that
 * keeps tsc away from TypeScript cases, and collects the `expect: RULE` annotations.
 */
export function copyFixtures(suite: string): FixtureCopy {
  const dir = mkdtempSync(join(tmpdir(), `leash-check-${suite}-`));
  const files: string[] = [];
  const expected: Expectation[] = [];
  for (const name of readdirSync(join(FIXTURES, 'check', suite)).sort()) {
    if (name.endsWith('.md')) continue;
    const file = name.replace(/\.fixture$/, '');
    cpSync(join(FIXTURES, 'check', suite, name), join(dir, file));
    files.push(file);
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .forEach((text, index) => {
        for (const match of text.matchAll(/expect: ([\w-]+)/g)) expected.push({ file, line: index + 1, rule: match[1] as string });
      });
  }
  return { dir, files, expected, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const key = (e: Expectation) => `${e.file}:${e.line} ${e.rule}`;

/** A scratch project holding `files` (path -> text) in a new temporary folder; the caller removes it. */
export function project(files: Record<string, string>, prefix = 'leash-check-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Makes `dir` a git repository with everything in it committed. */
export function gitInit(dir: string): void {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'fixture');
}
