#!/usr/bin/env node
// Brings each corpus repository's recorded commit into test/corpus/src/<owner>+<name> from a bare
// mirror (default /work/.mirror/<owner>+<name>/repo, where the session's fetch tool leaves it; set
// CORPUS_MIRRORS to another folder of <owner>+<name>/repo). Only the files the check can read
// (Python, JS/TS) are written: the mirrors leave out their largest blobs (media), which would
// stop a whole-tree `git archive`. A repository without a mirror is named and skipped;
// measure.mjs then reports it absent.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const mirrors = process.env.CORPUS_MIRRORS ?? '/work/.mirror';
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));
const CHECKED = /\.(?:py|[cm]?[jt]s|[jt]sx)$/i;

for (const { repo, commit } of manifest.repositories) {
  const key = repo.replace('/', '+');
  const dest = join(here, 'src', key);
  if (existsSync(dest)) continue;
  // A bare mirror, or (as the fetch tool leaves some) a repository with a work tree's `.git` in it.
  const mirror = join(mirrors, key, 'repo');
  const gitDir = existsSync(join(mirror, '.git')) ? join(mirror, '.git') : mirror;
  const git = (args, input) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, maxBuffer: 1 << 30 });
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    console.log(`absent: ${repo} (${commit} not in ${gitDir})`);
    continue;
  }
  // mode, type, object and path of every blob, NUL-separated.
  const entries = git(['ls-tree', '-r', '-z', commit]).toString('utf8').split('\0').filter(Boolean)
    .map((line) => { const [meta, path] = line.split('\t'); const [mode, type, oid] = meta.split(' '); return { mode, type, oid, path }; })
    .filter((e) => e.type === 'blob' && e.mode !== '120000' && CHECKED.test(e.path));
  const partial = `${dest}.partial`;
  let missing = 0;
  for (const e of entries) {
    let body;
    try { body = git(['cat-file', 'blob', e.oid]); } catch { missing++; continue; }
    mkdirSync(dirname(join(partial, e.path)), { recursive: true });
    writeFileSync(join(partial, e.path), body);
  }
  mkdirSync(partial, { recursive: true });
  renameSync(partial, dest);
  console.log(`checked out: ${repo} ${commit} (${entries.length - missing} files${missing ? `, ${missing} missing from the mirror` : ''})`);
}
