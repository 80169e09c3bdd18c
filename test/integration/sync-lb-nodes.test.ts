// Ports and nodes: externalTrafficPolicy Local, UDP, TCP and UDP on one port, named and unnamed
// ports, a port number change that moves the listener in place, a node port change that rotates
// the members, a rename that swaps the pool; and pool members that follow the node set
// (added, removed, excluded by label, autoscaler taint or deletion; readiness is no filter).
import { PatchStrategy, setHeaderOptions, type V1Service, type V1ServicePort } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTopLevelError } from '../../src/core/render/error.js';
import { createLoadBalancerService, createNode, deleteNodeForced, ignoreNotFound, testConnection, uniqueName, waitUntil } from '../support/kube.js';
import {
  eventsOf,
  expectConverged,
  expectWellFormed,
  failuresOf,
  key,
  memberNames,
  passFails,
  passOk,
  patchService,
  poolOf,
  privateAddress,
  readService,
  routes,
  serverName,
  theLb,
  useLbWorld,
} from '../support/lb-scenarios.js';
import { expectAwaited, expectPoolSwap, memberRotationWrites, namedRoutes } from '../support/make-before-break.js';

const SERVERS = 6;

describe('sync-lb: ports and nodes', () => {
  const namespace = uniqueName('lb-nodes');
  const prefix = uniqueName('nod');
  const pass = { namespace };
  /** Nodes beyond the two base ones, removed after each test. */
  const extraNodes: string[] = [];
  const { harness } = useLbWorld({ prefix, namespace, servers: SERVERS, nodes: 2 });

  afterEach(async () => {
    for (const name of extraNodes.splice(0)) await deleteNodeForced(name);
  });

  async function reconciled(name: string, options: Parameters<typeof createLoadBalancerService>[2] = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, options);
    await passOk(harness, [name], pass);
    await expectConverged(harness, [name], pass);
    return readService(namespace, name);
  }

  function members(nodePort: number, servers: readonly number[]): string[] {
    return servers.map((i) => `${privateAddress(i)}:${nodePort}`).sort();
  }

  /** Replaces spec.ports (nodePorts kept as given), as `kubectl apply` of a changed port does. */
  async function setPorts(name: string, ports: V1ServicePort[]): Promise<V1Service> {
    return patchService(namespace, name, { spec: { ports } });
  }

  describe('externalTrafficPolicy', () => {
    it('Local: an HTTP monitor on /livez (HTTP 1.0) and members checked on the healthCheckNodePort; back to Cluster swaps the pool for one checked on the node port', async () => {
      const service = await reconciled('local', { externalTrafficPolicy: 'Local' });
      const nodePort = service.spec!.ports![0]!.nodePort!;
      const healthPort = service.spec!.healthCheckNodePort!;
      expect(healthPort).toBeGreaterThan(0);
      const local = poolOf(await theLb(harness, service), 'tcp/http');
      expect(local.monitors[0]).toMatchObject({
        type: 'http',
        http: { url_path: '/livez', version: '1.0', method: 'GET', expected_codes: ['200'], host: null },
      });
      expect(memberNames(local)).toEqual(members(nodePort, [1, 2]));
      for (const member of local.members) expect(member).toMatchObject({ protocol_port: nodePort, monitor_port: healthPort });

      // The members' monitor port and the monitor type cannot change in place: a successor pool
      // is built and awaited while the Local one serves, then the listener moves to it.
      await patchService(namespace, 'local', { spec: { externalTrafficPolicy: 'Cluster' } });
      const cluster = await expectPoolSwap(harness, await passOk(harness, ['local'], pass), service, local);
      expect(memberNames(cluster)).toEqual(members(nodePort, [1, 2]));
      expect(cluster.monitors[0]).toMatchObject({ type: 'tcp', http: null });
      for (const member of cluster.members) expect(member).toMatchObject({ protocol_port: nodePort, monitor_port: nodePort });
      await expectConverged(harness, ['local'], pass);
    });

    it('Local with the http annotation keeps the user\'s http options (the escape hatch) and warns', async () => {
      const service = await reconciled('local-http', {
        externalTrafficPolicy: 'Local',
        annotations: { [key('loadbalancer-health-monitor-http')]: '{"url_path": "/ready"}' },
      });
      const pool = poolOf(await theLb(harness, service), 'tcp/http');
      expect(pool.monitors[0]).toMatchObject({ type: 'http', http: { url_path: '/ready', version: '1.1' } });
      expect(pool.members[0]!.monitor_port).toBe(service.spec!.healthCheckNodePort);
      expect((await eventsOf(service)).filter((e) => e.type === 'Warning').map((e) => e.message).join('\n')).toContain(
        '/livez',
      );
    });
  });

  describe('protocols and ports', () => {
    it('UDP: a udp pool and listener, with the monitor type of the annotation', async () => {
      const service = await reconciled('udp', {
        ports: [{ name: 'dns', protocol: 'UDP', port: 53 }],
        annotations: { [key('loadbalancer-health-monitor-type')]: 'udp-connect' },
      });
      const state = await theLb(harness, service);
      expectWellFormed(state);
      const pool = poolOf(state, 'udp/dns');
      expect(pool.pool).toMatchObject({ protocol: 'udp', algorithm: 'round_robin' });
      expect(pool.listeners[0]).toMatchObject({ name: 'udp/53', protocol: 'udp', protocol_port: 53 });
      expect(pool.monitors[0]).toMatchObject({ type: 'udp-connect' });
      expect(memberNames(pool)).toEqual(members(service.spec!.ports![0]!.nodePort!, [1, 2]));
    });

    it('TCP and UDP on one port number: two pools, two listeners; the pool protocol annotation applies to TCP only', async () => {
      const service = await reconciled('dual', {
        ports: [
          { name: 'dns-tcp', protocol: 'TCP', port: 53 },
          { name: 'dns-udp', protocol: 'UDP', port: 53 },
        ],
        annotations: { [key('loadbalancer-pool-protocol')]: 'proxy' },
      });
      const state = await theLb(harness, service);
      expectWellFormed(state);
      expect(Object.keys(state.pools).sort()).toEqual(['tcp/dns-tcp', 'udp/dns-udp']);
      const [tcpPort, udpPort] = service.spec!.ports!;
      expect(poolOf(state, 'tcp/dns-tcp').pool.protocol).toBe('proxy');
      expect(poolOf(state, 'udp/dns-udp').pool.protocol).toBe('udp');
      expect(poolOf(state, 'tcp/dns-tcp').listeners[0]).toMatchObject({ name: 'tcp/53', protocol: 'tcp', protocol_port: 53 });
      expect(poolOf(state, 'udp/dns-udp').listeners[0]).toMatchObject({ name: 'udp/53', protocol: 'udp', protocol_port: 53 });
      expect(memberNames(poolOf(state, 'tcp/dns-tcp'))).toEqual(members(tcpPort!.nodePort!, [1, 2]));
      expect(memberNames(poolOf(state, 'udp/dns-udp'))).toEqual(members(udpPort!.nodePort!, [1, 2]));
    });

    it('an unnamed port gets pool `tcp`; a new port number keeps the pool and moves its listener in place', async () => {
      const service = await reconciled('unnamed', { ports: [{ protocol: 'TCP', port: 80 }] });
      const before = poolOf(await theLb(harness, service), 'tcp');
      expect(before.listeners[0]).toMatchObject({ name: 'tcp/80', protocol_port: 80 });
      const nodePort = service.spec!.ports![0]!.nodePort!;

      await setPorts('unnamed', [{ protocol: 'TCP', port: 8080, nodePort }]);
      const { simWrites } = await passOk(harness, ['unnamed'], pass);
      // Its port and its name: one PATCH of the same listener.
      expect(namedRoutes(simWrites, { [before.listeners[0]!.uuid]: 'LISTENER' })).toEqual(['PATCH /v1/load-balancers/listeners/LISTENER']);
      const after = poolOf(await theLb(harness, service), 'tcp');
      expect(after.pool.uuid).toBe(before.pool.uuid);
      expect(after.members.map((m) => m.uuid).sort()).toEqual(before.members.map((m) => m.uuid).sort());
      expect(after.monitors[0]!.uuid).toBe(before.monitors[0]!.uuid);
      expect(after.listeners).toMatchObject([{ uuid: before.listeners[0]!.uuid, name: 'tcp/8080', protocol_port: 8080 }]);
      await expectConverged(harness, ['unnamed'], pass);
    });

    it('named ports: a port number change moves the listener in place; a new node port rotates the members; a rename swaps the pool', async () => {
      const service = await reconciled('named', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
      });
      const [http, https] = service.spec!.ports!;
      const before = await theLb(harness, service);
      expect(Object.keys(before.pools).sort()).toEqual(['tcp/http', 'tcp/https']);

      // http: 80 → 81 (same name, same nodePort).
      await setPorts('named', [
        { ...http!, port: 81 },
        { ...https! },
      ]);
      const { simWrites } = await passOk(harness, ['named'], pass);
      const httpListener = poolOf(before, 'tcp/http').listeners[0]!;
      expect(namedRoutes(simWrites, { [httpListener.uuid]: 'LISTENER' })).toEqual(['PATCH /v1/load-balancers/listeners/LISTENER']);
      let state = await theLb(harness, service);
      expect(poolOf(state, 'tcp/http').pool.uuid).toBe(poolOf(before, 'tcp/http').pool.uuid);
      expect(poolOf(state, 'tcp/http').listeners).toMatchObject([{ uuid: httpListener.uuid, name: 'tcp/81', protocol_port: 81 }]);
      expect(poolOf(state, 'tcp/https').listeners[0]!.uuid).toBe(poolOf(before, 'tcp/https').listeners[0]!.uuid);
      await expectConverged(harness, ['named'], pass);

      // https: a new nodePort → the members of that pool are rotated: the new ones added and
      // awaited healthy, then the old ones deleted; the pool kept.
      const newNodePort = https!.nodePort! === 32111 ? 32112 : 32111;
      await setPorts('named', [{ ...http!, port: 81 }, { ...https!, nodePort: newNodePort }]);
      const rotation = await passOk(harness, ['named'], pass);
      const httpsPool = poolOf(before, 'tcp/https').pool.uuid;
      expect(namedRoutes(rotation.simWrites, { [httpsPool]: 'POOL' })).toEqual(memberRotationWrites(2, 2));
      expectAwaited(rotation.simRequests, { [httpsPool]: 'POOL' }, {
        built: 'POST /v1/load-balancers/pools/POOL/members',
        polled: 'GET /v1/load-balancers/pools/POOL/members',
        teardown: 'DELETE /v1/load-balancers/pools/POOL/members/{uuid}',
      });
      state = await theLb(harness, service);
      const rotated = poolOf(state, 'tcp/https');
      expect(rotated.pool.uuid).toBe(httpsPool);
      expect(memberNames(rotated)).toEqual(members(newNodePort, [1, 2]));
      expect(rotated.members.map((m) => m.uuid)).not.toContain(poolOf(before, 'tcp/https').members[0]!.uuid);
      await expectConverged(harness, ['named'], pass);

      // Renaming https → tls swaps that pool for one under the new name, on the same listener port.
      await setPorts('named', [{ ...http!, port: 81 }, { ...https!, name: 'tls', nodePort: newNodePort }]);
      const tls = await expectPoolSwap(harness, await passOk(harness, ['named'], pass), service, rotated, 'tcp/tls');
      expect(memberNames(tls)).toEqual(members(newNodePort, [1, 2]));
      state = await theLb(harness, service);
      expect(Object.keys(state.pools).sort()).toEqual(['tcp/http', 'tcp/tls']);
      expect(poolOf(state, 'tcp/http').pool.uuid).toBe(poolOf(before, 'tcp/http').pool.uuid);
      await expectConverged(harness, ['named'], pass);
    });
  });

  describe('ports swapping numbers', () => {
    it('two named ports that swap their numbers get their listeners swapped; the pools are kept', async () => {
      const service = await reconciled('swap', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
      });
      const [http, https] = service.spec!.ports!;
      const before = await theLb(harness, service);
      await setPorts('swap', [
        { ...http!, port: 443 },
        { ...https!, port: 80 },
      ]);
      await passOk(harness, ['swap'], pass);
      const after = await theLb(harness, service);
      expectWellFormed(after);
      expect(poolOf(after, 'tcp/http').pool.uuid).toBe(poolOf(before, 'tcp/http').pool.uuid);
      expect(poolOf(after, 'tcp/http').listeners[0]).toMatchObject({ name: 'tcp/443', protocol_port: 443 });
      expect(poolOf(after, 'tcp/https').listeners[0]).toMatchObject({ name: 'tcp/80', protocol_port: 80 });
      await expectConverged(harness, ['swap'], pass);
    });
  });

  describe('nodes', () => {
    async function addNode(i: number, options: Parameters<typeof createNode>[1] = {}): Promise<string> {
      const name = serverName(prefix, i);
      await createNode(name, { ready: true, ...options });
      extraNodes.push(name);
      return name;
    }

    async function patchNode(name: string, body: object): Promise<void> {
      await testConnection().core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    }

    async function expectMembers(service: V1Service, servers: number[]): Promise<void> {
      const nodePort = service.spec!.ports![0]!.nodePort!;
      expect(memberNames(poolOf(await theLb(harness, service), 'tcp/http'))).toEqual(members(nodePort, servers));
    }

    it('members follow nodes added, removed and excluded (label, autoscaler taint, deletion); readiness is no filter', async () => {
      const service = await reconciled('members');
      await expectMembers(service, [1, 2]);

      // Added: a NotReady node counts too.
      const third = await addNode(3, { ready: false });
      const { simWrites, report } = await passOk(harness, ['members'], pass);
      expect(routes(simWrites)).toEqual(['POST /v1/load-balancers/pools/{uuid}/members']);
      expect(report.services[0]!.status).toBe('changed');
      await expectMembers(service, [1, 2, 3]);
      expect((await eventsOf(service)).map((e) => e.reason)).toContain('UpdatedLoadBalancer');
      await expectConverged(harness, ['members'], pass);

      // Mapped by providerID although its name is no server's.
      const servers = await harness.cloud.servers.list();
      const fourthServer = servers.find((s) => s.name === serverName(prefix, 4))!;
      const custom = `${prefix}-by-provider-id`;
      await createNode(custom, { ready: true, providerID: `cloudscale://${fourthServer.uuid}` });
      extraNodes.push(custom);
      await passOk(harness, ['members'], pass);
      await expectMembers(service, [1, 2, 3, 4]);
      await expectConverged(harness, ['members'], pass);

      // Excluded by label (any value but a false one), then included again.
      await patchNode(third, { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': '' } } });
      await passOk(harness, ['members'], pass);
      await expectMembers(service, [1, 2, 4]);
      await expectConverged(harness, ['members'], pass);
      await patchNode(third, { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'false' } } });
      await passOk(harness, ['members'], pass);
      await expectMembers(service, [1, 2, 3, 4]);
      await expectConverged(harness, ['members'], pass);

      // Tainted for deletion by the cluster autoscaler.
      await patchNode(custom, {
        spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', value: '1700000000', effect: 'NoSchedule' }] },
      });
      await passOk(harness, ['members'], pass);
      await expectMembers(service, [1, 2, 3]);
      await expectConverged(harness, ['members'], pass);

      // Being deleted (a finalizer holds it): out already, before it is gone.
      await patchNode(third, { metadata: { finalizers: ['example.com/hold'] } });
      await testConnection().core.deleteNode({ name: third });
      const deleting = await testConnection().core.readNode({ name: third });
      expect(deleting.metadata!.deletionTimestamp).toBeDefined();
      await passOk(harness, ['members'], pass);
      await expectMembers(service, [1, 2]);
      await expectConverged(harness, ['members'], pass);

      // Removed: both extra nodes gone entirely.
      await deleteNodeForced(third);
      await deleteNodeForced(custom);
      await waitUntil('extra nodes gone', async () => (await ignoreNotFound(testConnection().core.readNode({ name: custom }))) === undefined);
      await expectConverged(harness, ['members'], pass);
      await expectMembers(service, [1, 2]);

      // Every node excluded: the pool is emptied (an UnAvailableLoadBalancer warning), then refilled.
      const base = [serverName(prefix, 1), serverName(prefix, 2)];
      for (const name of base) {
        await patchNode(name, { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } } });
      }
      try {
        await passOk(harness, ['members'], pass);
        expect(poolOf(await theLb(harness, service), 'tcp/http').members).toEqual([]);
        expect((await eventsOf(service)).map((e) => e.reason)).toContain('UnAvailableLoadBalancer');
      } finally {
        for (const name of base) {
          await patchNode(name, { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': null } } });
        }
      }
      await passOk(harness, ['members'], pass);
      await expectMembers(service, [1, 2]);
      await expectConverged(harness, ['members'], pass);
    });

    it('a node that maps to no server fails the Service (as the Go CCM), naming the node; nothing is written', async () => {
      const service = await reconciled('unmapped');
      const stranger = `${prefix}-stranger`;
      await createNode(stranger, { ready: true });
      extraNodes.push(stranger);
      const result = await passFails(harness, ['unmapped'], pass);
      expect(result.simWrites).toEqual([]);
      expect(failuresOf(result.error, namespace, 'unmapped').join('\n')).toContain(`node ${stranger}`);
      // Said once: in the pass's error as the command line prints it; the progress line says only that it failed.
      const said = `node ${stranger} has no providerID and no server is named ${stranger}`;
      expect(formatTopLevelError(result.error, { verbose: false })).toContain(`  service/${namespace}/unmapped: `);
      expect(formatTopLevelError(result.error, { verbose: false })).toContain(said);
      expect(result.ctx.out()).toContain(`service/${namespace}/unmapped: failed`);
      expect(result.ctx.out()).not.toContain(said);
      await expectMembers(service, [1, 2]);
    });
  });
});
