// proc-leash-check: the static check for detached spawns, as a library. `checkMain` is the whole
// `leash check` command (what `leash check` in proc-leash and the `leash-check` bin run), for a
// process of its own: it tunes that process's V8 (v8-tuning.ts);
// `checkText` checks one file's text; the rest is the prefilter and the package's own identity.
export { checkMain, EXIT_CANNOT_RUN, EXIT_CLEAN, EXIT_FINDINGS, CHECK_USAGE } from './check/main.js';
export { checkText, languageOf, mayMatter } from './check/checker.js';
export { about, ruleDocsUrl, type About } from './check/about.js';
export type { Finding, Language, RuleId, Severity } from './check/types.js';
