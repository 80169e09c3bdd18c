// One failed request inside a step pair (src/core/apply/pair-completion.ts): a pool swap's
// listener create, sent right after the old listener's delete, gets one failure of each kind the
// API or the network produces — a 500, a 503 with Retry-After, a reset or a timeout before the
// create was applied, a 400 refusing an overlapping write. The pass completes the move within
// itself: it exits 0, the successor holds the port, and the outage the data plane shows stays
// within plan's prediction. A create that keeps failing puts the listener back on the old pool,
// which serves the port again, and the pass reports the failure; the next pass moves it.
//
// Timings are compressed as in sync-lb-strategies.test.ts (propagation 0.5 s, checks 1 s apart).
import { describe, expect, it } from 'vitest';
import { PartialFailureError } from '../../src/core/errors.js';
import type { FaultConfig } from '../../src/sim/index.js';
import { uniqueName } from '../support/kube.js';
import { TEST_PASS, failuresOf, key, passOk, patchService, poolOf, runPass, theLb } from '../support/lb-scenarios.js';
import { dataPlaneProbes, useDataPlaneWorld } from '../support/make-before-break.js';

const LISTENER_CREATE = { pathPattern: '/v1/load-balancers/listeners', methods: ['POST'] };

describe('a pool swap whose listener create fails once is completed within the pass', () => {
  const namespace = uniqueName('pairs');
  const prefix = uniqueName('pairs');
  const pass = { ...TEST_PASS, namespace, settleSeconds: 1, pollSeconds: 0.2, drainSeconds: 0 };
  const { harness } = useDataPlaneWorld(prefix, namespace, 'pairs/slot');
  const { serving, measure } = dataPlaneProbes(harness, namespace, pass);
  const swap = (name: string) => () => patchService(namespace, name, { metadata: { annotations: { [key('loadbalancer-pool-algorithm')]: 'least_connections' } } });

  it.each<[string, FaultConfig]>([
    ['a 500', { errorRate: { ...LISTENER_CREATE, status: 500, count: 1 } }],
    ['a 503 with Retry-After: 1', { errorRate: { ...LISTENER_CREATE, status: 503, retryAfterSeconds: 1, count: 1 } }],
    ['a connection reset before it was applied', { connectionReset: { ...LISTENER_CREATE, count: 1 } }],
    ['no answer within the client timeout, not applied', { hang: { ...LISTENER_CREATE, count: 1 } }],
    ['a 400 refusing an overlapping write', { errorRate: { ...LISTENER_CREATE, status: 400, count: 1, body: { detail: 'Another operation is in progress on this load balancer.' } } }],
  ])('%s: the create is sent again, the pass exits 0 and the port is down no longer than predicted', async (title, faults) => {
    const name = uniqueName(title.replace(/[^a-z0-9]+/g, '-').slice(0, 12));
    const service = await serving(name);
    const before = poolOf(await theLb(harness, service), 'tcp/http');
    const { predicted, measuredMs, intervals, result } = await measure(name, service, swap(name), async () => {
      harness.sim.admin.setFaults(faults);
      try {
        return await runPass(harness, [name], pass);
      } finally {
        harness.sim.admin.setFaults({});
      }
    });
    expect(result.error, result.ctx.err()).toBeUndefined();
    expect(predicted.impacts).toContain('pool-swap');
    expect(measuredMs, JSON.stringify(intervals)).toBeLessThanOrEqual(predicted.seconds * 1000);
    // The failed attempt and the one that made it: the listener was created once, on the successor.
    const creates = result.simWrites.filter((w) => w.method === 'POST' && w.route === '/v1/load-balancers/listeners');
    expect(creates.length).toBeGreaterThanOrEqual(2);
    const after = await theLb(harness, service);
    expect(Object.keys(after.pools)).toEqual(['tcp/http']);
    const successor = poolOf(after, 'tcp/http');
    expect(successor.pool.uuid).not.toBe(before.pool.uuid);
    expect(successor.listeners.map((l) => l.protocol_port)).toEqual([80]);
  });

  it('a create that keeps failing puts the listener back on the old pool, which serves again; the pass fails saying so, the next one moves it', async () => {
    const name = uniqueName('putback');
    const service = await serving(name);
    const before = poolOf(await theLb(harness, service), 'tcp/http');
    // The move's create is answered 500 on each of its 10 attempts within 25 s (pauses of 0.25,
    // 0.5, 1, 2, then 4 s); the put-back's first attempt is taken.
    const { measuredMs, intervals, result } = await measure(name, service, swap(name), async () => {
      harness.sim.admin.setFaults({ errorRate: { ...LISTENER_CREATE, status: 500, count: 10 } });
      try {
        return await runPass(harness, [name], pass);
      } finally {
        harness.sim.admin.setFaults({});
      }
    });
    expect(result.error).toBeInstanceOf(PartialFailureError);
    const [printed, ...more] = failuresOf(result.error as PartialFailureError, namespace, name);
    expect(more).toEqual([]);
    expect(printed).toContain('was not created within 25 s (10 attempts)');
    expect(printed).toMatch(/listener tcp\/80 was put back on pool tcp\/http, which serves port TCP 80 again as before the move/);
    // Down for the move's retries only: the put-back serves one propagation after them.
    expect(measuredMs, JSON.stringify(intervals)).toBeLessThanOrEqual(45_000);
    // Two pools of that name now (the successor without a listener): read the listeners themselves.
    const listeners = (await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === before.pool.load_balancer.uuid);
    expect(listeners.map((l) => [l.pool?.uuid, l.protocol_port])).toEqual([[before.pool.uuid, 80]]);
    // The next pass finds the successor built and moves the port to it.
    await passOk(harness, [name], pass);
    const moved = await theLb(harness, service);
    expect(Object.keys(moved.pools)).toEqual(['tcp/http']);
    expect(poolOf(moved, 'tcp/http').pool.uuid).not.toBe(before.pool.uuid);
    expect(poolOf(moved, 'tcp/http').listeners.map((l) => l.protocol_port)).toEqual([80]);
  });
});
