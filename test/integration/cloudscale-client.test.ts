// The client against the project's simulator over real HTTP on 127.0.0.1: every resource it
// serves (create, read back, list with tag filters, one-attribute PATCH, delete by href, the LB
// cascade), the API's error shapes, the idempotency traps of docs/go-ccm-compatibility.md, and
// injected faults that make the client retry, give up, or report a create as outcome-unknown.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { parseSeed, startSimulator } from '../../src/sim/index.js';
import { CloudscaleApiError, CloudscaleUnavailableError } from '../../src/core/errors.js';
import { createCloudscaleClient, type CloudscaleClient } from '../../src/core/cloudscale/client.js';
import {
  CloudscaleRequestError,
  fieldMessages,
  isOutcomeUnknown,
} from '../../src/core/cloudscale/errors.js';
import type { LoadBalancer, Pool, Server } from '../../src/core/cloudscale/types.js';
import { testSimWorld } from '../support/sim-world.js';
import { tcpListener, tcpMonitor } from '../support/go-ccm-bodies.js';

const token = 'sim-token-0123456789';

const seed = parseSeed(
  `
networks:
  - name: k8s-private
    zone: rma1
    tags: { cluster: alpha }
    subnets:
      - cidr: 10.1.1.0/24
        tags: { role: nodes }
  - name: other
    zone: rma1
    subnets:
      - cidr: 10.9.0.0/24
servers:
  - name: node-1
    flavor: flex-4-2
    zone: rma1
    status: running
    tags: { cluster: alpha, role: worker }
    interfaces:
      - { type: public, addresses: [5.102.145.11, "2a06:c01:1:145::11"] }
      - { type: private, network: k8s-private, addresses: [10.1.1.11] }
  - name: node-2
    flavor: flex-4-2
    zone: rma1
    status: running
    tags: { cluster: alpha, role: control-plane }
    interfaces:
      - { type: public, addresses: [5.102.145.12] }
      - { type: private, network: k8s-private, addresses: [10.1.1.12] }
  - name: stray
    flavor: flex-8-4
    zone: rma1
    status: stopped
    interfaces:
      - { type: private, network: other, addresses: [10.9.0.5] }
floating_ips:
  - { network: 5.102.150.7/32, type: regional, region: rma }
  - { network: "2a06:c01:1:150::7/128", type: global }
`,
  'inline seed',
);

type Simulator = Awaited<ReturnType<typeof startSimulator>>;
let sim: Simulator;
let client: CloudscaleClient;

function clientWith(over: Partial<Parameters<typeof createCloudscaleClient>[0]> = {}): CloudscaleClient {
  return createCloudscaleClient({
    baseUrl: sim.url,
    token,
    timeoutMs: 5_000,
    retry: { limit: 3, baseDelayMs: 1, maxDelayMs: 20 },
    ...over,
  });
}

beforeAll(async () => {
  sim = await startSimulator({ seed, lbProvisionMs: 0, token, ...testSimWorld() });
});
afterAll(async () => {
  await sim?.stop();
});
beforeEach(() => {
  sim.admin.setFaults({});
  client = clientWith();
});

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const names = (objects: { name: string }[]): string[] => objects.map((o) => o.name).sort();

async function serverNamed(name: string): Promise<Server> {
  const found = (await client.servers.list()).find((s) => s.name === name);
  if (found === undefined) throw new Error(`seeded server ${name} missing`);
  return found;
}

async function privateSubnetUuid(): Promise<string> {
  const [subnet] = await client.subnets.list({ role: 'nodes' });
  if (subnet === undefined) throw new Error('seeded subnet missing');
  return subnet.uuid;
}

async function newLoadBalancer(name: string, tags: Record<string, string> = {}): Promise<LoadBalancer> {
  return client.loadBalancers.create({ name, flavor: 'lb-standard', zone: 'rma1', vip_addresses: [], tags });
}

async function newPool(lb: LoadBalancer, name = 'tcp'): Promise<Pool> {
  return client.pools.create({ name, load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' });
}

describe('servers, networks, subnets', () => {
  test('list, tag filters by value and by key, get by UUID', async () => {
    expect(names(await client.servers.list())).toEqual(['node-1', 'node-2', 'stray']);
    expect(names(await client.servers.list({ cluster: 'alpha' }))).toEqual(['node-1', 'node-2']);
    expect(names(await client.servers.list({ role: true }))).toEqual(['node-1', 'node-2']);
    expect(names(await client.servers.list({ cluster: 'alpha', role: 'worker' }))).toEqual(['node-1']);
    expect(await client.servers.list({ cluster: 'beta' })).toEqual([]);

    const node1 = await serverNamed('node-1');
    const fetched = await client.servers.get(node1.uuid);
    expect(fetched).toEqual(node1);
    expect(fetched.href).toBe(`${sim.url}/v1/servers/${node1.uuid}`);
    expect(fetched.interfaces.map((i) => [i.type, i.addresses.map((a) => a.address)])).toEqual([
      ['public', ['5.102.145.11', '2a06:c01:1:145::11']],
      ['private', ['10.1.1.11']],
    ]);

    expect(names(await client.networks.list({ cluster: 'alpha' }))).toEqual(['k8s-private']);
    expect((await client.subnets.list({ role: 'nodes' })).map((s) => s.cidr)).toEqual(['10.1.1.0/24']);
  });

  test('an unknown server is a 404 not-found with the API detail', async () => {
    const error = await caught(client.servers.get('00000000-0000-4000-8000-000000000000'));
    expect(error).toBeInstanceOf(CloudscaleApiError);
    const apiError = error as CloudscaleRequestError;
    expect(apiError.isNotFound).toBe(true);
    expect(apiError.status).toBe(404);
    expect(apiError.detail).toBe('Not found.');
    expect(apiError.attempts).toBe(1);
  });
});

describe('load balancer lifecycle', () => {
  test('create, read back, list by tag, rename, changing → running', async () => {
    const lb = await newLoadBalancer('k8s-service-lifecycle', { 'k8s/service': 'lifecycle' });
    expect(lb.vip_addresses.map((v) => v.version)).toEqual([4, 6]);
    expect(lb.flavor.slug).toBe('lb-standard');
    expect(lb.zone.slug).toBe('rma1');
    expect(lb.href).toBe(`${sim.url}/v1/load-balancers/${lb.uuid}`);

    const readBack = await client.loadBalancers.get(lb.uuid);
    expect({ ...readBack, status: 'x' }).toEqual({ ...lb, status: 'x' });
    expect(['changing', 'running']).toContain(lb.status);
    // lbProvisionMs is 0: the next read shows it provisioned.
    expect(readBack.status).toBe('running');

    expect((await client.loadBalancers.list({ 'k8s/service': 'lifecycle' })).map((l) => l.uuid)).toEqual([lb.uuid]);
    expect(await client.loadBalancers.list({ 'k8s/service': 'nothing' })).toEqual([]);

    await client.loadBalancers.update(lb.uuid, { name: 'k8s-service-renamed' });
    const renamed = await client.loadBalancers.get(lb.uuid);
    expect(renamed.name).toBe('k8s-service-renamed');
    expect(renamed.tags).toEqual({ 'k8s/service': 'lifecycle' });

    await client.loadBalancers.update(lb.uuid, { tags: { 'k8s/service': 'lifecycle', extra: 'x' } });
    expect((await client.loadBalancers.list({ extra: true })).map((l) => l.uuid)).toEqual([lb.uuid]);

    await client.deleteByHref(lb.href);
    expect(((await caught(client.loadBalancers.get(lb.uuid))) as CloudscaleApiError).isNotFound).toBe(true);
  });

  test('pool, member, listener and monitor: create, read back, update, delete; LB delete cascades', async () => {
    const lb = await newLoadBalancer('k8s-service-children', { owner: 'children' });
    const pool = await client.pools.create({
      name: 'tcp/http',
      load_balancer: lb.uuid,
      algorithm: 'least_connections',
      protocol: 'proxyv2',
      tags: { owner: 'children' },
    });
    expect(pool.load_balancer.uuid).toBe(lb.uuid);
    expect(await client.pools.get(pool.uuid)).toEqual(pool);
    expect((await client.pools.list({ owner: 'children' })).map((p) => p.uuid)).toEqual([pool.uuid]);

    const node1 = await serverNamed('node-1');
    const privateAddress = node1.interfaces.find((i) => i.type === 'private')?.addresses[0];
    if (privateAddress === undefined) throw new Error('node-1 has no private address');
    // The Go CCM never sends `enabled`; it expects `enabled: true` and the exact subnet stub of
    // the server's address back, or it recreates the member on every pass.
    const member = await client.poolMembers.create(pool.uuid, {
      name: '10.1.1.11:30080',
      protocol_port: 30080,
      monitor_port: 30081,
      address: privateAddress.address,
      subnet: privateAddress.subnet.uuid,
    });
    expect(member.enabled).toBe(true);
    expect(member.subnet).toEqual(privateAddress.subnet);
    expect(member.monitor_port).toBe(30081);
    expect(member.pool.uuid).toBe(pool.uuid);
    expect(member.load_balancer.uuid).toBe(lb.uuid);
    expect(await client.poolMembers.list(pool.uuid)).toEqual([member]);
    expect(await client.poolMembers.list(pool.uuid, { none: true })).toEqual([]);

    const listener = await client.listeners.create(tcpListener(pool.uuid));
    expect(listener.pool?.uuid).toBe(pool.uuid);
    await client.listeners.update(listener.uuid, { allowed_cidrs: ['192.0.2.0/24', '2001:db8::/32'] });
    await client.listeners.update(listener.uuid, { timeout_member_connect_ms: 4000 });
    const [listenerBack] = (await client.listeners.list()).filter((l) => l.uuid === listener.uuid);
    expect(listenerBack).toEqual({
      ...listener,
      allowed_cidrs: ['192.0.2.0/24', '2001:db8::/32'],
      timeout_member_connect_ms: 4000,
    });

    const monitor = await client.healthMonitors.create({
      pool: pool.uuid,
      type: 'http',
      delay_s: 2,
      timeout_s: 1,
      up_threshold: 2,
      down_threshold: 3,
      http: { method: 'GET', url_path: '/livez', version: '1.0', expected_codes: ['200'] },
    });
    // Echoed as sent, or the Go CCM recreates the monitor on every pass.
    expect(monitor.http).toEqual({
      method: 'GET',
      url_path: '/livez',
      version: '1.0',
      expected_codes: ['200'],
      host: null,
    });
    await client.healthMonitors.update(monitor.uuid, { http: { url_path: '/healthz' } });
    await client.healthMonitors.update(monitor.uuid, { delay_s: 5 });
    const [monitorBack] = (await client.healthMonitors.list()).filter((m) => m.uuid === monitor.uuid);
    expect(monitorBack).toEqual({
      ...monitor,
      delay_s: 5,
      http: { ...monitor.http, url_path: '/healthz' },
    });

    // Delete one member by href, then the LB: everything under it goes with it.
    await client.deleteByHref(member.href);
    expect(await client.poolMembers.list(pool.uuid)).toEqual([]);
    await client.deleteByHref(lb.href);
    expect((await client.pools.list()).filter((p) => p.uuid === pool.uuid)).toEqual([]);
    expect((await client.listeners.list()).filter((l) => l.uuid === listener.uuid)).toEqual([]);
    expect((await client.healthMonitors.list()).filter((m) => m.uuid === monitor.uuid)).toEqual([]);
    expect(((await caught(client.poolMembers.list(pool.uuid))) as CloudscaleApiError).isNotFound).toBe(true);
  });

  test('a TCP monitor created with "http": {} comes back with http null', async () => {
    const lb = await newLoadBalancer('k8s-service-tcp-monitor');
    const pool = await newPool(lb);
    const monitor = await client.healthMonitors.create(tcpMonitor(pool.uuid));
    expect(monitor.type).toBe('tcp');
    expect(monitor.http).toBeNull();
    await client.deleteByHref(lb.href);
  });

  test('floating IPs: get by IPv4 and IPv6, assign to a load balancer, read back', async () => {
    const lb = await newLoadBalancer('k8s-service-fip');
    const [v4, v6] = await Promise.all([
      client.floatingIps.get('5.102.150.7'),
      client.floatingIps.get('2a06:c01:1:150::7/128'),
    ]);
    expect(v4.network).toBe('5.102.150.7/32');
    expect(v6.network).toBe('2a06:c01:1:150::7/128');
    expect(v6.type).toBe('global');

    await client.floatingIps.update(v4.network, { load_balancer: lb.uuid });
    const assigned = await client.floatingIps.get(v4.network);
    expect(assigned.load_balancer?.uuid).toBe(lb.uuid);
    expect(assigned.next_hop).toBe(lb.vip_addresses[0]?.address);
    expect((await client.floatingIps.list()).filter((f) => f.load_balancer?.uuid === lb.uuid)).toHaveLength(1);
    await client.deleteByHref(lb.href);
  });
});

describe('API errors keep detail and per-field messages', () => {
  test('listener with a bare IP in allowed_cidrs: 400 naming the field and item', async () => {
    const lb = await newLoadBalancer('k8s-service-errors');
    const pool = await newPool(lb);
    const error = (await caught(
      client.listeners.create({ ...tcpListener(pool.uuid), allowed_cidrs: ['10.0.0.0/8', '1.1.1.1'] }),
    )) as CloudscaleRequestError;
    expect(error).toBeInstanceOf(CloudscaleRequestError);
    expect(error.status).toBe(400);
    expect(error.detail).toBeUndefined();
    expect(fieldMessages(error.fieldErrors)).toEqual([
      { field: 'allowed_cidrs.1', message: 'Enter a valid network address in CIDR notation.' },
    ]);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.attempts).toBe(1);
    await client.deleteByHref(lb.href);
  });

  test('pool with bad choices and a missing load balancer: every field listed', async () => {
    const error = (await caught(
      client.pools.create({
        name: 'tcp',
        load_balancer: '00000000-0000-4000-8000-000000000000',
        algorithm: 'fastest' as 'round_robin',
        protocol: 'http' as 'tcp',
      }),
    )) as CloudscaleRequestError;
    expect(error.status).toBe(400);
    // The API answers one string per field; the message names each field with its text.
    expect(error.fieldErrors).toEqual({
      load_balancer: 'Object with uuid=00000000-0000-4000-8000-000000000000 does not exist.',
      algorithm: 'Expect one of round_robin, least_connections, source_ip.',
      protocol: 'Expect one of tcp, proxy, proxyv2, udp.',
    });
    expect(error.message).toBe(
      'cloudscale API POST /v1/load-balancers/pools answered 400: ' +
        'load_balancer: Object with uuid=00000000-0000-4000-8000-000000000000 does not exist.; ' +
        'algorithm: Expect one of round_robin, least_connections, source_ip.; ' +
        'protocol: Expect one of tcp, proxy, proxyv2, udp.',
    );
  });

  test('a second health monitor on one pool, and host with HTTP 1.0', async () => {
    const lb = await newLoadBalancer('k8s-service-monitor-errors');
    const pool = await newPool(lb);
    const body = {
      pool: pool.uuid,
      type: 'http' as const,
      delay_s: 2,
      timeout_s: 1,
      up_threshold: 2,
      down_threshold: 3,
    };
    const withHost = (await caught(
      client.healthMonitors.create({ ...body, http: { version: '1.0', host: 'example.org' } }),
    )) as CloudscaleRequestError;
    expect(withHost.status).toBe(400);
    expect(JSON.stringify(withHost.fieldErrors) + (withHost.detail ?? '')).toContain(
      'The host argument can not be used with HTTP version 1.0',
    );

    await client.healthMonitors.create({ ...body, http: {} });
    const second = (await caught(client.healthMonitors.create({ ...body, http: {} }))) as CloudscaleRequestError;
    expect(second.fieldErrors).toEqual({ pool: 'This pool already has a health monitor.' });
    await client.deleteByHref(lb.href);
  });

  test('a wrong token: 401, not retried, token absent from the error', async () => {
    const wrong = clientWith({ token: 'wrong-token-ABCDEF' });
    const error = (await caught(wrong.servers.list())) as CloudscaleRequestError;
    expect(error).toBeInstanceOf(CloudscaleRequestError);
    expect(error.status).toBe(401);
    expect(error.detail).toBe('Invalid token.');
    expect(error.hint).toMatch(/CLOUDSCALE_API_TOKEN/);
    expect(wrong.requests.summary().total).toBe(1);
    expect(`${error.message} ${JSON.stringify(error)} ${String(error)}`).not.toContain('wrong-token-ABCDEF');
  });
});

describe('fault injection', () => {
  test('count-based 503 and 500 on a GET: retried until it succeeds', async () => {
    sim.admin.setFaults({
      errorRate: [
        { pathPattern: '/v1/servers', methods: ['GET'], status: 503, count: 1 },
        { pathPattern: '/v1/servers', methods: ['GET'], status: 500, count: 1 },
      ],
    });
    expect(names(await client.servers.list())).toEqual(['node-1', 'node-2', 'stray']);
    expect(client.requests.entries().map((e) => [e.status, e.attempt, e.final])).toEqual([
      [503, 1, false],
      [500, 2, false],
      [200, 3, true],
    ]);
  });

  test('429 with Retry-After on a POST: retried, exactly one object created', async () => {
    const lb = await newLoadBalancer('k8s-service-429');
    client.requests.reset();
    sim.admin.setFaults({ rateLimit: { pathPattern: '/v1/load-balancers/pools', retryAfterSeconds: 1, count: 2 } });
    const pool = await newPool(lb, 'rate-limited');
    expect(client.requests.entries().map((e) => e.status)).toEqual([429, 429, 201]);
    expect((await client.pools.list()).filter((p) => p.load_balancer.uuid === lb.uuid).map((p) => p.uuid)).toEqual([
      pool.uuid,
    ]);
    await client.deleteByHref(lb.href);
  });

  test('503 with Retry-After on a POST that was applied: not sent again; read back, the pool it made is the answer', async () => {
    const lb = await newLoadBalancer('k8s-service-503-retry-after');
    client.requests.reset();
    sim.admin.setFaults({
      errorRate: {
        pathPattern: '/v1/load-balancers/pools',
        methods: ['POST'],
        status: 503,
        retryAfterSeconds: 0,
        afterApplying: true,
        count: 1,
      },
    });
    const pool = await newPool(lb, 'after-maintenance');
    expect(client.requests.entries().map((e) => `${e.method} ${e.status}`)).toEqual(['POST 503', 'GET 200']);
    expect((await client.pools.list()).filter((p) => p.load_balancer.uuid === lb.uuid).map((p) => p.uuid)).toEqual([pool.uuid]);
    await client.deleteByHref(lb.href);
  });

  test('answers slower than the timeout: retried, then CloudscaleNoAnswerError naming method and path', async () => {
    sim.admin.resetRequests();
    sim.admin.setFaults({ latencyMs: 400 });
    const impatient = clientWith({ timeoutMs: 100, retry: { limit: 1, baseDelayMs: 1, maxDelayMs: 5 } });
    const error = await caught(impatient.networks.list());
    expect(error).toBeInstanceOf(CloudscaleUnavailableError);
    expect((error as Error).message).toBe('cloudscale API GET /v1/networks: no answer within 100 ms (2 attempts)');
    expect(impatient.requests.entries().map((e) => e.status)).toEqual(['error', 'error']);
    // The simulator still answers both late; wait for that so no later test sees them in its log.
    const answered = () => sim.admin.requests().filter((r) => r.path === '/v1/networks').length;
    while (answered() < 2) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  test('503 on every attempt: a typed error after the retry budget', async () => {
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/**', methods: ['GET'], status: 503 } });
    const error = (await caught(client.pools.list())) as CloudscaleRequestError;
    expect(error).toBeInstanceOf(CloudscaleRequestError);
    expect(error.status).toBe(503);
    expect(error.attempts).toBe(4);
    expect(error.detail).toBe('Service temporarily unavailable, try again later.');
    expect(client.requests.summary()).toEqual({
      total: 4,
      reads: 4,
      writes: 0,
      retries: 3,
      throttled: 0,
      waitedMs: expect.any(Number),
      byRoute: [{ route: 'GET /v1/load-balancers/pools', count: 4 }],
    });
  });

  test('a POST answered 500 after the create happened: not retried; read back, the pool it made is the answer', async () => {
    const lb = await newLoadBalancer('k8s-service-lost-answer');
    sim.admin.setFaults({
      errorRate: {
        pathPattern: '/v1/load-balancers/pools',
        methods: ['POST'],
        status: 500,
        count: 1,
        afterApplying: true,
      },
    });
    client.requests.reset();
    const pool = await newPool(lb, 'maybe');
    expect(pool.name).toBe('maybe');
    expect(client.requests.summary()).toMatchObject({ total: 2, writes: 1, retries: 0 });
    expect((await client.pools.list()).filter((p) => p.load_balancer.uuid === lb.uuid).map((p) => p.uuid)).toEqual([pool.uuid]);
    await client.deleteByHref(lb.href);
  });

  test('a POST answered 500 that created nothing: read back, not found, the error stands (outcome unknown)', async () => {
    const lb = await newLoadBalancer('k8s-service-lost-nothing');
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/pools', methods: ['POST'], status: 500, count: 1 } });
    client.requests.reset();
    const error = await caught(newPool(lb, 'never'));
    expect(error).toBeInstanceOf(CloudscaleRequestError);
    expect(isOutcomeUnknown(error)).toBe(true);
    expect(client.requests.entries().map((e) => `${e.method} ${e.status}`)).toEqual(['POST 500', 'GET 200']);
    expect((await client.pools.list()).filter((p) => p.load_balancer.uuid === lb.uuid)).toEqual([]);
    await client.deleteByHref(lb.href);
  });

  test('a DELETE whose first answer was lost: the retry sees 404 and counts it as deleted', async () => {
    const lb = await newLoadBalancer('k8s-service-lost-delete');
    sim.admin.setFaults({
      errorRate: { pathPattern: '/v1/load-balancers/*', methods: ['DELETE'], status: 502, count: 1, afterApplying: true },
    });
    client.requests.reset();
    await client.deleteByHref(lb.href);
    expect(client.requests.entries().map((e) => e.status)).toEqual([502, 404]);
    expect(((await caught(client.loadBalancers.get(lb.uuid))) as CloudscaleApiError).isNotFound).toBe(true);
  });
});

describe('writes slower than the timeout that the API still applies', () => {
  /** A client that gives up on an answer after 200 ms; the simulator's hangs outlast it. */
  const impatient = () => clientWith({ timeoutMs: 200, retry: { limit: 3, baseDelayMs: 50, maxDelayMs: 100 } });

  test.each([
    ['a pool', (c: CloudscaleClient, lb: LoadBalancer) => c.pools.create({ name: 'late', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' }), '/v1/load-balancers/pools'],
    [
      'a listener',
      async (c: CloudscaleClient, lb: LoadBalancer) => {
        const pool = await newPool(lb, 'for-listener');
        return c.listeners.create({ pool: pool.uuid, name: 'tcp/80', protocol: 'tcp', protocol_port: 80, allowed_cidrs: [], timeout_client_data_ms: 50_000, timeout_member_connect_ms: 5_000, timeout_member_data_ms: 50_000 });
      },
      '/v1/load-balancers/listeners',
    ],
  ] as const)('a create of %s timed out after it was applied: read back, no duplicate, no error', async (_, make, route) => {
    const lb = await newLoadBalancer(`k8s-service-late-${route.split('/').pop()}`);
    const c = impatient();
    sim.admin.setFaults({ hang: { pathPattern: route, methods: ['POST'], afterApplying: true, count: 1 } });
    const made = await make(c, lb);
    expect(c.requests.entries().filter((e) => e.method === 'POST').map((e) => e.status)).toEqual(['error']);
    const all = route.endsWith('pools') ? (await client.pools.list()).filter((p) => p.load_balancer.uuid === lb.uuid && p.name === 'late') : (await client.listeners.list()).filter((l) => l.load_balancer.uuid === lb.uuid);
    expect(all.map((o) => o.uuid)).toEqual([made.uuid]);
    await client.deleteByHref(lb.href);
  });

  test("a PATCH slower than the timeout, its retry refused while the API still applies it (one write per load balancer): read back, done", async () => {
    sim.admin.setBehaviour({ refuseOverlappingWrites: true });
    try {
      const lb = await newLoadBalancer('k8s-service-late-patch');
      const pool = await newPool(lb, 'late-patch');
      const member = await client.poolMembers.create(pool.uuid, { name: 'm', protocol_port: 30080, address: '10.1.1.50', subnet: await privateSubnetUuid() });
      // Gives up after 200 ms, tries again 100–200 ms later and then every 200–400 ms: the first
      // retry comes while the PATCH is still applied (500 ms, the load balancer's write lock held),
      // the last after it.
      const c = clientWith({ timeoutMs: 200, retry: { limit: 3, baseDelayMs: 200, maxDelayMs: 400 } });
      sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers/pools/*/members/*', methods: ['PATCH'], forMs: 500, count: 1 } });
      await c.poolMembers.update(pool.uuid, member.uuid, { enabled: false });
      const patches = c.requests.entries().filter((e) => e.method === 'PATCH').map((e) => e.status);
      expect(patches.slice(0, 2)).toEqual(['error', 400]);
      expect((await client.poolMembers.list(pool.uuid)).map((m) => m.enabled)).toEqual([false]);
      await client.deleteByHref(lb.href);
    } finally {
      sim.admin.setBehaviour({ refuseOverlappingWrites: false });
    }
  });

  test('a DELETE slower than the timeout and applied: read back (404), done without another DELETE', async () => {
    const lb = await newLoadBalancer('k8s-service-late-delete');
    const pool = await newPool(lb, 'late-delete');
    const c = impatient();
    sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers/pools/*', methods: ['DELETE'], afterApplying: true, count: 1 } });
    await c.deleteByHref(pool.href);
    // Each attempt is counted when its call ends: the read back first.
    expect(c.requests.entries().map((e) => `${e.method} ${e.status}`)).toEqual(['GET 404', 'DELETE error']);
    await client.deleteByHref(lb.href);
  });
});

describe('request counter', () => {
  test('matches the simulator request log, attempt for attempt', async () => {
    sim.admin.resetRequests();
    const lb = await newLoadBalancer('k8s-service-counted');
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/{uuid}', methods: ['GET'], status: 500, count: 1 } });
    await client.loadBalancers.get(lb.uuid);
    await client.floatingIps.list();
    await client.deleteByHref(lb.href);

    const entries = client.requests.entries();
    expect(entries.map((e) => `${e.method} ${e.route} ${e.status}${e.retried ? ' (retry)' : ''}`)).toEqual([
      'POST /v1/load-balancers 201',
      'GET /v1/load-balancers/{uuid} 500',
      'GET /v1/load-balancers/{uuid} 200 (retry)',
      'GET /v1/floating-ips 200',
      'DELETE /v1/load-balancers/{uuid} 204',
    ]);
    for (const entry of entries) expect(entry.durationMs).toBeGreaterThanOrEqual(0);
    expect(client.requests.summary()).toEqual({
      total: 5,
      reads: 3,
      writes: 2,
      retries: 1,
      throttled: 0,
      waitedMs: expect.any(Number),
      byRoute: [
        { route: 'GET /v1/load-balancers/{uuid}', count: 2 },
        { route: 'DELETE /v1/load-balancers/{uuid}', count: 1 },
        { route: 'GET /v1/floating-ips', count: 1 },
        { route: 'POST /v1/load-balancers', count: 1 },
      ],
    });
    const logged = sim.admin.requests().map((r) => `${r.method} ${r.status}`);
    expect(logged).toEqual(entries.map((e) => `${e.method} ${e.status}`));
  });
});
