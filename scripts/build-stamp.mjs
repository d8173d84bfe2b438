// The build's inputs as one digest: `npm run build` skips itself when dist/ was built from exactly
// these bytes (scripts/build.mjs). Contents, not mtimes: a checkout, a copy or `touch` that changes
// no byte keeps the build; any changed, added, removed or renamed input file redoes it.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders whose every file is an input, and single input files, relative to the repository. */
export const INPUT_FOLDERS = ['src', 'test', 'bench', 'demo', 'packages/check/src', 'packages/check/bin'];
export const INPUT_FILES = [
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'packages/check/tsconfig.json',
  'packages/check/package.json',
  'scripts/build.mjs',
  'scripts/build-stamp.mjs',
  'scripts/build-typescript-parser.mjs',
];

function filesUnder(root, folder, found) {
  let entries;
  try {
    entries = readdirSync(join(root, folder), { withFileTypes: true });
  } catch {
    return; // a folder that is not there is no input
  }
  for (const entry of entries) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') filesUnder(root, path, found);
    } else if (entry.isFile()) found.push(path);
  }
}

/** Hex digest of every input's path and bytes under `root`, in a fixed order. */
export function buildInputsDigest(root) {
  const files = [];
  for (const folder of INPUT_FOLDERS) filesUnder(root, folder, files);
  for (const file of INPUT_FILES) files.push(file);
  files.sort();
  const hash = createHash('sha256');
  for (const file of files) {
    let bytes;
    try {
      bytes = readFileSync(join(root, file));
    } catch {
      bytes = undefined;
    }
    // Path and length framed, so no two different trees hash the same bytes.
    hash.update(`${file}\0${bytes === undefined ? 'missing' : bytes.length}\0`);
    if (bytes) hash.update(bytes);
  }
  return hash.digest('hex');
}
