// @kube-versions: all — finalizers and deletion timestamps as the server handles them
// The life of a Service's load balancer beyond creation: changes that are refused (flavor, zone,
// VIP addresses), deletion and type change (load balancer first, finalizer last), Services of
// another load-balancer class, adoption of load balancers made by the Go CCM, and load balancers
// of another cluster that are never touched.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { LB_FINALIZER } from '../../src/core/lb/service-plan.js';
import { formatTopLevelError } from '../../src/core/render/error.js';
import { createLoadBalancerService, ignoreNotFound, testConnection, uniqueName, type TestServiceOptions } from '../support/kube.js';
import {
  FLOATING_IPS,
  SUBNET_A,
  annotate,
  buildGoCcmLoadBalancer,
  eventsOf,
  expectConverged,
  expectWellFormed,
  failuresOf,
  key,
  lbState,
  lbsNamed,
  markAsGoCcmManaged,
  memberNames,
  passFails,
  passOk,
  patchService,
  poolOf,
  readService,
  routes,
  theLb,
  warningsOf,
  useLbWorld,
} from '../support/lb-scenarios.js';
import { awaitSteady, writesTaken } from '../support/strict-world.js';

describe('sync-lb: lifecycle', () => {
  const namespace = uniqueName('lb-life');
  const prefix = uniqueName('life');
  const pass = { namespace };
  const { harness } = useLbWorld({ prefix, namespace });

  async function reconciled(name: string, options: TestServiceOptions = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, options);
    await passOk(harness, [name], pass);
    await expectConverged(harness, [name], pass);
    return readService(namespace, name);
  }

  async function gone(name: string): Promise<boolean> {
    return (await ignoreNotFound(testConnection().core.readNamespacedService({ namespace, name }))) === undefined;
  }

  describe('changes that would need a new load balancer', () => {
    it.each([
      ['flavor', 'loadbalancer-flavor', 'lb-large', 'lb-standard'],
      ['zone', 'loadbalancer-zone', 'lpg1', 'rma1'],
      ['VIP addresses', 'loadbalancer-vip-addresses', JSON.stringify([{ subnet: SUBNET_A.uuid }]), null],
    ])('a %s change is refused with guidance: nothing written, a Warning event, the pass fails', async (what, annotation, value, restore) => {
      const name = `refuse-${annotation.replace('loadbalancer-', '')}`;
      const service = await reconciled(name);
      const before = await awaitSteady(harness, service);

      await annotate(namespace, name, { [key(annotation)]: value });
      const { error, simWrites, ctx } = await passFails(harness, [name], pass);
      expect(simWrites).toEqual([]);
      const [failure] = error.failures;
      expect(failure?.object).toBe(`service/${namespace}/${name}`);
      expect(failure?.error.message).toContain(`the ${what} of load balancer ${before.lb.name} cannot change`);
      expect(failure?.error.message).toContain('nothing was changed');
      expect((failure?.error as { hint?: string }).hint).toContain(key(annotation));
      // Said once: in the pass's error as the command line prints it; the progress line says only that it failed.
      expect(formatTopLevelError(error, { verbose: false })).toContain(
        `  service/${namespace}/${name}: ${key(annotation)}: the ${what} of load balancer ${before.lb.name} cannot change`,
      );
      expect(ctx.out()).toContain(`service/${namespace}/${name}: failed`);
      expect(ctx.out()).not.toContain('cannot change');
      const warnings = await warningsOf(service);
      expect(warnings).toContainEqual(
        expect.objectContaining({ reason: 'SyncLoadBalancerFailed', message: expect.stringContaining('cannot change') }),
      );
      const after = await theLb(harness, service);
      expect(after).toEqual(before);

      await annotate(namespace, name, { [key(annotation)]: restore });
      await expectConverged(harness, [name], pass);
    });
  });

  describe('drift made directly in the API', () => {
    it('a load balancer deleted by hand is created again; annotations and status follow the new one', async () => {
      const service = await reconciled('drift-lb');
      const { lb: old } = await theLb(harness, service);
      await harness.cloud.deleteByHref(old.href);
      await passOk(harness, ['drift-lb'], pass);
      const { lb } = await theLb(harness, service);
      expect(lb.uuid).not.toBe(old.uuid);
      const stored = await readService(namespace, 'drift-lb');
      expect(stored.metadata!.annotations![key('loadbalancer-uuid')]).toBe(lb.uuid);
      expect(stored.status!.loadBalancer!.ingress!.map((i) => i.ip)).toEqual(lb.vip_addresses.map((v) => v.address));
      await expectConverged(harness, ['drift-lb'], pass);
    });

    it('a member, listener or monitor deleted by hand is recreated; the rest is kept', async () => {
      const service = await reconciled('drift-children', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
      });
      const before = await theLb(harness, service);
      const http = poolOf(before, 'tcp/http');
      const https = poolOf(before, 'tcp/https');
      await harness.cloud.deleteByHref(http.listeners[0]!.href);
      await harness.cloud.deleteByHref(https.members[0]!.href);
      await harness.cloud.deleteByHref(https.monitors[0]!.href);
      const { simWrites } = await passOk(harness, ['drift-children'], pass);
      expect(routes(writesTaken(simWrites)).sort()).toEqual(
        [
          'POST /v1/load-balancers/listeners',
          'POST /v1/load-balancers/pools/{uuid}/members',
          'POST /v1/load-balancers/health-monitors',
        ].sort(),
      );
      const after = await theLb(harness, service);
      expectWellFormed(after);
      expect(poolOf(after, 'tcp/http').pool.uuid).toBe(http.pool.uuid);
      expect(poolOf(after, 'tcp/https').pool.uuid).toBe(https.pool.uuid);
      expect(poolOf(after, 'tcp/https').listeners[0]!.uuid).toBe(https.listeners[0]!.uuid);
      expect(memberNames(poolOf(after, 'tcp/https'))).toEqual(memberNames(https));
      await expectConverged(harness, ['drift-children'], pass);
    });

    it.each([
      [false, []],
      [true, ['tcp/80']],
    ] as const)('a pool deleted by hand (listeners kept with pool null: %s) is recreated with its listener; a listener left without a pool is deleted first', async (keepsListeners, left) => {
      harness.sim.admin.setBehaviour({ poolDeleteKeepsListeners: keepsListeners });
      const service = await reconciled(`drift-pool-${String(keepsListeners)}`);
      const before = await theLb(harness, service);
      const http = poolOf(before, 'tcp/http');
      await harness.cloud.deleteByHref(http.pool.href);
      expect((await lbState(harness, before.lb.uuid)).freeListeners.map((l) => l.name)).toEqual(left);
      harness.sim.admin.setBehaviour({ poolDeleteKeepsListeners: false });

      const name = `drift-pool-${String(keepsListeners)}`;
      await passOk(harness, [name], pass);
      const after = await theLb(harness, service);
      expectWellFormed(after);
      expect(poolOf(after, 'tcp/http').pool.uuid).not.toBe(http.pool.uuid);
      expect(memberNames(poolOf(after, 'tcp/http'))).toEqual(memberNames(http));
      await expectConverged(harness, [name], pass);
    });

    it('refuses when the uuid annotation and the name point to different load balancers: nothing written', async () => {
      const service = await reconciled('ambiguous');
      const { lb } = await theLb(harness, service);
      const impostor = await harness.cloud.loadBalancers.create({
        name: 'an-impostor',
        flavor: 'lb-standard',
        zone: 'rma1',
        vip_addresses: [],
      });
      await annotate(namespace, 'ambiguous', { [key('loadbalancer-name')]: 'an-impostor' });
      const { error, simWrites } = await passFails(harness, ['ambiguous'], pass);
      expect(simWrites).toEqual([]);
      const [message] = failuresOf(error, namespace, 'ambiguous');
      expect(message).toContain('found more than one load balancer');
      expect(message).toContain(lb.uuid);
      expect(message).toContain(impostor.uuid);
      expect(await warningsOf(service)).toContainEqual(expect.objectContaining({ reason: 'SyncLoadBalancerFailed' }));
      await harness.cloud.deleteByHref(impostor.href);
    });
  });

  describe('deletion', () => {
    it('a deleted Service: the load balancer is deleted, then the finalizer removed; its Floating IP stays in the project', async () => {
      const service = await reconciled('deleted', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[0]]) },
      });
      const { lb, pools } = await theLb(harness, service);
      const poolUuids = Object.values(pools).map((p) => p.pool.uuid);
      await testConnection().core.deleteNamespacedService({ namespace, name: 'deleted' });
      const deleting = await readService(namespace, 'deleted');
      expect(deleting.metadata!.deletionTimestamp).toBeDefined();
      expect(deleting.metadata!.finalizers).toContain(LB_FINALIZER);

      const { simWrites, report } = await passOk(harness, ['deleted'], pass);
      expect(report.services.map((s) => s.status)).toEqual(['changed']);
      expect(routes(simWrites)).toEqual(['DELETE /v1/load-balancers/{uuid}']);
      expect(await lbsNamed(harness, lb.name)).toEqual([]);
      const remainingPools = await harness.cloud.pools.list();
      expect(remainingPools.filter((p) => poolUuids.includes(p.uuid))).toEqual([]);
      const fip = await harness.cloud.floatingIps.get(FLOATING_IPS[0]);
      expect(fip.load_balancer).toBeNull();
      expect(await gone('deleted')).toBe(true);
      expect((await eventsOf(service)).map((e) => e.reason)).toEqual(
        expect.arrayContaining(['DeletingLoadBalancer', 'DeletedLoadBalancer']),
      );
    });

    it('keeps the finalizer while the load balancer cannot be deleted, and finishes on the next pass', async () => {
      const service = await reconciled('delete-retry');
      const { lb } = await theLb(harness, service);
      await testConnection().core.deleteNamespacedService({ namespace, name: 'delete-retry' });
      harness.sim.admin.setFaults({
        errorRate: { pathPattern: '/v1/load-balancers/*', methods: ['DELETE'], status: 500, count: 10 },
      });
      try {
        const { error } = await passFails(harness, ['delete-retry'], pass);
        expect(failuresOf(error, namespace, 'delete-retry').join('\n')).toContain('delete-lb');
      } finally {
        harness.sim.admin.clearFaults();
      }
      expect((await readService(namespace, 'delete-retry')).metadata!.finalizers).toContain(LB_FINALIZER);
      expect(await lbsNamed(harness, lb.name)).toHaveLength(1);

      await passOk(harness, ['delete-retry'], pass);
      expect(await lbsNamed(harness, lb.name)).toEqual([]);
      expect(await gone('delete-retry')).toBe(true);
    });

    it('a deleted Service whose load balancer is already gone: only the finalizer is removed', async () => {
      const service = await reconciled('lb-gone');
      const { lb } = await theLb(harness, service);
      await harness.cloud.deleteByHref(lb.href);
      await testConnection().core.deleteNamespacedService({ namespace, name: 'lb-gone' });
      const { simWrites } = await passOk(harness, ['lb-gone'], pass);
      expect(simWrites).toEqual([]);
      expect(await gone('lb-gone')).toBe(true);
    });

    it('a type change to ClusterIP: the load balancer is deleted, the status cleared, the finalizer removed', async () => {
      const service = await reconciled('to-cluster-ip');
      const { lb } = await theLb(harness, service);
      expect(service.status!.loadBalancer!.ingress).toHaveLength(2);

      await patchService(namespace, 'to-cluster-ip', { spec: { type: 'ClusterIP' } });
      const { simWrites } = await passOk(harness, ['to-cluster-ip'], pass);
      expect(routes(simWrites)).toEqual(['DELETE /v1/load-balancers/{uuid}']);
      expect(await lbsNamed(harness, lb.name)).toEqual([]);
      const stored = await readService(namespace, 'to-cluster-ip');
      expect(stored.spec!.type).toBe('ClusterIP');
      expect(stored.metadata!.finalizers ?? []).not.toContain(LB_FINALIZER);
      expect(stored.status?.loadBalancer?.ingress ?? []).toEqual([]);

      // Nothing left to do: the Service is no longer ours.
      const { report, simRequests } = await passOk(harness, ['to-cluster-ip'], pass);
      expect(report.services).toEqual([]);
      expect(simRequests.filter((r) => r.method !== 'GET')).toEqual([]);
    });
  });

  describe('named Services', () => {
    it('a named Service that does not exist fails the pass (as plan and init-nodes), the others are still reconciled', async () => {
      const present = await createLoadBalancerService(namespace, 'present');
      const { error, report } = await passFails(harness, ['present', 'absent'], pass);
      expect(error.failures.map((f) => [f.object, f.error.message])).toEqual([
        [`service/${namespace}/absent`, `service ${namespace}/absent not found`],
      ]);
      expect((error.failures[0]!.error as { hint?: string }).hint).toContain('-n');
      expect(report!.services.map((s) => [s.service, s.status]).sort()).toEqual([
        [`${namespace}/absent`, 'failed'],
        [`${namespace}/present`, 'changed'],
      ]);
      expectWellFormed(await theLb(harness, present));
    });
  });

  describe('spec.loadBalancerClass', () => {
    it('a Service of another class is not touched: no finalizer, no load balancer, no event', async () => {
      const service = await createLoadBalancerService(namespace, 'other-class', {
        loadBalancerClass: 'example.com/other-lb',
      });
      const { report, simWrites } = await passOk(harness, ['other-class'], pass);
      expect(report.services).toEqual([]);
      expect(simWrites).toEqual([]);
      expect(await lbsNamed(harness, `k8s-service-${service.metadata!.uid}`)).toEqual([]);
      const stored = await readService(namespace, 'other-class');
      expect(stored.metadata!.finalizers ?? []).toEqual([]);
      expect(stored.metadata!.annotations ?? {}).toEqual({});
      expect(stored.status?.loadBalancer?.ingress ?? []).toEqual([]);
      expect(await eventsOf(service)).toEqual([]);
    });
  });

  describe('adoption of load balancers made by the Go CCM', () => {
    it('adopts without recreation: same load balancer and pool, the ownership tags written, nothing else', async () => {
      const service = await createLoadBalancerService(namespace, 'adopted', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
      });
      const lbUuid = await buildGoCcmLoadBalancer(harness, service, [1, 2]);
      await markAsGoCcmManaged(harness, service, lbUuid);
      const before = await lbState(harness, lbUuid);
      expect(before.lb.tags).toEqual({});

      const { simWrites, report } = await passOk(harness, ['adopted'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/{uuid}']);
      expect(report.services[0]!.loadBalancer).toMatchObject({ uuid: lbUuid });
      const after = await lbState(harness, lbUuid);
      expect(after.lb.tags).toEqual({
        'k8s.cloudscale.ch/cluster': harness.clusterId,
        'k8s.cloudscale.ch/service-uid': service.metadata!.uid,
        'k8s.cloudscale.ch/service': `${namespace}/adopted`,
        'k8s.cloudscale.ch/kube-system-uid': await harness.context().kubeSystemUid(),
      });
      expectWellFormed(after);
      for (const name of ['tcp/http', 'tcp/https']) {
        const [was, is] = [poolOf(before, name), poolOf(after, name)];
        expect(is.pool.uuid).toBe(was.pool.uuid);
        expect(is.members.map((m) => m.uuid)).toEqual(was.members.map((m) => m.uuid));
        expect(is.listeners.map((l) => l.uuid)).toEqual(was.listeners.map((l) => l.uuid));
        expect(is.monitors.map((m) => m.uuid)).toEqual(was.monitors.map((m) => m.uuid));
      }
      await expectConverged(harness, ['adopted'], pass);
    });

    it('adopts by name alone (no uuid annotation yet), and writes the annotations', async () => {
      const service = await createLoadBalancerService(namespace, 'adopted-by-name');
      const lbUuid = await buildGoCcmLoadBalancer(harness, service, [1, 2]);
      const { simWrites } = await passOk(harness, ['adopted-by-name'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/{uuid}']);
      const stored = await readService(namespace, 'adopted-by-name');
      expect(stored.metadata!.annotations).toMatchObject({
        [key('loadbalancer-uuid')]: lbUuid,
        [key('loadbalancer-zone')]: 'rma1',
        [key('loadbalancer-config-version')]: '1',
      });
      expect(stored.metadata!.finalizers).toContain(LB_FINALIZER);
      expect(stored.status!.loadBalancer!.ingress).toHaveLength(2);
      expect(memberNames(poolOf(await lbState(harness, lbUuid), 'tcp/http'))).toHaveLength(2);
      await expectConverged(harness, ['adopted-by-name'], pass);
    });

    it('never modifies a load balancer tagged for another cluster: an error and a Warning event, no write', async () => {
      const service = await createLoadBalancerService(namespace, 'foreign');
      const lbUuid = await buildGoCcmLoadBalancer(harness, service, [1], {
        tags: { 'k8s.cloudscale.ch/cluster': 'another-cluster', 'k8s.cloudscale.ch/service-uid': service.metadata!.uid! },
      });
      await markAsGoCcmManaged(harness, service, lbUuid);
      const before = await awaitSteady(harness, lbUuid);

      const { error, simWrites } = await passFails(harness, ['foreign'], pass);
      expect(simWrites).toEqual([]);
      const [message] = failuresOf(error, namespace, 'foreign');
      expect(message).toContain('belongs to another cluster');
      expect(message).toContain('another-cluster');
      expect(await warningsOf(service)).toContainEqual(
        expect.objectContaining({ reason: 'SyncLoadBalancerFailed', message: expect.stringContaining('belongs to another cluster') }),
      );
      expect(await lbState(harness, lbUuid)).toEqual(before);

      // Nor deleted with the Service: the finalizer stays until someone sorts it out.
      await testConnection().core.deleteNamespacedService({ namespace, name: 'foreign' });
      const deletion = await passFails(harness, ['foreign'], pass);
      expect(deletion.simWrites).toEqual([]);
      expect(failuresOf(deletion.error, namespace, 'foreign').join('\n')).toContain('belongs to another cluster');
      expect(await lbState(harness, lbUuid)).toEqual(before);
      expect((await readService(namespace, 'foreign')).metadata!.finalizers).toContain(LB_FINALIZER);
    });
  });
});
