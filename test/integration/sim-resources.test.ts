// The simulator over real HTTP: every resource created, read back, listed (with tag filters),
// patched and deleted, with the shapes of docs/cloudscale-api.md.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type {
  FloatingIp,
  HealthMonitor,
  Listener,
  LoadBalancer,
  Network,
  Pool,
  PoolMember,
  Server,
  Subnet,
} from '../../src/core/cloudscale/types.js';
import { loadSeedFile, startSimulator, type Simulator } from '../../src/sim/index.js';
import { testSimWorld } from '../support/sim-world.js';
import { LISTENER_TIMEOUTS, tcpListener } from '../support/go-ccm-bodies.js';

let sim: Simulator;

interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

async function call<T = any>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const url = path.startsWith('http') ? path : `${sim.url}${path}`;
  const response = await fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
}

async function create<T>(path: string, body: unknown): Promise<T> {
  const answer = await call<T>('POST', path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

const privateSubnet = async (): Promise<Subnet> => {
  const subnets = (await call<Subnet[]>('GET', '/v1/subnets')).body;
  return subnets.find((s) => s.cidr === '10.100.0.0/24')!;
};

async function newLoadBalancer(name = 'lb-1', extra: Record<string, unknown> = {}): Promise<LoadBalancer> {
  return create<LoadBalancer>('/v1/load-balancers', { name, flavor: 'lb-standard', zone: 'rma1', vip_addresses: [], ...extra });
}

async function newPool(lb: LoadBalancer, name = 'tcp'): Promise<Pool> {
  return create<Pool>('/v1/load-balancers/pools', {
    name,
    load_balancer: lb.uuid,
    algorithm: 'round_robin',
    protocol: 'tcp',
  });
}

beforeAll(async () => {
  // The forgiving world, whatever the tests' world: this file reads each answer right after the
  // request (a member's monitor_status, a stopped server's member `down`), as the API has it
  // before any data-plane timing. The strict world's timings: sim-dataplane.test.ts.
  sim = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), lbProvisionMs: 0, world: 'forgiving' });
});
afterAll(async () => {
  await sim.stop();
});

describe('servers', () => {
  test('the seeded servers come back in seed order with public and private interfaces', async () => {
    const { status, body: servers } = await call<Server[]>('GET', '/v1/servers');
    expect(status).toBe(200);
    expect(servers.map((s) => s.name)).toEqual(['node-1', 'node-2', 'node-3']);
    const node1 = servers[0]!;
    expect(node1).toMatchObject({
      href: `${sim.url}/v1/servers/${node1.uuid}`,
      status: 'running',
      zone: { slug: 'rma1' },
      flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
      tags: { role: 'control-plane' },
    });
    expect(node1.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const [publicInterface, privateInterface] = node1.interfaces;
    expect(publicInterface!.type).toBe('public');
    expect(publicInterface!.network.name).toBe('public');
    expect(publicInterface!.addresses.map((a) => [a.version, a.address, a.prefix_length])).toEqual([
      [4, '5.102.145.11', 24],
      [6, '2a06:c01:1:1::11', 64],
    ]);
    expect(publicInterface!.addresses[0]!.subnet.cidr).toBe('5.102.145.0/24');
    expect(privateInterface).toMatchObject({
      type: 'private',
      network: { name: 'k8s-private' },
      addresses: [{ version: 4, address: '10.100.0.11', prefix_length: 24, gateway: null, reverse_ptr: null }],
    });
    const subnet = await privateSubnet();
    expect(privateInterface!.addresses[0]!.subnet).toEqual({ href: subnet.href, uuid: subnet.uuid, cidr: subnet.cidr });
  });

  test('get by uuid equals the list entry; an unknown uuid is 404 Not found', async () => {
    const [first] = (await call<Server[]>('GET', '/v1/servers')).body;
    expect((await call('GET', `/v1/servers/${first!.uuid}`)).body).toEqual(first);
    expect(await call('GET', '/v1/servers/00000000-0000-4000-8000-000000000000')).toMatchObject({
      status: 404,
      body: { detail: 'Not found.' },
    });
    expect((await call('GET', '/v1/servers/not-a-uuid')).status).toBe(404);
  });

  test('servers filter by tag', async () => {
    const names = async (query: string) =>
      (await call<Server[]>('GET', `/v1/servers?${query}`)).body.map((s) => s.name);
    expect(await names('tag:role=worker')).toEqual(['node-2', 'node-3']);
    expect(await names('tag%3Arole=control-plane')).toEqual(['node-1']);
    expect(await names('tag:role')).toEqual(['node-1', 'node-2', 'node-3']);
    expect(await names('tag:role=')).toEqual(['node-1', 'node-2', 'node-3']);
    expect(await names('tag:missing')).toEqual([]);
  });

  test('PATCH changes one attribute (name, tags) and answers 204', async () => {
    const [, second] = (await call<Server[]>('GET', '/v1/servers')).body;
    const patched = await call('PATCH', `/v1/servers/${second!.uuid}`, { tags: { role: 'worker', pool: 'a' } });
    expect(patched.status).toBe(204);
    expect(patched.body).toBeUndefined();
    expect((await call<Server>('GET', `/v1/servers/${second!.uuid}`)).body.tags).toEqual({ role: 'worker', pool: 'a' });
    await call('PATCH', `/v1/servers/${second!.uuid}`, { tags: { role: 'worker' } });
  });

  test('stop and start actions: stopped, then running again', async () => {
    const [, , third] = (await call<Server[]>('GET', '/v1/servers')).body;
    expect((await call('POST', `/v1/servers/${third!.uuid}/stop`)).status).toBe(204);
    expect((await call<Server>('GET', `/v1/servers/${third!.uuid}`)).body.status).toBe('stopped');
    expect((await call('POST', `/v1/servers/${third!.uuid}/start`)).status).toBe(204);
    expect((await call<Server>('GET', `/v1/servers/${third!.uuid}`)).body.status).toBe('running');
  });
});

describe('networks and subnets', () => {
  test('the private network lists its subnet stub; the public network is not listed', async () => {
    const networks = (await call<Network[]>('GET', '/v1/networks')).body.filter((n) => n.name === 'k8s-private');
    expect(networks).toHaveLength(1);
    const subnet = await privateSubnet();
    expect(networks[0]).toMatchObject({ zone: { slug: 'rma1' }, mtu: 9000, tags: {} });
    expect(networks[0]!.subnets).toEqual([{ href: subnet.href, uuid: subnet.uuid, cidr: '10.100.0.0/24' }]);
    expect(subnet.network).toEqual({ href: networks[0]!.href, uuid: networks[0]!.uuid, name: 'k8s-private' });
    expect(subnet.dns_servers).toHaveLength(2);
    expect((await call('GET', `/v1/subnets/${subnet.uuid}`)).body).toEqual(subnet);
    expect((await call('GET', `/v1/networks/${networks[0]!.uuid}`)).body).toEqual(networks[0]);
  });
});

describe('network and subnet lifecycle', () => {
  test('create with an automatic subnet, add one, PATCH, filter, delete with cascade', async () => {
    const network = await create<Network>('/v1/networks', { name: 'extra', zone: 'rma1', tags: { env: 'test' } });
    expect(network).toMatchObject({ name: 'extra', zone: { slug: 'rma1' }, mtu: 9000, tags: { env: 'test' } });
    expect(network.subnets.map((s) => s.cidr)).toEqual(['172.16.0.0/24']);
    expect((await call('GET', network.href)).body).toEqual(network);

    const subnet = await create<Subnet>('/v1/subnets', {
      network: network.uuid,
      cidr: '10.200.0.0/22',
      gateway_address: '10.200.0.1',
      dns_servers: [],
    });
    expect(subnet).toMatchObject({
      cidr: '10.200.0.0/22',
      network: { href: network.href, uuid: network.uuid, name: 'extra' },
      gateway_address: '10.200.0.1',
      dns_servers: [],
      tags: {},
    });
    expect((await call('GET', subnet.href)).body).toEqual(subnet);
    expect((await call<Network>('GET', network.href)).body.subnets.map((s) => s.cidr)).toEqual(['172.16.0.0/24', '10.200.0.0/22']);

    expect((await call('PATCH', subnet.href, { dns_servers: null })).status).toBe(204);
    expect((await call<Subnet>('GET', subnet.href)).body.dns_servers).toHaveLength(2);
    expect((await call('PATCH', network.href, { mtu: 6601 })).status).toBe(204);
    expect((await call('PATCH', network.href, { name: 'extra-renamed' })).status).toBe(204);
    expect((await call<Subnet>('GET', subnet.href)).body.network.name).toBe('extra-renamed');
    expect((await call<Network[]>('GET', '/v1/networks?tag:env=test')).body.map((n) => n.uuid)).toEqual([network.uuid]);

    expect((await call('DELETE', network.href)).status).toBe(204);
    expect((await call('GET', network.href)).status).toBe(404);
    expect((await call('GET', subnet.href)).status).toBe(404);
  });

  test('a network without automatic subnet; a subnet in use cannot be deleted', async () => {
    const network = await create<Network>('/v1/networks', { name: 'bare', auto_create_ipv4_subnet: false });
    expect(network.subnets).toEqual([]);
    expect(network.zone).toEqual({ slug: 'rma1' });
    const subnet = await create<Subnet>('/v1/subnets', { network: network.uuid, cidr: '192.168.10.0/24' });
    const lb = await newLoadBalancer('lb-on-bare', { vip_addresses: [{ subnet: subnet.uuid }] });
    expect(await call('DELETE', subnet.href)).toMatchObject({
      status: 400,
      body: { detail: 'The subnet is still in use by load balancer lb-on-bare.' },
    });
    expect(await call('DELETE', network.href)).toMatchObject({ status: 400 });
    await call('DELETE', lb.href);
    expect((await call('DELETE', subnet.href)).status).toBe(204);
    expect((await call('DELETE', network.href)).status).toBe(204);
  });

  test('the seeded network cannot be deleted while servers use it', async () => {
    const [network] = (await call<Network[]>('GET', '/v1/networks')).body;
    expect(await call('DELETE', network!.href)).toMatchObject({
      status: 400,
      body: { detail: 'The network is still in use by server node-1.' },
    });
  });
});

describe('load balancers and their children', () => {
  test('create answers 201 with the object a later GET returns, with a public VIP pair', async () => {
    const lb = await newLoadBalancer('lb-shape', { tags: { owner: 'test' } });
    expect(lb).toMatchObject({
      href: `${sim.url}/v1/load-balancers/${lb.uuid}`,
      name: 'lb-shape',
      status: 'running',
      zone: { slug: 'rma1' },
      flavor: { slug: 'lb-standard', name: 'LB-Standard' },
      tags: { owner: 'test' },
    });
    expect(lb.vip_addresses.map((v) => v.version)).toEqual([4, 6]);
    expect(lb.vip_addresses[0]!.subnet.cidr).toBe('198.18.0.0/21');
    expect((await call('GET', `/v1/load-balancers/${lb.uuid}`)).body).toEqual(lb);
    expect((await call('DELETE', lb.href)).status).toBe(204);
  });

  test('a private VIP comes from the given subnet, at the given address or a free one', async () => {
    const subnet = await privateSubnet();
    const chosen = await newLoadBalancer('lb-private', { vip_addresses: [{ subnet: subnet.uuid, address: '10.100.0.200' }] });
    expect(chosen.vip_addresses).toEqual([
      { version: 4, address: '10.100.0.200', subnet: { href: subnet.href, uuid: subnet.uuid, cidr: subnet.cidr } },
    ]);
    const picked = await newLoadBalancer('lb-private-2', { vip_addresses: [{ subnet: subnet.uuid }] });
    const address = picked.vip_addresses[0]!.address;
    expect(address.startsWith('10.100.0.')).toBe(true);
    expect(['10.100.0.11', '10.100.0.12', '10.100.0.13', '10.100.0.200']).not.toContain(address);
    await call('DELETE', chosen.href);
    await call('DELETE', picked.href);
  });

  test('the full lifecycle: pool, members, listener, monitor; PATCH; lists; cascade on delete', async () => {
    const lb = await newLoadBalancer('lb-life');
    const pool = await newPool(lb);
    expect(pool).toMatchObject({
      href: `${sim.url}/v1/load-balancers/pools/${pool.uuid}`,
      name: 'tcp',
      load_balancer: { href: lb.href, uuid: lb.uuid, name: 'lb-life' },
      algorithm: 'round_robin',
      protocol: 'tcp',
      tags: {},
    });
    expect((await call('GET', pool.href)).body).toEqual(pool);

    const subnet = await privateSubnet();
    const member = await create<PoolMember>(`/v1/load-balancers/pools/${pool.uuid}/members`, {
      name: '10.100.0.11:30080',
      protocol_port: 30080,
      monitor_port: 30081,
      address: '10.100.0.11',
      subnet: subnet.uuid,
    });
    expect(member).toMatchObject({
      href: `${sim.url}/v1/load-balancers/pools/${pool.uuid}/members/${member.uuid}`,
      enabled: true,
      pool: { href: pool.href, uuid: pool.uuid, name: 'tcp' },
      load_balancer: { uuid: lb.uuid },
      protocol_port: 30080,
      monitor_port: 30081,
      address: '10.100.0.11',
      monitor_status: 'no_monitor',
    });
    // The exact stub the server's address shows: the Go CCM compares all three fields.
    const server = (await call<Server[]>('GET', '/v1/servers')).body[0]!;
    expect(member.subnet).toEqual(server.interfaces[1]!.addresses[0]!.subnet);
    expect((await call('GET', member.href)).body).toEqual(member);
    const second = await create<PoolMember>(`/v1/load-balancers/pools/${pool.uuid}/members`, {
      name: '10.100.0.12:30080',
      protocol_port: 30080,
      address: '10.100.0.12',
      subnet: subnet.uuid,
      tags: { node: 'node-2' },
    });
    expect(second.monitor_port).toBeNull();
    const members = (await call<PoolMember[]>('GET', `/v1/load-balancers/pools/${pool.uuid}/members`)).body;
    expect(members.map((m) => m.name)).toEqual(['10.100.0.11:30080', '10.100.0.12:30080']);
    const tagged = (await call<PoolMember[]>('GET', `/v1/load-balancers/pools/${pool.uuid}/members?tag:node=node-2`)).body;
    expect(tagged.map((m) => m.uuid)).toEqual([second.uuid]);

    const listener = await create<Listener>('/v1/load-balancers/listeners', tcpListener(pool.uuid));
    expect(listener).toMatchObject({
      href: `${sim.url}/v1/load-balancers/listeners/${listener.uuid}`,
      pool: { uuid: pool.uuid, name: 'tcp' },
      load_balancer: { uuid: lb.uuid, name: 'lb-life' },
      protocol: 'tcp',
      protocol_port: 80,
      allowed_cidrs: [],
      ...LISTENER_TIMEOUTS,
    });
    expect((await call('GET', listener.href)).body).toEqual(listener);

    const monitor = await create<HealthMonitor>('/v1/load-balancers/health-monitors', {
      pool: pool.uuid,
      delay_s: 2,
      timeout_s: 1,
      up_threshold: 2,
      down_threshold: 3,
      type: 'http',
      http: { method: 'GET', url_path: '/livez', version: '1.0', expected_codes: ['200'] },
    });
    expect(monitor).toMatchObject({
      href: `${sim.url}/v1/load-balancers/health-monitors/${monitor.uuid}`,
      pool: { uuid: pool.uuid },
      load_balancer: { uuid: lb.uuid },
      type: 'http',
      http: { method: 'GET', url_path: '/livez', version: '1.0', expected_codes: ['200'], host: null },
    });
    expect((await call('GET', monitor.href)).body).toEqual(monitor);
    expect((await call<PoolMember>('GET', member.href)).body.monitor_status).toBe('up');

    // PATCH, one attribute each, then read back.
    expect((await call('PATCH', lb.href, { name: 'lb-renamed' })).status).toBe(204);
    expect((await call<Pool>('GET', pool.href)).body.load_balancer.name).toBe('lb-renamed');
    expect((await call('PATCH', pool.href, { tags: { a: 'b' } })).status).toBe(204);
    expect((await call('PATCH', member.href, { enabled: false })).status).toBe(204);
    expect((await call<PoolMember>('GET', member.href)).body).toMatchObject({ enabled: false });
    expect((await call('PATCH', listener.href, { allowed_cidrs: ['10.0.0.0/8', '2001:db8::/32'] })).status).toBe(204);
    expect((await call('PATCH', listener.href, { timeout_client_data_ms: 60000 })).status).toBe(204);
    expect((await call<Listener>('GET', listener.href)).body).toMatchObject({
      allowed_cidrs: ['10.0.0.0/8', '2001:db8::/32'],
      timeout_client_data_ms: 60000,
      timeout_member_connect_ms: 5000,
    });
    expect((await call('PATCH', monitor.href, { http: { url_path: '/healthz' } })).status).toBe(204);
    expect((await call('PATCH', monitor.href, { delay_s: 5 })).status).toBe(204);
    expect((await call<HealthMonitor>('GET', monitor.href)).body).toMatchObject({
      delay_s: 5,
      http: { method: 'GET', url_path: '/healthz', version: '1.0', expected_codes: ['200'], host: null },
    });

    // Lists contain the objects, in creation order, filterable by tag.
    expect((await call<Pool[]>('GET', '/v1/load-balancers/pools?tag:a=b')).body.map((p) => p.uuid)).toEqual([pool.uuid]);
    expect((await call<Pool[]>('GET', '/v1/load-balancers/pools?tag:a=c')).body).toEqual([]);
    expect((await call<Listener[]>('GET', '/v1/load-balancers/listeners')).body.map((l) => l.uuid)).toContain(listener.uuid);
    expect((await call<HealthMonitor[]>('GET', '/v1/load-balancers/health-monitors')).body.map((m) => m.uuid)).toContain(monitor.uuid);

    // Deleting the LB removes every child at once.
    expect((await call('DELETE', lb.href)).status).toBe(204);
    for (const href of [lb.href, pool.href, member.href, second.href, listener.href, monitor.href]) {
      expect(await call('GET', href)).toMatchObject({ status: 404, body: { detail: 'Not found.' } });
    }
    expect((await call<Pool[]>('GET', '/v1/load-balancers/pools')).body.map((p) => p.uuid)).not.toContain(pool.uuid);
    expect((await call('GET', `/v1/load-balancers/pools/${pool.uuid}/members`)).status).toBe(404);
  });

  /** A pool with a member, a monitor and two listeners on a new LB. */
  async function poolWithChildren(lbName: string) {
    const lb = await newLoadBalancer(lbName);
    const pool = await newPool(lb);
    const subnet = await privateSubnet();
    const member = await create<PoolMember>(`/v1/load-balancers/pools/${pool.uuid}/members`, {
      name: 'm',
      protocol_port: 80,
      address: '10.100.0.13',
      subnet: subnet.uuid,
    });
    const monitor = await create<HealthMonitor>('/v1/load-balancers/health-monitors', { pool: pool.uuid, type: 'tcp', http: {} });
    const listeners = await Promise.all(
      [443, 8443].map((port) =>
        create<Listener>('/v1/load-balancers/listeners', { pool: pool.uuid, name: `tcp/${port}`, protocol: 'tcp', protocol_port: port, allowed_cidrs: [] }),
      ),
    );
    return { lb, pool, member, monitor, listeners };
  }

  test('child deletes: member and monitor one by one, then the pool, which takes its listeners along', async () => {
    const { lb, pool, member, monitor, listeners } = await poolWithChildren('lb-children');
    expect((await call('DELETE', member.href)).status).toBe(204);
    expect((await call('GET', member.href)).status).toBe(404);
    expect((await call('DELETE', monitor.href)).status).toBe(204);
    expect((await call('GET', monitor.href)).status).toBe(404);
    expect((await call('DELETE', pool.href)).status).toBe(204);
    for (const listener of listeners) expect((await call('GET', listener.href)).status).toBe(404);
    const remaining = (await call<Listener[]>('GET', '/v1/load-balancers/listeners')).body;
    expect(remaining.filter((l) => l.load_balancer.uuid === lb.uuid)).toEqual([]);
    await call('DELETE', lb.href);
  });

  test('poolDeleteKeepsListeners: a pool delete leaves its listeners with pool: null (admin switch)', async () => {
    expect((await call('PATCH', `${sim.url}/_sim/behaviour`, { poolDeleteKeepsListeners: true })).body).toEqual({ poolDeleteKeepsListeners: true, onePatchAttribute: false, refuseOverlappingWrites: false });
    try {
      const { lb, pool, member, monitor, listeners } = await poolWithChildren('lb-keeps-listeners');
      expect((await call('DELETE', pool.href)).status).toBe(204);
      for (const gone of [member.href, monitor.href]) expect((await call('GET', gone)).status).toBe(404);
      for (const listener of listeners) expect((await call<Listener>('GET', listener.href)).body.pool).toBeNull();
      expect((await call('DELETE', listeners[0]!.href)).status).toBe(204);
      expect((await call('DELETE', listeners[0]!.href)).status).toBe(404);
      // The LB delete still takes the pool-less listener along.
      expect((await call('DELETE', lb.href)).status).toBe(204);
      expect((await call('GET', listeners[1]!.href)).status).toBe(404);
    } finally {
      sim.admin.setBehaviour({ poolDeleteKeepsListeners: false });
    }
    expect(sim.admin.behaviour()).toEqual({ poolDeleteKeepsListeners: false, onePatchAttribute: false, refuseOverlappingWrites: false });
    expect(await call('PATCH', `${sim.url}/_sim/behaviour`, { poolDeleteKeepsListener: true })).toMatchObject({
      status: 400,
      body: { detail: 'behaviour: unknown switch "poolDeleteKeepsListener" (expected one of: poolDeleteKeepsListeners, onePatchAttribute, refuseOverlappingWrites)' },
    });
  });

  test('onePatchAttribute: a PATCH of more than one attribute of a listener is refused, one attribute passes (admin switch)', async () => {
    const { lb, listeners } = await poolWithChildren('lb-one-attribute');
    const listener = listeners[0]!;
    expect((await call('PATCH', listener.href, { timeout_client_data_ms: 1000, allowed_cidrs: ['10.0.0.0/8'] })).status).toBe(204);
    sim.admin.setBehaviour({ onePatchAttribute: true });
    try {
      expect(await call('PATCH', listener.href, { timeout_client_data_ms: 2000, allowed_cidrs: [] })).toMatchObject({
        status: 400,
        body: { detail: 'Only one attribute can be changed at a time.' },
      });
      expect((await call<Listener>('GET', listener.href)).body).toMatchObject({ timeout_client_data_ms: 1000, allowed_cidrs: ['10.0.0.0/8'] });
      expect((await call('PATCH', listener.href, { timeout_client_data_ms: 2000 })).status).toBe(204);
    } finally {
      sim.admin.setBehaviour({ onePatchAttribute: false });
    }
    await call('DELETE', lb.href);
  });

  test('a member under another pool is not found', async () => {
    const lb = await newLoadBalancer('lb-two-pools');
    const poolA = await newPool(lb, 'a');
    const poolB = await newPool(lb, 'b');
    const subnet = await privateSubnet();
    const member = await create<PoolMember>(`/v1/load-balancers/pools/${poolA.uuid}/members`, {
      name: 'm',
      protocol_port: 80,
      address: '10.100.0.11',
      subnet: subnet.uuid,
    });
    expect(await call('GET', `/v1/load-balancers/pools/${poolB.uuid}/members/${member.uuid}`)).toMatchObject({
      status: 404,
      body: { detail: 'Not found.' },
    });
    await call('DELETE', lb.href);
  });

  test('lists are in creation order and filter with several ANDed tags', async () => {
    const a = await newLoadBalancer('order-a', { tags: { env: 'prod', team: 'x' } });
    const b = await newLoadBalancer('order-b', { tags: { env: 'prod' } });
    const c = await newLoadBalancer('order-c', { tags: { env: 'dev', team: 'x' } });
    const names = async (query: string) =>
      (await call<LoadBalancer[]>('GET', `/v1/load-balancers${query}`)).body.map((lb) => lb.name).filter((n) => n.startsWith('order-'));
    expect(await names('')).toEqual(['order-a', 'order-b', 'order-c']);
    expect(await names('?tag:env=prod')).toEqual(['order-a', 'order-b']);
    expect(await names('?tag%3Aenv=prod&tag%3Ateam')).toEqual(['order-a']);
    expect(await names('?tag:team=&tag:env=dev')).toEqual(['order-c']);
    expect(await names('/?tag:env=prod')).toEqual(['order-a', 'order-b']);
    expect((await call('PATCH', a.href, { tags: { env: 'dev' } })).status).toBe(204);
    expect(await names('?tag:team')).toEqual(['order-c']);
    for (const lb of [a, b, c]) await call('DELETE', lb.href);
  });
});

describe('floating IPs', () => {
  test('assign to a server, move to an LB, keep it unassigned when the LB is deleted', async () => {
    const [floatingIp] = (await call<FloatingIp[]>('GET', '/v1/floating-ips')).body;
    expect(floatingIp).toMatchObject({
      href: `${sim.url}/v1/floating-ips/5.102.150.123`,
      network: '5.102.150.123/32',
      ip_version: 4,
      server: null,
      load_balancer: null,
      region: { slug: 'rma' },
      type: 'regional',
      next_hop: null,
    });
    const server = (await call<Server[]>('GET', '/v1/servers')).body[0]!;
    expect((await call('PATCH', floatingIp!.href, { server: server.uuid })).status).toBe(204);
    expect((await call<FloatingIp>('GET', floatingIp!.href)).body).toMatchObject({
      server: { href: server.href, uuid: server.uuid, name: server.name },
      load_balancer: null,
      next_hop: '5.102.145.11',
    });

    const lb = await newLoadBalancer('lb-fip');
    expect((await call('PATCH', '/v1/floating-ips/5.102.150.123', { load_balancer: lb.uuid })).status).toBe(204);
    const moved = (await call<FloatingIp>('GET', floatingIp!.href)).body;
    expect(moved).toMatchObject({ server: null, load_balancer: { uuid: lb.uuid, name: 'lb-fip' } });
    expect(moved.next_hop).toBe(lb.vip_addresses[0]!.address);

    await call('DELETE', lb.href);
    expect((await call<FloatingIp>('GET', floatingIp!.href)).body).toMatchObject({
      server: null,
      load_balancer: null,
      next_hop: null,
    });
  });

  test('an IPv6 floating IP is addressed by IP, with or without percent-encoded colons', async () => {
    const direct = await call<FloatingIp>('GET', '/v1/floating-ips/2a06:c01:ffff::123');
    expect(direct.status).toBe(200);
    expect(direct.body).toMatchObject({ network: '2a06:c01:ffff::123/128', type: 'global', region: null });
    expect((await call('GET', '/v1/floating-ips/2a06%3Ac01%3Affff%3A%3A123')).body).toEqual(direct.body);
    const lb = await newLoadBalancer('lb-fip6');
    expect((await call('PATCH', '/v1/floating-ips/2a06%3Ac01%3Affff%3A%3A123', { load_balancer: lb.uuid })).status).toBe(204);
    expect((await call<FloatingIp>('GET', direct.body.href)).body.next_hop).toBe(lb.vip_addresses[1]!.address);
    await call('DELETE', lb.href);
  });

  test('create, tag-filter and delete a floating IP', async () => {
    const created = await create<FloatingIp>('/v1/floating-ips', { ip_version: 4, region: 'rma', tags: { svc: 'web' } });
    expect(created).toMatchObject({ ip_version: 4, type: 'regional', region: { slug: 'rma' }, tags: { svc: 'web' } });
    expect(created.network).toMatch(/^5\.102\.150\.\d+\/32$/);
    expect((await call('GET', created.href)).body).toEqual(created);
    expect((await call<FloatingIp[]>('GET', '/v1/floating-ips?tag:svc=web')).body).toEqual([created]);
    expect((await call('DELETE', created.href)).status).toBe(204);
    expect((await call('GET', created.href)).status).toBe(404);
  });

  test('deleting a server (admin) leaves its floating IPs unassigned', async () => {
    const local = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), lbProvisionMs: 0, ...testSimWorld() });
    try {
      const servers = (await (await fetch(`${local.url}/v1/servers`)).json()) as Server[];
      const target = servers[2]!;
      const patch = await fetch(`${local.url}/v1/floating-ips/5.102.150.123`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ server: target.uuid }),
      });
      expect(patch.status).toBe(204);
      expect((await fetch(`${local.url}/_sim/servers/${target.uuid}`, { method: 'DELETE' })).status).toBe(204);
      expect((await fetch(target.href)).status).toBe(404);
      const floatingIp = (await (await fetch(`${local.url}/v1/floating-ips/5.102.150.123`)).json()) as FloatingIp;
      expect(floatingIp).toMatchObject({ server: null, load_balancer: null, next_hop: null });
    } finally {
      await local.stop();
    }
  });
});

describe('server lifecycle', () => {
  const serverBody = (extra: Record<string, unknown> = {}) => ({
    name: 'web-1',
    flavor: 'flex-4-2',
    image: 'debian-13',
    zone: 'rma1',
    ssh_keys: ['ssh-ed25519 AAAA… test'],
    ...extra,
  });

  test('create answers 201 with what a later GET shows: flavor, image, volume, a public IPv4 + IPv6', async () => {
    const server = await create<Server>('/v1/servers', serverBody({ volume_size_gb: 50, tags: { role: 'web' } }));
    expect(server).toMatchObject({
      name: 'web-1',
      status: 'running',
      zone: { slug: 'rma1' },
      flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
      image: { slug: 'debian-13', name: 'Debian 13', operating_system: 'Debian', default_username: 'debian' },
      tags: { role: 'web' },
    });
    expect((server as unknown as { volumes: { size_gb: number }[] }).volumes[0]!.size_gb).toBe(50);
    expect(server.interfaces).toHaveLength(1);
    const [iface] = server.interfaces;
    expect(iface!.type).toBe('public');
    expect(iface!.network.name).toBe('public');
    expect(iface!.addresses.map((a) => [a.version, a.subnet.cidr, a.prefix_length])).toEqual([
      [4, '198.18.16.0/20', 20],
      [6, '2a06:c01:1:16::/64', 64],
    ]);
    expect(iface!.addresses[0]!.reverse_ptr).toMatch(/\.cust\.cloudscale\.ch$/);
    expect((await call<Server>('GET', server.href)).body).toEqual(server);
    expect((await call<Server[]>('GET', '/v1/servers?tag:role=web')).body.map((s) => s.uuid)).toEqual([server.uuid]);
    expect((await call('DELETE', server.href)).status).toBe(204);
    expect((await call('GET', server.href)).status).toBe(404);
  });

  test('interfaces: public, a private network with a fixed address, a subnet alone, layer 2 only', async () => {
    const subnet = await privateSubnet();
    const network = (await create<Network>('/v1/networks', { name: 'second', zone: 'rma1' }));
    const server = await create<Server>(
      '/v1/servers',
      serverBody({
        name: 'multi.example.com',
        use_ipv6: false,
        interfaces: [
          { network: 'public' },
          { network: subnet.network.uuid, addresses: [{ subnet: subnet.uuid, address: '10.100.0.50' }] },
          { addresses: [{ subnet: network.subnets[0]!.uuid }] },
          { network: network.uuid, addresses: [] },
        ],
      }),
    );
    expect(server.interfaces.map((i) => [i.type, i.network.uuid, i.addresses.map((a) => `${a.address}/${a.prefix_length}`)])).toEqual([
      ['public', server.interfaces[0]!.network.uuid, [expect.stringMatching(/^198\.18\.(1[6-9]|2\d|3[01])\.\d+\/20$/)]],
      ['private', subnet.network.uuid, ['10.100.0.50/24']],
      ['private', network.uuid, ['172.16.0.1/24']],
      ['private', network.uuid, []],
    ]);
    expect(server.interfaces[1]!.addresses[0]).toMatchObject({ gateway: null, reverse_ptr: null, subnet: { uuid: subnet.uuid, cidr: '10.100.0.0/24' } });
    // The fixed address is now taken.
    const clash = await call('POST', '/v1/servers', serverBody({ interfaces: [{ addresses: [{ subnet: subnet.uuid, address: '10.100.0.50' }] }] }));
    expect(clash).toMatchObject({ status: 400, body: { 'interfaces[0].addresses[0].address': 'IP address 10.100.0.50 is already in use.' } });
    await call('DELETE', server.href);
    await call('DELETE', network.href);
  });

  test('without interfaces: use_public_network and use_private_network pick the networks', async () => {
    const subnet = await privateSubnet();
    const server = await create<Server>('/v1/servers', serverBody({ use_public_network: false, use_private_network: true }));
    expect(server.interfaces.map((i) => [i.type, i.network.name])).toEqual([['private', 'k8s-private']]);
    expect(server.interfaces[0]!.addresses[0]!.subnet.uuid).toBe(subnet.uuid);
    await call('DELETE', server.href);
  });

  test('PATCH interfaces replaces the list, keeping the addresses an interface had', async () => {
    const subnet = await privateSubnet();
    const server = await create<Server>('/v1/servers', serverBody({ interfaces: [{ network: 'public' }, { network: subnet.network.uuid }] }));
    const [publicIface, privateIface] = server.interfaces;
    expect((await call('PATCH', server.href, { interfaces: [{ network: subnet.network.uuid }] })).status).toBe(204);
    let now = (await call<Server>('GET', server.href)).body;
    expect(now.interfaces).toEqual([privateIface]);
    expect((await call('PATCH', server.href, { interfaces: [{ network: 'public' }, { network: subnet.network.uuid }] })).status).toBe(204);
    now = (await call<Server>('GET', server.href)).body;
    expect(now.interfaces[1]).toEqual(privateIface);
    expect(now.interfaces[0]!.type).toBe('public');
    expect(now.interfaces[0]!.addresses).toHaveLength(publicIface!.addresses.length);
    expect((await call('PATCH', server.href, { name: 'renamed.example.com' })).status).toBe(204);
    expect((await call<Server>('GET', server.href)).body.name).toBe('renamed.example.com');
    expect(await call('PATCH', server.href, { status: 'stopped' })).toMatchObject({
      status: 400,
      body: { status: 'The status changes through the start, stop and reboot actions.' },
    });
    await call('DELETE', server.href);
  });

  test('a new server is changing for the action time; start, stop and reboot; floating IPs follow it', async () => {
    const local = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), serverActionMs: 60_000 });
    try {
      const post = await fetch(`${local.url}/v1/servers`, { method: 'POST', body: JSON.stringify(serverBody()) });
      const server = (await post.json()) as Server;
      expect(server.status).toBe('changing');
      expect((await fetch(`${local.url}/v1/servers/${server.uuid}/stop`, { method: 'POST' })).status).toBe(400);
    } finally {
      await local.stop();
    }
    const server = await create<Server>('/v1/servers', serverBody({ name: 'actions' }));
    for (const [action, status] of [['stop', 'stopped'], ['reboot', 'running'], ['stop', 'stopped'], ['start', 'running']]) {
      expect((await call('POST', `${server.href}/${action}`)).status).toBe(204);
      expect((await call<Server>('GET', server.href)).body.status, action).toBe(status);
    }
    const floatingIp = await create<FloatingIp>('/v1/floating-ips', { ip_version: 4, server: server.uuid });
    expect(floatingIp).toMatchObject({ server: { uuid: server.uuid, name: 'actions' }, next_hop: server.interfaces[0]!.addresses[0]!.address });
    await call('DELETE', server.href);
    expect((await call<FloatingIp>('GET', floatingIp.href)).body).toMatchObject({ server: null, next_hop: null });
    await call('DELETE', floatingIp.href);
  });

  test('at most 15 floating IPs point at one server', async () => {
    const server = await create<Server>('/v1/servers', serverBody({ name: 'many-ips' }));
    const created: FloatingIp[] = [];
    for (let i = 0; i < 15; i++) created.push(await create<FloatingIp>('/v1/floating-ips', { ip_version: 4, server: server.uuid }));
    expect(await call('POST', '/v1/floating-ips', { ip_version: 6, server: server.uuid })).toMatchObject({
      status: 400,
      body: { server: 'The server already has 15 floating IPs, the most it can have.' },
    });
    // Re-assigning one of its own floating IPs to it is no new one.
    expect((await call('PATCH', created[0]!.href, { server: server.uuid })).status).toBe(204);
    await call('DELETE', server.href);
    for (const floatingIp of created) await call('DELETE', floatingIp.href);
  });

  test('GET /v1/flavors lists the flavors with vCPUs, memory and zones', async () => {
    const flavors = (await call<{ slug: string }[]>('GET', '/v1/flavors')).body;
    expect(flavors.find((f) => f.slug === 'flex-4-2')).toEqual({
      slug: 'flex-4-2',
      name: 'Flex-4-2',
      vcpu_count: 2,
      memory_gb: 4,
      gpu: null,
      zones: [{ slug: 'rma1' }, { slug: 'lpg1' }],
    });
    expect(flavors.map((f) => f.slug)).toContain('plus-32-16');
  });

  test("a member's monitor_status follows the server with its address", async () => {
    const lb = await newLoadBalancer('lb-health');
    const pool = await newPool(lb);
    const subnet = await privateSubnet();
    await create('/v1/load-balancers/health-monitors', { pool: pool.uuid, type: 'tcp', http: {} });
    const member = (address: string, extra = {}) =>
      create<PoolMember>(`/v1/load-balancers/pools/${pool.uuid}/members`, { name: address, protocol_port: 80, address, subnet: subnet.uuid, ...extra });
    const server = await create<Server>('/v1/servers', serverBody({ name: 'backend', interfaces: [{ network: subnet.network.uuid }] }));
    const onServer = await member(server.interfaces[0]!.addresses[0]!.address);
    const noServer = await member('10.100.0.200');
    const disabled = await member('10.100.0.11', { enabled: false });
    const statuses = async (): Promise<string[]> =>
      Promise.all([onServer, noServer, disabled].map(async (m) => (await call<PoolMember>('GET', m.href)).body.monitor_status));
    expect(await statuses()).toEqual(['up', 'up', 'unknown']);
    await call('POST', `${server.href}/stop`);
    expect(await statuses()).toEqual(['down', 'up', 'unknown']);
    await call('POST', `${server.href}/start`);
    expect(await statuses()).toEqual(['up', 'up', 'unknown']);
    await call('DELETE', server.href);
    expect(await statuses()).toEqual(['up', 'up', 'unknown']);
    await call('DELETE', lb.href);
  });
});
