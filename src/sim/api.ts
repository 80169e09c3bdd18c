// The API v1 subset: one handler per method and route pattern. Handlers run synchronously on the
// state (the HTTP layer serialises those that touch one load balancer) and either return a result
// or throw an ApiError with a DRF-shaped body.

import { randomUUID } from 'node:crypto';
import type {
  HealthMonitorHttp,
  HealthMonitorType,
  HttpMethod,
  ListenerProtocol,
  PoolAlgorithm,
  PoolProtocol,
  Tags,
} from '../core/cloudscale/types.js';
import {
  FLOATING_IP_NETWORKS,
  isZone,
  LB_FLAVORS,
  PUBLIC_VIP_NETWORKS,
  REGIONS,
  regionOfZone,
  serverFlavor,
  ZONES,
  type Zone,
} from './catalog.js';
import { ApiError, badRequest, Fields, isDict, notFound, referenceProblem, type Dict } from './fields.js';
import { addressAt, cidrContains, firstFreeAddress, formatIp, parseCidr, parseIp, type CidrNetwork, type IpAddress } from './net.js';
import { DEFAULT_DNS_SERVERS } from './seed.js';
import {
  addressPart,
  apiTimestamp,
  type FloatingIpRecord,
  type LoadBalancerRecord,
  type MemberRecord,
  type MonitorRecord,
  type NetworkRecord,
  type SimState,
  type SubnetRecord,
} from './state.js';

export interface RequestContext {
  state: SimState;
  params: Record<string, string>;
  body: Dict;
  /** Decoded query parameters in order; a bare `?key` has value `undefined`. */
  query: [string, string | undefined][];
  /** How long a new load balancer stays `changing`. */
  lbProvisionMs: number;
  /** How long a server start/stop/reboot stays `changing`. */
  serverActionMs: number;
}

export interface ApiResult {
  status: number;
  body?: unknown;
}

export interface Route {
  method: string;
  /** e.g. `/v1/load-balancers/pools/{uuid}/members`; also the route's name in the request log. */
  pattern: string;
  handle(ctx: RequestContext): ApiResult;
  /** The UUID of the load balancer a mutation touches: such requests run one at a time per LB. */
  lockKey?(ctx: RequestContext): string | undefined;
}

const ALGORITHMS: readonly PoolAlgorithm[] = ['round_robin', 'least_connections', 'source_ip'];
const POOL_PROTOCOLS: readonly PoolProtocol[] = ['tcp', 'proxy', 'proxyv2', 'udp'];
const LISTENER_PROTOCOLS: readonly ListenerProtocol[] = ['tcp', 'udp'];
const MONITOR_TYPES: readonly HealthMonitorType[] = ['ping', 'tcp', 'http', 'https', 'tls-hello', 'udp-connect'];
const HTTP_METHODS: readonly HttpMethod[] = ['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'];
const HTTP_VERSIONS = ['1.0', '1.1'] as const;
const PORT_RANGE_MESSAGE = 'The protocol_port must be between 1 and 65535.';
const HOST_WITH_HTTP_10 = 'The host argument can not be used with HTTP version 1.0.';

const LISTENER_DEFAULT_TIMEOUTS = { client: 50_000, connect: 5_000, data: 50_000 };
const MONITOR_DEFAULTS = { delayS: 2, timeoutS: 1, upThreshold: 2, downThreshold: 3 };

const created = (body: unknown): ApiResult => ({ status: 201, body });
const ok = (body: unknown): ApiResult => ({ status: 200, body });
const noContent: ApiResult = { status: 204 };

function now(state: SimState): string {
  return apiTimestamp(state.now());
}

// ---- tag filters ---------------------------------------------------------------------------

/**
 * `tag:key=value` matches exactly; `tag:key` and `tag:key=` match any value of `key`; several
 * filters must all match. Other query parameters are ignored.
 */
export function matchesTagFilters(query: RequestContext['query'], tags: Tags): boolean {
  for (const [name, value] of query) {
    if (!name.startsWith('tag:')) continue;
    const key = name.slice('tag:'.length);
    if (!Object.hasOwn(tags, key)) return false;
    if (value !== undefined && value !== '' && tags[key] !== value) return false;
  }
  return true;
}

function list<R extends { tags: Tags }>(ctx: RequestContext, records: Iterable<R>, render: (r: R) => unknown): ApiResult {
  return ok([...records].filter((r) => matchesTagFilters(ctx.query, r.tags)).map(render));
}

function find<T>(map: ReadonlyMap<string, T>, key: string | undefined): T {
  const found = key === undefined ? undefined : map.get(key.toLowerCase());
  if (found === undefined) throw notFound();
  return found;
}

// ---- servers, networks, subnets, regions ---------------------------------------------------

const serverRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/servers',
    handle: (ctx) => list(ctx, ctx.state.servers.values(), (s) => ctx.state.renderServer(s)),
  },
  {
    method: 'GET',
    pattern: '/v1/servers/{uuid}',
    handle: (ctx) => ok(ctx.state.renderServer(find(ctx.state.servers, ctx.params.uuid))),
  },
  {
    method: 'PATCH',
    pattern: '/v1/servers/{uuid}',
    handle: (ctx) => {
      const server = find(ctx.state.servers, ctx.params.uuid);
      if (Object.keys(ctx.body).length > 1) throw badRequest('Only one attribute can be changed at a time.');
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { maxLength: 63 });
      const tags = fields.tags();
      const flavorSlug = fields.string('flavor');
      const flavor = typeof flavorSlug === 'string' ? serverFlavor(flavorSlug) : undefined;
      if (typeof flavorSlug === 'string' && flavor === undefined) fields.add('flavor', `"${flavorSlug}" is not a valid choice.`);
      if (fields.has('interfaces')) fields.add('interfaces', 'Changing interfaces is not supported by the simulator.');
      fields.check();
      if (flavor !== undefined) {
        if (ctx.state.serverStatus(server) !== 'stopped') {
          throw badRequest('The flavor of a server can only be changed if its status is "stopped".');
        }
        server.flavor = flavor;
      }
      if (typeof name === 'string') server.name = name;
      if (tags !== undefined) server.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/servers/{uuid}',
    handle: (ctx) => {
      const server = find(ctx.state.servers, ctx.params.uuid);
      ctx.state.deleteServer(server.uuid);
      return noContent;
    },
  },
  ...(['start', 'stop', 'reboot'] as const).map(
    (action): Route => ({
      method: 'POST',
      pattern: `/v1/servers/{uuid}/${action}`,
      handle: (ctx) => {
        const server = find(ctx.state.servers, ctx.params.uuid);
        serverAction(ctx.state, server.uuid, action, ctx.serverActionMs);
        return noContent;
      },
    }),
  ),
];

/** Start, stop or reboot: the server shows `changing` for `durationMs`, then the target status. */
export function serverAction(state: SimState, uuid: string, action: 'start' | 'stop' | 'reboot', durationMs: number): void {
  const server = state.servers.get(uuid);
  if (server === undefined) throw notFound();
  if (state.serverStatus(server) === 'changing') {
    throw badRequest('The server is changing its state; try again once it has finished.');
  }
  server.status = action === 'stop' ? 'stopped' : 'running';
  server.changingUntil = state.now() + durationMs;
}

function findPrivateNetwork(ctx: RequestContext): NetworkRecord {
  const network = find(ctx.state.networks, ctx.params.uuid);
  if (network.isPublic) throw notFound();
  return network;
}

function findPrivateSubnet(ctx: RequestContext): SubnetRecord {
  const subnet = find(ctx.state.subnets, ctx.params.uuid);
  if (subnet.isPublic) throw notFound();
  return subnet;
}

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

const networkRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/networks',
    handle: (ctx) =>
      list(ctx, [...ctx.state.networks.values()].filter((n) => !n.isPublic), (n) => ctx.state.renderNetwork(n)),
  },
  {
    method: 'GET',
    pattern: '/v1/networks/{uuid}',
    handle: (ctx) => ok(ctx.state.renderNetwork(findPrivateNetwork(ctx))),
  },
  {
    method: 'POST',
    pattern: '/v1/networks',
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const zone = fields.choice('zone', ZONES, { style: 'choose' });
      const mtu = fields.integer('mtu', { min: 1280, max: 9000 });
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
    pattern: '/v1/networks/{uuid}',
    handle: (ctx) => {
      const network = findPrivateNetwork(ctx);
      const fields = new Fields(ctx.body);
      fields.immutable(['zone', 'auto_create_ipv4_subnet']);
      const name = fields.string('name');
      const mtu = fields.integer('mtu', { min: 1280, max: 9000 });
      const tags = fields.tags();
      fields.check();
      if (typeof name === 'string') network.name = name;
      if (typeof mtu === 'number') network.mtu = mtu;
      if (tags !== undefined) network.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/networks/{uuid}',
    handle: (ctx) => {
      const network = findPrivateNetwork(ctx);
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
      return noContent;
    },
  },
  {
    method: 'GET',
    pattern: '/v1/subnets',
    handle: (ctx) =>
      list(ctx, [...ctx.state.subnets.values()].filter((s) => !s.isPublic), (s) => ctx.state.renderSubnet(s)),
  },
  {
    method: 'GET',
    pattern: '/v1/subnets/{uuid}',
    handle: (ctx) => ok(ctx.state.renderSubnet(findPrivateSubnet(ctx))),
  },
  {
    method: 'POST',
    pattern: '/v1/subnets',
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
        throw new ApiError(400, { cidr: [`The subnet overlaps ${overlapping.cidr.text} of the same network.`] });
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
    pattern: '/v1/subnets/{uuid}',
    handle: (ctx) => {
      const subnet = findPrivateSubnet(ctx);
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
    method: 'DELETE',
    pattern: '/v1/subnets/{uuid}',
    handle: (ctx) => {
      const subnet = findPrivateSubnet(ctx);
      const user = subnetUser(ctx.state, subnet.uuid);
      if (user !== undefined) throw badRequest(`The subnet is still in use by ${user}.`);
      ctx.state.subnets.delete(subnet.uuid);
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

function findFloatingIp(ctx: RequestContext): FloatingIpRecord {
  const ip = parseIp(ctx.params.ip ?? '');
  const floatingIp = ip === undefined ? undefined : ctx.state.floatingIps.get(ip.text);
  if (floatingIp === undefined) throw notFound();
  return floatingIp;
}

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
    return { serverUuid: server.uuid, lbUuid: null };
  }
  const lb = fields.reference('load_balancer', state.loadBalancers);
  fields.check();
  if (lb === null || lb === undefined) return undefined;
  if (floatingIp.network.prefix !== (floatingIp.network.version === 4 ? 32 : 128)) {
    throw new ApiError(400, { load_balancer: ['Only single-address floating IPs can be assigned to a load balancer.'] });
  }
  checkRegion(floatingIp, lb.zone, 'load_balancer');
  return { serverUuid: null, lbUuid: lb.uuid };
}

function checkRegion(floatingIp: Pick<FloatingIpRecord, 'type' | 'region'>, zone: Zone, field: string): void {
  if (floatingIp.type === 'regional' && floatingIp.region !== regionOfZone(zone)) {
    throw new ApiError(400, {
      [field]: [`The target is in zone ${zone}, outside the region ${floatingIp.region ?? ''} of this regional floating IP.`],
    });
  }
}

const floatingIpRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/floating-ips',
    handle: (ctx) => list(ctx, ctx.state.floatingIps.values(), (f) => ctx.state.renderFloatingIp(f)),
  },
  {
    method: 'GET',
    pattern: '/v1/floating-ips/{ip}',
    handle: (ctx) => ok(ctx.state.renderFloatingIp(findFloatingIp(ctx))),
  },
  {
    method: 'POST',
    pattern: '/v1/floating-ips',
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
      if (type === 'global' && typeof region === 'string') throw new ApiError(400, { region: ['A global floating IP has no region.'] });
      if (typeof prefixLength === 'number' && (version !== 6 || prefixLength !== 56)) {
        throw new ApiError(400, { prefix_length: ['Only IPv6 floating networks with prefix length 56 are supported.'] });
      }
      const wide = typeof prefixLength === 'number';
      if (wide && typeof reversePtr === 'string') {
        throw new ApiError(400, { reverse_ptr: ['A reverse pointer can only be set on a single address.'] });
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
    pattern: '/v1/floating-ips/{ip}',
    handle: (ctx) => {
      const floatingIp = findFloatingIp(ctx);
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
  {
    method: 'DELETE',
    pattern: '/v1/floating-ips/{ip}',
    handle: (ctx) => {
      const floatingIp = findFloatingIp(ctx);
      ctx.state.floatingIps.delete(addressPart(floatingIp.network.text));
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

// ---- load balancers ------------------------------------------------------------------------

function lbOfPool(ctx: RequestContext, poolUuid: string | undefined): string | undefined {
  return poolUuid === undefined ? undefined : ctx.state.pools.get(poolUuid.toLowerCase())?.loadBalancerUuid;
}

/** VIPs for a new LB: a public IPv4 + IPv6 pair, or one address per requested private subnet. */
function allocateVips(ctx: RequestContext, zone: Zone, requested: unknown[]): LoadBalancerRecord['vips'] {
  const { state } = ctx;
  const used = state.addressesInUse();
  if (requested.length === 0) {
    return (['ipv4', 'ipv6'] as const).map((family) => {
      const subnet = state.publicSubnet(zone, parseCidr(PUBLIC_VIP_NETWORKS[zone][family])!);
      const ip = firstFreeAddress(subnet.cidr, 10n, (a) => used.has(a));
      if (ip === undefined) throw badRequest('No public addresses are left for load balancers in this zone.');
      used.add(ip.text);
      return { ip, subnetUuid: subnet.uuid };
    });
  }
  const itemErrors: Dict[] = requested.map(() => ({}));
  const vips: LoadBalancerRecord['vips'] = [];
  requested.forEach((item, index) => {
    const errors = itemErrors[index]!;
    if (!isDict(item)) {
      errors.non_field_errors = [`Invalid data. Expected a dictionary, but got ${typeof item}.`];
      return;
    }
    if (!Object.hasOwn(item, 'subnet')) {
      errors.subnet = ['This field is required.'];
      return;
    }
    const problem = referenceProblem(item.subnet, state.subnets);
    const subnet = problem === undefined ? state.subnets.get(String(item.subnet).toLowerCase()) : undefined;
    if (subnet === undefined || subnet.isPublic) {
      errors.subnet = [problem ?? `Object with uuid=${String(item.subnet)} does not exist.`];
      return;
    }
    if (state.zoneOfSubnet(subnet) !== zone) {
      errors.subnet = [`The subnet is not in zone ${zone} of the load balancer.`];
      return;
    }
    let ip: IpAddress | undefined;
    if (item.address !== undefined && item.address !== null) {
      ip = typeof item.address === 'string' ? parseIp(item.address) : undefined;
      if (ip === undefined) {
        errors.address = ['Enter a valid IPv4 or IPv6 address.'];
        return;
      }
      if (!cidrContains(subnet.cidr, ip)) {
        errors.address = [`IP address ${ip.text} is not a valid IP for the specified subnet.`];
        return;
      }
      if (used.has(ip.text)) {
        errors.address = [`IP address ${ip.text} is already in use.`];
        return;
      }
    } else {
      ip = firstFreeAddress(subnet.cidr, 2n, (a) => used.has(a) || a === subnet.gatewayAddress);
      if (ip === undefined) {
        errors.subnet = ['No free address is left in this subnet.'];
        return;
      }
    }
    used.add(ip.text);
    vips.push({ ip, subnetUuid: subnet.uuid });
  });
  if (itemErrors.some((e) => Object.keys(e).length > 0)) throw new ApiError(400, { vip_addresses: itemErrors });
  return vips;
}

const loadBalancerRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/load-balancers',
    handle: (ctx) => list(ctx, ctx.state.loadBalancers.values(), (lb) => ctx.state.renderLoadBalancer(lb)),
  },
  {
    method: 'GET',
    pattern: '/v1/load-balancers/{uuid}',
    handle: (ctx) => ok(ctx.state.renderLoadBalancer(find(ctx.state.loadBalancers, ctx.params.uuid))),
  },
  {
    method: 'POST',
    pattern: '/v1/load-balancers',
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const flavor = fields.choice('flavor', LB_FLAVORS.map((f) => f.slug), { required: true });
      const zone = fields.choice('zone', ZONES, { style: 'choose' });
      const requested = fields.list('vip_addresses') ?? [];
      const tags = fields.tags();
      fields.check();
      if (typeof name !== 'string' || typeof flavor !== 'string') throw new ApiError(400, fields.errors);
      const lbZone: Zone = typeof zone === 'string' && isZone(zone) ? zone : 'rma1';
      const vips = allocateVips(ctx, lbZone, requested);
      const lb: LoadBalancerRecord = {
        uuid: randomUUID(),
        name,
        createdAt: now(ctx.state),
        zone: lbZone,
        flavorSlug: flavor,
        vips,
        tags: tags ?? {},
        readyAt: ctx.state.now() + ctx.lbProvisionMs,
      };
      ctx.state.loadBalancers.set(lb.uuid, lb);
      return created(ctx.state.renderLoadBalancer(lb));
    },
  },
  {
    method: 'PATCH',
    pattern: '/v1/load-balancers/{uuid}',
    lockKey: (ctx) => ctx.params.uuid?.toLowerCase(),
    handle: (ctx) => {
      const lb = find(ctx.state.loadBalancers, ctx.params.uuid);
      const fields = new Fields(ctx.body);
      fields.immutable(['flavor', 'zone', 'vip_addresses']);
      const name = fields.string('name');
      const tags = fields.tags();
      fields.check();
      if (typeof name === 'string') lb.name = name;
      if (tags !== undefined) lb.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/load-balancers/{uuid}',
    lockKey: (ctx) => ctx.params.uuid?.toLowerCase(),
    handle: (ctx) => {
      const lb = find(ctx.state.loadBalancers, ctx.params.uuid);
      ctx.state.deleteLoadBalancer(lb.uuid);
      return noContent;
    },
  },
];

// ---- pools and members ---------------------------------------------------------------------

const poolRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/load-balancers/pools',
    handle: (ctx) => list(ctx, ctx.state.pools.values(), (p) => ctx.state.renderPool(p)),
  },
  {
    method: 'GET',
    pattern: '/v1/load-balancers/pools/{uuid}',
    handle: (ctx) => ok(ctx.state.renderPool(find(ctx.state.pools, ctx.params.uuid))),
  },
  {
    method: 'POST',
    pattern: '/v1/load-balancers/pools',
    lockKey: (ctx) => {
      const lb = ctx.body.load_balancer;
      return typeof lb === 'string' && ctx.state.loadBalancers.has(lb.toLowerCase()) ? lb.toLowerCase() : undefined;
    },
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const lb = fields.reference('load_balancer', ctx.state.loadBalancers, { required: true });
      const algorithm = fields.choice('algorithm', ALGORITHMS, { required: true, style: 'expect' });
      const protocol = fields.choice('protocol', POOL_PROTOCOLS, { required: true, style: 'expect' });
      const tags = fields.tags();
      fields.check();
      if (typeof name !== 'string' || !lb || !algorithm || !protocol) throw new ApiError(400, fields.errors);
      const pool = {
        uuid: randomUUID(),
        name,
        createdAt: now(ctx.state),
        loadBalancerUuid: lb.uuid,
        algorithm,
        protocol,
        tags: tags ?? {},
      };
      ctx.state.pools.set(pool.uuid, pool);
      return created(ctx.state.renderPool(pool));
    },
  },
  {
    method: 'PATCH',
    pattern: '/v1/load-balancers/pools/{uuid}',
    lockKey: (ctx) => lbOfPool(ctx, ctx.params.uuid),
    handle: (ctx) => {
      const pool = find(ctx.state.pools, ctx.params.uuid);
      const fields = new Fields(ctx.body);
      fields.immutable(['load_balancer', 'algorithm', 'protocol']);
      const name = fields.string('name');
      const tags = fields.tags();
      fields.check();
      if (typeof name === 'string') pool.name = name;
      if (tags !== undefined) pool.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/load-balancers/pools/{uuid}',
    lockKey: (ctx) => lbOfPool(ctx, ctx.params.uuid),
    handle: (ctx) => {
      ctx.state.deletePool(find(ctx.state.pools, ctx.params.uuid).uuid);
      return noContent;
    },
  },
];

function findMember(ctx: RequestContext): MemberRecord {
  const pool = find(ctx.state.pools, ctx.params.pool);
  const member = find(ctx.state.members, ctx.params.uuid);
  if (member.poolUuid !== pool.uuid) throw notFound();
  return member;
}

const memberRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/load-balancers/pools/{pool}/members',
    handle: (ctx) => {
      const pool = find(ctx.state.pools, ctx.params.pool);
      const members = [...ctx.state.members.values()].filter((m) => m.poolUuid === pool.uuid);
      return list(ctx, members, (m) => ctx.state.renderMember(m));
    },
  },
  {
    method: 'GET',
    pattern: '/v1/load-balancers/pools/{pool}/members/{uuid}',
    handle: (ctx) => ok(ctx.state.renderMember(findMember(ctx))),
  },
  {
    method: 'POST',
    pattern: '/v1/load-balancers/pools/{pool}/members',
    lockKey: (ctx) => lbOfPool(ctx, ctx.params.pool),
    handle: (ctx) => {
      const { state } = ctx;
      const pool = find(state.pools, ctx.params.pool);
      const lb = find(state.loadBalancers, pool.loadBalancerUuid);
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const protocolPort = fields.integer('protocol_port', { required: true, min: 1, max: 65535 });
      const monitorPort = fields.integer('monitor_port', { nullable: true, min: 1, max: 65535 });
      const address = fields.ipAddress('address', { required: true });
      const subnet = fields.reference('subnet', state.subnets, { required: true });
      const enabled = fields.boolean('enabled');
      const tags = fields.tags();
      if (subnet && subnet.isPublic) fields.add('subnet', `Object with uuid=${subnet.uuid} does not exist.`);
      else if (subnet && state.zoneOfSubnet(subnet) !== lb.zone) {
        fields.add('subnet', `The subnet is not in zone ${lb.zone} of the load balancer.`);
      } else if (subnet && address && !cidrContains(subnet.cidr, address)) {
        fields.add('address', `IP address ${address.text} is not a valid IP for the specified subnet.`);
      }
      fields.check();
      if (typeof name !== 'string' || typeof protocolPort !== 'number' || !address || !subnet) {
        throw new ApiError(400, fields.errors);
      }
      const clash = [...state.members.values()].find(
        (m) => m.poolUuid === pool.uuid && m.address.text === address.text && m.protocolPort === protocolPort,
      );
      if (clash !== undefined) {
        throw badRequest(`The pool already has a member with address ${address.text} and protocol_port ${protocolPort}.`);
      }
      const member: MemberRecord = {
        uuid: randomUUID(),
        name,
        createdAt: now(state),
        poolUuid: pool.uuid,
        enabled: enabled ?? true,
        protocolPort,
        monitorPort: monitorPort ?? null,
        address,
        subnetUuid: subnet.uuid,
        tags: tags ?? {},
      };
      state.members.set(member.uuid, member);
      return created(state.renderMember(member));
    },
  },
  {
    method: 'PATCH',
    pattern: '/v1/load-balancers/pools/{pool}/members/{uuid}',
    lockKey: (ctx) => lbOfPool(ctx, ctx.params.pool),
    handle: (ctx) => {
      const member = findMember(ctx);
      const fields = new Fields(ctx.body);
      fields.immutable(['protocol_port', 'monitor_port', 'address', 'subnet', 'pool']);
      const name = fields.string('name');
      const enabled = fields.boolean('enabled');
      const tags = fields.tags();
      fields.check();
      if (typeof name === 'string') member.name = name;
      if (typeof enabled === 'boolean') member.enabled = enabled;
      if (tags !== undefined) member.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/load-balancers/pools/{pool}/members/{uuid}',
    lockKey: (ctx) => lbOfPool(ctx, ctx.params.pool),
    handle: (ctx) => {
      ctx.state.members.delete(findMember(ctx).uuid);
      return noContent;
    },
  },
];

// ---- listeners -----------------------------------------------------------------------------

function listenerTimeouts(fields: Fields): { client?: number; connect?: number; data?: number } {
  const read = (key: string): number | undefined => fields.integer(key, { min: 1, max: 86_400_000 }) ?? undefined;
  return {
    client: read('timeout_client_data_ms'),
    connect: read('timeout_member_connect_ms'),
    data: read('timeout_member_data_ms'),
  };
}

function checkListenerPortFree(ctx: RequestContext, lbUuid: string, protocol: string, port: number, except?: string): void {
  const clash = [...ctx.state.listeners.values()].find(
    (l) => l.loadBalancerUuid === lbUuid && l.protocol === protocol && l.protocolPort === port && l.uuid !== except,
  );
  if (clash !== undefined) {
    throw new ApiError(400, { protocol_port: [`The load balancer already has a ${protocol} listener on port ${port}.`] });
  }
}

const listenerRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/load-balancers/listeners',
    handle: (ctx) => list(ctx, ctx.state.listeners.values(), (l) => ctx.state.renderListener(l)),
  },
  {
    method: 'GET',
    pattern: '/v1/load-balancers/listeners/{uuid}',
    handle: (ctx) => ok(ctx.state.renderListener(find(ctx.state.listeners, ctx.params.uuid))),
  },
  {
    method: 'POST',
    pattern: '/v1/load-balancers/listeners',
    lockKey: (ctx) => (typeof ctx.body.pool === 'string' ? lbOfPool(ctx, ctx.body.pool) : undefined),
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const pool = fields.reference('pool', ctx.state.pools, { required: true });
      const protocol = fields.choice('protocol', LISTENER_PROTOCOLS, { required: true, style: 'expect' });
      const protocolPort = fields.integer('protocol_port', { required: true, min: 1, max: 65535, rangeMessage: PORT_RANGE_MESSAGE });
      const allowedCidrs = fields.cidrList('allowed_cidrs');
      const timeouts = listenerTimeouts(fields);
      const tags = fields.tags();
      fields.check();
      if (typeof name !== 'string' || !pool || !protocol || typeof protocolPort !== 'number') {
        throw new ApiError(400, fields.errors);
      }
      checkListenerPortFree(ctx, pool.loadBalancerUuid, protocol, protocolPort);
      const listener = {
        uuid: randomUUID(),
        name,
        createdAt: now(ctx.state),
        poolUuid: pool.uuid,
        loadBalancerUuid: pool.loadBalancerUuid,
        protocol,
        protocolPort,
        allowedCidrs: allowedCidrs ?? [],
        timeoutClientDataMs: timeouts.client ?? LISTENER_DEFAULT_TIMEOUTS.client,
        timeoutMemberConnectMs: timeouts.connect ?? LISTENER_DEFAULT_TIMEOUTS.connect,
        timeoutMemberDataMs: timeouts.data ?? LISTENER_DEFAULT_TIMEOUTS.data,
        tags: tags ?? {},
      };
      ctx.state.listeners.set(listener.uuid, listener);
      return created(ctx.state.renderListener(listener));
    },
  },
  {
    method: 'PATCH',
    pattern: '/v1/load-balancers/listeners/{uuid}',
    lockKey: (ctx) => ctx.state.listeners.get(ctx.params.uuid?.toLowerCase() ?? '')?.loadBalancerUuid,
    handle: (ctx) => {
      const listener = find(ctx.state.listeners, ctx.params.uuid);
      const fields = new Fields(ctx.body);
      fields.immutable(['pool', 'load_balancer']);
      const name = fields.string('name');
      const protocol = fields.choice('protocol', LISTENER_PROTOCOLS, { style: 'expect' });
      const protocolPort = fields.integer('protocol_port', { min: 1, max: 65535, rangeMessage: PORT_RANGE_MESSAGE });
      const allowedCidrs = fields.cidrList('allowed_cidrs');
      const timeouts = listenerTimeouts(fields);
      const tags = fields.tags();
      fields.check();
      if (protocol || typeof protocolPort === 'number') {
        checkListenerPortFree(
          ctx,
          listener.loadBalancerUuid,
          protocol ?? listener.protocol,
          protocolPort ?? listener.protocolPort,
          listener.uuid,
        );
      }
      if (typeof name === 'string') listener.name = name;
      if (protocol) listener.protocol = protocol;
      if (typeof protocolPort === 'number') listener.protocolPort = protocolPort;
      if (allowedCidrs !== undefined) listener.allowedCidrs = allowedCidrs;
      if (timeouts.client !== undefined) listener.timeoutClientDataMs = timeouts.client;
      if (timeouts.connect !== undefined) listener.timeoutMemberConnectMs = timeouts.connect;
      if (timeouts.data !== undefined) listener.timeoutMemberDataMs = timeouts.data;
      if (tags !== undefined) listener.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/load-balancers/listeners/{uuid}',
    lockKey: (ctx) => ctx.state.listeners.get(ctx.params.uuid?.toLowerCase() ?? '')?.loadBalancerUuid,
    handle: (ctx) => {
      ctx.state.listeners.delete(find(ctx.state.listeners, ctx.params.uuid).uuid);
      return noContent;
    },
  },
];

// ---- health monitors -----------------------------------------------------------------------

const isHttpType = (type: HealthMonitorType): boolean => type === 'http' || type === 'https';

/** Reads the fields of an `http` object; `version` only when creating (it is immutable). */
function readHttp(value: unknown, creating: boolean): { http: Partial<HealthMonitorHttp>; errors: Dict } {
  const errors: Dict = {};
  if (!isDict(value)) {
    return { http: {}, errors: { non_field_errors: [`Invalid data. Expected a dictionary, but got ${typeof value}.`] } };
  }
  const fields = new Fields(value);
  const http: Partial<HealthMonitorHttp> = {};
  const expectedCodes = fields.stringList('expected_codes');
  if (expectedCodes !== undefined) http.expected_codes = expectedCodes;
  const method = fields.choice('method', HTTP_METHODS);
  if (method) http.method = method;
  const urlPath = fields.string('url_path');
  if (typeof urlPath === 'string') http.url_path = urlPath;
  const host = fields.string('host', { nullable: true });
  if (host !== undefined) http.host = host;
  if (creating) {
    const version = fields.choice('version', HTTP_VERSIONS);
    if (version) http.version = version;
  } else {
    fields.immutable(['version']);
  }
  Object.assign(errors, fields.errors);
  return { http, errors };
}

const HTTP_DEFAULTS: HealthMonitorHttp = { expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.1', host: null };

function monitorNumbers(fields: Fields) {
  return {
    delayS: fields.integer('delay_s', { min: 1 }) ?? undefined,
    timeoutS: fields.integer('timeout_s', { min: 1 }) ?? undefined,
    upThreshold: fields.integer('up_threshold', { min: 1, max: 10 }) ?? undefined,
    downThreshold: fields.integer('down_threshold', { min: 1, max: 10 }) ?? undefined,
  };
}

function lbOfMonitor(ctx: RequestContext): string | undefined {
  const monitor = ctx.state.monitors.get(ctx.params.uuid?.toLowerCase() ?? '');
  return monitor === undefined ? undefined : lbOfPool(ctx, monitor.poolUuid);
}

const monitorRoutes: Route[] = [
  {
    method: 'GET',
    pattern: '/v1/load-balancers/health-monitors',
    handle: (ctx) => list(ctx, ctx.state.monitors.values(), (m) => ctx.state.renderMonitor(m)),
  },
  {
    method: 'GET',
    pattern: '/v1/load-balancers/health-monitors/{uuid}',
    handle: (ctx) => ok(ctx.state.renderMonitor(find(ctx.state.monitors, ctx.params.uuid))),
  },
  {
    method: 'POST',
    pattern: '/v1/load-balancers/health-monitors',
    lockKey: (ctx) => (typeof ctx.body.pool === 'string' ? lbOfPool(ctx, ctx.body.pool) : undefined),
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const pool = fields.reference('pool', ctx.state.pools, { required: true });
      const type = fields.choice('type', MONITOR_TYPES, { required: true });
      const numbers = monitorNumbers(fields);
      const tags = fields.tags();
      let http: HealthMonitorHttp | null = null;
      if (type && isHttpType(type)) {
        const given = ctx.body.http === undefined || ctx.body.http === null ? { http: {}, errors: {} } : readHttp(ctx.body.http, true);
        if (Object.keys(given.errors).length > 0) fields.errors.http = given.errors;
        http = { ...HTTP_DEFAULTS, ...given.http };
        if (http.version === '1.0' && http.host !== null) fields.errors.http = { host: [HOST_WITH_HTTP_10] };
      }
      fields.check();
      if (!pool || !type) throw new ApiError(400, fields.errors);
      if ([...ctx.state.monitors.values()].some((m) => m.poolUuid === pool.uuid)) {
        throw new ApiError(400, { pool: ['This pool already has a health monitor.'] });
      }
      const monitor: MonitorRecord = {
        uuid: randomUUID(),
        createdAt: now(ctx.state),
        poolUuid: pool.uuid,
        delayS: numbers.delayS ?? MONITOR_DEFAULTS.delayS,
        timeoutS: numbers.timeoutS ?? MONITOR_DEFAULTS.timeoutS,
        upThreshold: numbers.upThreshold ?? MONITOR_DEFAULTS.upThreshold,
        downThreshold: numbers.downThreshold ?? MONITOR_DEFAULTS.downThreshold,
        type,
        http,
        tags: tags ?? {},
      };
      ctx.state.monitors.set(monitor.uuid, monitor);
      return created(ctx.state.renderMonitor(monitor));
    },
  },
  {
    method: 'PATCH',
    pattern: '/v1/load-balancers/health-monitors/{uuid}',
    lockKey: lbOfMonitor,
    handle: (ctx) => {
      const monitor = find(ctx.state.monitors, ctx.params.uuid);
      const fields = new Fields(ctx.body);
      fields.immutable(['pool', 'type']);
      const numbers = monitorNumbers(fields);
      const tags = fields.tags();
      let http: HealthMonitorHttp | null = monitor.http;
      if (fields.has('http') && ctx.body.http !== null) {
        const given = readHttp(ctx.body.http, false);
        if (Object.keys(given.errors).length > 0) fields.errors.http = given.errors;
        else if (monitor.http === null) {
          if (Object.keys(given.http).length > 0) fields.errors.http = { non_field_errors: [`HTTP options do not apply to ${monitor.type} health monitors.`] };
        } else {
          http = { ...monitor.http, ...given.http };
          if (http.version === '1.0' && http.host !== null) fields.errors.http = { host: [HOST_WITH_HTTP_10] };
        }
      } else if (fields.has('http') && monitor.http !== null) {
        fields.add('http', 'This field may not be null.');
      }
      fields.check();
      if (numbers.delayS !== undefined) monitor.delayS = numbers.delayS;
      if (numbers.timeoutS !== undefined) monitor.timeoutS = numbers.timeoutS;
      if (numbers.upThreshold !== undefined) monitor.upThreshold = numbers.upThreshold;
      if (numbers.downThreshold !== undefined) monitor.downThreshold = numbers.downThreshold;
      monitor.http = http;
      if (tags !== undefined) monitor.tags = tags;
      return noContent;
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/load-balancers/health-monitors/{uuid}',
    lockKey: lbOfMonitor,
    handle: (ctx) => {
      ctx.state.monitors.delete(find(ctx.state.monitors, ctx.params.uuid).uuid);
      return noContent;
    },
  },
];

/** Every API route. Literal segments win over parameters (`/pools` is not an LB UUID). */
export const API_ROUTES: readonly Route[] = [
  ...serverRoutes,
  ...networkRoutes,
  ...floatingIpRoutes,
  ...poolRoutes,
  ...memberRoutes,
  ...listenerRoutes,
  ...monitorRoutes,
  ...loadBalancerRoutes,
];
