// A pass that recreates a pool (a changed pool algorithm) converges whether deleting a pool
// deletes its listeners too (the real API, the simulator's default) or leaves them behind with
// `pool: null` (the simulator's poolDeleteKeepsListeners switch).
import { describe, expect, it } from 'vitest';
import { createLoadBalancerService, uniqueName } from '../support/kube.js';
import { annotate, expectConverged, expectWellFormed, key, memberNames, passOk, poolOf, readService, routes, theLb, useLbWorld } from '../support/lb-scenarios.js';
import { writesTaken } from '../support/strict-world.js';

describe.each([
  { behaviour: 'a pool delete takes its listeners along (default)', poolDeleteKeepsListeners: false },
  { behaviour: 'a pool delete leaves its listeners with pool: null', poolDeleteKeepsListeners: true },
])('sync-lb: pool recreated when $behaviour', ({ poolDeleteKeepsListeners }) => {
  const namespace = uniqueName('lb-cascade');
  const prefix = uniqueName('cascade');
  const pass = { namespace };
  const { harness } = useLbWorld({ prefix, namespace, behaviour: { poolDeleteKeepsListeners } });

  it('converges after the pool algorithm changes: a new pool with members, listener and monitor', async () => {
    await createLoadBalancerService(namespace, 'svc', {
      annotations: { [key('loadbalancer-health-monitor-delay-s')]: '7' },
    });
    await passOk(harness, ['svc'], pass);
    await expectConverged(harness, ['svc'], pass);
    const service = await readService(namespace, 'svc');
    const before = poolOf(await theLb(harness, service), 'tcp/http');

    await annotate(namespace, 'svc', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    const { simWrites } = await passOk(harness, ['svc'], pass);
    expect(routes(simWrites)).toContain('DELETE /v1/load-balancers/pools/{uuid}');
    // A listener create refused while the old listener's delete settles is sent again and taken.
    expect(writesTaken(simWrites).filter((w) => w.status >= 400), 'failed writes').toEqual([]);

    const state = await theLb(harness, service);
    expectWellFormed(state);
    const after = poolOf(state, 'tcp/http');
    expect(after.pool.uuid).not.toBe(before.pool.uuid);
    expect(after.pool).toMatchObject({ algorithm: 'least_connections', protocol: 'tcp' });
    expect(memberNames(after)).toEqual(memberNames(before));
    expect(after.listeners.map((l) => [l.name, l.protocol_port])).toEqual(before.listeners.map((l) => [l.name, l.protocol_port]));
    expect(after.monitors[0]).toMatchObject({ type: 'tcp', delay_s: 7 });
    await expectConverged(harness, ['svc'], pass);
  });
});
