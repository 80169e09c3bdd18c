// @kube-versions: all — the Service status written and read back, with or without ipMode (test/support/ip-mode.ts)
// The central promise of sync-lb: a new Service gets one load balancer with everything on it,
// its status, annotations, finalizer and events; the next pass writes nothing.
import { describe, expect, it } from 'vitest';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { LB_FINALIZER } from '../../src/core/lb/service-plan.js';
import { nodesSeed } from '../support/ccm.js';
import { FAST_PASS, expectConverged, passOk, useLbWorld } from '../support/lb-scenarios.js';
import {
  createLoadBalancerService,
  ensureNamespace,
  testConnection,
  uniqueName,
} from '../support/kube.js';
import { asStored } from '../support/ip-mode.js';

const seed = (prefix: string) => nodesSeed({ prefix, count: 2, privateNet: '10.20.0', publicNet: '5.102.146' });

describe('sync-lb: a new Service', () => {
  const namespace = uniqueName('lb');
  const prefix = uniqueName('n');
  const { harness } = useLbWorld({ prefix, namespace, seed: seed(prefix), nodes: 2 });

  it('gets a load balancer, status, annotations, finalizer and events; the next pass writes nothing', async () => {
    const service = await createLoadBalancerService(namespace, 'web');
    const options = { ...FAST_PASS, namespace, dryRun: false };

    const first = harness.context();
    const report = await syncLbCommand(['service/web'], options, first);
    expect(report.services.map((s) => s.status)).toEqual(['changed']);

    const lbs = await harness.cloud.loadBalancers.list();
    expect(lbs.map((lb) => lb.name)).toEqual([`k8s-service-${service.metadata!.uid}`]);
    const [lb] = lbs;
    expect(lb!.tags).toMatchObject({
      'k8s.cloudscale.ch/cluster': harness.clusterId,
      'k8s.cloudscale.ch/service-uid': service.metadata!.uid,
    });
    const pools = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb!.uuid);
    expect(pools.map((p) => p.name)).toEqual(['tcp/http']);
    const members = await harness.cloud.poolMembers.list(pools[0]!.uuid);
    const nodePort = service.spec!.ports![0]!.nodePort!;
    expect(members.map((m) => m.name).sort()).toEqual([`10.20.0.1:${nodePort}`, `10.20.0.2:${nodePort}`]);
    expect((await harness.cloud.listeners.list()).map((l) => l.name)).toEqual(['tcp/80']);
    expect((await harness.cloud.healthMonitors.list()).map((m) => m.type)).toEqual(['tcp']);

    const stored = await testConnection().core.readNamespacedService({ namespace, name: 'web' });
    expect(stored.metadata!.finalizers).toContain(LB_FINALIZER);
    expect(stored.metadata!.annotations).toMatchObject({
      'k8s.cloudscale.ch/loadbalancer-uuid': lb!.uuid,
      'k8s.cloudscale.ch/loadbalancer-config-version': '1',
      'k8s.cloudscale.ch/loadbalancer-zone': 'rma1',
    });
    expect(stored.status!.loadBalancer!.ingress).toEqual(
      await asStored(lb!.vip_addresses.map((vip) => ({ ip: vip.address, ipMode: 'Proxy' }))),
    );
    const events = await testConnection().core.listNamespacedEvent({ namespace });
    expect(events.items.filter((e) => e.involvedObject.name === 'web').map((e) => e.reason)).toEqual(
      expect.arrayContaining(['EnsuringLoadBalancer', 'EnsuredLoadBalancer']),
    );

    const second = harness.context();
    const again = await syncLbCommand(['service/web'], options, second);
    expect(again.services.map((s) => s.status)).toEqual(['unchanged']);
    expect(again.requests.writes).toBe(0);
    expect(second.out()).toContain('in sync');
  });

  it('without arguments: every Service of type LoadBalancer in every namespace, and no other', async () => {
    const other = uniqueName('lb-other');
    await ensureNamespace(other);
    const elsewhere = await createLoadBalancerService(other, 'elsewhere');
    await createLoadBalancerService(namespace, 'classy', { loadBalancerClass: 'example.com/other' });
    await createLoadBalancerService(namespace, 'plain', { spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80 }] } });
    // No names: the whole cluster (passOk reports the output of a failed pass).
    const { report } = await passOk(harness, []);
    expect(report.services.map((s) => `${s.service} ${s.status}`).sort()).toEqual(
      [`${namespace}/web unchanged`, `${other}/elsewhere changed`].sort(),
    );
    const lbs = await harness.cloud.loadBalancers.list();
    expect(lbs).toHaveLength(2);
    expect(lbs.map((lb) => lb.name)).toContain(`k8s-service-${elsewhere.metadata!.uid}`);

    const again = await expectConverged(harness, []);
    expect(again.services).toHaveLength(2);
  });
});
