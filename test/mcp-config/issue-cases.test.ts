// The ten cases of issue 30 that concern `leash mcp` (1-8), each on real files: an install that
// refuses to point clients into a git checkout, wraps that survive leash moving away, undo by
// record, project files in a real git repository, duplicate keys, hostile names, backups through
// a symlink and of another user's file, and hand-made wraps.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { transientInstall } from '../../src/mcp-config/launcher.js';
import { REPO_ROOT } from '../helpers/processes.js';
import { backupFolder, backupsOf, launcherOf, leashLeftovers, leashMcp, placeFixture, PREFIX, type Scratch, scratch } from './cli.js';

const OLD_NODE = '/opt/node-v20.0.0/bin/node';
const OLD_SCRIPT = '/opt/node-v20.0.0/lib/node_modules/proc-leash/bin/leash.js';

function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A copy of this leash installed as npm would, under `prefix`: PREFIX/lib/node_modules/proc-leash. */
function installCopy(prefix: string): string {
  const root = join(prefix, 'lib', 'node_modules', 'proc-leash');
  mkdirSync(root, { recursive: true });
  cpSync(join(REPO_ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'dist', 'src'), join(root, 'dist', 'src'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  return join(root, 'bin', 'leash.js');
}

function hasGit(): boolean {
  return spawnSync('git', ['--version']).status === 0;
}

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

describe('case 1: leash mcp install from a git checkout', () => {
  it('refuses without --force (exit 69, says why, writes nothing); a copy in node_modules is accepted', { skip: hasGit() ? false : 'no git' }, () => {
    const where = scratch();
    try {
      const path = join(where.home, '.cursor', 'mcp.json');
      placeFixture('cursor-mcp.json', path);
      const text = readFileSync(path, 'utf8');
      // This very leash: make sure it does live in a checkout, as the case needs.
      const checkout = join(where.dir, 'clone');
      const entry = installCopy(join(where.dir, 'unused'));
      cpSync(join(entry, '..', '..'), checkout, { recursive: true, dereference: false });
      git(checkout, 'init', '-q');
      const refused = leashMcp(['install'], where, { force: false, entry: join(checkout, 'bin', 'leash.js') });
      assert.equal(refused.code, 69, refused.stderr);
      assert.match(refused.stderr, /runs from a git checkout \(.*clone\)/);
      assert.match(refused.stderr, /npm pack/);
      assert.equal(readFileSync(path, 'utf8'), text, 'nothing written');
      assert.equal(existsSync(launcherOf(where)), false, 'no launcher either');

      const copied = leashMcp(['install'], where, { force: false, entry });
      assert.equal(copied.code, 0, copied.stderr);
      assert.notEqual(readFileSync(path, 'utf8'), text);

      // npx's cache is refused as well, though its copy sits in a node_modules.
      assert.match(transientInstall('/home/a/.npm/_npx/0123abcd/node_modules/proc-leash/bin/leash.js') ?? '', /npx's cache/);
      assert.equal(transientInstall(entry), undefined);
    } finally {
      where.remove();
    }
  });
});

describe('case 2: leash moved away, then installed under another prefix', () => {
  it('the wrap is reported broken with the fix, fails with one line; install from the new place re-points the launcher, no client edit', () => {
    const where = scratch();
    try {
      const path = join(where.home, '.cursor', 'mcp.json');
      mkdirSync(join(where.home, '.cursor'));
      writeFileSync(path, jsonText({ mcpServers: { hello: { command: process.execPath, args: ['-e', 'process.stdout.write("up")'] } } }));
      const first = installCopy(join(where.dir, 'prefix-a'));
      const installed = leashMcp(['install'], where, { force: false, entry: first });
      assert.equal(installed.code, 0, installed.stderr);
      const wrapped = readFileSync(path, 'utf8');
      const server = JSON.parse(wrapped).mcpServers.hello as { command: string; args: string[] };
      assert.equal(server.command, launcherOf(where));
      const start = () => spawnSync(server.command, server.args, { encoding: 'utf8', env: { PATH: '/nonexistent' }, timeout: 30_000 });
      assert.equal(start().stdout, 'up', 'the server starts through the launcher, without PATH');

      rmSync(join(where.dir, 'prefix-a'), { recursive: true, force: true });
      const failed = start();
      assert.equal(failed.status, 127);
      assert.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
      assert.match(failed.stderr, /is gone .*run leash mcp install with the leash you have now/);
      const status = leashMcp(['status'], where);
      assert.match(status.stdout, /mcpServers\.hello\s+BROKEN: the launcher's leash .*prefix-a.* is gone: run 'leash mcp install'/);
      assert.equal(JSON.parse(leashMcp(['status', '--json'], where).stdout).files.find((file: { found: boolean }) => file.found).servers[0].state, 'broken');

      const second = installCopy(join(where.dir, 'prefix-b'));
      const again = leashMcp(['install'], where, { force: false, entry: second });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /launcher .* re-pointed: .*prefix-b/);
      assert.equal(readFileSync(path, 'utf8'), wrapped, 'no client edit');
      assert.equal(start().stdout, 'up', 'the server starts again');
    } finally {
      where.remove();
    }
  });
});

describe('case 3: undo by record', () => {
  const original = jsonText({
    mcpServers: {
      mine: { command: '/usr/local/bin/leash', args: ['run', '--die-with-parent', '--grace', '5', '--', 'npx', '-y', 'server-a'] },
      older: { command: OLD_NODE, args: [OLD_SCRIPT, 'run', '--die-with-parent', '--', 'npx', '-y', 'server-b'] },
      bare: { command: '/opt/mcp/server-c' },
      plain: { command: 'npx', args: ['server-d'] },
    },
    numStartups: 42,
  });

  it('a file nobody touched since comes back byte for byte (earlier wrappers, their options, no args key)', () => {
    const where = scratch();
    try {
      const path = join(where.home, '.claude.json');
      writeFileSync(path, original);
      assert.equal(leashMcp(['install'], where).code, 0);
      const servers = JSON.parse(readFileSync(path, 'utf8')).mcpServers;
      for (const name of ['mine', 'older', 'bare', 'plain']) assert.equal(servers[name].command, launcherOf(where), name);
      const undone = leashMcp(['install', '--undo'], where);
      assert.equal(undone.code, 0, undone.stderr);
      assert.equal(readFileSync(path, 'utf8'), original);
    } finally {
      where.remove();
    }
  });

  it('after a client rewrote the file, each server gets its command and args back as written, and the client\'s edit stays', () => {
    const where = scratch();
    try {
      const path = join(where.home, '.claude.json');
      writeFileSync(path, original);
      assert.equal(leashMcp(['install'], where).code, 0);
      // The client (Claude Code) rewrites the file in its own way: another indentation, a new count, a new key.
      const edited = JSON.parse(readFileSync(path, 'utf8'));
      edited.numStartups = 43;
      edited.tipsHistory = { 'new-user-warmup': 1 };
      writeFileSync(path, `${JSON.stringify(edited, null, 4)}\n`);
      const undone = leashMcp(['install', '--undo'], where);
      assert.equal(undone.code, 0, undone.stderr);
      assert.match(undone.stdout, /mine\s+unwrapped \(as recorded\)/);
      const now = JSON.parse(readFileSync(path, 'utf8'));
      assert.deepEqual(now.mcpServers, JSON.parse(original).mcpServers, 'every server as written before, --grace 5 and the older wrap included');
      assert.equal(now.numStartups, 43, 'the client\'s edit is kept');
      assert.deepEqual(now.tipsHistory, { 'new-user-warmup': 1 });
      assert.match(readFileSync(path, 'utf8'), /^ {4}"numStartups"/m, 'in the client\'s formatting');
    } finally {
      where.remove();
    }
  });
});

describe('case 4: project files in a git repository', () => {
  it('left alone by default and listed with the command that wraps them; with --project, no backup in the repository and a broken one skipped', { skip: hasGit() ? false : 'no git' }, () => {
    const where = scratch();
    try {
      const project = where.project;
      placeFixture('project.mcp.json', join(project, '.mcp.json'));
      placeFixture('cursor-mcp.json', join(project, '.cursor', 'mcp.json'));
      placeFixture('vscode-mcp.json', join(project, '.vscode', 'mcp.json'));
      git(project, 'init', '-q');
      git(project, 'add', '.');
      git(project, 'commit', '-qm', 'team servers');
      const user = join(where.home, '.cursor', 'mcp.json');
      placeFixture('cursor-mcp.json', user);
      const userText = readFileSync(user, 'utf8');

      const installed = leashMcp(['install'], where);
      assert.equal(installed.code, 0, installed.stderr);
      assert.notEqual(readFileSync(user, 'utf8'), userText, 'the user-level file is wrapped');
      assert.equal(git(project, 'status', '--porcelain'), '', 'the repository is as committed');
      assert.match(installed.stdout, /\.mcp\.json: a project file, left alone \(--project to wrap it too\)/);
      const status = leashMcp(['status'], where);
      assert.ok(status.stdout.includes(`to wrap it: leash mcp install --client claude-code --file ${join(project, '.mcp.json')}`), status.stdout);
      assert.ok(status.stdout.includes(`to wrap it: leash mcp install --client cursor --file ${join(project, '.cursor', 'mcp.json')}`), status.stdout);

      // A project file that does not parse blocks nothing else.
      writeFileSync(join(project, '.cursor', 'mcp.json'), '{ "mcpServers": { "x": { "command": "npx" "args": [] } } }\n');
      git(project, 'commit', '-qam', 'broken');
      const withProject = leashMcp(['install', '--project'], where);
      assert.equal(withProject.code, 2, withProject.stderr);
      assert.match(withProject.stderr, /\.cursor\/mcp\.json:1:\d+: a comma is expected here: file skipped/);
      const changes = git(project, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean).sort();
      assert.deepEqual(changes, [' M .mcp.json', ' M .vscode/mcp.json'], 'two files wrapped, nothing new in the repository');
      assert.deepEqual(leashLeftovers(project).filter((entry) => !entry.startsWith('.git/')), []);
      assert.equal(backupsOf(where, join(project, '.mcp.json')).length, 1, 'the backup is in the leash folder');
    } finally {
      where.remove();
    }
  });
});

describe('case 5: a key written twice where leash reads', () => {
  it('is refused with its line and column, as a syntax error; the file is not written; status says so', () => {
    const where = scratch();
    try {
      const path = join(where.home, '.cursor', 'mcp.json');
      mkdirSync(join(where.home, '.cursor'));
      const text = '{\n  "mcpServers": {\n    "a": {\n      "command": "node",\n      "args": ["A"],\n      "command": "printf",\n      "args": ["B"]\n    }\n  }\n}\n';
      writeFileSync(path, text);
      const result = leashMcp(['install'], where);
      assert.equal(result.code, 2, result.stderr);
      assert.ok(result.stderr.includes(`${path}:6:7: the key "command" is written twice here`), result.stderr);
      assert.equal(readFileSync(path, 'utf8'), text);
      assert.match(leashMcp(['status'], where).stdout, /does not parse: .*:6:7: the key "command"/);
      // Two servers of one name, and two server maps: refused too.
      writeFileSync(path, '{ "mcpServers": { "a": { "command": "x" }, "a": { "command": "y" } } }\n');
      assert.match(leashMcp(['install'], where).stderr, /:1:44: the key "a" is written twice/);
      writeFileSync(path, '{ "mcpServers": { "a": { "command": "x" } }, "mcpServers": {} }\n');
      assert.match(leashMcp(['install'], where).stderr, /:1:46: the key "mcpServers" is written twice/);
      // Elsewhere in the file, it is the user's business.
      writeFileSync(path, '{ "theme": 1, "theme": 2, "mcpServers": { "a": { "command": "x" } } }\n');
      assert.equal(leashMcp(['install'], where).code, 0);
    } finally {
      where.remove();
    }
  });
});

describe('case 6: what reaches the terminal', () => {
  it('names with ESC, BEL or a newline are escaped, dotted names unambiguous, env values masked in the dry-run diff', () => {
    const where = scratch();
    try {
      const path = join(where.project, '.mcp.json');
      const evil = 'x\u001b]0;pwned\u0007\u001b[31m\nmcpServers.forged  wrapped';
      writeFileSync(
        path,
        jsonText({
          mcpServers: {
            [evil]: { command: 'npx', args: ['a'] },
            'a.b': { command: 'npx', args: ['b'], env: { API_KEY: 'sk-secret-0123456789' } },
          },
        }),
      );
      const status = leashMcp(['status', '--client', 'claude-code', '--file', path], where);
      const dry = leashMcp(['install', '--dry-run', '--client', 'claude-code', '--file', path], where);
      for (const output of [status.stdout, dry.stdout, dry.stderr]) {
        assert.doesNotMatch(output, /[\u0000-\u0009\u000b-\u001f\u007f]/, 'no control character but line ends');
        assert.doesNotMatch(output, /^\s*mcpServers\.forged/m, 'no forged line');
      }
      assert.ok(status.stdout.includes('mcpServers["x\\u001b]0;pwned\\u0007\\u001b[31m\\nmcpServers.forged  wrapped"]  not wrapped'), status.stdout);
      assert.match(status.stdout, /^ {2}mcpServers\["a\.b"\]\s+not wrapped$/m);
      assert.match(dry.stdout, /would be wrapped/);
      assert.ok(!dry.stdout.includes('sk-secret-0123456789'), dry.stdout);
      assert.match(dry.stdout, /"API_KEY": "<hidden>"/);
    } finally {
      where.remove();
    }
  });
});

/** A user made for one test and removed after it (root only, with useradd). */
function throwawayUser(home: string): { uid: number; gid: number; remove(): void } | undefined {
  if (process.getuid?.() !== 0 || spawnSync('useradd', ['--help']).status !== 0) return undefined;
  const name = `leasht${Math.random().toString(16).slice(2, 8)}`;
  const made = spawnSync('useradd', ['--no-create-home', '--home-dir', home, '--shell', '/bin/false', '--user-group', name], { encoding: 'utf8' });
  if (made.status !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout);
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout);
  mkdirSync(home, { recursive: true });
  chownSync(home, uid, gid);
  return { uid, gid, remove: () => void spawnSync('userdel', [name]) };
}

describe('case 7: backups', () => {
  it('through a symlink into another folder: the backup is in the leash folder (0700, 0600), nothing lands beside the target', () => {
    const where = scratch();
    try {
      const dotfiles = join(where.dir, 'dotfiles');
      const real = join(dotfiles, 'claude.json');
      placeFixture('claude.json', real);
      chmodSync(real, 0o600);
      symlinkSync(real, join(where.home, '.claude.json'));
      const result = leashMcp(['install', '--client', 'claude-code'], where);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(readdirSync(dotfiles), ['claude.json'], 'nothing beside the target');
      const [backup] = backupsOf(where, real);
      assert.ok(backup && result.stdout.includes(backup), `the backup's path is printed: ${result.stdout}`);
      assert.equal(statSync(backup).mode & 0o777, 0o600);
      assert.equal(lstatSync(backupFolder(where)).mode & 0o777, 0o700);
      assert.equal(lstatSync(join(where.home, '.local', 'state', 'leash')).mode & 0o777, 0o700);
    } finally {
      where.remove();
    }
  });

  it('a leash folder that is a symlink is refused, the config left alone', () => {
    const where = scratch();
    try {
      const path = join(where.home, '.cursor', 'mcp.json');
      placeFixture('cursor-mcp.json', path);
      const text = readFileSync(path, 'utf8');
      mkdirSync(join(where.home, '.local', 'state'), { recursive: true });
      mkdirSync(join(where.dir, 'elsewhere'));
      symlinkSync(join(where.dir, 'elsewhere'), join(where.home, '.local', 'state', 'leash'));
      const result = leashMcp(['install'], where);
      assert.equal(result.code, 73, result.stderr);
      assert.match(result.stderr, /is not a folder \(a symlink\?\)/);
      assert.equal(readFileSync(path, 'utf8'), text);
      assert.deepEqual(readdirSync(join(where.dir, 'elsewhere')), []);
    } finally {
      where.remove();
    }
  });

  it('run as root on another user\'s 0600 file: backup, record and launcher are that user\'s, in their folder', (t) => {
    const where = scratch();
    chmodSync(where.dir, 0o755);
    const user = throwawayUser(join(where.dir, 'alice'));
    try {
      if (!user) {
        t.skip('needs root and useradd');
        return;
      }
      const home = join(where.dir, 'alice');
      const path = join(home, '.cursor', 'mcp.json');
      placeFixture('cursor-mcp.json', path);
      chownSync(join(home, '.cursor'), user.uid, user.gid);
      chownSync(path, user.uid, user.gid);
      chmodSync(path, 0o600);
      const result = leashMcp(['install', '--client', 'cursor', '--file', path], where);
      assert.equal(result.code, 0, result.stderr);
      const folder = join(home, '.local', 'state', 'leash');
      const backups = readdirSync(join(folder, 'mcp', 'backups'));
      assert.equal(backups.length, 1);
      const backup = join(folder, 'mcp', 'backups', backups[0]!);
      assert.ok(result.stdout.includes(backup), result.stdout);
      for (const [entry, mode] of [[folder, 0o700], [join(folder, 'mcp', 'backups'), 0o700], [backup, 0o600]] as const) {
        const stats = lstatSync(entry);
        assert.equal(stats.uid, user.uid, `${entry} is alice's`);
        assert.equal(stats.mode & 0o777, mode, entry);
      }
      assert.equal(lstatSync(join(folder, 'bin', 'leash')).uid, user.uid, 'the launcher is alice\'s');
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).mcpServers.github.command, join(folder, 'bin', 'leash'));
      assert.equal(statSync(path).uid, user.uid, 'the config stays alice\'s');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.equal(existsSync(join(where.home, '.local', 'state', 'leash', 'mcp')), false, 'nothing in root\'s folder');
      const undone = leashMcp(['install', '--undo', '--client', 'cursor', '--file', path], where);
      assert.equal(undone.code, 0, undone.stderr);
      assert.equal(readFileSync(path, 'utf8'), readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'mcp-config', 'cursor-mcp.json'), 'utf8'));
    } finally {
      user?.remove();
      where.remove();
    }
  });
});

describe('case 8: wraps made by hand', () => {
  it('`leash run --die-with-parent npx ...` (no --) and `npx -y proc-leash run ...` are re-pointed, never nested', () => {
    const where = scratch();
    try {
      const path = join(where.home, '.cursor', 'mcp.json');
      mkdirSync(join(where.home, '.cursor'));
      writeFileSync(
        path,
        jsonText({
          mcpServers: {
            noDashes: { command: 'leash', args: ['run', '--die-with-parent', 'npx', '-y', 'server-a'] },
            viaNpx: { command: 'npx', args: ['-y', 'proc-leash', 'run', '--die-with-parent', '--', 'uvx', 'server-b'] },
            pinned: { command: 'npx', args: ['--yes', 'proc-leash@0.1.0', 'run', '--grace', '3', 'node', 's.js'] },
            notLeash: { command: 'npx', args: ['-y', 'some-server', 'run', '--', 'x'] },
          },
        }),
      );
      const before = leashMcp(['status'], where);
      assert.match(before.stdout, /noDashes\s+wrapped by another leash \(leash\)/);
      assert.match(before.stdout, /viaNpx\s+wrapped by another leash \(npx -y proc-leash\)/);
      assert.match(before.stdout, /notLeash\s+not wrapped/);
      assert.equal(leashMcp(['install'], where).code, 0);
      const servers = JSON.parse(readFileSync(path, 'utf8')).mcpServers;
      const launcher = launcherOf(where);
      assert.deepEqual(servers.noDashes, { command: launcher, args: [...PREFIX, 'npx', '-y', 'server-a'] });
      assert.deepEqual(servers.viaNpx, { command: launcher, args: [...PREFIX, 'uvx', 'server-b'] });
      assert.deepEqual(servers.pinned, { command: launcher, args: ['run', '--die-with-parent', '--grace', '3', '--', 'node', 's.js'] });
      assert.deepEqual(servers.notLeash, { command: launcher, args: [...PREFIX, 'npx', '-y', 'some-server', 'run', '--', 'x'] });
    } finally {
      where.remove();
    }
  });
});

export type { Scratch };
