// Concurrency, waiting and interruption: many Services in one bounded pass; waits for a load
// balancer to leave `changing` (and the deadline); a pass aborted at any point, and the real
// binary killed (SIGKILL) or stopped (SIGTERM) mid-way, leave nothing the next pass does not
// converge: no duplicate load balancer, no orphan pool, no lost Floating IP.
import type { V1Service } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import {
  FLOATING_IPS,
  expectConverged,
  expectWellFormed,
  failuresOf,
  key,
  memberNames,
  passFails,
  passOk,
  poolOf,
  readService,
  requireBuiltBinary,
  routes,
  runPass,
  spawnBinary,
  theLb,
  watchRequests,
  useLbWorld,
} from '../support/lb-scenarios.js';

const PROVISION_MS = 120;

describe('sync-lb: concurrency and interruption', () => {
  const namespace = uniqueName('lb-intr');
  const prefix = uniqueName('intr');
  const pass = { namespace };
  const { harness } = useLbWorld({ prefix, namespace, lbProvisionMs: PROVISION_MS });

  afterEach(() => harness.sim.admin.clearFaults());

  /** A Service with two ports and a Floating IP: enough actions to interrupt in between. */
  async function createWebService(name: string, floatingIp: string): Promise<V1Service> {
    return createLoadBalancerService(namespace, name, {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'https', protocol: 'TCP', port: 443 },
      ],
      annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([floatingIp]) },
    });
  }

  /** Everything converged exactly once: one LB, its two pools complete, the FIP, annotations, status. */
  async function expectComplete(service: V1Service, floatingIp: string): Promise<void> {
    const state = await theLb(harness, service);
    expectWellFormed(state);
    expect(Object.keys(state.pools).sort()).toEqual(['tcp/http', 'tcp/https']);
    for (const [index, pool] of ['tcp/http', 'tcp/https'].entries()) {
      const nodePort = service.spec!.ports![index]!.nodePort!;
      expect(memberNames(poolOf(state, pool))).toEqual([`10.20.0.1:${nodePort}`, `10.30.0.2:${nodePort}`]);
    }
    expect(state.floatingIps.map((f) => f.network)).toEqual([floatingIp]);
    // No orphan: every pool, listener and monitor in the project belongs to a load balancer that exists.
    const lbUuids = new Set((await harness.cloud.loadBalancers.list()).map((lb) => lb.uuid));
    for (const pool of await harness.cloud.pools.list()) expect(lbUuids.has(pool.load_balancer.uuid)).toBe(true);
    for (const listener of await harness.cloud.listeners.list()) expect(listener.pool).not.toBeNull();
    const stored = await readService(namespace, service.metadata!.name!);
    expect(stored.metadata!.annotations![key('loadbalancer-uuid')]).toBe(state.lb.uuid);
    expect(stored.status!.loadBalancer!.ingress!.map((i) => i.ip)).toEqual(state.lb.vip_addresses.map((v) => v.address));
  }

  describe('many Services', () => {
    it('10 Services with --concurrency 4: the load balancers provision side by side, all converge, one watch polls them together', async () => {
      const names = Array.from({ length: 10 }, (_, i) => `many-${i}`);
      const services = [];
      for (const name of names) services.push(await createLoadBalancerService(namespace, name));

      const { report, simRequests } = await passOk(harness, names, { ...pass, concurrency: 4 });
      expect(report.services.map((s) => s.status)).toEqual(Array(10).fill('changed'));
      const log = routes(simRequests);
      // A Service waiting for its load balancer gives its slot to the next one (and queues behind
      // those not yet started): more load balancers than --concurrency are created before the
      // first one gets its pools.
      const firstPool = log.indexOf('POST /v1/load-balancers/pools');
      expect(log.slice(0, firstPool).filter((r) => r === 'POST /v1/load-balancers').length).toBeGreaterThan(4);
      expect(log.filter((r) => r === 'POST /v1/load-balancers')).toHaveLength(10);
      // The waiting load balancers are read together (one list per interval), not one GET each.
      const polls = log.slice(log.indexOf('POST /v1/load-balancers'), firstPool).filter((r) => r === 'GET /v1/load-balancers');
      expect(polls.length).toBeGreaterThanOrEqual(1);
      expect(log.filter((r) => r === 'GET /v1/load-balancers/{uuid}').length).toBeLessThan(10);

      for (const service of services) {
        const state = await theLb(harness, service);
        expectWellFormed(state);
        expect(memberNames(poolOf(state, 'tcp/http'))).toHaveLength(2);
      }
      await expectConverged(harness, names, { ...pass, concurrency: 4 });
    });

    it('writes nothing to a load balancer while it is `changing`, and continues once it is running', async () => {
      const service = await createLoadBalancerService(namespace, 'stuck-then-free');
      const lbName = `k8s-service-${service.metadata!.uid}`;
      harness.sim.admin.setFaults({ stuckLoadBalancers: { [lbName]: 'changing' } });
      const since = harness.sim.admin.requests().length;
      const watch = watchRequests(harness);
      const running = runPass(harness, ['stuck-then-free'], pass);
      await watch.until('GET /v1/load-balancers/{uuid}', 5);
      const sofar = routes(harness.sim.admin.requests().slice(since));
      expect(sofar).toContain('POST /v1/load-balancers');
      expect(sofar).not.toContain('POST /v1/load-balancers/pools');
      harness.sim.admin.clearFaults();
      const { error } = await running;
      expect(error).toBeUndefined();
      expectWellFormed(await theLb(harness, service));
      await expectConverged(harness, ['stuck-then-free'], pass);
    });

    it('gives up after --wait-timeout with guidance, writes nothing more; the next pass continues', async () => {
      const service = await createLoadBalancerService(namespace, 'stuck-timeout');
      const lbName = `k8s-service-${service.metadata!.uid}`;
      harness.sim.admin.setFaults({ stuckLoadBalancers: { [lbName]: 'changing' } });
      const { error, simWrites } = await passFails(harness, ['stuck-timeout'], { ...pass, waitTimeout: 1 });
      expect(routes(simWrites)).toEqual(['POST /v1/load-balancers']);
      const [message] = failuresOf(error, namespace, 'stuck-timeout');
      expect(message).toContain(`load balancer ${lbName}`);
      expect(message).toContain('is still "changing" after 1 s');
      expect((error.failures[0]!.error as { hint?: string }).hint).toContain('--wait-timeout');

      harness.sim.admin.clearFaults();
      await passOk(harness, ['stuck-timeout'], pass);
      expectWellFormed(await theLb(harness, service));
      await expectConverged(harness, ['stuck-timeout'], pass);
    });
  });

  describe('a pass aborted mid-way', () => {
    it.each([
      ['right after the load balancer was created', 'POST /v1/load-balancers', 1],
      ['while waiting for the load balancer to be running', 'GET /v1/load-balancers/{uuid}', 1],
      ['after the first pool', 'POST /v1/load-balancers/pools', 1],
      ['after the second member', 'POST /v1/load-balancers/pools/{uuid}/members', 2],
      ['after the first listener', 'POST /v1/load-balancers/listeners', 1],
      ['after the first health monitor', 'POST /v1/load-balancers/health-monitors', 1],
    ])('%s: the next pass converges, nothing duplicated, the Floating IP assigned', async (_, trigger, count) => {
      const name = uniqueName('abort');
      const floatingIp = FLOATING_IPS[0];
      const service = await createWebService(name, floatingIp);
      harness.sim.admin.setFaults({ latencyMs: 25 });
      const controller = new AbortController();
      const watch = watchRequests(harness);
      const running = runPass(harness, [name], { ...pass, concurrency: 1, abort: controller.signal });
      await watch.until(trigger, count);
      controller.abort(new Error('interrupted by the test'));
      const aborted = await running;
      harness.sim.admin.clearFaults();

      expect(aborted.error, aborted.ctx.out()).toBeDefined();
      const partial = await theLb(harness, service);
      expect(partial.floatingIps, 'the Floating IP comes last: the abort landed before it').toEqual([]);

      const { report } = await passOk(harness, [name], pass);
      expect(report.services.map((s) => s.status)).toEqual(['changed']);
      await expectComplete(service, floatingIp);
      await expectConverged(harness, [name], pass);

      // Deleted through a pass: the next case claims the same Floating IP.
      await testConnection().core.deleteNamespacedService({ namespace, name });
      await passOk(harness, [name], pass);
    });
  });

  describe('the real binary, interrupted', () => {
    beforeAll(() => requireBuiltBinary());

    it.each([
      ['SIGKILL', 'POST /v1/load-balancers', FLOATING_IPS[1]],
      ['SIGKILL', 'POST /v1/load-balancers/pools/{uuid}/members', FLOATING_IPS[2]],
      ['SIGTERM', 'POST /v1/load-balancers/pools', FLOATING_IPS[3]],
    ] as const)('%s after %s: the next pass converges without duplicates', async (signal, trigger, floatingIp) => {
      const name = uniqueName(`bin-${signal.toLowerCase()}`);
      const service = await createWebService(name, floatingIp);
      harness.sim.admin.setFaults({ latencyMs: 40 });
      const watch = watchRequests(harness);
      const { child, done } = spawnBinary(
        [
          '--cluster-id', harness.clusterId,
          'sync-lb', `service/${name}`, '-n', namespace,
          '--settle-seconds', '0', '--poll-seconds', '0.05', '--concurrency', '1',
          // A killed pass holds the writers' Lease until it expires: the next pass waits that long.
          '--lease-seconds', '3',
        ],
        { apiUrl: harness.sim.url },
      );
      try {
        await watch.until(trigger);
      } catch (error) {
        child.kill('SIGKILL');
        const result = await done;
        throw new Error(`${String(error)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
      }
      child.kill(signal);
      const result = await done;
      harness.sim.admin.clearFaults();
      if (signal === 'SIGKILL') {
        expect(result.signal).toBe('SIGKILL');
      } else {
        // SIGTERM stops the pass between steps: a non-zero exit, saying why.
        expect(result.code, result.stdout + result.stderr).not.toBe(0);
        expect(result.stdout + result.stderr).toContain('interrupted by SIGTERM');
      }
      expect((await theLb(harness, service)).floatingIps).toEqual([]);

      await passOk(harness, [name], pass);
      await expectComplete(service, floatingIp);
      await expectConverged(harness, [name], pass);
    });
  });
});
