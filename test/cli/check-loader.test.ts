// Where `leash check` loads proc-leash-check from: only next to leash itself or in the working
// directory's own node_modules, and only a copy no other user could have written. Each planted
// package here writes a marker file when it is loaded: the marker's absence proves it never ran.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { markedEnv, newMark, REPO_ROOT } from '../helpers/processes.js';

/** Exit code the planted checkMain returns: proof that it ran. */
const PLANTED_EXIT = 7;

let scratch = '';
/** A copy of leash installed as a package, with no proc-leash-check beside it. */
let installedLeash = '';

before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'leash-check-loader-'));
  installedLeash = join(scratch, 'install/node_modules/proc-leash');
  mkdirSync(join(installedLeash, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(installedLeash, 'package.json'));
  cpSync(join(REPO_ROOT, 'bin'), join(installedLeash, 'bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'dist/src'), join(installedLeash, 'dist/src'), { recursive: true });
});
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A proc-leash-check at `dir` whose loading writes `marker`; files 0644, folders 0755. */
function plant(dir: string, marker: string, dependencies: Record<string, string> = {}): void {
  mkdirSync(join(dir, 'dist'), { recursive: true, mode: 0o755 });
  const manifest = {
    name: 'proc-leash-check',
    type: 'module',
    exports: { '.': { default: './dist/index.js' }, './package.json': './package.json' },
    dependencies,
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest), { mode: 0o644 });
  writeFileSync(
    join(dir, 'dist/index.js'),
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'loaded');\nexport async function checkMain() { return ${PLANTED_EXIT}; }\n`,
    { mode: 0o644 },
  );
  for (const path of [dir, join(dir, 'dist'), dirname(dir)]) chmodSync(path, 0o755);
  chmodSync(join(dir, 'package.json'), 0o644);
  chmodSync(join(dir, 'dist/index.js'), 0o644);
}

/** A fresh folder under the scratch, with a project (package.json) in `project`. */
function layout(name: string): { root: string; project: string; marker: string } {
  const root = join(scratch, name);
  const project = join(root, 'project');
  mkdirSync(project, { recursive: true, mode: 0o755 });
  writeFileSync(join(project, 'package.json'), '{"name":"victim","private":true}\n');
  return { root, project, marker: join(root, 'LOADED') };
}

function leashCheck(cwd: string, leashDir = installedLeash) {
  const result = spawnSync(process.execPath, [join(leashDir, 'bin/leash.js'), 'check', '--all', 'package.json'], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
    env: markedEnv(newMark(), { NODE_OPTIONS: '' }),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('leash check: where proc-leash-check is loaded from', () => {
  it('never loads a proc-leash-check planted in a parent folder of the project or of leash', () => {
    const { root, project, marker } = layout('parent');
    // Above both the project and the leash install: Node's own search would find it from either.
    const planted = join(scratch, 'node_modules/proc-leash-check');
    plant(planted, marker);
    try {
      for (const cwd of [project, join(project, 'sub')]) {
        mkdirSync(cwd, { recursive: true });
        // A parent of the working directory holding it is no better.
        if (cwd !== project) plant(join(project, 'node_modules/proc-leash-check'), marker);
        const result = leashCheck(cwd);
        assert.equal(result.code, 2, `${cwd}: ${result.stderr}`);
        assert.match(result.stderr, /leash check needs the proc-leash-check package/);
        assert.equal(existsSync(marker), false, `the planted package ran (from ${cwd})`);
      }
    } finally {
      rmSync(join(scratch, 'node_modules'), { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses, exit 2, a copy in the project that is writable by others or owned by another user', (t) => {
    const cases: Array<[string, (pkg: string, project: string) => void, RegExp]> = [
      ['world-writable entry', (pkg) => chmodSync(join(pkg, 'dist/index.js'), 0o666), /writable by everyone \(mode 0666\)/],
      ['group-writable folder inside', (pkg) => chmodSync(join(pkg, 'dist'), 0o775), /writable by its group \(mode 0775\)/],
      ['world-writable node_modules', (_pkg, project) => chmodSync(join(project, 'node_modules'), 0o777), /writable by everyone/],
      ['world-writable manifest', (pkg) => chmodSync(join(pkg, 'package.json'), 0o646), /writable by everyone/],
    ];
    if (process.getuid?.() === 0) {
      cases.push(['owned by another user', (pkg) => chownSync(join(pkg, 'dist/index.js'), 65534, 65534), /owned by uid 65534, not by you \(uid 0\) or root/]);
    } else {
      t.diagnostic('not root: the other-owner case is not run');
    }
    for (const [index, [name, spoil, reason]] of cases.entries()) {
      const { root, project, marker } = layout(`spoiled-${index}`);
      try {
        const pkg = join(project, 'node_modules/proc-leash-check');
        plant(pkg, marker);
        spoil(pkg, project);
        const result = leashCheck(project);
        assert.equal(result.code, 2, `${name}: ${result.stderr}`);
        assert.match(result.stderr, /refusing to load proc-leash-check from .*node_modules\/proc-leash-check/, name);
        assert.match(result.stderr, reason, name);
        assert.equal(existsSync(marker), false, `${name}: the package ran`);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }
  });

  it('loads a sound copy: in the project, beside leash, or linked inside the project (workspaces); refuses a link out of it', () => {
    const { root, project, marker } = layout('sound');
    try {
      plant(join(project, 'node_modules/proc-leash-check'), marker);
      const own = leashCheck(project);
      assert.equal(own.code, PLANTED_EXIT, own.stderr);
      assert.equal(existsSync(marker), true);
      rmSync(marker);
      rmSync(join(project, 'node_modules'), { recursive: true });

      // An npm workspace: node_modules/proc-leash-check -> ../packages/check.
      plant(join(project, 'packages/check'), marker);
      mkdirSync(join(project, 'node_modules'), { mode: 0o755 });
      symlinkSync('../packages/check', join(project, 'node_modules/proc-leash-check'));
      const linked = leashCheck(project);
      assert.equal(linked.code, PLANTED_EXIT, linked.stderr);
      assert.equal(existsSync(marker), true);
      rmSync(marker);
      rmSync(join(project, 'node_modules/proc-leash-check'));

      // A link that leaves the project.
      const outside = join(root, 'elsewhere/proc-leash-check');
      plant(outside, marker);
      symlinkSync(outside, join(project, 'node_modules/proc-leash-check'));
      const escaped = leashCheck(project);
      assert.equal(escaped.code, 2, escaped.stderr);
      assert.match(escaped.stderr, /refusing to load .* a link to .*elsewhere\/proc-leash-check, outside /);
      assert.equal(existsSync(marker), false, 'the linked-out package ran');
      rmSync(join(project, 'node_modules'), { recursive: true });

      // Installed beside leash (the same node_modules), found from a project that has none.
      const sibling = join(dirname(installedLeash), 'proc-leash-check');
      plant(sibling, marker);
      try {
        const beside = leashCheck(project);
        assert.equal(beside.code, PLANTED_EXIT, beside.stderr);
        assert.equal(existsSync(marker), true);
      } finally {
        rmSync(sibling, { recursive: true, force: true });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a copy whose dependency Node would load from outside the project; vets the ones inside', () => {
    const { root, project, marker } = layout('dependency');
    const dependency = (dir: string) => {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      writeFileSync(join(dir, 'package.json'), '{"name":"leash-test-dependency","type":"module"}\n', { mode: 0o644 });
      chmodSync(dir, 0o755);
      chmodSync(dirname(dir), 0o755);
    };
    try {
      plant(join(project, 'node_modules/proc-leash-check'), marker, { 'leash-test-dependency': '1.0.0' });
      // Not installed in the project, but in a folder above it: Node would take that one.
      dependency(join(root, 'node_modules/leash-test-dependency'));
      const above = leashCheck(project);
      assert.equal(above.code, 2, above.stderr);
      assert.match(above.stderr, /where Node would load its dependency leash-test-dependency from, outside /);
      assert.equal(existsSync(marker), false, 'the package ran with a dependency from above');

      const inside = join(project, 'node_modules/leash-test-dependency');
      dependency(inside);
      chmodSync(join(inside, 'package.json'), 0o666);
      const writable = leashCheck(project);
      assert.equal(writable.code, 2, writable.stderr);
      assert.match(writable.stderr, /leash-test-dependency\/package\.json is writable by everyone/);
      assert.equal(existsSync(marker), false);

      chmodSync(join(inside, 'package.json'), 0o644);
      const sound = leashCheck(project);
      assert.equal(sound.code, PLANTED_EXIT, sound.stderr);
      assert.equal(existsSync(marker), true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('this repository: leash runs its own workspace copy of proc-leash-check', () => {
    const result = leashCheck(REPO_ROOT, REPO_ROOT);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /no detached spawns/);
  });
});
