// @kube-versions: all — finalizers removed from Services the server is deleting
// `cleanup`: deletes only load balancers tagged for this cluster whose Service is gone (or, with
// --all, every one of this cluster); never untagged or foreign ones, never Floating IPs, and one
// without this cluster's kube-system-uid tag only with --include-untagged.
import { beforeAll, describe, expect, it } from 'vitest';
import { cleanupCommand } from '../../src/commands/cleanup.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { UsageError } from '../../src/core/errors.js';
import { nodesSeed } from '../support/ccm.js';
import { createLoadBalancerService, deleteServiceForced, uniqueName } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';

describe('cleanup', () => {
  const namespace = uniqueName('clean');
  const prefix = uniqueName('cl');
  const sync = { ...FAST_PASS, namespace, dryRun: false };
  const names = async () => (await harness.cloud.loadBalancers.list()).map((lb) => lb.name).sort();
  const { harness } = useLbWorld({
    prefix,
    namespace,
    seed: nodesSeed({ prefix, count: 1, privateNet: '10.50.0', floatingIps: ['5.102.151.7/32'] }),
    nodes: 1,
  });

  beforeAll(async () => {
    await createLoadBalancerService(namespace, 'kept');
    await createLoadBalancerService(namespace, 'gone', {
      annotations: { 'k8s.cloudscale.ch/loadbalancer-floating-ips': '["5.102.151.7/32"]' },
    });
    await syncLbCommand(['service/kept', 'service/gone'], sync, harness.context());
    // The Service disappears without its load balancer being deleted (finalizer removed by force).
    await deleteServiceForced(namespace, 'gone');
    // Not ours: an untagged load balancer (the Go CCM's, or made by hand) and another cluster's.
    await harness.cloud.loadBalancers.create({ name: 'untagged', flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] });
    await harness.cloud.loadBalancers.create({
      name: 'foreign',
      flavor: 'lb-standard',
      zone: 'rma1',
      vip_addresses: [],
      tags: { 'k8s.cloudscale.ch/cluster': 'another-cluster', 'k8s.cloudscale.ch/service-uid': 'x' },
    });
  });

  it('lists with --dry-run and deletes nothing', async () => {
    const before = await names();
    const ctx = harness.context();
    const report = await cleanupCommand({ all: false, yes: false, dryRun: true }, ctx);
    expect(report.candidates.map((c) => c.service)).toEqual([`${namespace}/gone`]);
    expect(ctx.out()).toMatch(new RegExp(`load balancer k8s-service-\\S+ \\(\\S+\\): its Service ${namespace}/gone no longer exists`));
    expect(await names()).toEqual(before);
  });

  it('refuses to delete without --yes when nobody can be asked', async () => {
    await expect(cleanupCommand({ all: false, yes: false, dryRun: false }, harness.context())).rejects.toThrow(UsageError);
    expect(await names()).toHaveLength(4);
  });

  it('deletes the orphan only; its Floating IP stays in the project, unassigned', async () => {
    const report = await cleanupCommand({ all: false, yes: true, dryRun: false }, harness.context());
    expect(report.deleted).toHaveLength(1);
    const left = await names();
    expect(left).toHaveLength(3);
    expect(left).toEqual(expect.arrayContaining(['foreign', 'untagged']));
    const fip = await harness.cloud.floatingIps.get('5.102.151.7');
    expect(fip.load_balancer).toBeNull();
  });

  it("an orphan without this cluster's kube-system-uid tag (an older version's) is kept, and deleted with --include-untagged", async () => {
    await createLoadBalancerService(namespace, 'older');
    const synced = await syncLbCommand(['service/older'], sync, harness.context());
    const older = synced.services[0]!.loadBalancer!.uuid!;
    await deleteServiceForced(namespace, 'older');
    const { 'k8s.cloudscale.ch/kube-system-uid': _dropped, ...olderTags } = (await harness.cloud.loadBalancers.get(older)).tags;
    await harness.cloud.loadBalancers.update(older, { tags: olderTags });
    const before = await names();

    const ctx = harness.context();
    const kept = await cleanupCommand({ all: false, yes: true, dryRun: false }, ctx);
    expect(kept.deleted).toEqual([]);
    expect(kept.withoutProof).toEqual([expect.objectContaining({ uuid: older, why: expect.stringContaining('--include-untagged') })]);
    expect(ctx.out()).toMatch(new RegExp(`kept load balancer \\S+ \\(${older}\\): has no k8s.cloudscale.ch/kube-system-uid tag`));
    expect(await names()).toEqual(before);

    const deleted = await cleanupCommand({ all: false, includeUntagged: true, yes: true, dryRun: false }, harness.context());
    expect(deleted.deleted).toEqual([older]);
    expect(await names()).toEqual(before.filter((name) => name !== (synced.services[0]!.loadBalancer!.name)));
  });

  it('with --all deletes every load balancer of this cluster, and only those', async () => {
    const ctx = harness.context({ output: 'json' });
    await cleanupCommand({ all: true, yes: true, dryRun: false }, ctx);
    expect(JSON.parse(ctx.out()).candidates.map((c: { service: string }) => c.service)).toEqual([`${namespace}/kept`]);
    expect(await names()).toEqual(['foreign', 'untagged']);
  });
});
