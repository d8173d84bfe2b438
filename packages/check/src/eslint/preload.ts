// Imported first by the plugin, for its side effect: typescript is compiled from the code cache
// (typescript-cache.ts) before js-rules.ts, imported after this, requires it. An `eslint .` run
// is a cold process like `leash check`, and pays the same 0.2 s of compiling without it.
import { preloadTypeScript } from '../check/typescript-cache.js';

preloadTypeScript();
