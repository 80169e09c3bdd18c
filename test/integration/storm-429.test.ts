// A 429 storm on the real kube-apiserver and the simulator. The pass runs as the built CLI, so
// its real retry policy applies (every Retry-After waited in full): 30 % of all cloudscale API
// requests are answered 429 with `Retry-After: 1`, and the first five lists of load balancers
// are refused outright (five 429s in a row are what stopped a whole pass before). Every Service
// must converge in that one pass, with no load balancer created twice, and the summary must
// count the 429s. Then a read that fails for good (one pool's members) fails only its Service.
// The same storm at 1,000 Services is `npm run soak:429` (too slow for npm test).
import { beforeAll, describe, expect, test } from 'vitest';
import { runBinary } from '../support/ccm.js';
import { createLoadBalancerService, uniqueName } from '../support/kube.js';
import { annotate, expectConverged, failuresOf, key, passFails, passOk, readService, useLbWorld } from '../support/lb-scenarios.js';

const SERVICES = 60;

describe('sync-lb in a 429 storm', () => {
  const prefix = uniqueName('storm');
  const namespace = uniqueName('storm');
  const names = Array.from({ length: SERVICES }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
  const { harness } = useLbWorld({ prefix, namespace });

  beforeAll(async () => {
    for (const name of names) await createLoadBalancerService(namespace, name);
  });

  test(`${SERVICES} Services converge in one pass while 30 % of requests are answered 429`, async () => {
    harness.sim.admin.setFaults({
      errorRate: { pathPattern: '/**', status: 429, rate: 0.3, retryAfterSeconds: 1 },
      rateLimit: { pathPattern: '/v1/load-balancers', methods: ['GET'], count: 5, retryAfterSeconds: 1 },
    });
    const before = harness.sim.admin.requests().length;
    const result = await runBinary(
      [
        'sync-lb',
        '-n',
        namespace,
        ...names.map((name) => `service/${name}`),
        '--cluster-id',
        harness.clusterId,
        '--wait',
        '--concurrency',
        '8',
        '--settle-seconds',
        '0',
        '--poll-seconds',
        '0.2',
      ],
      { apiUrl: harness.sim.url, timeoutMs: 300_000 },
    );
    const answered = harness.sim.admin.requests().slice(before);
    harness.sim.admin.setFaults({});
    const output = result.stdout + result.stderr;
    expect(result.code, output).toBe(0);
    const throttled = answered.filter((r) => r.status === 429).length;
    expect(throttled).toBeGreaterThan(SERVICES);
    // The budget line counts the 429s the simulator sent (the CLI is its only client meanwhile).
    expect(output).toContain(`sync-lb: ${SERVICES} Services: ${SERVICES} changed, 0 in sync, 0 failed; `);
    expect(output).toMatch(new RegExp(`API requests \\(\\d+ writes; ${throttled} answered 429, \\d+ s waited\\)`));

    const lbs = await harness.cloud.loadBalancers.list();
    expect(lbs).toHaveLength(SERVICES);
    expect(new Set(lbs.map((lb) => lb.name)).size).toBe(SERVICES);
    expect(answered.filter((r) => r.method === 'POST' && r.route === '/v1/load-balancers' && r.status === 201)).toHaveLength(SERVICES);
    await expectConverged(harness, names, { namespace });
  }, 320_000);

  test('a pool whose members cannot be read fails its Service only; the others change', async () => {
    const [lb] = await harness.cloud.loadBalancers.list();
    const pool = (await harness.cloud.pools.list()).find((p) => p.load_balancer.uuid === lb!.uuid)!;
    harness.sim.admin.setFaults({
      errorRate: { pathPattern: `/v1/load-balancers/pools/${pool.uuid}/members`, methods: ['GET'], status: 500 },
    });
    for (const name of names) await annotate(namespace, name, { [key('loadbalancer-timeout-client-data-ms')]: '120000' });
    const { error, report, simWrites } = await passFails(harness, names, { namespace });
    harness.sim.admin.setFaults({});

    const failed = report!.services.filter((s) => s.status === 'failed').map((s) => s.service.split('/')[1]!);
    expect(failed).toHaveLength(1);
    const owner = await readService(namespace, failed[0]!);
    expect(owner.metadata?.annotations?.[key('loadbalancer-uuid')]).toBe(lb!.uuid);
    expect(failuresOf(error, namespace, failed[0]!).join('\n')).toMatch(/members of pool .* could not be read/);
    expect(report!.services.filter((s) => s.status === 'changed')).toHaveLength(SERVICES - 1);
    // Nothing was written to the load balancer whose members are unknown; the next pass does it.
    const listener = (await harness.cloud.listeners.list()).find((l) => l.pool?.uuid === pool.uuid)!;
    expect(simWrites.filter((r) => r.path.includes(listener.uuid) || r.path.includes(pool.uuid))).toEqual([]);
    const next = await passOk(harness, names, { namespace });
    expect(next.report.services.filter((s) => s.status === 'changed').map((s) => s.service)).toEqual([`${namespace}/${failed[0]}`]);
  });
});

describe('sync-lb while the list of load balancers fails', () => {
  const prefix = uniqueName('lbwait');
  const namespace = uniqueName('lbwait');
  const names = ['one', 'two', 'three'];
  const { harness } = useLbWorld({ prefix, namespace, lbProvisionMs: 1_500 });

  beforeAll(async () => {
    for (const name of names) await createLoadBalancerService(namespace, name);
  });

  // The list that polls the new load balancers concerns none of them in particular: a failed one
  // is a poll that learned nothing, not a failure of every Service waiting.
  test('the Services waiting for their new load balancers wait on through two failed lists, and converge', async () => {
    const pass = passOk(harness, names, { namespace });
    const created = () => harness.sim.admin.requests().filter((r) => r.method === 'POST' && r.route === '/v1/load-balancers' && r.status === 201);
    while (created().length < names.length) await new Promise((resolve) => setTimeout(resolve, 10));
    // Five attempts (the harness's client retries 4 times) make one failed list: two of them.
    harness.sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers', methods: ['GET'], status: 500, count: 10 } });
    const { report, simRequests } = await pass;
    harness.sim.admin.setFaults({});
    expect(simRequests.filter((r) => r.route === '/v1/load-balancers' && r.status === 500)).toHaveLength(10);
    expect(report.services.map((s) => s.status)).toEqual(['changed', 'changed', 'changed']);
    await expectConverged(harness, names, { namespace });
  });
});
