// @kube-versions: all — status read back with or without ipMode (test/support/ip-mode.ts), Events
// Every load-balancer annotation of the Go CCM (docs/go-ccm-compatibility.md) with its effect
// in the simulator after a pass: what is created, what changes in place (same UUID), what is
// swapped for a new object built beside it (new UUID), and that the pass after each change
// writes nothing.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { formatTopLevelError } from '../../src/core/render/error.js';
import { hasUnprintable } from '../../src/core/text/untrusted.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { createLoadBalancerService, uniqueName, type TestServiceOptions } from '../support/kube.js';
import { asStored } from '../support/ip-mode.js';
import { expectPoolSwap } from '../support/make-before-break.js';
import {
  FLOATING_IPS,
  SUBNET_A,
  annotate,
  expectConverged,
  expectWellFormed,
  failuresOf,
  key,
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

describe('sync-lb: annotations', () => {
  const namespace = uniqueName('lb-annotations');
  const prefix = uniqueName('ann');
  const pass = { namespace };
  const { harness } = useLbWorld({ prefix, namespace, node: (i) => ({ labels: { 'lbtest/role': i === 1 ? 'web' : 'batch' } }) });

  /** A new Service with its first pass done (and checked to converge). */
  async function reconciled(name: string, options: TestServiceOptions = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, options);
    const { report } = await passOk(harness, [name], pass);
    expect(report.services.map((s) => s.status)).toEqual(['changed']);
    await expectConverged(harness, [name], pass);
    return readService(namespace, name);
  }

  /** Two members on the default nodes, for the Service's first port. */
  function allMembers(service: V1Service): string[] {
    const nodePort = service.spec!.ports![0]!.nodePort!;
    return [`10.20.0.1:${nodePort}`, `10.30.0.2:${nodePort}`];
  }

  describe('loadbalancer-floating-ips', () => {
    it('assigns the listed Floating IPs (IPv4 and IPv6) to the load balancer', async () => {
      const service = await reconciled('fip', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[0], FLOATING_IPS[3]]) },
      });
      const state = await theLb(harness, service);
      expect(state.floatingIps.map((f) => f.network).sort()).toEqual([FLOATING_IPS[0], FLOATING_IPS[3]].sort());
      // Floating IPs are not reported in the status (as the Go CCM): only the two VIPs.
      expect(service.status!.loadBalancer!.ingress!.map((i) => i.ip)).toEqual(state.lb.vip_addresses.map((v) => v.address));
    });

    it('a Floating IP moved by hand to a server is taken back, said in plan and in a Warning Event naming the server', async () => {
      const service = await readService(namespace, 'fip');
      const [server] = await harness.cloud.servers.list();
      await harness.cloud.floatingIps.update(FLOATING_IPS[0], { server: server!.uuid });
      const holder = `server ${server!.name} (${server!.uuid})`;

      const ctx = harness.context({ output: 'json' });
      await planCommand(['service/fip'], { namespace, detailedExitcode: false }, ctx);
      const plan = (JSON.parse(ctx.out()) as PlanDocument).services[0]!;
      expect(plan.actions.map((a) => [a.kind, a.object, a.reason.from])).toEqual([['assign-floating-ip', `floating IP ${FLOATING_IPS[0]}`, holder]]);
      expect(plan.warnings.map((w) => w.reason)).toEqual(['FloatingIPReassigned']);

      const { simWrites } = await passOk(harness, ['fip'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/floating-ips/{ip}']);
      const state = await theLb(harness, service);
      expect(state.floatingIps.map((f) => f.network).sort()).toEqual([FLOATING_IPS[0], FLOATING_IPS[3]].sort());
      const events = (await warningsOf(service)).filter((e) => e.reason === 'FloatingIPReassigned');
      expect(events.map((e) => e.message)).toEqual([
        `Floating IP ${FLOATING_IPS[0]} is assigned to ${holder}, but the annotation ${key('loadbalancer-floating-ips')} of this Service lists it: it is moved to load balancer ${state.lb.name} (the annotation wins), and ${holder} no longer receives its traffic. To leave it there, remove it from the annotation.`,
      ]);
      await expectConverged(harness, ['fip'], pass);
    });

    it('a second Service claiming a held Floating IP is refused (Warning event, nothing written); the holder stays in sync', async () => {
      const first = await reconciled('fip-first', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[1]]) },
      });
      const firstLb = await theLb(harness, first);
      expect(firstLb.floatingIps.map((f) => f.network)).toEqual([FLOATING_IPS[1]]);

      const second = await createLoadBalancerService(namespace, 'fip-second', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[1]]) },
      });
      const { error, simWrites, ctx, report } = await passFails(harness, ['fip-first', 'fip-second'], pass);
      expect(simWrites).toEqual([]);
      expect(failuresOf(error, namespace, 'fip-first')).toEqual([]);
      expect(report!.services.find((s) => s.service === `${namespace}/fip-first`)?.status).toBe('unchanged');
      const messages = failuresOf(error, namespace, 'fip-second');
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain('is also assigned to another service');
      expect(messages[0]).toContain(`${FLOATING_IPS[1]}->${namespace}/fip-first`);
      // Said once: in the pass's error as the command line prints it; the progress line says only that it failed.
      const errorLine = formatTopLevelError(error, { verbose: false })
        .split('\n')
        .find((line) => line.startsWith(`  service/${namespace}/fip-second: `));
      expect(errorLine).toContain(`service ${namespace}/fip-second is also assigned to another service`);
      expect(ctx.out()).toContain(`service/${namespace}/fip-second: failed`);
      expect(ctx.out()).not.toContain('is also assigned to another service');
      expect((await warningsOf(second)).map((e) => e.reason)).toContain('SyncLoadBalancerFailed');
      expect((await warningsOf(first)).map((e) => e.reason)).not.toContain('SyncLoadBalancerFailed');
      const stored = await readService(namespace, 'fip-second');
      expect(stored.metadata!.finalizers ?? []).toEqual([]);
      expect((await theLb(harness, first)).floatingIps.map((f) => f.network)).toEqual([FLOATING_IPS[1]]);
      await expect(harness.cloud.loadBalancers.list()).resolves.not.toContainEqual(
        expect.objectContaining({ name: `k8s-service-${second.metadata!.uid}` }),
      );
    });

    it('reports a Floating IP that is not in the project, naming it; the rest of the load balancer is built', async () => {
      const missing = '5.102.199.99/32';
      const service = await createLoadBalancerService(namespace, 'fip-missing', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([missing]) },
      });
      const { error } = await passFails(harness, ['fip-missing'], pass);
      const [message] = failuresOf(error, namespace, 'fip-missing');
      expect(message).toContain(missing);
      expect(message).toContain('does not exist in this cloudscale project');
      const state = await theLb(harness, service);
      expectWellFormed(state);
      expect(state.floatingIps).toEqual([]);
      expect((await warningsOf(service)).map((e) => e.message).join('\n')).toContain(missing);

      // Still failing on the next pass, without writing anything.
      const again = await passFails(harness, ['fip-missing'], pass);
      expect(again.simWrites).toEqual([]);
    });
    it('never unassigns: a Floating IP dropped from the list stays until another Service claims it, which moves it', async () => {
      const from = await reconciled('fip-from', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[2]]) },
      });
      await annotate(namespace, 'fip-from', { [key('loadbalancer-floating-ips')]: null });
      await expectConverged(harness, ['fip-from'], pass);
      expect((await theLb(harness, from)).floatingIps.map((f) => f.network)).toEqual([FLOATING_IPS[2]]);

      const to = await reconciled('fip-to', {
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([FLOATING_IPS[2]]) },
      });
      expect((await theLb(harness, to)).floatingIps.map((f) => f.network)).toEqual([FLOATING_IPS[2]]);
      expect((await theLb(harness, from)).floatingIps).toEqual([]);
      await expectConverged(harness, ['fip-from', 'fip-to'], pass);
    });
  });

  describe('loadbalancer-listener-allowed-cidrs', () => {
    it('sets, changes in place and resets the allowed CIDRs of every listener', async () => {
      const service = await reconciled('cidrs', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
        annotations: { [key('loadbalancer-listener-allowed-cidrs')]: '["10.0.0.0/8"]' },
      });
      const created = await theLb(harness, service);
      const listenerUuids = Object.values(created.pools).map((p) => p.listeners[0]!.uuid);
      for (const pool of Object.values(created.pools)) expect(pool.listeners[0]!.allowed_cidrs).toEqual(['10.0.0.0/8']);

      for (const [value, expected] of [
        ['["192.0.2.0/24", "10.0.0.0/8"]', ['192.0.2.0/24', '10.0.0.0/8']],
        ['[]', []],
        ['["2001:db8::/32"]', ['2001:db8::/32']],
        [null, []],
      ] as const) {
        await annotate(namespace, 'cidrs', { [key('loadbalancer-listener-allowed-cidrs')]: value });
        const { simWrites } = await passOk(harness, ['cidrs'], pass);
        expect(routes(simWrites)).toEqual([
          'PATCH /v1/load-balancers/listeners/{uuid}',
          'PATCH /v1/load-balancers/listeners/{uuid}',
        ]);
        const state = await theLb(harness, service);
        expect(Object.values(state.pools).map((p) => p.listeners[0]!.uuid)).toEqual(listenerUuids);
        for (const pool of Object.values(state.pools)) expect(pool.listeners[0]!.allowed_cidrs).toEqual(expected);
        await expectConverged(harness, ['cidrs'], pass);
      }
    });
  });

  describe('spec.loadBalancerSourceRanges', () => {
    const cidrsKey = key('loadbalancer-listener-allowed-cidrs');
    const listenerCidrs = async (service: V1Service) =>
      Object.values((await theLb(harness, service)).pools).map((p) => p.listeners[0]!.allowed_cidrs);
    async function planOf(name: string): Promise<{ exitCode: number; plan: PlanDocument['services'][number] }> {
      const ctx = harness.context({ output: 'json' });
      const { exitCode } = await planCommand([`service/${name}`], { namespace, detailedExitcode: false }, ctx);
      return { exitCode, plan: (JSON.parse(ctx.out()) as PlanDocument).services[0]! };
    }

    it('becomes the allowed CIDRs of every listener; plan names the field; a change is patched in place', async () => {
      const service = await reconciled('ranges', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
        spec: { loadBalancerSourceRanges: ['192.0.2.0/24'] },
      });
      expect(await listenerCidrs(service)).toEqual([['192.0.2.0/24'], ['192.0.2.0/24']]);

      await patchService(namespace, 'ranges', { spec: { loadBalancerSourceRanges: ['198.51.100.0/24', '2001:db8::/32'] } });
      const { exitCode, plan } = await planOf('ranges');
      expect(exitCode).toBe(0);
      expect(plan.actions.map((a) => [a.kind, a.reason.field, a.reason.from, a.reason.to])).toEqual([
        ['update-listener', 'spec.loadBalancerSourceRanges', '["192.0.2.0/24"]', '["198.51.100.0/24","2001:db8::/32"]'],
        ['update-listener', 'spec.loadBalancerSourceRanges', '["192.0.2.0/24"]', '["198.51.100.0/24","2001:db8::/32"]'],
      ]);
      const { simWrites } = await passOk(harness, ['ranges'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/listeners/{uuid}', 'PATCH /v1/load-balancers/listeners/{uuid}']);
      expect(await listenerCidrs(service)).toEqual([
        ['198.51.100.0/24', '2001:db8::/32'],
        ['198.51.100.0/24', '2001:db8::/32'],
      ]);
      await expectConverged(harness, ['ranges'], pass);

      // The annotation beside it with the same CIDRs changes nothing.
      await annotate(namespace, 'ranges', { [cidrsKey]: '["198.51.100.0/24","2001:db8::/32"]' });
      await expectConverged(harness, ['ranges'], pass);
    });

    it('the annotation and the field differing: refused naming both, nothing written, in sync-lb, plan and the Event', async () => {
      const service = await reconciled('ranges-conflict', { spec: { loadBalancerSourceRanges: ['192.0.2.0/24'] } });
      const before = await annotate(namespace, 'ranges-conflict', { [cidrsKey]: '["10.0.0.0/8"]' });
      const { error, simWrites } = await passFails(harness, ['ranges-conflict'], pass);
      expect(simWrites).toEqual([]);
      const [message] = failuresOf(error, namespace, 'ranges-conflict');
      expect(message).toContain('spec.loadBalancerSourceRanges ["192.0.2.0/24"] and the annotation');
      expect(message).toContain(`${cidrsKey} ["10.0.0.0/8"]`);
      expect(message).toContain('nothing is changed');
      expect((await readService(namespace, 'ranges-conflict')).metadata!.resourceVersion).toBe(before.metadata!.resourceVersion);
      expect(await listenerCidrs(service)).toEqual([['192.0.2.0/24']]);
      const { exitCode, plan } = await planOf('ranges-conflict');
      expect(exitCode).toBe(1);
      expect(plan.actions).toEqual([]);
      expect(plan.problems).toEqual([expect.objectContaining({ kind: 'source-ranges-conflict', message, hint: expect.stringContaining(`remove the annotation ${cidrsKey}`) })]);
      expect((await warningsOf(service)).filter((e) => e.reason === 'SyncLoadBalancerFailed').map((e) => e.message)).toEqual([
        expect.stringContaining('spec.loadBalancerSourceRanges ["192.0.2.0/24"] and the annotation'),
      ]);

      // A new Service with both differing gets nothing at all: no finalizer, no load balancer.
      const fresh = await createLoadBalancerService(namespace, 'ranges-conflict-new', {
        annotations: { [cidrsKey]: '[]' },
        spec: { loadBalancerSourceRanges: ['192.0.2.0/24'] },
      });
      const second = await passFails(harness, ['ranges-conflict-new'], pass);
      expect(second.simWrites).toEqual([]);
      expect(failuresOf(second.error, namespace, 'ranges-conflict-new')).toEqual([expect.stringContaining('[] (everyone)')]);
      expect((await readService(namespace, 'ranges-conflict-new')).metadata!.resourceVersion).toBe(fresh.metadata!.resourceVersion);
    });
  });

  describe('listener timeouts', () => {
    it('patches the three timeouts in place: the listener keeps its UUID', async () => {
      const service = await reconciled('timeouts');
      const before = poolOf(await theLb(harness, service), 'tcp/http').listeners[0]!;
      expect(before).toMatchObject({
        timeout_client_data_ms: 50000,
        timeout_member_connect_ms: 5000,
        timeout_member_data_ms: 50000,
      });
      await annotate(namespace, 'timeouts', {
        [key('loadbalancer-timeout-client-data-ms')]: '61000',
        [key('loadbalancer-timeout-member-connect-ms')]: '4000',
        [key('loadbalancer-timeout-member-data-ms')]: '62000',
      });
      const { simWrites } = await passOk(harness, ['timeouts'], pass);
      // One PATCH carries the three.
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/listeners/{uuid}']);
      const after = poolOf(await theLb(harness, service), 'tcp/http').listeners[0]!;
      expect(after).toMatchObject({
        uuid: before.uuid,
        timeout_client_data_ms: 61000,
        timeout_member_connect_ms: 4000,
        timeout_member_data_ms: 62000,
      });
      await expectConverged(harness, ['timeouts'], pass);

      // Removing the annotations restores the defaults, again in place.
      await annotate(namespace, 'timeouts', {
        [key('loadbalancer-timeout-client-data-ms')]: null,
        [key('loadbalancer-timeout-member-connect-ms')]: null,
        [key('loadbalancer-timeout-member-data-ms')]: null,
      });
      await passOk(harness, ['timeouts'], pass);
      expect(poolOf(await theLb(harness, service), 'tcp/http').listeners[0]).toMatchObject({
        uuid: before.uuid,
        timeout_client_data_ms: 50000,
        timeout_member_connect_ms: 5000,
        timeout_member_data_ms: 50000,
      });
      await expectConverged(harness, ['timeouts'], pass);
    });
  });

  describe('health monitor', () => {
    it('updates delay, timeout and thresholds in place: the monitor keeps its UUID', async () => {
      const service = await reconciled('monitor-numbers');
      const before = poolOf(await theLb(harness, service), 'tcp/http').monitors[0]!;
      expect(before).toMatchObject({ type: 'tcp', delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3 });
      await annotate(namespace, 'monitor-numbers', {
        [key('loadbalancer-health-monitor-delay-s')]: '5',
        [key('loadbalancer-health-monitor-timeout-s')]: '3',
        [key('loadbalancer-health-monitor-up-threshold')]: '4',
        [key('loadbalancer-health-monitor-down-threshold')]: '6',
      });
      const { simWrites } = await passOk(harness, ['monitor-numbers'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/health-monitors/{uuid}']);
      expect(poolOf(await theLb(harness, service), 'tcp/http').monitors[0]).toMatchObject({
        uuid: before.uuid,
        delay_s: 5,
        timeout_s: 3,
        up_threshold: 4,
        down_threshold: 6,
      });
      await expectConverged(harness, ['monitor-numbers'], pass);
    });

    it('swaps the pool for one with the new monitor for a new type or HTTP version, and updates the other http options in place', async () => {
      const service = await reconciled('monitor-type');
      const tcp = poolOf(await theLb(harness, service), 'tcp/http');
      expect(tcp.monitors[0]!.http).toBeNull();

      // The monitor type cannot change in place: a successor pool with an http monitor is built
      // and awaited beside the serving one, then the listener moves to it.
      await annotate(namespace, 'monitor-type', { [key('loadbalancer-health-monitor-type')]: 'http' });
      const http = await expectPoolSwap(harness, await passOk(harness, ['monitor-type'], pass), service, tcp);
      expect(memberNames(http)).toEqual(allMembers(service));
      expect(http.monitors[0]).toMatchObject({
        type: 'http',
        http: { url_path: '/', method: 'GET', version: '1.1', expected_codes: ['200'], host: null },
      });
      await expectConverged(harness, ['monitor-type'], pass);

      await annotate(namespace, 'monitor-type', {
        [key('loadbalancer-health-monitor-http')]: JSON.stringify({
          url_path: '/healthz',
          method: 'HEAD',
          expected_codes: ['200', '204'],
          host: 'app.example.com',
        }),
      });
      const { simWrites } = await passOk(harness, ['monitor-type'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/health-monitors/{uuid}']);
      const patched = poolOf(await theLb(harness, service), 'tcp/http');
      expect(patched.pool.uuid).toBe(http.pool.uuid);
      expect(patched.monitors[0]).toMatchObject({
        uuid: http.monitors[0]!.uuid,
        http: { url_path: '/healthz', method: 'HEAD', version: '1.1', expected_codes: ['200', '204'], host: 'app.example.com' },
      });
      await expectConverged(harness, ['monitor-type'], pass);

      // The HTTP version cannot change in place either: swapped again.
      await annotate(namespace, 'monitor-type', {
        [key('loadbalancer-health-monitor-http')]: JSON.stringify({ url_path: '/healthz', version: '1.0' }),
      });
      const http10 = await expectPoolSwap(harness, await passOk(harness, ['monitor-type'], pass), service, patched);
      expect(http10.monitors[0]).toMatchObject({ type: 'http', http: { url_path: '/healthz', version: '1.0', host: null } });
      await expectConverged(harness, ['monitor-type'], pass);

      // Back to the default type: swapped again, for a tcp monitor without http options.
      await annotate(namespace, 'monitor-type', {
        [key('loadbalancer-health-monitor-type')]: null,
        [key('loadbalancer-health-monitor-http')]: null,
      });
      const back = await expectPoolSwap(harness, await passOk(harness, ['monitor-type'], pass), service, http10);
      expect(back.monitors[0]).toMatchObject({ type: 'tcp', http: null });
      expect(memberNames(back)).toEqual(allMembers(service));
      await expectConverged(harness, ['monitor-type'], pass);
    });
  });

  describe('pool algorithm and protocol', () => {
    it('swaps the pool for a new one (new UUID) with the same members, listener port and monitor for each change', async () => {
      const service = await reconciled('pool', {
        annotations: { [key('loadbalancer-health-monitor-delay-s')]: '7' },
      });
      let previous = poolOf(await theLb(harness, service), 'tcp/http');
      expect(previous.pool).toMatchObject({ algorithm: 'round_robin', protocol: 'tcp' });

      for (const [annotation, value, expected] of [
        ['loadbalancer-pool-algorithm', 'source_ip', { algorithm: 'source_ip', protocol: 'tcp' }],
        ['loadbalancer-pool-protocol', 'proxy', { algorithm: 'source_ip', protocol: 'proxy' }],
        ['loadbalancer-pool-protocol', 'proxyv2', { algorithm: 'source_ip', protocol: 'proxyv2' }],
        ['loadbalancer-pool-algorithm', 'least_connections', { algorithm: 'least_connections', protocol: 'proxyv2' }],
      ] as const) {
        await annotate(namespace, 'pool', { [key(annotation)]: value });
        const pool = await expectPoolSwap(harness, await passOk(harness, ['pool'], pass), service, previous);
        expect(Object.keys((await theLb(harness, service)).pools)).toEqual(['tcp/http']);
        expect(pool.pool, `${annotation}=${value}`).toMatchObject(expected);
        expect(memberNames(pool)).toEqual(allMembers(service));
        expect(pool.listeners[0]).toMatchObject({ name: 'tcp/80', protocol_port: 80 });
        expect(pool.monitors[0]).toMatchObject({ type: 'tcp', delay_s: 7 });
        await expectConverged(harness, ['pool'], pass);
        previous = pool;
      }
    });
  });

  describe('loadbalancer-listener-allowed-subnets', () => {
    it('limits the members to node addresses in the listed subnets', async () => {
      const service = await reconciled('subnets');
      const nodePort = service.spec!.ports![0]!.nodePort!;
      const poolUuid = poolOf(await theLb(harness, service), 'tcp/http').pool.uuid;

      await annotate(namespace, 'subnets', { [key('loadbalancer-listener-allowed-subnets')]: JSON.stringify([SUBNET_A.uuid]) });
      const { simWrites } = await passOk(harness, ['subnets'], pass);
      expect(routes(simWrites)).toEqual(['DELETE /v1/load-balancers/pools/{uuid}/members/{uuid}']);
      let pool = poolOf(await theLb(harness, service), 'tcp/http');
      expect(pool.pool.uuid).toBe(poolUuid);
      expect(memberNames(pool)).toEqual([`10.20.0.1:${nodePort}`]);
      expect(pool.members[0]!.subnet.uuid).toBe(SUBNET_A.uuid);
      await expectConverged(harness, ['subnets'], pass);

      // A subnet the project does not have (a typo): a problem naming it, not an empty pool.
      const before = await annotate(namespace, 'subnets', {
        [key('loadbalancer-listener-allowed-subnets')]: '["0d0d0d0d-0000-4000-8000-00000000000d"]',
      });
      const refused = await passFails(harness, ['subnets'], pass);
      expect(failuresOf(refused.error, namespace, 'subnets')).toEqual([
        expect.stringContaining('subnet 0d0d0d0d-0000-4000-8000-00000000000d of annotation k8s.cloudscale.ch/loadbalancer-listener-allowed-subnets does not exist'),
      ]);
      expect(refused.simWrites).toEqual([]);
      expect((await readService(namespace, 'subnets')).metadata!.resourceVersion).toBe(before.metadata!.resourceVersion);
      expect(memberNames(poolOf(await theLb(harness, service), 'tcp/http'))).toEqual([`10.20.0.1:${nodePort}`]);

      await annotate(namespace, 'subnets', { [key('loadbalancer-listener-allowed-subnets')]: null });
      await passOk(harness, ['subnets'], pass);
      pool = poolOf(await theLb(harness, service), 'tcp/http');
      expect(pool.pool.uuid).toBe(poolUuid);
      expect(memberNames(pool)).toEqual(allMembers(service));
      await expectConverged(harness, ['subnets'], pass);
    });
  });

  describe('loadbalancer-node-selector', () => {
    it('makes the members follow the selector, and warns NoValidNodes (removing every member) when none matches', async () => {
      const service = await reconciled('selector', {
        annotations: { [key('loadbalancer-node-selector')]: 'lbtest/role=web' },
      });
      const nodePort = service.spec!.ports![0]!.nodePort!;
      expect(memberNames(poolOf(await theLb(harness, service), 'tcp/http'))).toEqual([`10.20.0.1:${nodePort}`]);

      await annotate(namespace, 'selector', { [key('loadbalancer-node-selector')]: 'lbtest/role in (web, batch)' });
      await passOk(harness, ['selector'], pass);
      expect(memberNames(poolOf(await theLb(harness, service), 'tcp/http'))).toEqual(allMembers(service));
      await expectConverged(harness, ['selector'], pass);

      await annotate(namespace, 'selector', { [key('loadbalancer-node-selector')]: '!lbtest/role' });
      await passOk(harness, ['selector'], pass);
      expect(poolOf(await theLb(harness, service), 'tcp/http').members).toEqual([]);
      const warnings = await warningsOf(service);
      expect(warnings).toContainEqual(
        expect.objectContaining({
          reason: 'NoValidNodes',
          message: expect.stringContaining(`${key('loadbalancer-node-selector')}: !lbtest/role`),
        }),
      );
      await expectConverged(harness, ['selector'], pass);

      await annotate(namespace, 'selector', { [key('loadbalancer-node-selector')]: null });
      await passOk(harness, ['selector'], pass);
      expect(memberNames(poolOf(await theLb(harness, service), 'tcp/http'))).toEqual(allMembers(service));
      await expectConverged(harness, ['selector'], pass);
    });
  });

  describe('status: loadbalancer-force-hostname and loadbalancer-ip-mode', () => {
    it('publishes the hostname alone, the VIPs with ipMode VIP, and back to Proxy, without cloud writes', async () => {
      const service = await reconciled('status', {
        annotations: { [key('loadbalancer-force-hostname')]: 'lb.example.com' },
      });
      expect(service.status!.loadBalancer!.ingress).toEqual([{ hostname: 'lb.example.com' }]);
      const vips = (await theLb(harness, service)).lb.vip_addresses.map((v) => v.address);
      expect(vips).toHaveLength(2);

      await annotate(namespace, 'status', {
        [key('loadbalancer-force-hostname')]: null,
        [key('loadbalancer-ip-mode')]: 'VIP',
      });
      let { simWrites } = await passOk(harness, ['status'], pass);
      expect(simWrites).toEqual([]);
      expect((await readService(namespace, 'status')).status!.loadBalancer!.ingress).toEqual(
        await asStored(vips.map((ip) => ({ ip, ipMode: 'VIP' }))),
      );
      await expectConverged(harness, ['status'], pass);

      await annotate(namespace, 'status', { [key('loadbalancer-ip-mode')]: null });
      ({ simWrites } = await passOk(harness, ['status'], pass));
      expect(simWrites).toEqual([]);
      expect((await readService(namespace, 'status')).status!.loadBalancer!.ingress).toEqual(
        await asStored(vips.map((ip) => ({ ip, ipMode: 'Proxy' }))),
      );
      await expectConverged(harness, ['status'], pass);
    });
  });

  describe('loadbalancer-vip-addresses, -flavor and -zone', () => {
    it('binds the load balancer to a private subnet (and address); the status shows the private VIP', async () => {
      const service = await reconciled('private', {
        annotations: {
          [key('loadbalancer-vip-addresses')]: JSON.stringify([{ subnet: SUBNET_A.uuid, address: '10.20.0.100' }]),
          [key('loadbalancer-flavor')]: 'lb-standard',
          [key('loadbalancer-zone')]: 'rma1',
        },
      });
      const { lb } = await theLb(harness, service);
      expect(lb.vip_addresses).toEqual([
        expect.objectContaining({ address: '10.20.0.100', subnet: expect.objectContaining({ uuid: SUBNET_A.uuid }) }),
      ]);
      expect(lb).toMatchObject({ flavor: { slug: 'lb-standard' }, zone: { slug: 'rma1' } });
      expect(service.status!.loadBalancer!.ingress).toEqual(await asStored([{ ip: '10.20.0.100', ipMode: 'Proxy' }]));
      expect(service.metadata!.annotations![key('loadbalancer-zone')]).toBe('rma1');
    });

    it('lets the API pick a free address in the subnet when only the subnet is given', async () => {
      const service = await reconciled('private-any', {
        annotations: { [key('loadbalancer-vip-addresses')]: JSON.stringify([{ subnet: SUBNET_A.uuid }]) },
      });
      const { lb } = await theLb(harness, service);
      expect(lb.vip_addresses).toHaveLength(1);
      expect(lb.vip_addresses[0]!.address.startsWith(`${SUBNET_A.prefix}.`)).toBe(true);
      expect(service.status!.loadBalancer!.ingress).toEqual(await asStored([{ ip: lb.vip_addresses[0]!.address, ipMode: 'Proxy' }]));
    });
  });

  describe('loadbalancer-name', () => {
    it('names the load balancer and renames it in place (same UUID, same pool)', async () => {
      const service = await reconciled('named', { annotations: { [key('loadbalancer-name')]: `${prefix}-first-name` } });
      const first = await theLb(harness, `${prefix}-first-name`);
      expect(service.metadata!.annotations![key('loadbalancer-uuid')]).toBe(first.lb.uuid);

      await annotate(namespace, 'named', { [key('loadbalancer-name')]: `${prefix}-second-name` });
      const { simWrites } = await passOk(harness, ['named'], pass);
      expect(routes(simWrites)).toEqual(['PATCH /v1/load-balancers/{uuid}']);
      const renamed = await theLb(harness, `${prefix}-second-name`);
      expect(renamed.lb.uuid).toBe(first.lb.uuid);
      expect(poolOf(renamed, 'tcp/http').pool.uuid).toBe(poolOf(first, 'tcp/http').pool.uuid);
      await expectConverged(harness, ['named'], pass);

      // Back to the default name k8s-service-<uid>: found by the UUID annotation, renamed again.
      await annotate(namespace, 'named', { [key('loadbalancer-name')]: null });
      await passOk(harness, ['named'], pass);
      expect((await theLb(harness, service)).lb.uuid).toBe(first.lb.uuid);
      await expectConverged(harness, ['named'], pass);
    });

    it('a load balancer named by hand with control characters is adopted and renamed; plan and the progress lines show the name escaped', async () => {
      const raw = `${prefix}-by\nhand\u001b[2J\u202e`;
      const shown = `${prefix}-by\\nhand\\u001b[2J\\u202e`;
      const lb = await harness.cloud.loadBalancers.create({ name: raw, flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] });
      await createLoadBalancerService(namespace, 'hand-named', { annotations: { [key('loadbalancer-uuid')]: lb.uuid } });

      const ctx = harness.context();
      await planCommand(['service/hand-named'], { namespace, detailedExitcode: false }, ctx);
      expect(ctx.out()).toMatch(new RegExp(`rename-lb +load balancer ${shown.replace(/[\\[\]]/g, '\\$&')}\n`));
      expect(hasUnprintable(ctx.out().replaceAll('\n', ''))).toBe(false);

      const { ctx: passCtx } = await passOk(harness, ['hand-named'], pass);
      expect(passCtx.out()).toContain(`rename-lb load balancer ${shown}`);
      expect(hasUnprintable(passCtx.out().replaceAll('\n', ''))).toBe(false);
      const renamed = await theLb(harness, await readService(namespace, 'hand-named'));
      expect(renamed.lb.uuid).toBe(lb.uuid);
      expect(renamed.lb.name).not.toBe(raw);
      await expectConverged(harness, ['hand-named'], pass);
    });
  });
});
