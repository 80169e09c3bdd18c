// What `plan` prints is what `sync-lb` does: for each scenario, `plan -o json` and then
// `sync-lb -o json` run on the same state; the actions sync-lb reports as executed (kind and
// object, in order) are exactly the planned ones, and a second plan shows no change (a refusal
// is planned again, unchanged).
import { PatchStrategy, setHeaderOptions, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { syncLbCommand, type SyncLbReport } from '../../src/commands/sync-lb.js';
import { PartialFailureError } from '../../src/core/errors.js';
import type { PlanDocument } from '../../src/core/render/plan.js';
import { nodesSeed, startHarness, type Harness } from '../support/ccm.js';
import { createLoadBalancerService, createNode, deleteCreatedObjects, ensureNamespace, testConnection, uniqueName } from '../support/kube.js';
import { serverKeepsIpMode } from '../support/ip-mode.js';

const P = 'k8s.cloudscale.ch/';

const seed = (prefix: string) =>
  nodesSeed({ prefix, count: 3, privateNet: '10.50.0', publicNet: '5.102.149', floatingIps: ['5.102.152.30/32'] });

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('plan -o json then sync-lb: the executed actions are the planned ones', () => {
  let harness: Harness;
  const namespace = uniqueName('plan-eq');
  const prefix = uniqueName('n');
  const pass = { namespace, concurrency: 2, waitTimeout: 30, settleSeconds: 0, pollSeconds: 0.05, dryRun: false };

  beforeAll(async () => {
    harness = await startHarness({ seed: seed(prefix) });
    await ensureNamespace(namespace);
    for (const i of [1, 2]) await createNode(`${prefix}-${i}`, { ready: true });
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await harness.stop();
  });

  async function planJson(name: string): Promise<PlanDocument> {
    const ctx = harness.context({ output: 'json' });
    await planCommand([`service/${name}`], { namespace, detailedExitcode: false }, ctx);
    return JSON.parse(ctx.out()) as PlanDocument;
  }

  async function syncJson(name: string): Promise<SyncLbReport> {
    const ctx = harness.context({ output: 'json' });
    try {
      await syncLbCommand([`service/${name}`], pass, ctx);
    } catch (error) {
      // A refused or failing Service fails the pass; the report was printed all the same.
      if (!(error instanceof PartialFailureError)) throw error;
    }
    return JSON.parse(ctx.out()) as SyncLbReport;
  }

  const planned = (document: PlanDocument) => document.services.flatMap((s) => s.actions.map((a) => `${a.kind} ${a.object}`));
  const executed = (report: SyncLbReport) => report.services.flatMap((s) => s.actions.map((a) => `${a.kind} ${a.object}`));

  /** A converged Service `name`; returns it as stored. */
  async function converged(name: string, options: Parameters<typeof createLoadBalancerService>[2] = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, options);
    await syncJson(name);
    expect(planned(await planJson(name))).toEqual([]);
    return testConnection().core.readNamespacedService({ namespace, name });
  }

  /** Plans, syncs, compares; then plans again. Returns the first plan. */
  async function planThenSync(name: string, expected: { refused?: boolean } = {}): Promise<PlanDocument> {
    const first = await planJson(name);
    expect(planned(first).length, 'the scenario plans something').toBeGreaterThan(0);
    const report = await syncJson(name);
    expect(executed(report)).toEqual(planned(first));
    const second = await planJson(name);
    if (expected.refused) {
      expect(planned(second)).toEqual(planned(first));
      expect(second.summary).toMatchObject({ changes: false, refuse: first.summary.refuse });
    } else {
      expect(report.services.map((s) => s.status)).toEqual(['changed']);
      expect(planned(second)).toEqual([]);
      expect(second.summary.changes).toBe(false);
    }
    return first;
  }

  const annotate = (name: string, annotations: Record<string, string | null>) =>
    testConnection().core.patchNamespacedService({ namespace, name, body: { metadata: { annotations } } }, mergePatch);
  const patchSpec = (name: string, spec: object) => testConnection().core.patchNamespacedService({ namespace, name, body: { spec } }, mergePatch);
  const kinds = (document: PlanDocument) => document.services.flatMap((s) => s.actions.map((a) => a.kind));

  it('a new Service', async () => {
    await createLoadBalancerService(namespace, 'new');
    const plan = await planThenSync('new');
    expect(kinds(plan)).toEqual(['add-finalizer', 'create-lb', 'create-pool', 'create-member', 'create-member', 'create-listener', 'create-monitor', 'write-annotations', 'write-status']);
  });

  it('timeouts: updated in place', async () => {
    await converged('timeouts');
    await annotate('timeouts', { [`${P}loadbalancer-timeout-client-data-ms`]: '1000', [`${P}loadbalancer-timeout-member-connect-ms`]: '2000' });
    expect(kinds(await planThenSync('timeouts'))).toEqual(['update-listener', 'update-listener']);
  });

  it('pool algorithm: the pool is recreated', async () => {
    await converged('algorithm');
    await annotate('algorithm', { [`${P}loadbalancer-pool-algorithm`]: 'least_connections' });
    const plan = await planThenSync('algorithm');
    expect(new Set(plan.services[0]!.actions.map((a) => a.impact))).toEqual(new Set(['pool-recreation']));
  });

  it('allowed CIDRs: updated in place', async () => {
    await converged('cidrs');
    await annotate('cidrs', { [`${P}loadbalancer-listener-allowed-cidrs`]: '["10.0.0.0/8","192.0.2.0/24"]' });
    expect(kinds(await planThenSync('cidrs'))).toEqual(['update-listener']);
  });

  it('node selector: the members of unselected nodes go', async () => {
    await converged('selector');
    await testConnection().core.patchNode({ name: `${prefix}-1`, body: { metadata: { labels: { 'plan-eq/edge': 'yes' } } } }, mergePatch);
    await annotate('selector', { [`${P}loadbalancer-node-selector`]: 'plan-eq/edge=yes' });
    expect(kinds(await planThenSync('selector'))).toEqual(['delete-member']);
  });

  it('health monitor type: the monitor is recreated', async () => {
    await converged('monitor');
    await annotate('monitor', { [`${P}loadbalancer-health-monitor-type`]: 'http' });
    expect(kinds(await planThenSync('monitor'))).toEqual(['delete-monitor', 'create-monitor']);
  });

  it('Floating IP: assigned', async () => {
    await converged('fip');
    await annotate('fip', { [`${P}loadbalancer-floating-ips`]: '["5.102.152.30/32"]' });
    expect(kinds(await planThenSync('fip'))).toEqual(['assign-floating-ip']);
  });

  it('port change keeping the name: the listener is recreated', async () => {
    const service = await converged('port');
    await patchSpec('port', { ports: [{ ...service.spec!.ports![0]!, port: 8080 }] });
    expect(kinds(await planThenSync('port'))).toEqual(['delete-listener', 'create-listener']);
  });

  it('externalTrafficPolicy Cluster → Local: members and monitor recreated', async () => {
    await converged('etp');
    await patchSpec('etp', { externalTrafficPolicy: 'Local' });
    expect(kinds(await planThenSync('etp'))).toEqual(['delete-member', 'delete-member', 'create-member', 'create-member', 'delete-monitor', 'create-monitor']);
  });

  it('type LoadBalancer → ClusterIP: the load balancer is deleted, the finalizer removed', async () => {
    const service = await converged('gone');
    const ports = service.spec!.ports!.map(({ nodePort: _nodePort, ...port }) => port);
    const changed = await patchSpec('gone', { type: 'ClusterIP', externalTrafficPolicy: null, allocateLoadBalancerNodePorts: null, ports });
    // The API server clears status.loadBalancer itself on the type change: no status write.
    expect(changed.status?.loadBalancer?.ingress ?? []).toEqual([]);
    expect(kinds(await planThenSync('gone'))).toEqual(['delete-lb', 'remove-finalizer']);
    expect((await harness.cloud.loadBalancers.list()).filter((lb) => lb.name === `k8s-service-${service.metadata!.uid}`)).toEqual([]);
  });

  it('a refused change (flavor): planned as refused, nothing executed but the refusal, planned again', async () => {
    await converged('refused');
    await annotate('refused', { [`${P}loadbalancer-flavor`]: 'lb-large' });
    const plan = await planThenSync('refused', { refused: true });
    expect(kinds(plan)).toEqual(['refuse']);
    expect(plan.summary).toMatchObject({ refuse: 1, problems: 1 });
  });

  it('name annotation: renamed in place', async () => {
    await converged('renamed');
    await annotate('renamed', { [`${P}loadbalancer-name`]: `${namespace}-renamed` });
    expect(kinds(await planThenSync('renamed'))).toEqual(['rename-lb']);
  });

  it('a port added and another renamed: a new pool, and a pool recreated', async () => {
    const service = await converged('ports', {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
        { name: 'metrics', protocol: 'TCP', port: 9100, targetPort: 9100 },
      ],
    });
    const [http, metrics] = service.spec!.ports!;
    await patchSpec('ports', { ports: [http, { ...metrics!, name: 'prom' }, { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 }] });
    const plan = await planThenSync('ports');
    expect(plan.services[0]!.actions.filter((a) => a.kind === 'create-pool').map((a) => `${a.object} [${a.impact}]`)).toEqual([
      'pool tcp/prom [pool-recreation]',
      'pool tcp/https [none]',
    ]);
  });

  it('ip-mode: only the status is written', async (context) => {
    // An API server that drops ipMode stores the same status either way: nothing to plan.
    if (!(await serverKeepsIpMode())) context.skip();
    await converged('ipmode');
    await annotate('ipmode', { [`${P}loadbalancer-ip-mode`]: 'VIP' });
    expect(kinds(await planThenSync('ipmode'))).toEqual(['write-status']);
  });

  it('the Service deleted (the finalizer holds it): the load balancer goes, then the finalizer', async () => {
    await converged('deleted');
    await testConnection().core.deleteNamespacedService({ namespace, name: 'deleted' });
    const first = await planJson('deleted');
    expect(kinds(first)).toEqual(['delete-lb', 'remove-finalizer']);
    const report = await syncJson('deleted');
    expect(executed(report)).toEqual(planned(first));
    // The Service is gone now, so a second plan has nothing to plan for.
    expect((await planJson('deleted')).services).toEqual([]);
  });

  it('the whole cluster at once: every Service executes exactly its planned actions', async () => {
    // The refused change of an earlier scenario is taken back: every other Service is in sync.
    await annotate('refused', { [`${P}loadbalancer-flavor`]: null });
    await converged('many-a');
    await converged('many-b');
    await annotate('many-a', { [`${P}loadbalancer-health-monitor-delay-s`]: '5' });
    await annotate('many-b', { [`${P}loadbalancer-pool-protocol`]: 'proxy' });
    await createLoadBalancerService(namespace, 'many-c');
    const ctx = harness.context({ output: 'json' });
    await planCommand([], { namespace, detailedExitcode: false }, ctx);
    const document = JSON.parse(ctx.out()) as PlanDocument;
    expect(document.nodes!.actions).toEqual([]);
    const byService = (entries: { service: string; actions: string[] }[]) =>
      Object.fromEntries(entries.filter((e) => e.actions.length > 0).map((e) => [e.service, e.actions]));
    const plannedByService = byService(
      document.services.map((s) => ({ service: `${s.service.namespace}/${s.service.name}`, actions: s.actions.map((a) => `${a.kind} ${a.object}`) })),
    );
    expect(Object.keys(plannedByService).sort()).toEqual([`${namespace}/many-a`, `${namespace}/many-b`, `${namespace}/many-c`]);

    const syncCtx = harness.context({ output: 'json' });
    await syncLbCommand([], pass, syncCtx);
    const report = JSON.parse(syncCtx.out()) as SyncLbReport;
    expect(byService(report.services.map((s) => ({ service: s.service, actions: s.actions.map((a) => `${a.kind} ${a.object}`) })))).toEqual(plannedByService);

    const again = harness.context({ output: 'json' });
    await planCommand([], { namespace, detailedExitcode: false }, again);
    const after = JSON.parse(again.out()) as PlanDocument;
    expect(after.summary.changes).toBe(false);
  });

  // Last: the new node changes every Service of this file.
  it('a node added: one member more', async () => {
    await converged('grow');
    await createNode(`${prefix}-3`, { ready: true });
    expect(kinds(await planThenSync('grow'))).toEqual(['create-member']);
  });
});
