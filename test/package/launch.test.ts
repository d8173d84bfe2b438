// The supervisor's launch decision, case by case, as a pure function: Electron cannot be installed
// here, so its cases are proven on the decision itself (what is run, with which environment).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planSupervisorLaunch, type LaunchFacts } from '../../src/owner/supervisor-launch.js';

const PKG = '/app/node_modules/proc-leash/dist/src';
const MODULE_URL = `file://${PKG}/owner/supervisor-launch.js`;
const BUNDLE = `${PKG}/supervisor/supervisor.cjs`;

function facts(over: Partial<LaunchFacts> & { files?: string[] } = {}): LaunchFacts {
  const files = new Set(over.files ?? [BUNDLE]);
  return {
    execPath: '/usr/bin/node',
    versions: { node: '20.20.2' },
    env: { PATH: '/usr/bin', HOME: '/home/u', NODE_OPTIONS: '--inspect', LEASH_OWNER_TOKEN: 'x' },
    moduleUrl: MODULE_URL,
    exists: (path) => files.has(path),
    ...over,
  };
}

function ok(plan: ReturnType<typeof planSupervisorLaunch>) {
  assert.ok(plan.ok, plan.ok ? '' : plan.problem);
  return plan;
}

describe('supervisor launch decision', () => {
  it('plain Node: the bundle, one V8 flag, a scrubbed environment', () => {
    const plan = ok(planSupervisorLaunch(facts()));
    assert.equal(plan.runtime, 'node');
    assert.deepEqual(plan.command, ['/usr/bin/node', '--v8-pool-size=0', BUNDLE]);
    assert.deepEqual(plan.env, { PATH: '/usr/bin', UV_THREADPOOL_SIZE: '1' });
  });

  it('with a parent-death launcher (setpriv), every runtime\'s command starts with it; without, none does', () => {
    const prefix = ['/usr/bin/setpriv', '--pdeathsig', 'SIGURG', '--'];
    const cases: Array<Partial<LaunchFacts>> = [
      {},
      { execPath: '/opt/App/app', versions: { node: '22.20.0', electron: '38.0.0' } },
      { execPath: '/usr/bin/bun', versions: { node: '24.3.0', bun: '1.4.5' } },
      { execPath: '/usr/bin/deno', versions: { node: '24.2.0', deno: '2.9.6' } },
    ];
    for (const over of cases) {
      const without = ok(planSupervisorLaunch(facts(over))).command;
      assert.deepEqual(ok(planSupervisorLaunch(facts({ ...over, parentDeathPrefix: prefix }))).command, [...prefix, ...without]);
      assert.ok(!without.includes('--pdeathsig'));
    }
  });

  it('plain Node that knows --disable-sigusr1 (22.14+, 23.7+) gets it; older Node does not', () => {
    const command = (node: string) => ok(planSupervisorLaunch(facts({ versions: { node } }))).command;
    for (const node of ['22.14.0', '22.20.1', '23.7.0', '24.0.0', '25.1.0']) {
      assert.deepEqual(command(node), ['/usr/bin/node', '--v8-pool-size=0', '--disable-sigusr1', BUNDLE], node);
    }
    for (const node of ['20.20.2', '22.12.0', '22.13.1', '23.6.1', 'weird']) {
      assert.deepEqual(command(node), ['/usr/bin/node', '--v8-pool-size=0', BUNDLE], node);
    }
    const electron = ok(planSupervisorLaunch(facts({ execPath: '/opt/App/app', versions: { node: '22.20.0', electron: '38.0.0' } })));
    assert.deepEqual(electron.command, ['/opt/App/app', BUNDLE]);
  });

  it('falls back to the ES entry when the bundle was not built', () => {
    const entry = `${PKG}/supervisor/entry.js`;
    assert.equal(ok(planSupervisorLaunch(facts({ files: [entry] }))).command.at(-1), entry);
  });

  // The main process, a utility process and VS Code's extension host share process.execPath and
  // process.versions.electron: one decision covers the three.
  {
    it("Electron: the app's binary runs as Node (ELECTRON_RUN_AS_NODE=1), no V8 flag, scrubbed env", () => {
      const plan = ok(
        planSupervisorLaunch(facts({ execPath: '/opt/App/app', versions: { node: '20.18.0', electron: '33.2.0' } })),
      );
      assert.equal(plan.runtime, 'electron');
      assert.deepEqual(plan.command, ['/opt/App/app', BUNDLE]);
      assert.equal(plan.env.ELECTRON_RUN_AS_NODE, '1');
      assert.equal(plan.env.NODE_OPTIONS, undefined);
    });
  }

  it('Electron with app.asar: runs the unpacked copy', () => {
    const asar = '/opt/App/resources/app.asar/node_modules/proc-leash/dist/src';
    const unpacked = '/opt/App/resources/app.asar.unpacked/node_modules/proc-leash/dist/src/supervisor/supervisor.cjs';
    const plan = ok(
      planSupervisorLaunch(
        facts({
          execPath: '/opt/App/app',
          versions: { electron: '33.2.0' },
          moduleUrl: `file://${asar}/owner/supervisor-launch.js`,
          files: [`${asar}/supervisor/supervisor.cjs`, unpacked],
        }),
      ),
    );
    assert.deepEqual(plan.command, ['/opt/App/app', unpacked]);
  });

  it('Electron with app.asar and nothing unpacked: a problem that says what to unpack', () => {
    const asar = '/opt/App/resources/app.asar/node_modules/proc-leash/dist/src';
    const plan = planSupervisorLaunch(
      facts({
        versions: { electron: '33.2.0' },
        moduleUrl: `file://${asar}/owner/supervisor-launch.js`,
        files: [`${asar}/supervisor/supervisor.cjs`],
      }),
    );
    assert.equal(plan.ok, false);
    assert.match(!plan.ok ? plan.problem : '', /app's archive.*asarUnpack/s);
  });

  it('LEASH_SUPERVISOR_EXEC: a Node binary for apps that disabled running as Node', () => {
    const plan = ok(
      planSupervisorLaunch(
        facts({
          execPath: '/opt/App/app',
          versions: { electron: '33.2.0' },
          env: { PATH: '/usr/bin', LEASH_SUPERVISOR_EXEC: '/opt/App/node' },
          files: [BUNDLE, '/opt/App/node'],
        }),
      ),
    );
    assert.equal(plan.runtime, 'override');
    assert.deepEqual(plan.command, ['/opt/App/node', BUNDLE]);
    assert.equal(plan.env.ELECTRON_RUN_AS_NODE, undefined);
    const missing = planSupervisorLaunch(facts({ env: { LEASH_SUPERVISOR_EXEC: '/nope/node' } }));
    assert.equal(missing.ok, false);
  });

  it('Bun: the bundle with no V8 flags', () => {
    const plan = ok(planSupervisorLaunch(facts({ execPath: '/usr/bin/bun', versions: { node: '24.3.0', bun: '1.4.4' } })));
    assert.deepEqual(plan.command, ['/usr/bin/bun', BUNDLE]);
  });

  it('Deno: `deno run` with every permission, HOME kept for its cache', () => {
    const plan = ok(planSupervisorLaunch(facts({ execPath: '/usr/bin/deno', versions: { node: '22.0.0', deno: '2.9.6' } })));
    assert.deepEqual(plan.command, ['/usr/bin/deno', 'run', '--allow-all', '--quiet', BUNDLE]);
    assert.equal(plan.env.HOME, '/home/u');
  });

  it('a bundle without import.meta.url: a problem naming the fix', () => {
    const plan = planSupervisorLaunch(facts({ moduleUrl: undefined }));
    assert.equal(plan.ok, false);
    assert.match(!plan.ok ? plan.problem : '', /external.*LEASH_SUPERVISOR_FILE/s);
  });

  it('a bundle whose neighbour files are missing: a problem, and LEASH_SUPERVISOR_FILE fixes it', () => {
    const bundled = facts({ moduleUrl: 'file:///app/dist/main.js', files: ['/app/dist/supervisor.cjs'] });
    const plan = planSupervisorLaunch(bundled);
    assert.equal(plan.ok, false);
    assert.match(!plan.ok ? plan.problem : '', /cannot find the death supervisor/);
    const fixed = ok(planSupervisorLaunch({ ...bundled, env: { LEASH_SUPERVISOR_FILE: '/app/dist/supervisor.cjs' } }));
    assert.equal(fixed.command.at(-1), '/app/dist/supervisor.cjs');
  });
});
