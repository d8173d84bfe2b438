// node:fs for the command's bundle (scripts/build.mjs aliases `node:fs` to this module there): the
// same functions, taken through require. An ES import of node:fs makes Node build the module's ES
// facade, which reads every export, its lazy getters too (`ReadStream`, `promises`): that loads
// the fs streams and about 3 ms of every run goes to a stream no check opens. Only the names the
// check's modules import are here; the bundle fails to build if one is missing.
import { createRequire } from 'node:module';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

export const { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } = fs;
