// The writers' Lease against the adversaries a CronJob meets: another writer whose clock is ahead
// or behind (faketime), and a writer frozen past its Lease (SIGSTOP, then SIGCONT). Both run the
// built CLI as separate processes against the real kube-apiserver and the simulator; each case
// checks the cloud and the cluster afterwards (one load balancer per Service, no write after the
// Lease changed hands), not only exit codes.
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { RUN_LEASE } from '../../src/commands/writer.js';
import type { RequestLogEntry } from '../../src/sim/index.js';
import { runBinary, startHarness, type Harness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  ignoreNotFound,
  testConnection,
  uniqueName,
  waitUntil,
} from '../support/kube.js';
import { killStarted, startBinary, type RunningBinary } from './cli-support.js';

const hasFaketime = spawnSync('faketime', ['-f', '+0s', 'true']).status === 0;
const SERVICES = ['alpha', 'beta', 'gamma'];

const started: RunningBinary[] = [];
afterEach(() => killStarted(started));

describe('the Lease against skewed clocks and frozen writers', () => {
  const prefix = uniqueName('lease-adv');
  let harness: Harness;
  let namespace: string;

  beforeAll(async () => {
    if (!hasFaketime) throw new Error('these tests need `faketime` (Debian: faketime); npm test installs it');
    // New load balancers stay "changing" for 4 s: a pass holds the Lease long enough to renew it.
    harness = await startHarness({
      lbProvisionMs: 4000,
      seed: `
servers:
  - name: ${prefix}-1
    flavor: flex-4-2
    zone: rma1
    interfaces: [{type: public, addresses: [5.102.151.1]}]
`,
    });
    await createNode(`${prefix}-1`, { ready: true });
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await harness?.stop();
  });

  /** A namespace of its own per case, with fresh Services and no load balancers yet. */
  async function freshServices(): Promise<string> {
    namespace = uniqueName('lease-adv');
    await ensureNamespace(namespace);
    for (const name of SERVICES) await createLoadBalancerService(namespace, name);
    await ignoreNotFound(testConnection().coordination.deleteNamespacedLease({ ...RUN_LEASE }));
    return namespace;
  }

  function syncArgs(extra: readonly string[] = []): string[] {
    return ['sync-lb', '--settle-seconds', '0', '--poll-seconds', '0.1', '-n', namespace, ...extra];
  }

  async function loadBalancersPerService(): Promise<Record<string, number>> {
    const services = await testConnection().core.listNamespacedService({ namespace });
    const counts: Record<string, number> = {};
    const lbs = await harness.cloud.loadBalancers.list();
    for (const service of services.items) {
      counts[service.metadata!.name!] = lbs.filter((lb) => lb.tags['k8s.cloudscale.ch/service-uid'] === service.metadata!.uid).length;
    }
    return counts;
  }

  const oneEach = () => Object.fromEntries(SERVICES.map((name) => [name, 1]));
  const writesOf = (entries: readonly RequestLogEntry[]) => entries.filter((entry) => entry.method !== 'GET');

  async function holderOfLease(): Promise<string> {
    try {
      return (await testConnection().coordination.readNamespacedLease({ ...RUN_LEASE })).spec?.holderIdentity ?? '';
    } catch {
      return '';
    }
  }

  /** Starts a pass of the CLI and waits until it holds the Lease and created a load balancer. */
  async function writingPass(args: readonly string[]): Promise<RunningBinary> {
    const logBefore = harness.sim.admin.requests().length;
    const pass = startBinary(args, { apiUrl: harness.sim.url });
    started.push(pass);
    await waitUntil('the first pass holds the Lease and has created a load balancer', async () => {
      if (pass.child.exitCode !== null) throw new Error(`the first pass ended early:\n${pass.stdout()}\n${pass.stderr()}`);
      const created = harness.sim.admin
        .requests()
        .slice(logBefore)
        .some((r) => r.method === 'POST' && r.route === '/v1/load-balancers');
      return created && (await holderOfLease()).includes('/sync-lb/');
    });
    return pass;
  }

  // A clock behind is covered in kube-lease.test.ts (a renewTime in this host's future): a
  // process run 70 s in the past here would refuse the test cluster's minutes-old certificate.
  test.each(['+70s', '+45s'])(
    'a second writer whose clock is %s: refused once it sees the holder renew; one load balancer per Service',
    async (skew) => {
      await freshServices();
      const first = await writingPass(syncArgs(['--lease-seconds', '12']));

      const logBefore = harness.sim.admin.requests().length;
      const skewed = startBinary(syncArgs(), {
        apiUrl: harness.sim.url,
        wrapper: ['faketime', '-f', skew],
        env: { FAKETIME_DONT_FAKE_MONOTONIC: '1' },
      });
      started.push(skewed);
      const skewedExit = await skewed.exited;
      const context = `skewed stdout:\n${skewed.stdout()}\nskewed stderr:\n${skewed.stderr()}`;
      expect(skewedExit.code, context).toBe(1);
      expect(skewed.stderr(), context).toMatch(
        /^error: lease kube-system\/cloudscale-ccm is held by ".+\/sync-lb\/\d+-\w+", which renewed it while this pass watched/m,
      );
      // The live holder is never called dead, whatever its renewTime looks like from here.
      expect(skewed.stderr(), context).not.toContain('probably died');

      const firstExit = await first.exited;
      expect(firstExit.code, `first stderr:\n${first.stderr()}`).toBe(0);
      expect(await loadBalancersPerService()).toEqual(oneEach());
      // The skewed process wrote nothing: every write after it started is the first pass's own
      // and belongs to a Service it was converging (none twice).
      const creates = writesOf(harness.sim.admin.requests().slice(logBefore)).filter((r) => r.route === '/v1/load-balancers');
      expect(creates.length).toBeLessThanOrEqual(SERVICES.length);
      const next = await runBinary(syncArgs(), { apiUrl: harness.sim.url });
      expect(next.code, next.stderr).toBe(0);
      expect(await loadBalancersPerService()).toEqual(oneEach());
    },
  );

  test('run with its clock 70 s ahead and --wait: waits for the holder to finish, then finds nothing to do', async () => {
    await freshServices();
    const first = await writingPass(syncArgs(['--lease-seconds', '12']));
    const skewed = startBinary(['run', '--wait', '--settle-seconds', '0', '--poll-seconds', '0.1'], {
      apiUrl: harness.sim.url,
      wrapper: ['faketime', '-f', '+70s'],
      env: { FAKETIME_DONT_FAKE_MONOTONIC: '1' },
    });
    started.push(skewed);
    expect((await first.exited).code, first.stderr()).toBe(0);
    const firstDone = harness.sim.admin.requests().length;
    const skewedExit = await skewed.exited;
    expect(skewedExit.code, `${skewed.stdout()}\n${skewed.stderr()}`).toBe(0);
    expect(skewed.stderr()).not.toContain('probably died');
    expect(await loadBalancersPerService()).toEqual(oneEach());
    // The first pass converged these Services: the waiting run had nothing to write for them.
    const lateCreates = harness.sim.admin.requests().slice(firstDone).filter((r) => r.method === 'POST' && r.route === '/v1/load-balancers');
    expect(lateCreates).toEqual([]);
  });

  test('a writer frozen past its renew deadline writes nothing after another took the Lease, exits 1 saying so; the next pass is a no-op', async () => {
    await freshServices();
    const frozen = await writingPass(syncArgs(['--lease-seconds', '6']));
    frozen.child.kill('SIGSTOP');
    const frozenHolder = await holderOfLease();

    // The second writer watches the Lease unrenewed for its 6 s, takes it over and converges.
    const heir = await runBinary(syncArgs(['--lease-seconds', '6', '--wait']), { apiUrl: harness.sim.url, timeoutMs: 90_000 });
    expect(heir.code, `${heir.stdout}\n${heir.stderr}`).toBe(0);
    expect(heir.stderr).toContain('has probably died');
    expect(await holderOfLease()).not.toBe(frozenHolder);
    expect(await loadBalancersPerService()).toEqual(oneEach());
    const services = await testConnection().core.listNamespacedService({ namespace });
    const versions = services.items.map((s) => s.metadata!.resourceVersion);

    const heirDone = harness.sim.admin.requests().length;
    frozen.child.kill('SIGCONT');
    const exit = await frozen.exited;
    const context = `stdout:\n${frozen.stdout()}\nstderr:\n${frozen.stderr()}`;
    expect(exit.code, context).toBe(1);
    expect(frozen.stderr(), context).toMatch(/past its renew deadline of 3 s .* writes nothing more/);
    expect(writesOf(harness.sim.admin.requests().slice(heirDone)), 'cloud writes after SIGCONT').toEqual([]);
    const after = await testConnection().core.listNamespacedService({ namespace });
    expect(after.items.map((s) => s.metadata!.resourceVersion), 'Kubernetes writes after SIGCONT').toEqual(versions);
    expect(await loadBalancersPerService()).toEqual(oneEach());

    const next = await runBinary(syncArgs(), { apiUrl: harness.sim.url });
    expect(next.code, next.stderr).toBe(0);
    expect(writesOf(harness.sim.admin.requests().slice(heirDone))).toEqual([]);
  });
});
