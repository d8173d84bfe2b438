// CommonJS entry of 'proc-leash-check/eslint': the plugin object itself (what `import leash from` gives),
// from the same module instance `import` loads.
import type * as Plugin from '../eslint/index.js' with { 'resolution-mode': 'import' };
import { requireEsm } from './load.cjs';

const plugin: typeof Plugin.default = requireEsm(
  () => (require('../eslint/index.js') as typeof Plugin).default,
  'proc-leash-check/eslint',
);
export = plugin;
