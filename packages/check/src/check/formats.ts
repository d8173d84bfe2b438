// Output formats: text for people, JSON for scripts, SARIF 2.1.0 for code scanning, GitHub
// workflow commands for annotations on a pull request.
import { about, ruleDocsUrl } from './about.js';
import { MARKER_TEXT } from './markers.js';
import type { Finding, RuleId } from './types.js';

export const FORMATS = ['text', 'json', 'sarif', 'github'] as const;
export type Format = (typeof FORMATS)[number];

/** A file the run could not judge: unreadable, or an analyser failed on it. Fails the run (exit 2). */
export interface Failure {
  path: string;
  reason: string;
}

export interface Report {
  findings: Finding[];
  advisories: string[];
  /** Things met but not looked at (symlinks not followed, non-regular files, skipped named folders). */
  notes: string[];
  failures: Failure[];
  filesChecked: number;
  /** Whether the advisories fail the run (--strict-baseline). */
  strictBaseline: boolean;
}

export const FIX_HINT =
  'Start long-lived children with spawnOwned (or hand a group something else spawned to ownProcessGroup); ' +
  `if a child must outlive its owner on purpose, mark the line with \`${MARKER_TEXT} — <reason>\`.`;

const RULE_HELP: Record<RuleId, string> = {
  'js-detached-spawn': 'A spawn whose options set `detached` (or a call of npm\'s `daemon` package, which always does): the child leads its own group and survives its owner.',
  'js-detached-literal': '`detached` set in a file that spawns processes, not traced to a spawn call.',
  'js-unref-child': '`.unref()` on a child process handle: the owner can exit while the child runs on.',
  'js-pty': 'node-pty\'s spawn, by import or by its signature (`spawn(file, args, { cols, rows })`): a child on a pseudo-terminal always starts a new session.',
  'py-new-session': 'start_new_session / process_group / posix_spawn setsid or setpgroup: the child gets its own session or group.',
  'py-os-detach': 'os.setsid, os.setpgid or os.setpgrp, or a daemonizing library (python-daemon\'s DaemonContext, daemonize.Daemonize): a process leaves its owner\'s group.',
  'py-pty': 'pty.fork, pty.spawn, os.forkpty, pexpect, ptyprocess, or any .spawn(..., dimensions=...): the child always starts a new session.',
  'py-detach-helper': 'A call of windows_detach_popen_kwargs(), which returns detaching Popen options.',
  'py-windows-detach': 'DETACHED_PROCESS, CREATE_NEW_PROCESS_GROUP, CREATE_NEW_CONSOLE or CREATE_BREAKAWAY_FROM_JOB in creation flags.',
  'shell-background': 'A literal shell command that backgrounds a process (nohup, setsid, &, disown, cmd start, start /b, Start-Process) or runs a detaching program (daemonize, systemd-run, start-stop-daemon -b, tmux new -d, screen -dm, twistd without --nodaemon).',
  'parse-error': 'The file could not be parsed, so a detached spawn in it could go unseen.',
  'unused-marker': 'An exemption marker that exempts nothing, or has no reason.',
};

/** Findings that fail the run or are shown as warnings: not exempt, not within the baseline. */
export function reported(findings: Finding[]): Finding[] {
  return findings.filter((f) => f.suppressed === undefined);
}

export function failing(report: Report): boolean {
  return report.failures.length > 0 || reported(report.findings).some((f) => f.severity === 'error') || (report.strictBaseline && report.advisories.length > 0);
}

export function render(format: Format, report: Report): string {
  switch (format) {
    case 'text':
      return renderText(report);
    case 'json':
      return renderJson(report);
    case 'sarif':
      return renderSarif(report);
    case 'github':
      return renderGithub(report);
  }
}

function renderText(report: Report): string {
  const shown = reported(report.findings);
  const lines = shown.map((f) => `${f.path}:${f.line}:${f.column} ${f.rule} ${f.severity === 'warning' ? 'warning: ' : ''}${f.message}`);
  for (const failure of report.failures) lines.push(`${failure.path}: cannot check: ${failure.reason}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  if (report.advisories.length > 0) {
    lines.push(`advisory: the baseline is stale; regenerate it with --print-baseline${report.strictBaseline ? ' (fails with --strict-baseline)' : ''}:`);
    lines.push(...report.advisories.map((a) => `  ${a}`));
  }
  const spawns = shown.filter((f) => f.severity === 'error' && f.rule !== 'parse-error').length;
  const unparsed = new Set(shown.filter((f) => f.rule === 'parse-error').map((f) => f.path)).size;
  const exempt = report.findings.filter((f) => f.suppressed?.kind === 'marker').length;
  const baselined = report.findings.filter((f) => f.suppressed?.kind === 'baseline').length;
  const tally = `${report.filesChecked} file(s) checked, ${exempt} marked exempt, ${baselined} within the baseline`;
  const problems: string[] = [];
  if (spawns > 0) problems.push(`${spawns} detached spawn finding(s)`);
  if (unparsed > 0) problems.push(`${unparsed} file(s) that could not be parsed`);
  if (report.failures.length > 0) problems.push(`${report.failures.length} file(s) that could not be checked`);
  if (report.strictBaseline && report.advisories.length > 0) problems.push('a stale baseline (--strict-baseline)');
  if (problems.length > 0) {
    lines.push('', `${problems.join(', ')} (${tally}).`);
    if (spawns > 0) lines.push(`${FIX_HINT} Rules: ${about().docsUrl}`);
  } else {
    lines.push(`no detached spawns outside the owned-spawn helper (${tally})`);
  }
  return `${lines.join('\n')}\n`;
}

function renderJson(report: Report): string {
  const plain = (f: Finding) => ({ path: f.path, line: f.line, column: f.column, rule: f.rule, severity: f.severity, message: f.message });
  return `${JSON.stringify(
    {
      findings: reported(report.findings).map(plain),
      suppressed: report.findings.filter((f) => f.suppressed).map((f) => ({ ...plain(f), suppressed: f.suppressed })),
      advisories: report.advisories,
      notes: report.notes,
      failures: report.failures,
      filesChecked: report.filesChecked,
      failed: failing(report),
    },
    null,
    2,
  )}\n`;
}

function renderSarif(report: Report): string {
  const rules = Object.keys(RULE_HELP) as RuleId[];
  const results = report.findings.map((f) => ({
    ruleId: f.rule,
    ruleIndex: rules.indexOf(f.rule),
    level: f.severity === 'error' ? 'error' : 'warning',
    message: { text: f.message },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: encodeURI(f.path), uriBaseId: '%SRCROOT%' },
          region: { startLine: f.line, startColumn: f.column },
        },
      },
    ],
    ...(f.suppressed?.kind === 'marker' ? { suppressions: [{ kind: 'inSource', justification: f.suppressed.reason }] } : {}),
    ...(f.suppressed?.kind === 'baseline'
      ? { baselineState: 'unchanged', suppressions: [{ kind: 'external', justification: 'tolerated by the leash check baseline' }] }
      : {}),
  }));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'leash-check',
            version: about().version,
            semanticVersion: about().version,
            informationUri: about().docsUrl,
            rules: rules.map((id) => ({ id, shortDescription: { text: RULE_HELP[id] }, help: { text: FIX_HINT }, helpUri: ruleDocsUrl(id) })),
          },
        },
        invocations: [
          {
            executionSuccessful: report.failures.length === 0,
            toolExecutionNotifications: [
              ...report.failures.map((f) => ({
                level: 'error',
                message: { text: `cannot check: ${f.reason}` },
                locations: [{ physicalLocation: { artifactLocation: { uri: encodeURI(f.path), uriBaseId: '%SRCROOT%' } } }],
              })),
              ...report.notes.map((note) => ({ level: 'note', message: { text: note } })),
            ],
          },
        ],
        results,
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}

// Workflow command values escape %, CR and LF; properties also escape : and ,.
const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

function renderGithub(report: Report): string {
  const shown = reported(report.findings);
  const lines = shown.map(
    (f) => `::${f.severity} file=${escapeProperty(f.path)},line=${f.line},col=${f.column},title=${escapeProperty(`leash ${f.rule}`)}::${escapeData(`${f.message} (${ruleDocsUrl(f.rule)})`)}`,
  );
  for (const failure of report.failures) lines.push(`::error file=${escapeProperty(failure.path)},title=leash cannot check::${escapeData(failure.reason)}`);
  for (const note of report.notes) lines.push(`::notice title=leash check::${escapeData(note)}`);
  for (const advisory of report.advisories) lines.push(`::${report.strictBaseline ? 'error' : 'warning'} title=leash baseline::${escapeData(advisory)}`);
  // The fix is said once per run, not on every annotation.
  if (shown.some((f) => f.severity === 'error' && f.rule !== 'parse-error')) lines.push(`::notice title=leash check: how to fix::${escapeData(FIX_HINT)}`);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
