// Races and one-off wrong answers, against the simulator and the real kube-apiserver: each case
// once produced a duplicate or a lost load balancer. Each test checks the state afterwards, not
// only exit codes: one load balancer per Service, foreign ones untouched, nothing deleted that is
// in use.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { cleanupCommand } from '../../src/commands/cleanup.js';
import { planCommand } from '../../src/commands/plan.js';
import type { LoadBalancer } from '../../src/core/cloudscale/types.js';
import { LockHeldError } from '../../src/core/errors.js';
import { LB_FINALIZER } from '../../src/core/lb/service-plan.js';
import { acquireLease } from '../../src/core/kube/lease.js';
import { RUN_LEASE } from '../../src/commands/writer.js';
import { createLoadBalancerService, deleteServiceForced, testConnection, uniqueName } from '../support/kube.js';
import {
  FLOATING_IPS,
  annotate,
  expectConverged,
  failuresOf,
  key,
  lbsNamed,
  memberNames,
  passFails,
  passOk,
  poolOf,
  readService,
  runPass,
  theLb,
  useLbWorld,
} from '../support/lb-scenarios.js';

describe('safety under races and wrong answers', () => {
  const namespace = uniqueName('safety');
  const prefix = uniqueName('safe');
  const pass = { namespace };
  const { harness } = useLbWorld({ prefix, namespace, node: (i) => ({ labels: { 'safety/slot': String(i) } }) });

  const uidOf = (service: V1Service) => service.metadata!.uid!;
  const ourLbsOf = async (service: V1Service) =>
    (await harness.cloud.loadBalancers.list()).filter((lb) => lb.tags['k8s.cloudscale.ch/service-uid'] === uidOf(service));

  async function converge(name: string, annotations: Record<string, string> = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, { annotations });
    await passOk(harness, [name], pass);
    return readService(namespace, name);
  }

  it('two sync-lb at once: one holds the Lease, the other exits naming the holder; one load balancer', async () => {
    const service = await createLoadBalancerService(namespace, 'twin');
    harness.sim.admin.setFaults({ latencyMs: 30 });
    const [a, b] = await Promise.all([
      runPass(harness, ['twin'], { ...pass, wait: false }),
      runPass(harness, ['twin'], { ...pass, wait: false }),
    ]);
    harness.sim.admin.clearFaults();
    const refused = [a, b].filter((r) => r.error instanceof LockHeldError);
    expect(refused, `errors: ${String(a.error)} / ${String(b.error)}`).toHaveLength(1);
    expect((refused[0]!.error as Error).message).toMatch(/lease kube-system\/cloudscale-ccm is held by ".+\/sync-lb\/\d+-\w+", a pass in progress; it expires at/);
    expect(refused[0]!.simWrites).toEqual([]);
    expect([a, b].filter((r) => r.error === undefined)).toHaveLength(1);
    expect(await ourLbsOf(service)).toHaveLength(1);
    await expectConverged(harness, ['twin'], pass);
  });

  it('two sync-lb at once with --wait: the second waits, then finds nothing to do', async () => {
    const service = await createLoadBalancerService(namespace, 'patient');
    const [a, b] = await Promise.all([runPass(harness, ['patient'], pass), runPass(harness, ['patient'], pass)]);
    expect([a.error, b.error]).toEqual([undefined, undefined]);
    expect([a, b].map((r) => r.report!.services[0]!.status).sort()).toEqual(['changed', 'unchanged']);
    expect(await ourLbsOf(service)).toHaveLength(1);
  });

  it('a holder that stopped renewing: watched until it stayed unrenewed for its whole Lease, named as probably dead, then taken over', async () => {
    const service = await createLoadBalancerService(namespace, 'heir');
    // A Lease of 6 s whose holder died 25 s ago: its renewTime is never written again.
    await acquireLease(testConnection(), {
      ...RUN_LEASE,
      holderIdentity: 'gone-host/run/4242-dead',
      leaseDurationSeconds: 6,
      now: () => Date.now() - 25_000,
    });
    const before = await testConnection().coordination.readNamespacedLease({ ...RUN_LEASE });
    const result = await runPass(harness, ['heir'], { ...pass, wait: false });
    expect(result.error).toBeUndefined();
    // Named as probably dead only after two of its renewals (every second) were missed here.
    expect(result.ctx.err()).toMatch(
      /waiting: lease kube-system\/cloudscale-ccm is held by "gone-host\/run\/4242-dead", which has not renewed it for the [2-6] s watched here \(it renews every 1 s\) and has probably died/,
    );
    const after = await testConnection().coordination.readNamespacedLease({ ...RUN_LEASE });
    expect(after.spec?.leaseTransitions).toBe((before.spec?.leaseTransitions ?? 0) + 1);
    expect(await ourLbsOf(service)).toHaveLength(1);
  });

  it('the load-balancer list answers 200 [] once on a converged cluster: nothing is created, the status keeps its IPs', async () => {
    const service = await converge('listed-empty');
    const ingress = service.status?.loadBalancer?.ingress;
    harness.sim.admin.setFaults({ shortList: { pathPattern: '/v1/load-balancers', methods: ['GET'], count: 1, empty: true } });
    const { report, simWrites, simRequests } = await passOk(harness, ['listed-empty'], pass);
    harness.sim.admin.clearFaults();
    expect(report.services[0]!.status).toBe('unchanged');
    expect(simWrites).toEqual([]);
    expect(simRequests.map((r) => `${r.method} ${r.route}`)).toContain('GET /v1/load-balancers/{uuid}');
    expect(await ourLbsOf(service)).toHaveLength(1);
    expect((await readService(namespace, 'listed-empty')).status?.loadBalancer?.ingress).toEqual(ingress);
  });

  it('the list is empty and the read by UUID fails: the Service fails, nothing is created', async () => {
    const service = await readService(namespace, 'listed-empty');
    const uuid = service.metadata!.annotations![key('loadbalancer-uuid')]!;
    harness.sim.admin.setFaults({
      shortList: { pathPattern: '/v1/load-balancers', methods: ['GET'], count: 1, empty: true },
      errorRate: { pathPattern: `/v1/load-balancers/${uuid}`, methods: ['GET'], status: 500 },
    });
    const { error, simWrites } = await passFails(harness, ['listed-empty'], pass);
    harness.sim.admin.clearFaults();
    expect(failuresOf(error, namespace, 'listed-empty').join('\n')).toContain('could not be read by UUID');
    expect(simWrites).toEqual([]);
    expect(await ourLbsOf(service)).toHaveLength(1);
  });

  it('a POST /v1/load-balancers applied but answered 503 with Retry-After: never sent again; the one created is found and completed', async () => {
    const service = await createLoadBalancerService(namespace, 'lost-answer');
    harness.sim.admin.setFaults({
      errorRate: { pathPattern: '/v1/load-balancers', methods: ['POST'], status: 503, retryAfterSeconds: 1, afterApplying: true, count: 1 },
    });
    const { simRequests } = await passOk(harness, ['lost-answer'], pass);
    harness.sim.admin.clearFaults();
    expect(simRequests.filter((r) => r.method === 'POST' && r.route === '/v1/load-balancers')).toHaveLength(1);
    expect(await ourLbsOf(service)).toHaveLength(1);
    await expectConverged(harness, ['lost-answer'], pass);
  });

  it('cleanup keeps the load balancer of a Service restored with a new UID that still carries loadbalancer-uuid', async () => {
    const original = await converge('restored');
    const lbUuid = original.metadata!.annotations![key('loadbalancer-uuid')]!;
    await deleteServiceForced(namespace, 'restored');
    // Restored from a backup: same name and annotations, new UID.
    await createLoadBalancerService(namespace, 'restored', {
      annotations: { [key('loadbalancer-uuid')]: lbUuid, [key('loadbalancer-name')]: 'restored-lb' },
    });
    const report = await cleanupCommand({ all: false, yes: true, dryRun: false, wait: true }, harness.context());
    expect(report.deleted).not.toContain(lbUuid);
    expect((await harness.cloud.loadBalancers.get(lbUuid)).uuid).toBe(lbUuid);
    // sync-lb adopts it: re-tagged for the new UID, renamed as annotated.
    await passOk(harness, ['restored'], pass);
    const restored = await readService(namespace, 'restored');
    const lb = await harness.cloud.loadBalancers.get(lbUuid);
    expect(lb.tags['k8s.cloudscale.ch/service-uid']).toBe(uidOf(restored));
    expect(lb.name).toBe('restored-lb');
  });

  it('cleanup while a pass holds the Lease: refused, nothing deleted', async () => {
    const lease = await acquireLease(testConnection(), { ...RUN_LEASE, holderIdentity: 'busy/sync-lb/1-a', leaseDurationSeconds: 30 });
    const before = (await harness.cloud.loadBalancers.list()).map((lb) => lb.uuid).sort();
    try {
      await expect(cleanupCommand({ all: true, yes: true, dryRun: false }, harness.context())).rejects.toThrow(LockHeldError);
    } finally {
      await lease.release();
    }
    expect((await harness.cloud.loadBalancers.list()).map((lb) => lb.uuid).sort()).toEqual(before);
  });

  it('a loadbalancer-name naming a hand-made untagged load balancer: refused, untouched, not deleted with the Service', async () => {
    const handmade = await harness.cloud.loadBalancers.create({ name: 'handmade', flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] });
    await harness.cloud.pools.create({ name: 'theirs', algorithm: 'round_robin', protocol: 'tcp', load_balancer: handmade.uuid });
    const snapshot = async () => ({
      lb: await harness.cloud.loadBalancers.get(handmade.uuid),
      pools: (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === handmade.uuid),
    });
    const before = await snapshot();
    // Managed before (it carries the finalizer), so its deletion goes through a pass.
    await createLoadBalancerService(namespace, 'claims-handmade', {
      annotations: { [key('loadbalancer-name')]: 'handmade' },
      finalizers: [LB_FINALIZER],
    });
    const { error, simWrites } = await passFails(harness, ['claims-handmade'], pass);
    const message = failuresOf(error, namespace, 'claims-handmade').join('\n');
    expect(message).toContain('is found only by the name annotation');
    expect(error.failures[0]!.error).toMatchObject({ hint: expect.stringContaining(`loadbalancer-uuid: ${handmade.uuid}`) });
    expect(simWrites).toEqual([]);
    const plan = harness.context();
    expect((await planCommand([`service/claims-handmade`], { namespace, detailedExitcode: false }, plan)).exitCode).toBe(1);

    await testConnection().core.deleteNamespacedService({ namespace, name: 'claims-handmade' });
    await passOk(harness, ['claims-handmade'], pass);
    await expect(readService(namespace, 'claims-handmade')).rejects.toMatchObject({ code: 404 });
    expect(await snapshot()).toEqual(before);
  });

  it('two Services with the same loadbalancer-name: both refused, nothing created', async () => {
    const name = { [key('loadbalancer-name')]: 'contested' };
    await createLoadBalancerService(namespace, 'claim-a', { annotations: name });
    await createLoadBalancerService(namespace, 'claim-b', { annotations: name });
    const { error, simWrites } = await passFails(harness, ['claim-a', 'claim-b'], pass);
    expect(failuresOf(error, namespace, 'claim-a').join()).toContain(`also set on Service ${namespace}/claim-b`);
    expect(failuresOf(error, namespace, 'claim-b').join()).toContain(`also set on Service ${namespace}/claim-a`);
    expect(simWrites).toEqual([]);
    expect(await lbsNamed(harness, 'contested')).toEqual([]);
    await testConnection().core.deleteNamespacedService({ namespace, name: 'claim-b' });
    await passOk(harness, ['claim-a'], pass);
    expect(await lbsNamed(harness, 'contested')).toHaveLength(1);
  });

  it('a stray left by a pass killed after create-lb, then renamed: cleanup lists and deletes it, the used one stays', async () => {
    const service = await converge('renamed', { [key('loadbalancer-name')]: 'renamed-new' });
    const used = service.metadata!.annotations![key('loadbalancer-uuid')]!;
    // What the killed pass left: the same ownership tags, the old name, never recorded on the Service.
    const stray: LoadBalancer = await harness.cloud.loadBalancers.create({
      name: 'renamed-old',
      flavor: 'lb-standard',
      zone: 'rma1',
      vip_addresses: [],
      tags: (await harness.cloud.loadBalancers.get(used)).tags,
    });
    const listed = await cleanupCommand({ all: false, yes: false, dryRun: true }, harness.context());
    expect(listed.candidates).toContainEqual(
      expect.objectContaining({ uuid: stray.uuid, kind: 'stray', why: `tagged for Service ${namespace}/renamed, which uses load balancer ${used} instead` }),
    );
    const report = await cleanupCommand({ all: false, yes: true, dryRun: false }, harness.context());
    expect(report.deleted).toContain(stray.uuid);
    expect(report.deleted).not.toContain(used);
    expect((await ourLbsOf(service)).map((lb) => lb.uuid)).toEqual([used]);
  });

  it('a Floating IP claimed by a second Service: the holder keeps being reconciled, only the claimant is refused', async () => {
    const fipAnnotation = { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[0]]) };
    const holder = await converge('fip-holder', fipAnnotation);
    await createLoadBalancerService(namespace, 'fip-claimant', { annotations: fipAnnotation });
    // The holder's node set changes while the claim stands: its members must still follow.
    await annotate(namespace, 'fip-holder', { [key('loadbalancer-node-selector')]: 'safety/slot=1' });
    const { error } = await passFails(harness, ['fip-holder', 'fip-claimant'], pass);
    expect(failuresOf(error, namespace, 'fip-holder')).toEqual([]);
    expect(failuresOf(error, namespace, 'fip-claimant').join()).toContain('also assigned to another service');
    const state = await theLb(harness, holder);
    expect(memberNames(poolOf(state, 'tcp/http'))).toHaveLength(1);
    expect(state.floatingIps.map((f) => f.network)).toEqual([FLOATING_IPS[0]]);
  });

  it('a load balancer in status "error" is planned and changed as usual; plan and pass say so, and that the API shows no cause', async () => {
    const service = await converge('broken-lb');
    const uuid = service.metadata!.annotations![key('loadbalancer-uuid')]!;
    const { lb } = await theLb(harness, service);
    // Pinned in `error` with every member up: the state to repair, though the API shows no pool down.
    harness.sim.admin.setFaults({ stuckLoadBalancers: { [uuid]: 'error' } });
    try {
      await annotate(namespace, 'broken-lb', { [key('loadbalancer-health-monitor-delay-s')]: '7' });
      const why = `load balancer ${lb.name} (${uuid}) is in status "error", but no pool has every member down as the API lists them: the cause is not visible in the API. It is planned and changed as usual`;

      const ctx = harness.context();
      const planned = await planCommand(['service/broken-lb'], { namespace, detailedExitcode: false }, ctx);
      expect(planned.exitCode, ctx.out()).toBe(0);
      expect(ctx.out()).toContain('LoadBalancerError');
      expect(ctx.out()).toContain(why);

      const result = await passOk(harness, ['broken-lb'], pass);
      expect(result.simWrites.map((w) => `${w.method} ${w.route}`)).toEqual(['PATCH /v1/load-balancers/health-monitors/{uuid}']);
      expect(result.report.services[0]!.status).toBe('changed');
      expect(result.report.services[0]!.warnings).toContainEqual({ reason: 'LoadBalancerError', message: expect.stringContaining(why) });
      expect(result.ctx.out()).toContain(`warning: service/${namespace}/broken-lb LoadBalancerError: ${why}`);
      expect(poolOf(await theLb(harness, service), 'tcp/http').monitors[0]!.delay_s).toBe(7);
    } finally {
      harness.sim.admin.clearFaults();
    }
    await expectConverged(harness, ['broken-lb'], pass);
  });
});
