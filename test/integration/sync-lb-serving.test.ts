// Serving decides, in every pass, against the simulator's data plane with its health checks,
// propagation, held deletes and `error` while a pool is down switched on: whatever a pass
// plans, a port still wanted keeps an up member unless the plan says otherwise. The cases are
// those where the make-before-break strategies once took the healthy members away: the pass
// after one that created new members that never come up, a swap onto a pool without members,
// a selector narrowed onto a Node whose member is down; and a load balancer in `error`, which
// is repaired like any other, not refused. The outage is what the data plane measures.
//
// Timings are compressed (propagation 0.5 s, checks 1 s apart); a gate on members that stay
// down waits its whole bound (2 checks + 20 s propagation = 22 s) before the pass stops.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { createLoadBalancerService, uniqueName } from '../support/kube.js';
import { TEST_PASS, key, passFails, passOk, patchService, poolOf, privateAddress, readService, runPass, theLb, warningsOf } from '../support/lb-scenarios.js';
import { FAST_MONITOR, PROPAGATION_MS, useDataPlaneWorld } from '../support/make-before-break.js';

describe('serving decides, in every pass (data plane on)', () => {
  const namespace = uniqueName('serving');
  const prefix = uniqueName('serving');
  // Members are drained, as by default: the pass that takes the old ones away disables them.
  const pass = { ...TEST_PASS, namespace, settleSeconds: 1, pollSeconds: 0.2, drainSeconds: 60 };
  const { harness } = useDataPlaneWorld(prefix, namespace, 'serving/slot', { errorWhilePoolDown: true });

  /** A Service converged and serving on port 80, with the fast monitor; its load balancer's UUID. */
  async function serving(name: string): Promise<{ service: V1Service; lbUuid: string }> {
    await createLoadBalancerService(namespace, name, { annotations: FAST_MONITOR });
    await passOk(harness, [name], pass);
    const service = await readService(namespace, name);
    const lbUuid = (await theLb(harness, service)).lb.uuid;
    await until(() => port80(lbUuid, 0).intervals.at(-1)?.serving === true, `port 80 of ${name} serving`);
    return { service, lbUuid };
  }

  function port80(lbUuid: string, since: number) {
    return harness.sim.admin.serving(lbUuid, { since }).ports.find((p) => p.port === 80)!;
  }

  /** Port 80 served from `since` until now without a gap, and still does. */
  function expectServedThroughout(lbUuid: string, since: number): void {
    const port = port80(lbUuid, since);
    expect(port.longestOutageMs, JSON.stringify(port.intervals)).toBe(0);
    expect(port.intervals.at(-1)).toMatchObject({ serving: true, to: null });
  }

  const setHealth = (port: number, healthy: boolean, servers: readonly number[] = [1, 2]) => {
    for (const i of servers) harness.sim.admin.setEndpointHealth(privateAddress(i), port, healthy);
  };
  const memberWrites = (writes: readonly { method: string; route: string }[]) =>
    writes.filter((w) => w.route.startsWith('/v1/load-balancers/pools/{uuid}/members/')).map((w) => `${w.method} ${w.route}`);

  it('a node-port change whose new port never passes its checks: the pass after the one that created the new members keeps the old ones serving', async () => {
    const name = uniqueName('nodeport');
    const { service, lbUuid } = await serving(name);
    const newPort = 32010;
    setHealth(newPort, false);
    try {
      const since = Date.now();
      await patchService(namespace, name, { spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: newPort }] } });
      // The first pass creates the new members and is stopped while it waits for them.
      const abort = new AbortController();
      const logFrom = harness.sim.admin.requests().length;
      const first = runPass(harness, [name], { ...pass, abort: abort.signal });
      await until(
        () => harness.sim.admin.requests().slice(logFrom).filter((r) => r.method === 'POST' && r.route === '/v1/load-balancers/pools/{uuid}/members').length === 2,
        'the new members created',
      );
      abort.abort(new Error('stopped by the test'));
      expect((await first).error).toBeDefined();
      const poolUuid = poolOf(await theLb(harness, service), 'tcp/http').pool.uuid;
      await untilAsync(
        async () => (await harness.cloud.poolMembers.list(poolUuid)).filter((m) => m.protocol_port === newPort && m.monitor_status === 'down').length === 2,
        'the new members reported down',
      );

      // The next pass finds the new members down: it waits for them, and stops with the old ones in place.
      const next = await passFails(harness, [name], pass);
      expect(String(next.error.failures[0]?.error.message)).toMatch(/await-members .*did not pass their health checks within 22 s \(0 up, 2 down, 0 still checked, 0 missing; down: \S+:32010, \S+:32010\)/);
      expect(memberWrites(next.simWrites), 'no member disabled or deleted').toEqual([]);
      const pool = poolOf(await theLb(harness, service), 'tcp/http');
      expect(pool.members.filter((m) => m.enabled).map((m) => m.protocol_port).sort()).toEqual([service.spec!.ports![0]!.nodePort!, service.spec!.ports![0]!.nodePort!, newPort, newPort].sort());
      expectServedThroughout(lbUuid, since);
      expect(await warningsOf(service)).toContainEqual(
        expect.objectContaining({ reason: 'MembersKept', message: expect.stringContaining(`fails its tcp check on port ${newPort}`) }),
      );
    } finally {
      setHealth(newPort, true);
    }
    // Once the new port answers, the next pass finishes the rotation.
    await passOk(harness, [name], pass);
    const after = poolOf(await theLb(harness, service), 'tcp/http');
    expect(after.members.filter((m) => m.enabled).map((m) => m.protocol_port)).toEqual([newPort, newPort]);
  }, 90_000);

  it('a pool-algorithm change and a node selector matching no Node in one edit: nothing moves, the old pool keeps the port', async () => {
    const name = uniqueName('empty-swap');
    const { service, lbUuid } = await serving(name);
    const since = Date.now();
    await patchService(namespace, name, {
      metadata: { annotations: { [key('loadbalancer-pool-algorithm')]: 'least_connections', [key('loadbalancer-node-selector')]: 'nothing=matches' } },
    });
    const result = await passOk(harness, [name], pass);
    expect(result.simWrites.map((w) => `${w.method} ${w.route}`)).toEqual([]);
    await sleep(PROPAGATION_MS * 2);
    expectServedThroughout(lbUuid, since);
    const pool = poolOf(await theLb(harness, service), 'tcp/http');
    expect(pool.pool.algorithm).toBe('round_robin');
    expect(await warningsOf(service)).toContainEqual(
      expect.objectContaining({ reason: 'PoolSwapHeld', message: expect.stringContaining('port TCP 80 stays on the old pool') }),
    );
  });

  it('the node selector narrowed onto the one Node whose member is down: the healthy member is not drained', async () => {
    const name = uniqueName('narrowed');
    const { service, lbUuid } = await serving(name);
    const nodePort = service.spec!.ports![0]!.nodePort!;
    const poolUuid = poolOf(await theLb(harness, service), 'tcp/http').pool.uuid;
    setHealth(nodePort, false, [1]);
    try {
      await untilAsync(async () => (await harness.cloud.poolMembers.list(poolUuid)).some((m) => m.address === privateAddress(1) && m.monitor_status === 'down'), 'member 1 down');
      const since = Date.now();
      await patchService(namespace, name, { metadata: { annotations: { [key('loadbalancer-node-selector')]: 'serving/slot=1' } } });
      const result = await passFails(harness, [name], pass);
      expect(String(result.error.failures[0]?.error.message)).toContain(`did not pass their health checks within 22 s (0 up, 1 down, 0 still checked, 0 missing; down: ${privateAddress(1)}:${nodePort})`);
      expect(memberWrites(result.simWrites)).toEqual([]);
      const members = poolOf(await theLb(harness, service), 'tcp/http').members;
      expect(members.find((m) => m.address === privateAddress(2))?.enabled).toBe(true);
      expectServedThroughout(lbUuid, since);
      expect(await warningsOf(service)).toContainEqual(
        expect.objectContaining({ reason: 'MembersKept', message: expect.stringContaining(`${privateAddress(1)}:${nodePort} (node ${prefix}-1) fails its tcp check on port ${nodePort}`) }),
      );
    } finally {
      setHealth(nodePort, true, [1]);
    }
  }, 60_000);

  it('a load balancer in status error is planned and repaired by a node-port change; plan, pass and Event say why', async () => {
    const name = uniqueName('in-error');
    const { service, lbUuid } = await serving(name);
    const oldPort = service.spec!.ports![0]!.nodePort!;
    const newPort = 32020;
    setHealth(oldPort, false);
    try {
      await untilAsync(async () => (await harness.cloud.loadBalancers.get(lbUuid)).status === 'error', 'the load balancer in status error');
      await patchService(namespace, name, { spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: newPort }] } });

      const ctx = harness.context({ output: 'json' });
      await planCommand([`service/${name}`], { namespace, detailedExitcode: false, drainSeconds: pass.drainSeconds }, ctx);
      const planned = (JSON.parse(ctx.out()) as PlanDocument).services[0]!;
      expect(planned.problems).toEqual([]);
      const why = planned.warnings.find((w) => w.reason === 'LoadBalancerError')?.message;
      expect(why).toContain(`pool tcp/http (port TCP 80) has every member down: ${privateAddress(1)}:${oldPort} (node ${prefix}-1) fails its tcp check on port ${oldPort}`);
      expect(why).toContain('this plan adds members, which repairs it once a member passes its check');

      const result = await passOk(harness, [name], pass);
      expect(result.simWrites.filter((w) => w.method === 'POST').map((w) => w.route)).toEqual(['/v1/load-balancers/pools/{uuid}/members', '/v1/load-balancers/pools/{uuid}/members']);
      expect(result.report.services[0]!.warnings).toEqual([{ reason: 'LoadBalancerError', message: why }]);
      expect(result.ctx.out()).toContain(`warning: service/${namespace}/${name} LoadBalancerError: ${why}\n`);
      await untilAsync(async () => (await harness.cloud.loadBalancers.get(lbUuid)).status === 'running', 'the load balancer running again');
      await until(() => port80(lbUuid, 0).intervals.at(-1)?.serving === true, 'port 80 serving again');
      const pool = poolOf(await theLb(harness, service), 'tcp/http');
      expect(pool.members.filter((m) => m.enabled).map((m) => m.protocol_port)).toEqual([newPort, newPort]);
      expect(await warningsOf(service)).toContainEqual(expect.objectContaining({ reason: 'LoadBalancerError', message: why }));
    } finally {
      setHealth(oldPort, true);
    }
  }, 60_000);
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  await untilAsync(() => Promise.resolve(condition()), what);
}

async function untilAsync(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await sleep(100);
  }
  throw new Error(`not reached within 20 s: ${what}`);
}
