// `leash check [PATH...]`: fails a build when code starts a child that will outlive its owner.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { applyBaseline, formatBaseline, readBaseline } from './baseline.js';
import { checkText } from './checker.js';
import { CheckError, describeFailure, loadConfig } from './config.js';
import { DEFAULT_MAX_FILE_BYTES, listTargets, PathFilter, readTarget } from './files.js';
import { parseSize } from './regular-file.js';
import { failing, FORMATS, render, type Failure, type Format, type Report } from './formats.js';
import type { Finding } from './types.js';
import { tuneForCommand } from './v8-tuning.js';

/** Exit codes: 0 clean (warnings allowed), 1 findings, 2 could not run or bad usage. */
export const EXIT_CLEAN = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_CANNOT_RUN = 2;

export const CHECK_USAGE = `usage: leash check [options] [PATH...]

Flags code that starts a child process in its own session or group (so it outlives its owner)
outside the owned-spawn helper. Without PATHs: the files git tracks in this directory.

options:
  --format text|json|sarif|github   output format (default: text; github under GITHUB_ACTIONS=true)
  --baseline FILE      the burn-down baseline (default: .leash-check-baseline.json if present)
  --print-baseline     print the current counts as a baseline file and exit 0
  --strict-baseline    also fail when the baseline allows more than is left
  --all                ignore the baseline
  --config FILE        configuration file (default: .leash-check.json if present)
  --max-file-size SIZE  largest file checked, e.g. 64M (default 16M); a larger one is exit 2
  --force-exclude      skip named paths as a run without PATHs would (tests, vendored code, the
                       configuration's skip globs, other languages): for hooks such as pre-commit
  -h, --help           this text

exit: 0 clean, 1 findings, 2 could not run or could not judge a file (git cannot list, unreadable
      path, config or baseline, a file the analysers cannot handle) or bad usage
`;

interface Options {
  paths: string[];
  format: Format | undefined;
  baseline: string | undefined;
  config: string | undefined;
  printBaseline: boolean;
  strictBaseline: boolean;
  all: boolean;
  help: boolean;
  maxFileBytes: number;
  forceExclude: boolean;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { paths: [], format: undefined, baseline: undefined, config: undefined, printBaseline: false, strictBaseline: false, all: false, help: false, maxFileBytes: DEFAULT_MAX_FILE_BYTES, forceExclude: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = (): string => {
      const inline = arg.indexOf('=');
      if (inline >= 0) return arg.slice(inline + 1);
      const next = argv[++i];
      if (next === undefined) throw new CheckError(`${arg} needs a value`);
      return next;
    };
    const flag = arg.startsWith('--') ? arg.split('=')[0] : arg;
    if (arg === '--') {
      options.paths.push(...argv.slice(i + 1));
      break;
    } else if (flag === '--format') {
      const format = value();
      if (!(FORMATS as readonly string[]).includes(format)) throw new CheckError(`unknown format '${format}' (one of ${FORMATS.join(', ')})`);
      options.format = format as Format;
    } else if (flag === '--baseline') options.baseline = value();
    else if (flag === '--config') options.config = value();
    else if (flag === '--max-file-size') {
      const size = value();
      const bytes = parseSize(size);
      if (bytes === undefined || bytes === 0) throw new CheckError(`--max-file-size takes a size such as 64M or 1G, not '${size}'`);
      options.maxFileBytes = bytes;
    }
    else if (arg === '--print-baseline') options.printBaseline = true;
    else if (arg === '--strict-baseline') options.strictBaseline = true;
    else if (arg === '--all') options.all = true;
    else if (arg === '--force-exclude') options.forceExclude = true;
    else if (arg === '-h' || arg === '--help') options.help = true;
    else if (arg.startsWith('-')) throw new CheckError(`unknown option '${arg}'`);
    else options.paths.push(arg);
  }
  return options;
}

/**
 * The whole command, for a process of its own: it tunes the process's V8 for the run
 * (v8-tuning.ts), reports on stdout and exits quietly if stdout is closed.
 */
export async function checkMain(argv: string[]): Promise<number> {
  tuneForCommand();
  let options: Options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`leash check: ${(error as Error).message}\n${CHECK_USAGE}`);
    return EXIT_CANNOT_RUN;
  }
  // A reader that stops early (`leash check | head -1`) closes the pipe: the report cannot be
  // delivered, which is neither a finding nor a crash. Exit 2 quietly, with no stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_CANNOT_RUN);
    throw error;
  });
  if (options.help) {
    process.stdout.write(CHECK_USAGE);
    return EXIT_CLEAN;
  }
  try {
    return await run(options);
  } catch (error) {
    if (!(error instanceof CheckError)) throw error;
    process.stderr.write(`leash check: ${error.message}\n`);
    return EXIT_CANNOT_RUN;
  }
}

async function run(options: Options): Promise<number> {
  const cwd = process.cwd();
  const config = loadConfig(cwd, options.config);
  const { targets, notes } = listTargets(options.paths, cwd, new PathFilter(config), options.forceExclude);
  const findings: Finding[] = [];
  const failures: Failure[] = [];
  let checked = 0;
  for (const target of targets) {
    // Each file is judged on its own: a file that cannot be read or analysed fails the run (exit 2)
    // by name, and the other files' findings are still reported.
    try {
      const read = readTarget(target, options.maxFileBytes);
      if ('skipped' in read) {
        if (read.skipped !== '') notes.push(read.skipped);
        continue;
      }
      findings.push(...(await checkText(target.path, read.text, target.language)));
      checked++;
    } catch (error) {
      failures.push({ path: target.path, reason: describeFailure(error) });
    }
  }
  if (options.printBaseline) {
    if (failures.length > 0) {
      for (const failure of failures) process.stderr.write(`leash check: cannot check ${failure.path}: ${failure.reason}\n`);
      return EXIT_CANNOT_RUN; // a baseline printed without these files would under-count
    }
    process.stdout.write(formatBaseline(findings));
    return EXIT_CLEAN;
  }
  let advisories: string[] = [];
  if (!options.all) {
    const baselinePath = resolve(cwd, options.baseline ?? config.baseline);
    const baseline = readBaseline(baselinePath, options.baseline !== undefined);
    advisories = applyBaseline(findings, baseline, new Set(targets.map((t) => t.path)), (path) => existsSync(resolve(cwd, path)));
  }
  const format = options.format ?? (process.env.GITHUB_ACTIONS === 'true' ? 'github' : 'text');
  const report: Report = { findings, advisories, notes, failures, filesChecked: checked, strictBaseline: options.strictBaseline };
  process.stdout.write(render(format, report));
  if (failures.length > 0) return EXIT_CANNOT_RUN;
  return failing(report) ? EXIT_FINDINGS : EXIT_CLEAN;
}
