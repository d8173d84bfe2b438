// The check's own name, version and documentation address, read from its package.json at run
// time so that SARIF, the ESLint plugin's meta and the docs links never drift from the release.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface About {
  name: string;
  version: string;
  /** Where docs/check.md is read online; each rule has an anchor there. */
  docsUrl: string;
}

let cached: About | undefined;

/** The nearest package.json above this module (the source tree's, or the installed package's). */
export function about(): About {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown; repository?: unknown; homepage?: unknown };
      if (typeof json.name === 'string' && typeof json.version === 'string') {
        cached = { name: json.name, version: json.version, docsUrl: docsUrlOf(json) };
        return cached;
      }
    } catch {
      // no package.json here, or not one of ours: look further up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  cached = { name: 'proc-leash-check', version: '0.0.0', docsUrl: 'https://www.npmjs.com/package/proc-leash-check' };
  return cached;
}

function docsUrlOf(json: { name?: unknown; repository?: unknown; homepage?: unknown }): string {
  const repository = typeof json.repository === 'string' ? json.repository : (json.repository as { url?: unknown } | undefined)?.url;
  const directory = (json.repository as { directory?: unknown } | undefined)?.directory;
  if (typeof repository === 'string') {
    const web = repository.replace(/^git\+/, '').replace(/\.git$/, '').replace(/^git@github\.com:/, 'https://github.com/').replace(/^github:/, 'https://github.com/');
    if (/^https:\/\//.test(web)) return `${web}/blob/HEAD/${typeof directory === 'string' ? `${directory.replace(/\/$/, '')}/` : ''}docs/check.md`;
  }
  if (typeof json.homepage === 'string') return json.homepage;
  return `https://www.npmjs.com/package/${String(json.name)}`;
}

/** The docs address of one rule: docs/check.md has an anchor per rule. */
export function ruleDocsUrl(rule: string): string {
  const base = about().docsUrl;
  return base.includes('/docs/check.md') ? `${base}#${rule}` : base;
}
