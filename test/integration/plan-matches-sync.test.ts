// @kube-versions: all — one status write per new Service, also where the server drops ipMode
// What `plan` prints is what `sync-lb` does: for each scenario, `plan -o json` and then
// `sync-lb -o json` run on the same state; the actions sync-lb reports as executed (kind and
// object, in order) are exactly the planned ones, and a second plan shows no change (a refusal
// is planned again, unchanged).
import { PatchStrategy, setHeaderOptions, type V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { syncLbCommand, type SyncLbReport } from '../../src/commands/sync-lb.js';
import { PartialFailureError } from '../../src/core/errors.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import { nodesSeed, runBinary } from '../support/ccm.js';
import { createLoadBalancerService, createNode, testConnection, uniqueName } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';
import { awaitSteady } from '../support/strict-world.js';
import { serverKeepsIpMode } from '../support/ip-mode.js';

const P = 'k8s.cloudscale.ch/';

const seed = (prefix: string) =>
  nodesSeed({ prefix, count: 3, privateNet: '10.50.0', publicNet: '5.102.149', floatingIps: ['5.102.152.30/32'] });

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('plan -o json then sync-lb: the executed actions are the planned ones', () => {
  const namespace = uniqueName('plan-eq');
  const prefix = uniqueName('n');
  const pass = { ...FAST_PASS, namespace, dryRun: false };
  const { harness } = useLbWorld({ prefix, namespace, seed: seed(prefix), nodes: 2 });

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

  /** A converged Service `name`, its load balancer steady; returns it as stored. */
  async function converged(name: string, options: Parameters<typeof createLoadBalancerService>[2] = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, options);
    await syncJson(name);
    expect(planned(await planJson(name))).toEqual([]);
    const service = await testConnection().core.readNamespacedService({ namespace, name });
    // The scenarios' plans are compared with the pass after them: both see the members judged.
    await awaitSteady(harness, service);
    return service;
  }

  /**
   * Plans, syncs, compares; then plans again. Returns the first plan. `pending`: deletions the
   * second plan still names for a later pass (drained members), a change all the same.
   */
  async function planThenSync(name: string, expected: { refused?: boolean; pending?: number } = {}): Promise<PlanDocument> {
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
      expect(second.summary).toMatchObject({ pending: expected.pending ?? 0, changes: (expected.pending ?? 0) > 0 });
    }
    return first;
  }

  const annotate = (name: string, annotations: Record<string, string | null>) =>
    testConnection().core.patchNamespacedService({ namespace, name, body: { metadata: { annotations } } }, mergePatch);
  const patchSpec = (name: string, spec: object) => testConnection().core.patchNamespacedService({ namespace, name, body: { spec } }, mergePatch);
  const kinds = (document: PlanDocument) => document.services.flatMap((s) => s.actions.map((a) => a.kind));
  const impacts = (document: PlanDocument) => document.services.flatMap((s) => s.actions.map((a) => `${a.kind} [${a.impact}]`));

  /** The pools of the Service's load balancer, as the cloud holds them now, with their members. */
  async function poolsOf(document: PlanDocument) {
    const lb = document.services[0]!.loadBalancer!.uuid!;
    const pools = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb);
    return Promise.all(pools.map(async (pool) => ({ pool, members: await harness.cloud.poolMembers.list(pool.uuid) })));
  }

  /**
   * The pool swap of one pool with two members, in order: the successor (pool, members,
   * monitor) is built and awaited beside the old pool, the listener moves (the only step that
   * interrupts the port), then the old pool is deleted.
   */
  const POOL_SWAP = [
    'create-pool [none]',
    'create-member [none]',
    'create-member [none]',
    'create-monitor [none]',
    'await-members [none]',
    'delete-listener [pool-swap]',
    'create-listener [pool-swap]',
    'delete-monitor [none]',
    'delete-member [none]',
    'delete-member [none]',
    'delete-pool [none]',
  ];

  /** A pool swapped: one pool remains, a new one (another UUID), under the listener's port. */
  async function expectSwapped(before: Awaited<ReturnType<typeof poolsOf>>, plan: PlanDocument) {
    const after = await poolsOf(plan);
    expect(after).toHaveLength(1);
    expect(after[0]!.pool.uuid).not.toBe(before[0]!.pool.uuid);
    const swap = plan.services[0]!.actions as unknown as Record<string, unknown>[];
    expect(swap.find((a) => a.kind === 'delete-pool')).toMatchObject({ pool: { uuid: before[0]!.pool.uuid } });
    expect(swap.find((a) => a.kind === 'await-members')).toMatchObject({
      verb: 'wait',
      members: after[0]!.members.map((m) => m.name),
      protects: { pool: { uuid: before[0]!.pool.uuid }, members: before[0]!.members.map((m) => m.name) },
    });
    const [listener] = (await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === after[0]!.pool.load_balancer.uuid);
    expect(listener!.pool?.uuid).toBe(after[0]!.pool.uuid);
    return after[0]!;
  }

  it('a new Service', async () => {
    await createLoadBalancerService(namespace, 'new');
    const plan = await planThenSync('new');
    expect(kinds(plan)).toEqual(['add-finalizer', 'create-lb', 'create-pool', 'create-member', 'create-member', 'create-monitor', 'create-listener', 'write-annotations', 'write-status']);
  });

  it('timeouts: updated in place', async () => {
    await converged('timeouts');
    await annotate('timeouts', { [`${P}loadbalancer-timeout-client-data-ms`]: '1000', [`${P}loadbalancer-timeout-member-connect-ms`]: '2000' });
    expect(kinds(await planThenSync('timeouts'))).toEqual(['update-listener']);
  });

  it('pool algorithm: the pool is swapped for a new one', async () => {
    await converged('algorithm');
    const before = await poolsOf(await planJson('algorithm'));
    await annotate('algorithm', { [`${P}loadbalancer-pool-algorithm`]: 'least_connections' });
    const plan = await planThenSync('algorithm');
    expect(impacts(plan)).toEqual(POOL_SWAP);
    const after = await expectSwapped(before, plan);
    expect(after.pool).toMatchObject({ name: 'tcp/http', algorithm: 'least_connections' });
  });

  it('allowed CIDRs: updated in place', async () => {
    await converged('cidrs');
    await annotate('cidrs', { [`${P}loadbalancer-listener-allowed-cidrs`]: '["10.0.0.0/8","192.0.2.0/24"]' });
    expect(kinds(await planThenSync('cidrs'))).toEqual(['update-listener']);
  });

  it('node selector: the member of an unselected node is drained, and deleted by a pass after the drain period', async () => {
    await converged('selector');
    await testConnection().core.patchNode({ name: `${prefix}-1`, body: { metadata: { labels: { 'plan-eq/edge': 'yes' } } } }, mergePatch);
    await annotate('selector', { [`${P}loadbalancer-node-selector`]: 'plan-eq/edge=yes' });
    // The default drain period (60 s): tagged with when draining began and disabled, in one update.
    const plan = await planThenSync('selector', { pending: 1 });
    expect(impacts(plan)).toEqual(['update-member [member-drain]']);
    expect(plan.services[0]!.actions[0]).toMatchObject({
      object: expect.stringMatching(/^member 10\.50\.0\.2:\d+ of pool tcp\/http$/),
      patch: { tags: { [MEMBER_DRAINING_TAG]: expect.any(String) }, enabled: false },
    });
    const [{ pool, members }] = (await poolsOf(plan)) as [Awaited<ReturnType<typeof poolsOf>>[number]];
    // Within the drain period the drained member stays (disabled): the second plan of planThenSync
    // had no action, only the member's deletion pending for a pass after the drain period.
    expect(members.map((m) => [m.address, m.enabled]).sort()).toEqual([
      ['10.50.0.1', true],
      ['10.50.0.2', false],
    ]);
    const drained = members.find((m) => !m.enabled)!;
    const since = Date.parse(drained.tags[MEMBER_DRAINING_TAG]!);
    expect(Date.now() - since).toBeLessThan(60_000);

    // The drain period has passed (the tag says so): the next pass deletes the member.
    await harness.cloud.poolMembers.update(pool.uuid, drained.uuid, {
      tags: { ...drained.tags, [MEMBER_DRAINING_TAG]: new Date(since - 61_000).toISOString() },
    });
    const later = await planThenSync('selector');
    expect(impacts(later)).toEqual(['delete-member [none]']);
    expect(later.services[0]!.actions[0]!.reason.text).toContain('drained since');
    expect((await poolsOf(later))[0]!.members.map((m) => m.address)).toEqual(['10.50.0.1']);
  });

  it('node selector with --drain-seconds 0 (the CLI): the member of an unselected node is deleted at once', async () => {
    await converged('selector-now');
    await annotate('selector-now', { [`${P}loadbalancer-node-selector`]: 'plan-eq/edge=yes' });
    const cli = (...args: string[]) =>
      runBinary(['--cluster-id', harness.clusterId, '-o', 'json', ...args, 'service/selector-now', '-n', namespace, '--drain-seconds', '0'], {
        apiUrl: harness.sim.url,
      });
    const planned1 = await cli('plan');
    expect(planned1).toMatchObject({ code: 0, stderr: '' });
    const plan = JSON.parse(planned1.stdout) as PlanDocument;
    expect(impacts(plan)).toEqual(['delete-member [minimal]']);
    expect(plan.services[0]!.actions[0]!.object).toMatch(/^member 10\.50\.0\.2:\d+ of pool tcp\/http$/);
    const synced = await cli('sync-lb', '--settle-seconds', '0', '--poll-seconds', '0.05');
    expect(synced.code, synced.stderr).toBe(0);
    expect(executed(JSON.parse(synced.stdout) as SyncLbReport)).toEqual(planned(plan));
    expect((await poolsOf(plan))[0]!.members.map((m) => m.address)).toEqual(['10.50.0.1']);
    const again = await cli('plan');
    expect(planned(JSON.parse(again.stdout) as PlanDocument)).toEqual([]);
  });

  it('health monitor type: the pool is swapped for one with the new monitor', async () => {
    await converged('monitor');
    const before = await poolsOf(await planJson('monitor'));
    await annotate('monitor', { [`${P}loadbalancer-health-monitor-type`]: 'http' });
    const plan = await planThenSync('monitor');
    expect(impacts(plan)).toEqual(POOL_SWAP);
    const after = await expectSwapped(before, plan);
    const monitors = (await harness.cloud.healthMonitors.list()).filter((m) => m.load_balancer.uuid === after.pool.load_balancer.uuid);
    expect(monitors.map((m) => [m.pool.uuid, m.type])).toEqual([[after.pool.uuid, 'http']]);
  });

  it('Floating IP: assigned', async () => {
    await converged('fip');
    await annotate('fip', { [`${P}loadbalancer-floating-ips`]: '["5.102.152.30/32"]' });
    expect(kinds(await planThenSync('fip'))).toEqual(['assign-floating-ip']);
  });

  it('port change keeping the name: the listener moves to the new port in place', async () => {
    const service = await converged('port');
    const listenersOf = async (document: PlanDocument) =>
      (await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === document.services[0]!.loadBalancer!.uuid);
    const [before] = await listenersOf(await planJson('port'));
    await patchSpec('port', { ports: [{ ...service.spec!.ports![0]!, port: 8080 }] });
    const plan = await planThenSync('port');
    expect(impacts(plan)).toEqual(['update-listener [port-move]']);
    expect(plan.services[0]!.actions).toMatchObject([{ patch: { protocol_port: 8080, name: 'tcp/8080' } }]);
    const after = await listenersOf(plan);
    expect(after.map((l) => [l.uuid, l.name, l.protocol_port, l.pool?.uuid])).toEqual([[before!.uuid, 'tcp/8080', 8080, before!.pool?.uuid]]);
  });

  it('externalTrafficPolicy Cluster → Local: the pool is swapped for one checked on the health-check node port', async () => {
    await converged('etp');
    const before = await poolsOf(await planJson('etp'));
    const local = await patchSpec('etp', { externalTrafficPolicy: 'Local' });
    const plan = await planThenSync('etp');
    expect(impacts(plan)).toEqual(POOL_SWAP);
    const after = await expectSwapped(before, plan);
    expect(after.members.map((m) => m.monitor_port)).toEqual([local.spec!.healthCheckNodePort, local.spec!.healthCheckNodePort]);
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

  it('the load balancer deleted behind the Service: a new one, planned as lb-lost with the addresses that change', async () => {
    const service = await converged('lost');
    const before = service.status!.loadBalancer!.ingress!.map((entry) => entry.ip!);
    expect(before.length).toBeGreaterThan(0);
    const uuid = service.metadata!.annotations![`${P}loadbalancer-uuid`]!;
    await harness.cloud.deleteByHref(`${harness.sim.url}/v1/load-balancers/${uuid}`);

    // The text view says it loudly, the Markdown says it, and the JSON names the old addresses.
    const text = await runBinary(['plan', '-n', namespace, 'service/lost', '--cluster-id', harness.clusterId], { apiUrl: harness.sim.url });
    expect(text.stdout).toContain(`Service ${namespace}/lost — load balancer k8s-service-${service.metadata!.uid} (new: the recorded one is gone)\n`);
    expect(text.stdout).toContain(`  ! the Service's addresses change: ${before.join(', ')} → new ones, known once the load balancer exists; DNS records`);
    expect(text.stdout).toContain('impact: lb-lost, ');
    const markdown = await runBinary(['plan', '-n', namespace, 'service/lost', '--cluster-id', harness.clusterId, '-o', 'markdown'], { apiUrl: harness.sim.url });
    expect(markdown.stdout).toContain(`- **the Service's addresses change: ${before.join(', ')}`);
    expect(markdown.stdout).toContain('| lb-lost |');

    const plan = await planThenSync('lost');
    const create = plan.services[0]!.actions.find((a) => a.kind === 'create-lb')!;
    expect(create).toMatchObject({ impact: 'lb-lost', lost: { uuid, addresses: before, kept: [] }, downtime: { class: 'total', maxSeconds: null } });
    expect(create.reason).toMatchObject({ field: 'status.loadBalancer.ingress', from: before.join(', ') });
    expect(plan.summary.worstDowntime).toMatchObject({ impact: 'lb-lost' });
    // The new load balancer's addresses are published (the simulator may hand out the freed ones again).
    const after = (await testConnection().core.readNamespacedService({ namespace, name: 'lost' })).status!.loadBalancer!.ingress!;
    expect(after.length).toBe(before.length);
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

  it('a port added and another renamed: a new pool, and a pool swapped', async () => {
    const service = await converged('ports', {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
        { name: 'metrics', protocol: 'TCP', port: 9100, targetPort: 9100 },
      ],
    });
    const [http, metrics] = service.spec!.ports!;
    const before = await poolsOf(await planJson('ports'));
    await patchSpec('ports', { ports: [http, { ...metrics!, name: 'prom' }, { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 }] });
    const plan = await planThenSync('ports');
    const objects = plan.services[0]!.actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`);
    const members = (pool: string, port: number) => [1, 2].map((i) => `member 10.50.0.${i}:${port} of pool ${pool}`);
    const https = (await testConnection().core.readNamespacedService({ namespace, name: 'ports' })).spec!.ports![2]!.nodePort!;
    expect(objects).toEqual([
      // The new port: its pool built whole, its monitor before its listener.
      'create-pool pool tcp/https [none]',
      ...members('tcp/https', https).map((m) => `create-member ${m} [none]`),
      'create-monitor health monitor of pool tcp/https [none]',
      'create-listener listener tcp/443 [none]',
      // The renamed port: pool tcp/prom takes over port 9100 from pool tcp/metrics.
      'create-pool pool tcp/prom [none]',
      ...members('tcp/prom', metrics!.nodePort!).map((m) => `create-member ${m} [none]`),
      'create-monitor health monitor of pool tcp/prom [none]',
      'await-members 2 members of pool tcp/prom healthy [none]',
      'delete-listener listener tcp/9100 [pool-swap]',
      'create-listener listener tcp/9100 [pool-swap]',
      'delete-monitor health monitor of pool tcp/metrics [none]',
      ...members('tcp/metrics', metrics!.nodePort!).map((m) => `delete-member ${m} [none]`),
      'delete-pool pool tcp/metrics [none]',
    ]);
    const after = await poolsOf(plan);
    expect(after.map((p) => p.pool.name).sort()).toEqual(['tcp/http', 'tcp/https', 'tcp/prom']);
    // The untouched port keeps its pool.
    const httpPool = (list: typeof after) => list.find((p) => p.pool.name === 'tcp/http')!.pool.uuid;
    expect(httpPool(after)).toBe(httpPool(before));
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
