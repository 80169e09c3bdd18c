// API routes of the provider's side: networks, subnets, regions and floating IPs (servers are in
// routes-servers.ts).

import { randomUUID } from 'node:crypto';
import type { Tags } from '../core/cloudscale/types.js';
import { FLOATING_IP_NETWORKS, REGIONS, regionOfZone, ZONES, type Zone } from './catalog.js';
import { ApiError, badRequest, Fields } from './fields.js';
import { API_LIMITS } from './limits.js';
import { checkFloatingIpRoom } from './routes-servers.js';
import { addressAt, cidrContains, firstFreeAddress, formatIp, parseCidr, parseIp, type CidrNetwork } from './net.js';
import { DEFAULT_DNS_SERVERS } from './seed.js';
import { addressPart, type FloatingIpRecord, type NetworkRecord, type SimState, type SubnetRecord } from './state.js';
import { created, noContent, now, ok, resource, type RequestContext, type Route } from './routing.js';

// ---- networks, subnets, regions -----------------------------------------------------------

/** Why a subnet cannot go away: a server address, an LB VIP or a pool member still uses it. */
function subnetUser(state: SimState, subnetUuid: string): string | undefined {
  for (const server of state.servers.values()) {
    if (server.interfaces.some((i) => i.addresses.some((a) => a.subnetUuid === subnetUuid))) return `server ${server.name}`;
  }
  for (const lb of state.loadBalancers.values()) {
    if (lb.vips.some((vip) => vip.subnetUuid === subnetUuid)) return `load balancer ${lb.name}`;
  }
  for (const member of state.members.values()) {
    if (member.subnetUuid === subnetUuid) return `pool member ${member.name}`;
  }
  return undefined;
}

/** `dns_servers`: absent or null gives the default resolvers, a list is used as given. */
function readDnsServers(fields: Fields): string[] | null | undefined {
  if (fields.has('dns_servers') && fields.body.dns_servers === null) return null;
  const list = fields.stringList('dns_servers');
  if (list === undefined) return undefined;
  const bad = list.find((entry) => {
    const ip = parseIp(entry);
    return ip === undefined || ip.value === 0n;
  });
  if (bad !== undefined) {
    fields.add('dns_servers', `${bad} is not a valid DNS server address.`);
    return undefined;
  }
  return list.map((entry) => parseIp(entry)!.text);
}

function readGateway(fields: Fields, cidr: CidrNetwork | undefined): string | null | undefined {
  const gateway = fields.ipAddress('gateway_address', { nullable: true });
  if (gateway === null || gateway === undefined) return gateway;
  if (cidr !== undefined && !cidrContains(cidr, gateway)) {
    fields.add('gateway_address', `IP address ${gateway.text} is not a valid IP for the specified subnet.`);
    return undefined;
  }
  return gateway.text;
}

function addSubnet(
  state: SimState,
  network: NetworkRecord,
  init: { cidr: CidrNetwork; gatewayAddress: string | null; dnsServers: string[] | null; tags: Tags },
): SubnetRecord {
  const subnet: SubnetRecord = {
    uuid: randomUUID(),
    cidr: init.cidr,
    networkUuid: network.uuid,
    gatewayAddress: init.gatewayAddress,
    dnsServers: init.dnsServers ?? [...DEFAULT_DNS_SERVERS],
    tags: init.tags,
    isPublic: false,
  };
  state.subnets.set(subnet.uuid, subnet);
  return subnet;
}

/** Public networks and subnets are not shown: the API answers 404 for them. */
function privateOnly<R extends { isPublic: boolean }>(): (record: R) => boolean {
  return (record) => !record.isPublic;
}

const networks = resource({
  path: '/v1/networks',
  records: (state) => state.networks,
  visible: privateOnly,
  render: (state, network) => state.renderNetwork(network),
  remove: (ctx, network) => {
    const subnets = [...ctx.state.subnets.values()].filter((s) => s.networkUuid === network.uuid);
    for (const subnet of subnets) {
      const user = subnetUser(ctx.state, subnet.uuid);
      if (user !== undefined) throw badRequest(`The network is still in use by ${user}.`);
    }
    if ([...ctx.state.servers.values()].some((s) => s.interfaces.some((i) => i.networkUuid === network.uuid))) {
      throw badRequest('The network is still attached to a server.');
    }
    // Deleting a network deletes its subnets.
    for (const subnet of subnets) ctx.state.subnets.delete(subnet.uuid);
    ctx.state.networks.delete(network.uuid);
  },
});

const subnets = resource({
  path: '/v1/subnets',
  records: (state) => state.subnets,
  visible: privateOnly,
  render: (state, subnet) => state.renderSubnet(subnet),
  remove: (ctx, subnet) => {
    const user = subnetUser(ctx.state, subnet.uuid);
    if (user !== undefined) throw badRequest(`The subnet is still in use by ${user}.`);
    ctx.state.subnets.delete(subnet.uuid);
  },
});

export const networkRoutes: Route[] = [
  ...networks.routes,
  {
    method: 'POST',
    pattern: networks.path,
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const zone = fields.choice('zone', ZONES, { style: 'choose' });
      const mtu = fields.integer('mtu', API_LIMITS.mtu);
      const autoSubnet = fields.boolean('auto_create_ipv4_subnet');
      const tags = fields.tags();
      fields.check();
      if (typeof name !== 'string') throw new ApiError(400, fields.errors);
      const network: NetworkRecord = {
        uuid: randomUUID(),
        name,
        createdAt: now(ctx.state),
        zone: zone ?? 'rma1',
        mtu: mtu ?? 9000,
        tags: tags ?? {},
        isPublic: false,
      };
      ctx.state.networks.set(network.uuid, network);
      if (autoSubnet !== false) {
        addSubnet(ctx.state, network, { cidr: parseCidr('172.16.0.0/24')!, gatewayAddress: null, dnsServers: null, tags: {} });
      }
      return created(ctx.state.renderNetwork(network));
    },
  },
  {
    method: 'PATCH',
    pattern: networks.item,
    handle: (ctx) => {
      const network = networks.one(ctx);
      const fields = new Fields(ctx.body);
      fields.immutable(['zone', 'auto_create_ipv4_subnet']);
      const name = fields.string('name');
      const mtu = fields.integer('mtu', API_LIMITS.mtu);
      const tags = fields.tags();
      fields.check();
      if (typeof name === 'string') network.name = name;
      if (typeof mtu === 'number') network.mtu = mtu;
      if (tags !== undefined) network.tags = tags;
      return noContent;
    },
  },
  ...subnets.routes,
  {
    method: 'POST',
    pattern: subnets.path,
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const network = fields.reference('network', ctx.state.networks, { required: true });
      if (network?.isPublic === true) fields.add('network', `Object with uuid=${network.uuid} does not exist.`);
      const cidrText = fields.string('cidr', { required: true });
      let cidr: CidrNetwork | undefined;
      if (typeof cidrText === 'string') {
        cidr = parseCidr(cidrText, { strict: true });
        if (cidr === undefined) fields.add('cidr', 'Enter a valid network address in CIDR notation.');
        else if (cidr.version === 4 && cidr.prefix > 24) fields.add('cidr', 'The subnet must be at least a /24.');
      }
      const gatewayAddress = readGateway(fields, cidr);
      const dnsServers = readDnsServers(fields);
      const tags = fields.tags();
      fields.check();
      if (!network || cidr === undefined) throw new ApiError(400, fields.errors);
      const overlapping = [...ctx.state.subnets.values()].find(
        (s) => s.networkUuid === network.uuid && (cidrContains(s.cidr, addressAt(cidr, 0n)) || cidrContains(cidr, addressAt(s.cidr, 0n))),
      );
      if (overlapping !== undefined) {
        throw new ApiError(400, { cidr: `The subnet overlaps ${overlapping.cidr.text} of the same network.` });
      }
      const subnet = addSubnet(ctx.state, network, {
        cidr,
        gatewayAddress: gatewayAddress ?? null,
        dnsServers: dnsServers ?? null,
        tags: tags ?? {},
      });
      return created(ctx.state.renderSubnet(subnet));
    },
  },
  {
    method: 'PATCH',
    pattern: subnets.item,
    handle: (ctx) => {
      const subnet = subnets.one(ctx);
      const fields = new Fields(ctx.body);
      fields.immutable(['cidr', 'network']);
      const gatewayAddress = readGateway(fields, subnet.cidr);
      const dnsServers = readDnsServers(fields);
      const tags = fields.tags();
      fields.check();
      if (gatewayAddress !== undefined) subnet.gatewayAddress = gatewayAddress;
      if (dnsServers !== undefined) subnet.dnsServers = dnsServers ?? [...DEFAULT_DNS_SERVERS];
      if (tags !== undefined) subnet.tags = tags;
      return noContent;
    },
  },
  {
    method: 'GET',
    pattern: '/v1/regions',
    handle: () =>
      ok(
        REGIONS.map((region) => ({
          slug: region,
          zones: ZONES.filter((z) => regionOfZone(z) === region).map((slug) => ({ slug })),
        })),
      ),
  },
];

// ---- floating IPs --------------------------------------------------------------------------

/** Validates and applies `server` / `load_balancer` of a create or PATCH body. */
function assignFloatingIp(ctx: RequestContext, fields: Fields, floatingIp: Pick<FloatingIpRecord, 'network' | 'type' | 'region'>): { serverUuid: string; lbUuid: null } | { serverUuid: null; lbUuid: string } | undefined {
  const wantsServer = fields.has('server');
  const wantsLb = fields.has('load_balancer');
  if (wantsServer && wantsLb) {
    throw badRequest('A floating IP can be assigned to either a server or a load balancer, not both.');
  }
  if (!wantsServer && !wantsLb) return undefined;
  const { state } = ctx;
  if (wantsServer) {
    const server = fields.reference('server', state.servers);
    fields.check();
    if (server === null || server === undefined) return undefined;
    checkRegion(floatingIp, server.zone, 'server');
    checkFloatingIpRoom(state, server, addressPart(floatingIp.network.text));
    return { serverUuid: server.uuid, lbUuid: null };
  }
  const lb = fields.reference('load_balancer', state.loadBalancers);
  fields.check();
  if (lb === null || lb === undefined) return undefined;
  if (floatingIp.network.prefix !== (floatingIp.network.version === 4 ? 32 : 128)) {
    throw new ApiError(400, { load_balancer: 'Only single-address floating IPs can be assigned to a load balancer.' });
  }
  checkRegion(floatingIp, lb.zone, 'load_balancer');
  return { serverUuid: null, lbUuid: lb.uuid };
}

function checkRegion(floatingIp: Pick<FloatingIpRecord, 'type' | 'region'>, zone: Zone, field: string): void {
  if (floatingIp.type === 'regional' && floatingIp.region !== regionOfZone(zone)) {
    throw new ApiError(400, {
      [field]: `The target is in zone ${zone}, outside the region ${floatingIp.region ?? ''} of this regional floating IP.`,
    });
  }
}

/** Floating IPs are named by their address in the path (`/v1/floating-ips/192.0.2.1`), in any spelling of it. */
const floatingIps = resource({
  path: '/v1/floating-ips',
  param: { name: 'ip', key: (text) => parseIp(text)?.text },
  records: (state) => state.floatingIps,
  render: (state, floatingIp) => state.renderFloatingIp(floatingIp),
  remove: (ctx, floatingIp) => ctx.state.floatingIps.delete(addressPart(floatingIp.network.text)),
});

export const floatingIpRoutes: Route[] = [
  ...floatingIps.routes,
  {
    method: 'POST',
    pattern: floatingIps.path,
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const ipVersionText = fields.has('ip_version') ? String(ctx.body.ip_version) : undefined;
      if (ipVersionText === undefined) fields.add('ip_version', 'This field is required.');
      else if (ipVersionText !== '4' && ipVersionText !== '6') fields.add('ip_version', `"${ipVersionText}" is not a valid choice.`);
      const type = fields.choice('type', ['regional', 'global'] as const) ?? 'regional';
      const region = fields.choice('region', REGIONS);
      const prefixLength = fields.integer('prefix_length', { nullable: true });
      const reversePtr = fields.string('reverse_ptr', { nullable: true });
      const tags = fields.tags();
      fields.check();
      const version = ipVersionText === '6' ? 6 : 4;
      if (type === 'global' && typeof region === 'string') throw new ApiError(400, { region: 'A global floating IP has no region.' });
      if (typeof prefixLength === 'number' && (version !== 6 || prefixLength !== 56)) {
        throw new ApiError(400, { prefix_length: 'Only IPv6 floating networks with prefix length 56 are supported.' });
      }
      const wide = typeof prefixLength === 'number';
      if (wide && typeof reversePtr === 'string') {
        throw new ApiError(400, { reverse_ptr: 'A reverse pointer can only be set on a single address.' });
      }
      const regionSlug = type === 'regional' ? (region ?? 'rma') : null;
      const pool = FLOATING_IP_NETWORKS[regionSlug ?? 'rma']!;
      const poolNetwork = parseCidr(version === 4 ? pool.ipv4 : pool.ipv6)!;
      const network = allocateFloatingNetwork(ctx.state, poolNetwork, wide);
      if (network === undefined) throw badRequest('No floating IP addresses are left in this region.');
      const record: FloatingIpRecord = {
        network,
        createdAt: now(ctx.state),
        type,
        region: regionSlug,
        serverUuid: null,
        loadBalancerUuid: null,
        reversePtr: reversePtr ?? null,
        tags: tags ?? {},
      };
      const assignment = assignFloatingIp(ctx, fields, record);
      if (assignment !== undefined) {
        record.serverUuid = assignment.serverUuid;
        record.loadBalancerUuid = assignment.lbUuid;
      }
      ctx.state.floatingIps.set(addressPart(network.text), record);
      return created(ctx.state.renderFloatingIp(record));
    },
  },
  {
    method: 'PATCH',
    pattern: floatingIps.item,
    handle: (ctx) => {
      const floatingIp = floatingIps.one(ctx);
      const fields = new Fields(ctx.body);
      fields.immutable(['ip_version', 'type', 'region', 'prefix_length', 'network']);
      if (ctx.body.server === null || ctx.body.load_balancer === null) {
        throw badRequest('A floating IP cannot be unassigned; assign it to another server or load balancer instead.');
      }
      const reversePtr = fields.string('reverse_ptr', { nullable: true });
      const tags = fields.tags();
      fields.check();
      const assignment = assignFloatingIp(ctx, fields, floatingIp);
      if (assignment !== undefined) {
        floatingIp.serverUuid = assignment.serverUuid;
        floatingIp.loadBalancerUuid = assignment.lbUuid;
      }
      if (reversePtr !== undefined) floatingIp.reversePtr = reversePtr;
      if (tags !== undefined) floatingIp.tags = tags;
      return noContent;
    },
  },
];

function allocateFloatingNetwork(state: SimState, pool: CidrNetwork, wide: boolean): CidrNetwork | undefined {
  const taken = (address: string): boolean => state.floatingIps.has(address);
  if (!wide) {
    const ip = firstFreeAddress(pool, 10n, taken);
    return ip === undefined ? undefined : parseCidr(`${ip.text}/${ip.version === 4 ? 32 : 128}`);
  }
  // A /56 from the region's IPv6 range, after the /64 single addresses come from.
  for (let index = 1n; index < 256n; index++) {
    const base = (pool.base >> 72n << 72n) + (index << 72n);
    const candidate = parseCidr(`${formatIp(6, base)}/56`)!;
    if (!taken(addressPart(candidate.text))) return candidate;
  }
  return undefined;
}
