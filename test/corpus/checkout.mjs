#!/usr/bin/env node
// Brings each corpus repository's recorded commit into test/corpus/src/<owner>+<name> from a bare
// mirror (default /work/.mirror/<owner>+<name>/repo, where the session's fetch tool leaves it; set
// CORPUS_MIRRORS to another folder of <owner>+<name>/repo). Only the files the check can read
// (Python, JS/TS) are written, with the tsconfig*.json and jsconfig*.json files whose aliases it
// resolves (and the files their `extends` names): the mirrors leave out their largest blobs
// (media), which would stop a whole-tree `git archive`. A repository without a mirror is named and
// skipped; measure.mjs then reports it absent. A checkout made before configs were brought gets
// the ones it lacks (nothing it holds is rewritten).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const mirrors = process.env.CORPUS_MIRRORS ?? '/work/.mirror';
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));
const CHECKED = /\.(?:py|[cm]?[jt]s|[jt]sx)$/i;
const CONFIG = /(?:^|\/)[tj]sconfig[^/]*\.json$/i;
// `"extends": "./base"` or `"extends": ["../a.json", "./b"]`: the relative names, read from the text.
const EXTENDS = /"extends"\s*:\s*("(?:[^"\\]|\\.)*"|\[[^\]]*\])/g;

/**
 * The configs of the tree (`byPath`, path to blob) with every file their `extends` names by a
 * relative path, in turn (`.json` added as TypeScript does); `read` gives a blob's text.
 */
function configsWithBases(byPath, read) {
  const found = new Map([...byPath].filter(([path]) => CONFIG.test(path)));
  for (const queue = [...found.values()]; queue.length > 0; ) {
    const e = queue.pop();
    for (const [, value] of read(e).matchAll(EXTENDS)) {
      for (const [, name] of value.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
        if (!/^\.\.?\//.test(name)) continue;
        const path = posix.normalize(posix.join(posix.dirname(e.path), name));
        const base = [path, `${path}.json`].find((candidate) => byPath.has(candidate));
        if (base !== undefined && !found.has(base)) {
          found.set(base, byPath.get(base));
          queue.push(byPath.get(base));
        }
      }
    }
  }
  return [...found.values()];
}

for (const { repo, commit } of manifest.repositories) {
  const key = repo.replace('/', '+');
  const dest = join(here, 'src', key);
  // A bare mirror, or (as the fetch tool leaves some) a repository with a work tree's `.git` in it.
  const mirror = join(mirrors, key, 'repo');
  const gitDir = existsSync(join(mirror, '.git')) ? join(mirror, '.git') : mirror;
  const git = (args, input) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, maxBuffer: 1 << 30 });
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    if (!existsSync(dest)) console.log(`absent: ${repo} (${commit} not in ${gitDir})`);
    continue;
  }
  // mode, type, object and path of every blob, NUL-separated.
  const blobs = git(['ls-tree', '-r', '-z', commit]).toString('utf8').split('\0').filter(Boolean)
    .map((line) => { const [meta, path] = line.split('\t'); const [mode, type, oid] = meta.split(' '); return { mode, type, oid, path }; })
    .filter((e) => e.type === 'blob' && e.mode !== '120000');
  const byPath = new Map(blobs.map((e) => [e.path, e]));
  const bodies = new Map();
  const read = (e) => {
    try { if (!bodies.has(e.oid)) bodies.set(e.oid, git(['cat-file', 'blob', e.oid])); } catch { return ''; }
    return bodies.get(e.oid).toString('utf8');
  };
  const layout = configsWithBases(byPath, read);
  const exists = existsSync(dest);
  const entries = exists ? layout.filter((e) => !existsSync(join(dest, e.path))) : [...blobs.filter((e) => CHECKED.test(e.path)), ...layout];
  if (exists && entries.length === 0) continue;
  const target = exists ? dest : `${dest}.partial`;
  let missing = 0;
  for (const e of entries) {
    let body;
    try { body = bodies.get(e.oid) ?? git(['cat-file', 'blob', e.oid]); } catch { missing++; continue; }
    mkdirSync(dirname(join(target, e.path)), { recursive: true });
    writeFileSync(join(target, e.path), body, { flag: exists ? 'wx' : 'w' }); // never over a file of a checkout
  }
  if (!exists) {
    mkdirSync(target, { recursive: true });
    renameSync(target, dest);
  }
  const what = exists ? 'configs added' : 'checked out';
  console.log(`${what}: ${repo} ${commit} (${entries.length - missing} files${missing ? `, ${missing} missing from the mirror` : ''})`);
}
