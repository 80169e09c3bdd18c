// Each constraint of docs/cloudscale-api.md, with the exact error body the simulator answers:
// DRF's messages, one string per field (nested errors under their path). Table-driven: one row
// per bad request.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoadBalancer, Pool, Server, Subnet } from '../../src/core/cloudscale/types.js';
import { loadSeedFile, startSimulator, type Simulator } from '../../src/sim/index.js';
import { testSimWorld } from '../support/sim-world.js';

let sim: Simulator;
let lb: LoadBalancer;
let pool: Pool;
let subnet: Subnet;
let servers: Server[];
let monitoredPool: Pool;
let listenerHref: string;
let monitorHref: string;
let httpMonitorHref: string;
let memberHref: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(path.startsWith('http') ? path : `${sim.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function create(path: string, body: unknown): Promise<any> {
  const answer = await call('POST', path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

const UNKNOWN = '11111111-2222-4333-8444-555555555555';

beforeAll(async () => {
  sim = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), lbProvisionMs: 0, ...testSimWorld() });
  servers = (await call('GET', '/v1/servers')).body;
  subnet = (await call('GET', '/v1/subnets')).body[0];
  lb = await create('/v1/load-balancers', { name: 'lb', flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] });
  pool = await create('/v1/load-balancers/pools', { name: 'tcp', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' });
  monitoredPool = await create('/v1/load-balancers/pools', { name: 'mon', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' });
  monitorHref = (await create('/v1/load-balancers/health-monitors', { pool: monitoredPool.uuid, type: 'tcp', http: {} })).href;
  const httpPool = await create('/v1/load-balancers/pools', { name: 'http', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' });
  httpMonitorHref = (await create('/v1/load-balancers/health-monitors', { pool: httpPool.uuid, type: 'http', http: { version: '1.0' } })).href;
  listenerHref = (
    await create('/v1/load-balancers/listeners', { pool: pool.uuid, name: 'tcp/80', protocol: 'tcp', protocol_port: 80, allowed_cidrs: [] })
  ).href;
  memberHref = (
    await create(`/v1/load-balancers/pools/${pool.uuid}/members`, { name: 'm', protocol_port: 30080, address: '10.100.0.11', subnet: subnet.uuid })
  ).href;
});
afterAll(async () => {
  await sim.stop();
});

interface Row {
  name: string;
  method: string;
  path: () => string;
  body: () => unknown;
  status: number;
  answer: unknown;
}

const lbBody = (extra: Record<string, unknown>) => ({ name: 'x', flavor: 'lb-standard', zone: 'rma1', vip_addresses: [], ...extra });
const poolBody = (extra: Record<string, unknown>) => ({ name: 'p', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp', ...extra });
const listenerBody = (extra: Record<string, unknown>) => ({ name: 'l', pool: pool.uuid, protocol: 'tcp', protocol_port: 8080, allowed_cidrs: [], ...extra });
const memberBody = (extra: Record<string, unknown>) => ({ name: 'm', protocol_port: 8080, address: '10.100.0.12', subnet: subnet.uuid, ...extra });
const members = () => `/v1/load-balancers/pools/${pool.uuid}/members`;
const serverBody = (extra: Record<string, unknown>) => ({ name: 'web-1', flavor: 'flex-4-2', image: 'debian-12', zone: 'rma1', ...extra });

const rows: Row[] = [
  // load balancers
  { name: 'LB without name', method: 'POST', path: () => '/v1/load-balancers', body: () => ({ flavor: 'lb-standard' }), status: 400, answer: { name: 'This field is required.' } },
  { name: 'LB with unknown flavor', method: 'POST', path: () => '/v1/load-balancers', body: () => lbBody({ flavor: 'lb-huge' }), status: 400, answer: { flavor: '"lb-huge" is not a valid choice.' } },
  { name: 'LB with unknown zone', method: 'POST', path: () => '/v1/load-balancers', body: () => lbBody({ zone: 'xyz1' }), status: 400, answer: { zone: '"xyz1" is not a valid choice. Choose one of rma1, lpg1.' } },
  { name: 'VIP subnet not a UUID', method: 'POST', path: () => '/v1/load-balancers', body: () => lbBody({ vip_addresses: [{ subnet: 'nope' }] }), status: 400, answer: { 'vip_addresses[0].subnet': 'Must be a valid UUID.' } },
  { name: 'VIP subnet unknown', method: 'POST', path: () => '/v1/load-balancers', body: () => lbBody({ vip_addresses: [{ subnet: UNKNOWN }] }), status: 400, answer: { 'vip_addresses[0].subnet': `Object with uuid=${UNKNOWN} does not exist.` } },
  { name: 'VIP address outside the subnet', method: 'POST', path: () => '/v1/load-balancers', body: () => lbBody({ vip_addresses: [{ subnet: subnet.uuid, address: '10.9.9.9' }] }), status: 400, answer: { 'vip_addresses[0].address': 'IP address 10.9.9.9 is not a valid IP for the specified subnet.' } },
  { name: 'VIP subnet in another zone', method: 'POST', path: () => '/v1/load-balancers', body: () => lbBody({ zone: 'lpg1', vip_addresses: [{ subnet: subnet.uuid }] }), status: 400, answer: { 'vip_addresses[0].subnet': 'The subnet is not in zone lpg1 of the load balancer.' } },
  { name: 'LB PATCH of an immutable field', method: 'PATCH', path: () => lb.href, body: () => ({ flavor: 'lb-standard' }), status: 400, answer: { flavor: 'This field cannot be changed after creation.' } },
  { name: 'LB PATCH of the VIPs', method: 'PATCH', path: () => lb.href, body: () => ({ vip_addresses: [] }), status: 400, answer: { vip_addresses: 'This field cannot be changed after creation.' } },
  { name: 'unknown LB', method: 'GET', path: () => `/v1/load-balancers/${UNKNOWN}`, body: () => undefined, status: 404, answer: { detail: 'Not found.' } },
  { name: 'PATCH unknown LB', method: 'PATCH', path: () => `/v1/load-balancers/${UNKNOWN}`, body: () => ({ name: 'x' }), status: 404, answer: { detail: 'Not found.' } },
  { name: 'DELETE unknown LB', method: 'DELETE', path: () => `/v1/load-balancers/${UNKNOWN}`, body: () => undefined, status: 404, answer: { detail: 'Not found.' } },
  { name: 'malformed JSON', method: 'POST', path: () => '/v1/load-balancers', body: () => '{"name":', status: 400, answer: { detail: expect.stringMatching(/^JSON parse error - /) } },
  { name: 'a list instead of an object', method: 'POST', path: () => '/v1/load-balancers', body: () => [1], status: 400, answer: { non_field_errors: 'Invalid data. Expected a dictionary, but got list.' } },
  { name: 'unsupported method', method: 'PUT', path: () => '/v1/load-balancers', body: () => ({}), status: 405, answer: { detail: 'Method "PUT" not allowed.' } },
  { name: 'unknown path', method: 'GET', path: () => '/v1/volcanoes', body: () => undefined, status: 404, answer: { detail: 'Not found.' } },
  // pools
  { name: 'pool with unknown LB', method: 'POST', path: () => '/v1/load-balancers/pools', body: () => poolBody({ load_balancer: UNKNOWN }), status: 400, answer: { load_balancer: `Object with uuid=${UNKNOWN} does not exist.` } },
  { name: 'pool with malformed LB uuid', method: 'POST', path: () => '/v1/load-balancers/pools', body: () => poolBody({ load_balancer: 'abc' }), status: 400, answer: { load_balancer: 'Must be a valid UUID.' } },
  { name: 'pool with bad algorithm and protocol', method: 'POST', path: () => '/v1/load-balancers/pools', body: () => poolBody({ algorithm: 'random', protocol: 'http' }), status: 400, answer: { algorithm: 'Expect one of round_robin, least_connections, source_ip.', protocol: 'Expect one of tcp, proxy, proxyv2, udp.' } },
  { name: 'pool without required fields', method: 'POST', path: () => '/v1/load-balancers/pools', body: () => ({}), status: 400, answer: { name: 'This field is required.', load_balancer: 'This field is required.', algorithm: 'This field is required.', protocol: 'This field is required.' } },
  { name: 'pool PATCH of algorithm', method: 'PATCH', path: () => pool.href, body: () => ({ algorithm: 'source_ip' }), status: 400, answer: { algorithm: 'This field cannot be changed after creation.' } },
  // members
  { name: 'member without required fields', method: 'POST', path: members, body: () => ({}), status: 400, answer: { name: 'This field is required.', protocol_port: 'This field is required.', address: 'This field is required.', subnet: 'This field is required.' } },
  { name: 'member address outside its subnet', method: 'POST', path: members, body: () => memberBody({ address: '10.9.9.9' }), status: 400, answer: { address: 'IP address 10.9.9.9 is not a valid IP for the specified subnet.' } },
  { name: 'member with unknown subnet', method: 'POST', path: members, body: () => memberBody({ subnet: UNKNOWN }), status: 400, answer: { subnet: `Object with uuid=${UNKNOWN} does not exist.` } },
  { name: 'member with a bad address', method: 'POST', path: members, body: () => memberBody({ address: '10.100.0.300' }), status: 400, answer: { address: 'Enter a valid IPv4 or IPv6 address.' } },
  { name: 'member port out of range', method: 'POST', path: members, body: () => memberBody({ protocol_port: 70000 }), status: 400, answer: { protocol_port: 'Ensure this value is less than or equal to 65535.' } },
  { name: 'member port not a number', method: 'POST', path: members, body: () => memberBody({ protocol_port: 'http' }), status: 400, answer: { protocol_port: 'A valid integer is required.' } },
  { name: 'member clash on address and port', method: 'POST', path: members, body: () => memberBody({ address: '10.100.0.11', protocol_port: 30080 }), status: 400, answer: { detail: 'The pool already has a member with address 10.100.0.11 and protocol_port 30080.' } },
  { name: 'members of an unknown pool', method: 'GET', path: () => `/v1/load-balancers/pools/${UNKNOWN}/members`, body: () => undefined, status: 404, answer: { detail: 'Not found.' } },
  { name: 'member PATCH of its address', method: 'PATCH', path: () => memberHref, body: () => ({ address: '10.100.0.12' }), status: 400, answer: { address: 'This field cannot be changed after creation.' } },
  { name: 'member enabled not a boolean', method: 'PATCH', path: () => memberHref, body: () => ({ enabled: 'yes' }), status: 400, answer: { enabled: 'Must be a valid boolean.' } },
  // listeners
  { name: 'listener with a bare IP in allowed_cidrs', method: 'POST', path: () => '/v1/load-balancers/listeners', body: () => listenerBody({ allowed_cidrs: ['10.0.0.0/8', '1.1.1.1'] }), status: 400, answer: { 'allowed_cidrs.1': 'Enter a valid network address in CIDR notation.' } },
  { name: 'listener port out of range', method: 'POST', path: () => '/v1/load-balancers/listeners', body: () => listenerBody({ protocol_port: 11111111 }), status: 400, answer: { protocol_port: 'The protocol_port must be between 1 and 65535.' } },
  { name: 'listener port zero', method: 'POST', path: () => '/v1/load-balancers/listeners', body: () => listenerBody({ protocol_port: 0 }), status: 400, answer: { protocol_port: 'The protocol_port must be between 1 and 65535.' } },
  { name: 'listener with bad protocol', method: 'POST', path: () => '/v1/load-balancers/listeners', body: () => listenerBody({ protocol: 'http' }), status: 400, answer: { protocol: 'Expect one of tcp, udp.' } },
  { name: 'listener with unknown pool', method: 'POST', path: () => '/v1/load-balancers/listeners', body: () => listenerBody({ pool: UNKNOWN }), status: 400, answer: { pool: `Object with uuid=${UNKNOWN} does not exist.` } },
  { name: 'listener port taken on this LB and protocol', method: 'POST', path: () => '/v1/load-balancers/listeners', body: () => listenerBody({ protocol_port: 80 }), status: 400, answer: { protocol_port: 'The load balancer already has a tcp listener on port 80.' } },
  { name: 'listener PATCH of its pool', method: 'PATCH', path: () => listenerHref, body: () => ({ pool: monitoredPool.uuid }), status: 400, answer: { pool: 'This field cannot be changed after creation.' } },
  { name: 'listener PATCH with a bare IP', method: 'PATCH', path: () => listenerHref, body: () => ({ allowed_cidrs: ['192.0.2.1'] }), status: 400, answer: { 'allowed_cidrs.0': 'Enter a valid network address in CIDR notation.' } },
  // health monitors
  { name: 'monitor without pool and type', method: 'POST', path: () => '/v1/load-balancers/health-monitors', body: () => ({ delay_s: 2 }), status: 400, answer: { pool: 'This field is required.', type: 'This field is required.' } },
  { name: 'monitor with bad type', method: 'POST', path: () => '/v1/load-balancers/health-monitors', body: () => ({ pool: pool.uuid, type: 'icmp' }), status: 400, answer: { type: '"icmp" is not a valid choice.' } },
  { name: 'second monitor on a pool', method: 'POST', path: () => '/v1/load-balancers/health-monitors', body: () => ({ pool: monitoredPool.uuid, type: 'tcp', http: {} }), status: 400, answer: { pool: 'This pool already has a health monitor.' } },
  { name: 'HTTP 1.0 monitor with host', method: 'POST', path: () => '/v1/load-balancers/health-monitors', body: () => ({ pool: pool.uuid, type: 'http', http: { version: '1.0', host: 'example.com' } }), status: 400, answer: { 'http.host': 'The host argument can not be used with HTTP version 1.0.' } },
  { name: 'monitor with bad HTTP method and version', method: 'POST', path: () => '/v1/load-balancers/health-monitors', body: () => ({ pool: pool.uuid, type: 'http', http: { method: 'FETCH', version: '2' } }), status: 400, answer: { 'http.method': '"FETCH" is not a valid choice.', 'http.version': '"2" is not a valid choice.' } },
  { name: 'monitor threshold out of range', method: 'POST', path: () => '/v1/load-balancers/health-monitors', body: () => ({ pool: pool.uuid, type: 'tcp', up_threshold: 11 }), status: 400, answer: { up_threshold: 'Ensure this value is less than or equal to 10.' } },
  { name: 'monitor PATCH of type', method: 'PATCH', path: () => monitorHref, body: () => ({ type: 'http' }), status: 400, answer: { type: 'This field cannot be changed after creation.' } },
  { name: 'monitor PATCH of http.version', method: 'PATCH', path: () => httpMonitorHref, body: () => ({ http: { version: '1.1' } }), status: 400, answer: { 'http.version': 'This field cannot be changed after creation.' } },
  { name: 'monitor PATCH adding host to HTTP 1.0', method: 'PATCH', path: () => httpMonitorHref, body: () => ({ http: { host: 'example.com' } }), status: 400, answer: { 'http.host': 'The host argument can not be used with HTTP version 1.0.' } },
  // servers
  { name: 'server create without name, flavor and image', method: 'POST', path: () => '/v1/servers', body: () => ({ zone: 'rma1' }), status: 400, answer: { name: 'This field is required.', flavor: 'This field is required.', image: 'This field is required.' } },
  { name: 'server name that is no host name', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ name: 'web_1' }), status: 400, answer: { name: 'Enter a valid host name or FQDN: letters, digits and hyphens, in labels separated by dots.' } },
  { name: 'server with an unknown flavor and image', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ flavor: 'flex-3-3', image: 'windows' }), status: 400, answer: { flavor: '"flex-3-3" is not a valid choice.', image: '"windows" is not a valid choice.' } },
  { name: 'server with an unknown zone and a small root volume', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ zone: 'xyz1', volume_size_gb: 5 }), status: 400, answer: { zone: '"xyz1" is not a valid choice. Choose one of rma1, lpg1.', volume_size_gb: 'Ensure this value is greater than or equal to 10.' } },
  { name: 'server interface on an unknown network', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ interfaces: [{ network: 'public' }, { network: UNKNOWN }] }), status: 400, answer: { 'interfaces[1].network': `Object with uuid=${UNKNOWN} does not exist.` } },
  { name: 'server interface on a network of another zone', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ zone: 'lpg1', interfaces: [{ network: subnet.network.uuid }] }), status: 400, answer: { 'interfaces[0].network': 'The network is in zone rma1, not in zone lpg1 of the server.' } },
  { name: 'server interface without network or subnet', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ interfaces: [{}] }), status: 400, answer: { 'interfaces[0].network': 'This field is required.' } },
  { name: 'server address outside its subnet', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ interfaces: [{ addresses: [{ subnet: subnet.uuid, address: '10.9.9.9' }] }] }), status: 400, answer: { 'interfaces[0].addresses[0].address': 'IP address 10.9.9.9 is not a valid IP for the specified subnet.' } },
  { name: 'server address with a malformed subnet', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ interfaces: [{ addresses: [{ subnet: 'k8s-private' }] }] }), status: 400, answer: { 'interfaces[0].addresses[0].subnet': 'Must be a valid UUID.' } },
  { name: 'server addresses chosen on the public network', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ interfaces: [{ network: 'public', addresses: [{ subnet: subnet.uuid }] }] }), status: 400, answer: { 'interfaces[0].addresses': 'Addresses on the public network are assigned by the cloud and cannot be chosen.' } },
  { name: 'server on a private network where the zone has none', method: 'POST', path: () => '/v1/servers', body: () => serverBody({ zone: 'lpg1', use_private_network: true }), status: 400, answer: { use_private_network: 'There is no private network in zone lpg1.' } },
  { name: 'server PATCH of the name to no host name', method: 'PATCH', path: () => servers[0]!.href, body: () => ({ name: 'a b' }), status: 400, answer: { name: 'Enter a valid host name or FQDN: letters, digits and hyphens, in labels separated by dots.' } },
  { name: 'server PATCH of the status', method: 'PATCH', path: () => servers[0]!.href, body: () => ({ status: 'stopped' }), status: 400, answer: { status: 'The status changes through the start, stop and reboot actions.' } },
  { name: 'server PATCH with two attributes', method: 'PATCH', path: () => servers[0]!.href, body: () => ({ name: 'a', tags: {} }), status: 400, answer: { detail: 'Only one attribute can be changed at a time.' } },
  { name: 'server flavor change while running', method: 'PATCH', path: () => servers[0]!.href, body: () => ({ flavor: 'flex-8-4' }), status: 400, answer: { detail: 'The flavor of a server can only be changed if its status is "stopped".' } },
  { name: 'server name too long', method: 'PATCH', path: () => servers[0]!.href, body: () => ({ name: 'n'.repeat(64) }), status: 400, answer: { name: 'Ensure this field has no more than 63 characters.' } },
  // networks and subnets
  { name: 'network without name', method: 'POST', path: () => '/v1/networks', body: () => ({ zone: 'rma1' }), status: 400, answer: { name: 'This field is required.' } },
  { name: 'network MTU too large', method: 'POST', path: () => '/v1/networks', body: () => ({ name: 'n', mtu: 9001 }), status: 400, answer: { mtu: 'Ensure this value is less than or equal to 9000.' } },
  { name: 'network in an unknown zone', method: 'POST', path: () => '/v1/networks', body: () => ({ name: 'n', zone: 'zrh1' }), status: 400, answer: { zone: '"zrh1" is not a valid choice. Choose one of rma1, lpg1.' } },
  { name: 'subnet smaller than /24', method: 'POST', path: () => '/v1/subnets', body: () => ({ network: subnet.network.uuid, cidr: '10.100.1.0/25' }), status: 400, answer: { cidr: 'The subnet must be at least a /24.' } },
  { name: 'subnet that is not a CIDR', method: 'POST', path: () => '/v1/subnets', body: () => ({ network: subnet.network.uuid, cidr: '10.100.1.1' }), status: 400, answer: { cidr: 'Enter a valid network address in CIDR notation.' } },
  { name: 'subnet overlapping in its network', method: 'POST', path: () => '/v1/subnets', body: () => ({ network: subnet.network.uuid, cidr: '10.100.0.0/23' }), status: 400, answer: { cidr: 'The subnet overlaps 10.100.0.0/24 of the same network.' } },
  { name: 'subnet with 0.0.0.0 as DNS server', method: 'POST', path: () => '/v1/subnets', body: () => ({ network: subnet.network.uuid, cidr: '10.100.4.0/24', dns_servers: ['0.0.0.0'] }), status: 400, answer: { dns_servers: '0.0.0.0 is not a valid DNS server address.' } },
  { name: 'subnet gateway outside the subnet', method: 'PATCH', path: () => subnet.href, body: () => ({ gateway_address: '10.9.9.1' }), status: 400, answer: { gateway_address: 'IP address 10.9.9.1 is not a valid IP for the specified subnet.' } },
  { name: 'subnet PATCH of its cidr', method: 'PATCH', path: () => subnet.href, body: () => ({ cidr: '10.100.0.0/16' }), status: 400, answer: { cidr: 'This field cannot be changed after creation.' } },
  { name: 'network PATCH of its zone', method: 'PATCH', path: () => subnet.network.href, body: () => ({ zone: 'lpg1' }), status: 400, answer: { zone: 'This field cannot be changed after creation.' } },
  // floating IPs
  { name: 'FIP to a server and an LB at once', method: 'PATCH', path: () => '/v1/floating-ips/5.102.150.123', body: () => ({ server: servers[0]!.uuid, load_balancer: lb.uuid }), status: 400, answer: { detail: 'A floating IP can be assigned to either a server or a load balancer, not both.' } },
  { name: 'FIP unassigned', method: 'PATCH', path: () => '/v1/floating-ips/5.102.150.123', body: () => ({ server: null }), status: 400, answer: { detail: 'A floating IP cannot be unassigned; assign it to another server or load balancer instead.' } },
  { name: 'FIP to an unknown LB', method: 'PATCH', path: () => '/v1/floating-ips/5.102.150.123', body: () => ({ load_balancer: UNKNOWN }), status: 400, answer: { load_balancer: `Object with uuid=${UNKNOWN} does not exist.` } },
  { name: 'FIP to a malformed server uuid', method: 'PATCH', path: () => '/v1/floating-ips/5.102.150.123', body: () => ({ server: 'node-1' }), status: 400, answer: { server: 'Must be a valid UUID.' } },
  { name: 'FIP PATCH of its type', method: 'PATCH', path: () => '/v1/floating-ips/5.102.150.123', body: () => ({ type: 'global' }), status: 400, answer: { type: 'This field cannot be changed after creation.' } },
  { name: 'unknown FIP', method: 'GET', path: () => '/v1/floating-ips/192.0.2.1', body: () => undefined, status: 404, answer: { detail: 'Not found.' } },
  { name: 'FIP create without ip_version', method: 'POST', path: () => '/v1/floating-ips', body: () => ({}), status: 400, answer: { ip_version: 'This field is required.' } },
  { name: 'FIP create with a /56 IPv4', method: 'POST', path: () => '/v1/floating-ips', body: () => ({ ip_version: 4, prefix_length: 56 }), status: 400, answer: { prefix_length: 'Only IPv6 floating networks with prefix length 56 are supported.' } },
];

describe('constraints answer one string per field', () => {
  test.each(rows)('$name', async (row) => {
    const answer = await call(row.method, row.path(), row.body());
    expect(answer).toEqual({ status: row.status, body: row.answer });
  });
});

describe('constraints that need more than one request', () => {
  test('a regional floating IP cannot leave its region', async () => {
    const lpgLb = await create('/v1/load-balancers', { name: 'lpg', flavor: 'lb-standard', zone: 'lpg1', vip_addresses: [] });
    const answer = await call('PATCH', '/v1/floating-ips/5.102.150.123', { load_balancer: lpgLb.uuid });
    expect(answer).toEqual({
      status: 400,
      body: { load_balancer: 'The target is in zone lpg1, outside the region rma of this regional floating IP.' },
    });
    // A global one can go anywhere.
    expect((await call('PATCH', '/v1/floating-ips/2a06:c01:ffff::123', { load_balancer: lpgLb.uuid })).status).toBe(204);
    await call('DELETE', lpgLb.href);
  });

  test('a /56 floating network cannot be assigned to an LB', async () => {
    const network = await create('/v1/floating-ips', { ip_version: 6, prefix_length: 56, region: 'rma' });
    expect(network.network).toMatch(/\/56$/);
    expect(await call('PATCH', network.href, { load_balancer: lb.uuid })).toEqual({
      status: 400,
      body: { load_balancer: 'Only single-address floating IPs can be assigned to a load balancer.' },
    });
    await call('DELETE', network.href);
  });

  test('a TCP and a UDP listener may share a port', async () => {
    const udpPool = await create('/v1/load-balancers/pools', { name: 'udp', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'udp' });
    const udp = await call('POST', '/v1/load-balancers/listeners', { pool: udpPool.uuid, name: 'udp/80', protocol: 'udp', protocol_port: 80, allowed_cidrs: [] });
    expect(udp.status).toBe(201);
  });

  test('a stopped server may change its flavor', async () => {
    const server = servers[1]!;
    expect((await call('POST', `${server.href}/stop`)).status).toBe(204);
    expect((await call('PATCH', server.href, { flavor: 'plus-32-16' })).status).toBe(204);
    expect((await call('GET', server.href)).body.flavor).toEqual({ slug: 'plus-32-16', name: 'Plus-32-16', vcpu_count: 16, memory_gb: 32 });
    await call('POST', `${server.href}/start`);
  });

  test('a non-HTTP monitor has http null even when {} was sent; HTTP defaults are filled in', async () => {
    const tcp = (await call('GET', monitorHref)).body;
    expect(tcp.http).toBeNull();
    const http = (await call('GET', httpMonitorHref)).body;
    expect(http.http).toEqual({ expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.0', host: null });
    const freshPool = await create('/v1/load-balancers/pools', { name: 'https', load_balancer: lb.uuid, algorithm: 'source_ip', protocol: 'proxy' });
    const https = await create('/v1/load-balancers/health-monitors', { pool: freshPool.uuid, type: 'https' });
    expect(https.http).toEqual({ expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.1', host: null });
    expect(https).toMatchObject({ delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3 });
    // host is fine with 1.1, and the http PATCH merges.
    expect((await call('PATCH', https.href, { http: { host: 'example.com' } })).status).toBe(204);
    expect((await call('PATCH', https.href, { http: { expected_codes: ['200', '204'] } })).status).toBe(204);
    expect((await call('GET', https.href)).body.http).toEqual({
      expected_codes: ['200', '204'],
      method: 'GET',
      url_path: '/',
      version: '1.1',
      host: 'example.com',
    });
  });
});
