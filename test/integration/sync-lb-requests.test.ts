// What a pass costs in cloudscale API requests, for 1, 10 and 50 Services (one port each, two
// nodes, so two members per pool). The contract: a pass that changes nothing costs the six list
// calls plus one member list per pool, whatever the number of Services; a full converge writes
// exactly the creations. The figures (reads of a converge included) are printed for the record.
import { afterAll, describe, expect, it } from 'vitest';
import { startHarness } from '../support/ccm.js';
import { createLoadBalancerService, ensureNamespace, uniqueName } from '../support/kube.js';
import { annotate, expectConverged, key, lbSeed, passOk, readService, theLb, useLbWorld } from '../support/lb-scenarios.js';

const LIST_ROUTES = [
  'GET /v1/servers',
  'GET /v1/load-balancers',
  'GET /v1/load-balancers/pools',
  'GET /v1/load-balancers/listeners',
  'GET /v1/load-balancers/health-monitors',
  'GET /v1/floating-ips',
  'GET /v1/subnets',
];
const MEMBER_LIST_ROUTE = 'GET /v1/load-balancers/pools/{uuid}/members';
/** Per Service: load balancer, pool, two members, listener, monitor. */
const CREATIONS_PER_SERVICE = 6;

describe('sync-lb: requests per pass', () => {
  const prefix = uniqueName('req');
  const figures: string[] = [];
  const { harness } = useLbWorld({ prefix });

  afterAll(async () => {
    if (figures.length > 0) {
      console.info(
        [
          'sync-lb requests (cloudscale API; lbProvisionMs 0):',
          'services | converge total (reads/writes) | minimum | no-op total | minimum',
          ...figures,
        ].join('\n'),
      );
    }
  });

  it.each([1, 10, 50])('%i Service(s): a converge writes exactly the creations; a no-op pass costs 6 lists + 1 member list per pool', async (count) => {
    const namespace = uniqueName(`lb-req-${count}`);
    await ensureNamespace(namespace);
    const names = Array.from({ length: count }, (_, i) => `svc-${i}`);
    for (const name of names) await createLoadBalancerService(namespace, name);

    const converge = await passOk(harness, names, { namespace });
    expect(converge.report.services.map((s) => s.status)).toEqual(Array(count).fill('changed'));
    expect(converge.report.requests.writes).toBe(CREATIONS_PER_SERVICE * count);
    expect(converge.report.requests.retries).toBe(0);
    const convergeMinimum = CREATIONS_PER_SERVICE * count + LIST_ROUTES.length + count;
    // The read-back after the creations asks only what the pass cannot know: no member list of
    // the pools it created (their create answers listed the members), no servers or subnets again.
    const converged = converge.simRequests.map((r) => `${r.method} ${r.route}`);
    expect(converged.filter((r) => r === MEMBER_LIST_ROUTE)).toEqual([]);
    expect(converged.filter((r) => r === 'GET /v1/servers' || r === 'GET /v1/subnets')).toEqual(['GET /v1/servers', 'GET /v1/subnets']);
    expect(converge.report.requests.total).toBeLessThanOrEqual(convergeMinimum + 6);

    const noop = await passOk(harness, names, { namespace });
    const requests = (await noop.ctx.client()).requests.summary();
    expect(noop.report.requests).toEqual({ total: LIST_ROUTES.length + count, reads: LIST_ROUTES.length + count, writes: 0, retries: 0, throttled: 0, waitedMs: expect.any(Number) });
    expect(Object.fromEntries(requests.byRoute.map((r) => [r.route, r.count]))).toEqual({
      ...Object.fromEntries(LIST_ROUTES.map((route) => [route, 1])),
      [MEMBER_LIST_ROUTE]: count,
    });
    // The simulator saw the same: every member list of a distinct pool.
    const memberPaths = noop.simRequests.filter((r) => `${r.method} ${r.route}` === MEMBER_LIST_ROUTE).map((r) => r.path);
    expect(new Set(memberPaths).size).toBe(count);

    const { total, reads, writes } = converge.report.requests;
    figures.push(
      `${String(count).padStart(8)} | ${String(total).padStart(14)} (${reads}/${writes}) | ${String(convergeMinimum).padStart(7)} | ${String(noop.report.requests.total).padStart(11)} | ${LIST_ROUTES.length + count}`,
    );
  });

  /** A converged Service `web` in a namespace of its own, then annotated (suffix → value). */
  async function changedWeb(prefix: string, annotations: Record<string, string>): Promise<string> {
    const namespace = uniqueName(prefix);
    await ensureNamespace(namespace);
    await createLoadBalancerService(namespace, 'web');
    await passOk(harness, ['web'], { namespace });
    await annotate(namespace, 'web', Object.fromEntries(Object.entries(annotations).map(([suffix, value]) => [key(suffix), value])));
    return namespace;
  }

  it('in-place changes cost one PATCH per object, carrying all of its changed fields', async () => {
    const namespace = await changedWeb('lb-req-patch', {
      'loadbalancer-timeout-client-data-ms': '1000',
      'loadbalancer-timeout-member-data-ms': '2000',
      'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]',
      'loadbalancer-health-monitor-delay-s': '5',
      'loadbalancer-health-monitor-down-threshold': '4',
    });
    const { report, simWrites } = await passOk(harness, ['web'], { namespace });
    expect(report.services[0]!.actions.map((a) => `${a.kind} ${a.object}`).sort()).toEqual(['update-listener listener tcp/80', 'update-monitor health monitor of pool tcp/http']);
    expect(simWrites.map((r) => `${r.method} ${r.route}`).sort()).toEqual(['PATCH /v1/load-balancers/health-monitors/{uuid}', 'PATCH /v1/load-balancers/listeners/{uuid}']);
    const pool = (await theLb(harness, await readService(namespace, 'web'))).pools['tcp/http']!;
    expect(pool.listeners[0]).toMatchObject({ timeout_client_data_ms: 1000, timeout_member_data_ms: 2000, allowed_cidrs: ['10.0.0.0/8'] });
    expect(pool.monitors[0]).toMatchObject({ delay_s: 5, down_threshold: 4 });
    await expectConverged(harness, ['web'], { namespace });
  });

  it('where the API takes one attribute per PATCH, the first refused PATCH is sent again field by field, later ones go field by field at once, and the pass converges', async () => {
    const namespace = await changedWeb('lb-req-one', {
      'loadbalancer-timeout-client-data-ms': '1000',
      'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]',
      'loadbalancer-health-monitor-delay-s': '5',
      'loadbalancer-health-monitor-down-threshold': '4',
    });
    harness.sim.admin.setBehaviour({ onePatchAttribute: true });
    try {
      const { simRequests } = await passOk(harness, ['web'], { namespace });
      const writes = simRequests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.route} ${r.status}`);
      // One refusal for the pass: the object patched second is sent field by field at once.
      expect(writes.filter((w) => w.endsWith(' 400'))).toHaveLength(1);
      expect(writes[0]).toMatch(/ 400$/);
      expect(writes.slice(1).sort()).toEqual([
        'PATCH /v1/load-balancers/health-monitors/{uuid} 204',
        'PATCH /v1/load-balancers/health-monitors/{uuid} 204',
        'PATCH /v1/load-balancers/listeners/{uuid} 204',
        'PATCH /v1/load-balancers/listeners/{uuid} 204',
      ]);
      const pool = (await theLb(harness, await readService(namespace, 'web'))).pools['tcp/http']!;
      expect(pool.listeners[0]).toMatchObject({ timeout_client_data_ms: 1000, allowed_cidrs: ['10.0.0.0/8'] });
      expect(pool.monitors[0]).toMatchObject({ delay_s: 5, down_threshold: 4 });
      await expectConverged(harness, ['web'], { namespace });
    } finally {
      harness.sim.admin.setBehaviour({ onePatchAttribute: false });
    }
  });

  it('with provisioning time, the waits add reads of the new load balancers (polled together), and no write', async () => {
    const slow = await startHarness({ seed: lbSeed(prefix, 2), lbProvisionMs: 100 });
    try {
      const namespace = uniqueName('lb-req-slow');
      await ensureNamespace(namespace);
      const names = Array.from({ length: 10 }, (_, i) => `svc-${i}`);
      for (const name of names) await createLoadBalancerService(namespace, name);
      const converge = await passOk(slow, names, { namespace });
      expect(converge.report.requests.writes).toBe(CREATIONS_PER_SERVICE * names.length);
      // The new load balancers are polled together: one list per interval while several wait.
      const waits = converge.simRequests.slice(converge.simRequests.findIndex((r) => r.method === 'POST'));
      const polls = waits.filter((r) => ['GET /v1/load-balancers', 'GET /v1/load-balancers/{uuid}'].includes(`${r.method} ${r.route}`)).length;
      expect(polls).toBeGreaterThanOrEqual(1);
      expect(waits.filter((r) => `${r.method} ${r.route}` === 'GET /v1/load-balancers').length).toBeGreaterThanOrEqual(1);
      figures.push(
        `${String(names.length).padStart(8)} | ${String(converge.report.requests.total).padStart(14)} (${converge.report.requests.reads}/${converge.report.requests.writes}) | lbProvisionMs 100, poll 0.05 s: ${polls} polls`,
      );
    } finally {
      await slow.stop();
    }
  });
});
