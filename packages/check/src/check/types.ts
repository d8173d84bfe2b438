// Shared shapes of the detached-spawn check.

export type Severity = 'error' | 'warning';

export type Language = 'python' | 'js';

/** Names of the rules, one per kind of detaching shape (docs/check.md lists what each one matches). */
export type RuleId =
  | 'js-detached-spawn'
  | 'js-detached-literal'
  | 'js-unref-child'
  | 'js-pty'
  | 'py-new-session'
  | 'py-os-detach'
  | 'py-pty'
  | 'py-detach-helper'
  | 'py-windows-detach'
  | 'shell-background'
  | 'parse-error'
  | 'unused-marker';

/** One hit as a language analyser sees it, before markers and the baseline are applied. */
export interface RawFinding {
  rule: RuleId;
  severity: Severity;
  /** 1-based line and column of the reported position. */
  line: number;
  column: number;
  message: string;
  /**
   * Lines (1-based, inclusive ranges) where an exemption marker also counts: the enclosing call,
   * and the line that sets the detaching option when it is elsewhere.
   */
  spans: Array<[number, number]>;
}

export type Suppression = { kind: 'marker'; reason: string } | { kind: 'baseline' };

export interface Finding {
  path: string;
  line: number;
  column: number;
  rule: RuleId;
  severity: Severity;
  message: string;
  /** Set when a marker or the baseline keeps this finding from failing the run. */
  suppressed?: Suppression;
}
