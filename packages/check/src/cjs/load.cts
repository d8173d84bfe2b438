// require() of this ES-module package: Node loads the very ES modules `import` loads (one module
// instance), or says plainly which Node it needs. A copy of proc-leash's own: this package imports
// nothing from the core.

const MINIMUM = 'Node.js ^20.19.0 or >=22.12.0';

/** require()s an ES module of this package, turning Node's ERR_REQUIRE_ESM into the real requirement. */
export function requireEsm<T>(load: () => T, entry: string): T {
  try {
    return load();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ESM') throw error;
    throw new Error(
      `require('${entry}') needs ${MINIMUM} (require of ES modules); this is Node.js ${process.versions.node}. ` +
        `Use import('${entry}') or upgrade Node.js.`,
      { cause: error },
    );
  }
}
