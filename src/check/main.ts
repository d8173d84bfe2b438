// `leash check [PATH...]`: fails a build when code starts a child that will outlive its owner.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { applyBaseline, formatBaseline, readBaseline } from './baseline.js';
import { checkText } from './checker.js';
import { CheckError, loadConfig } from './config.js';
import { listTargets, PathFilter } from './files.js';
import { failing, FORMATS, render, type Format } from './formats.js';
import type { Finding } from './types.js';

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
  -h, --help           this text

exit: 0 clean, 1 findings, 2 could not run (git cannot list, unreadable path or config) or bad usage
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
}

function parseArgs(argv: string[]): Options {
  const options: Options = { paths: [], format: undefined, baseline: undefined, config: undefined, printBaseline: false, strictBaseline: false, all: false, help: false };
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
    else if (arg === '--print-baseline') options.printBaseline = true;
    else if (arg === '--strict-baseline') options.strictBaseline = true;
    else if (arg === '--all') options.all = true;
    else if (arg === '-h' || arg === '--help') options.help = true;
    else if (arg.startsWith('-')) throw new CheckError(`unknown option '${arg}'`);
    else options.paths.push(arg);
  }
  return options;
}

export async function checkMain(argv: string[]): Promise<number> {
  let options: Options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`leash check: ${(error as Error).message}\n${CHECK_USAGE}`);
    return EXIT_CANNOT_RUN;
  }
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
  const targets = listTargets(options.paths, cwd, new PathFilter(config));
  const findings: Finding[] = [];
  for (const target of targets) {
    let text: string;
    try {
      text = readFileSync(target.absolute, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (target.fromGit && code === 'ENOENT') continue; // deleted in the work tree, still in the index
      throw new CheckError(`cannot read ${target.path}: ${code ?? (error as Error).message}`);
    }
    findings.push(...(await checkText(target.path, text, target.language)));
  }
  if (options.printBaseline) {
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
  const report = { findings, advisories, filesChecked: targets.length, strictBaseline: options.strictBaseline };
  process.stdout.write(render(format, report));
  return failing(report) ? EXIT_FINDINGS : EXIT_CLEAN;
}
