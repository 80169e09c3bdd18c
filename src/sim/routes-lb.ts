// API routes of load balancers and their pools, members, listeners and health monitors. Every
// mutation names the LB it touches (`lockKey`), so the HTTP layer can run them one at a time.

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
import { isZone, LB_FLAVORS, PUBLIC_VIP_NETWORKS, ZONES, type Zone } from './catalog.js';
import { API_LIMITS } from './limits.js';
import { ApiError, badRequest, Fields, isDict, referenceProblem, type Dict } from './fields.js';
import { cidrContains, firstFreeAddress, parseCidr, parseIp, type IpAddress } from './net.js';
import type { PropagationKind } from './dataplane-timings.js';
import type { ListenerRecord, LoadBalancerRecord, MemberRecord, MonitorRecord, SimState } from './state.js';
import { created, find, noContent, now, resource, type RequestContext, type Resource, type Route } from './routing.js';

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
      errors.non_field_errors = `Invalid data. Expected a dictionary, but got ${typeof item}.`;
      return;
    }
    if (!Object.hasOwn(item, 'subnet')) {
      errors.subnet = 'This field is required.';
      return;
    }
    const problem = referenceProblem(item.subnet, state.subnets);
    const subnet = problem === undefined ? state.subnets.get(String(item.subnet).toLowerCase()) : undefined;
    if (subnet === undefined || subnet.isPublic) {
      errors.subnet = problem ?? `Object with uuid=${String(item.subnet)} does not exist.`;
      return;
    }
    if (state.zoneOfSubnet(subnet) !== zone) {
      errors.subnet = `The subnet is not in zone ${zone} of the load balancer.`;
      return;
    }
    let ip: IpAddress | undefined;
    if (item.address !== undefined && item.address !== null) {
      ip = typeof item.address === 'string' ? parseIp(item.address) : undefined;
      if (ip === undefined) {
        errors.address = 'Enter a valid IPv4 or IPv6 address.';
        return;
      }
      if (!cidrContains(subnet.cidr, ip)) {
        errors.address = `IP address ${ip.text} is not a valid IP for the specified subnet.`;
        return;
      }
      if (used.has(ip.text)) {
        errors.address = `IP address ${ip.text} is already in use.`;
        return;
      }
    } else {
      ip = firstFreeAddress(subnet.cidr, 2n, (a) => used.has(a) || a === subnet.gatewayAddress);
      if (ip === undefined) {
        errors.subnet = 'No free address is left in this subnet.';
        return;
      }
    }
    used.add(ip.text);
    vips.push({ ip, subnetUuid: subnet.uuid });
  });
  if (itemErrors.some((e) => Object.keys(e).length > 0)) throw new ApiError(400, { vip_addresses: itemErrors });
  return vips;
}

const loadBalancers = resource({
  path: '/v1/load-balancers',
  records: (state) => state.loadBalancers,
  render: (state, lb) => state.renderLoadBalancer(lb),
  remove: (ctx, lb) => ctx.state.deleteLoadBalancer(lb.uuid),
  lockKey: (ctx) => ctx.params.uuid?.toLowerCase(),
});

export const loadBalancerRoutes: Route[] = [
  ...loadBalancers.routes,
  {
    method: 'POST',
    pattern: loadBalancers.path,
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
      ctx.state.dataPlane.loadBalancerCreated(lb.uuid, ctx.state.now(), lb.readyAt);
      return created(ctx.state.renderLoadBalancer(lb));
    },
  },
  patch(loadBalancers, ['flavor', 'zone', 'vip_addresses'], nameAndTags),
];

// ---- pools and members ---------------------------------------------------------------------

const pools = resource({
  path: '/v1/load-balancers/pools',
  records: (state) => state.pools,
  render: (state, pool) => state.renderPool(pool),
  remove: (ctx, pool) => ctx.state.deletePool(pool.uuid),
  lockKey: (ctx) => lbOfPool(ctx, ctx.params.uuid),
});

export const poolRoutes: Route[] = [
  ...pools.routes,
  {
    method: 'POST',
    pattern: pools.path,
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
      ctx.state.dataPlane.poolCreated(lb.uuid, pool.uuid);
      return created(ctx.state.renderPool(pool));
    },
  },
  patch(pools, ['load_balancer', 'algorithm', 'protocol'], nameAndTags),
];

/** The data plane learns the member as it is now. */
function memberConfigured(state: SimState, member: MemberRecord): void {
  state.configured(state.pools.get(member.poolUuid)!.loadBalancerUuid, {
    kind: 'member',
    uuid: member.uuid,
    poolUuid: member.poolUuid,
    address: member.address.text,
    port: member.protocolPort,
    monitorPort: member.monitorPort,
    enabled: member.enabled,
  });
}

/** A pool's members are under its path: the members of other pools answer 404 there. */
const members = resource({
  path: '/v1/load-balancers/pools/{pool}/members',
  records: (state) => state.members,
  visible: (ctx) => {
    const pool = find(ctx.state.pools, ctx.params.pool);
    return (member) => member.poolUuid === pool.uuid;
  },
  render: (state, member) => state.renderMember(member),
  remove: (ctx, member) => {
    ctx.state.members.delete(member.uuid);
    ctx.state.configured(lbOfPool(ctx, member.poolUuid)!, { kind: 'member-deleted', uuid: member.uuid });
  },
  lockKey: (ctx) => lbOfPool(ctx, ctx.params.pool),
});

export const memberRoutes: Route[] = [
  ...members.routes,
  {
    method: 'POST',
    pattern: members.path,
    lockKey: members.lockKey,
    handle: (ctx) => {
      const { state } = ctx;
      const pool = find(state.pools, ctx.params.pool);
      const lb = find(state.loadBalancers, pool.loadBalancerUuid);
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const protocolPort = fields.integer('protocol_port', { required: true, ...API_LIMITS.protocol_port });
      const monitorPort = fields.integer('monitor_port', { nullable: true, ...API_LIMITS.protocol_port });
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
      if (state.dataPlane.timings.deletesHoldUntilPropagated && state.dataPlane.membersAt(lb.uuid, pool.uuid, address.text, protocolPort).length > 0) {
        throw badRequest(`A member with address ${address.text} and protocol_port ${protocolPort} is still being deleted from the pool; try again later.`);
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
      memberConfigured(state, member);
      return created(state.renderMember(member));
    },
  },
  patch(members, ['protocol_port', 'monitor_port', 'address', 'subnet', 'pool'], (fields, member, ctx) => {
    const name = fields.string('name');
    const enabled = fields.boolean('enabled');
    const tags = fields.tags();
    fields.check();
    if (typeof name === 'string') member.name = name;
    if (typeof enabled === 'boolean') member.enabled = enabled;
    if (tags !== undefined) member.tags = tags;
    if (typeof enabled === 'boolean') memberConfigured(ctx.state, member);
  }),
];

// ---- listeners -----------------------------------------------------------------------------

function listenerTimeouts(fields: Fields): { client?: number; connect?: number; data?: number } {
  const read = (key: 'timeout_client_data_ms' | 'timeout_member_connect_ms' | 'timeout_member_data_ms'): number | undefined =>
    fields.integer(key, API_LIMITS[key]) ?? undefined;
  return {
    client: read('timeout_client_data_ms'),
    connect: read('timeout_member_connect_ms'),
    data: read('timeout_member_data_ms'),
  };
}

/**
 * With `deletesHoldUntilPropagated`, a port that a deleted or moved listener still holds in the
 * data plane is refused (the texts of these refusals are guesses).
 */
function checkListenerPortReleased(ctx: RequestContext, lbUuid: string, protocol: ListenerProtocol, port: number, except?: string): void {
  const { dataPlane } = ctx.state;
  if (!dataPlane.timings.deletesHoldUntilPropagated) return;
  if (dataPlane.listenersOnPort(lbUuid, protocol, port).some((uuid) => uuid !== except)) {
    throw new ApiError(400, {
      protocol_port: `The load balancer's ${protocol} listener on port ${port} is still being deleted or moved; try again later.`,
    });
  }
}

/**
 * The data plane learns the listener's port, pool and allowed CIDRs as they are now; `as` is the
 * kind of propagation delay (docs/sim.md, "Data plane"), by default the one its port implies.
 */
function listenerConfigured(state: SimState, listener: ListenerRecord, as?: PropagationKind): void {
  state.configured(
    listener.loadBalancerUuid,
    {
      kind: 'listener',
      uuid: listener.uuid,
      protocol: listener.protocol,
      port: listener.protocolPort,
      poolUuid: listener.poolUuid,
      allowedCidrs: [...listener.allowedCidrs],
    },
    as,
  );
}

function checkListenerPortFree(ctx: RequestContext, lbUuid: string, protocol: string, port: number, except?: string): void {
  const clash = [...ctx.state.listeners.values()].find(
    (l) => l.loadBalancerUuid === lbUuid && l.protocol === protocol && l.protocolPort === port && l.uuid !== except,
  );
  if (clash !== undefined) {
    throw new ApiError(400, { protocol_port: `The load balancer already has a ${protocol} listener on port ${port}.` });
  }
}

const listeners = resource({
  path: '/v1/load-balancers/listeners',
  records: (state) => state.listeners,
  render: (state, listener) => state.renderListener(listener),
  remove: (ctx, listener) => {
    ctx.state.listeners.delete(listener.uuid);
    ctx.state.configured(listener.loadBalancerUuid, { kind: 'listener-deleted', uuid: listener.uuid });
  },
  lockKey: (ctx) => ctx.state.listeners.get(ctx.params.uuid?.toLowerCase() ?? '')?.loadBalancerUuid,
});

export const listenerRoutes: Route[] = [
  ...listeners.routes,
  {
    method: 'POST',
    pattern: listeners.path,
    lockKey: (ctx) => (typeof ctx.body.pool === 'string' ? lbOfPool(ctx, ctx.body.pool) : undefined),
    handle: (ctx) => {
      const fields = new Fields(ctx.body);
      const name = fields.string('name', { required: true });
      const pool = fields.reference('pool', ctx.state.pools, { required: true });
      const protocol = fields.choice('protocol', LISTENER_PROTOCOLS, { required: true, style: 'expect' });
      const protocolPort = fields.integer('protocol_port', { required: true, ...API_LIMITS.protocol_port, rangeMessage: PORT_RANGE_MESSAGE });
      const allowedCidrs = fields.cidrList('allowed_cidrs');
      const timeouts = listenerTimeouts(fields);
      const tags = fields.tags();
      fields.check();
      if (typeof name !== 'string' || !pool || !protocol || typeof protocolPort !== 'number') {
        throw new ApiError(400, fields.errors);
      }
      checkListenerPortFree(ctx, pool.loadBalancerUuid, protocol, protocolPort);
      checkListenerPortReleased(ctx, pool.loadBalancerUuid, protocol, protocolPort);
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
      listenerConfigured(ctx.state, listener);
      return created(ctx.state.renderListener(listener));
    },
  },
  patch(listeners, ['pool', 'load_balancer'], (fields, listener, ctx) => {
    const name = fields.string('name');
    const protocol = fields.choice('protocol', LISTENER_PROTOCOLS, { style: 'expect' });
    const protocolPort = fields.integer('protocol_port', { ...API_LIMITS.protocol_port, rangeMessage: PORT_RANGE_MESSAGE });
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
      checkListenerPortReleased(ctx, listener.loadBalancerUuid, protocol ?? listener.protocol, protocolPort ?? listener.protocolPort, listener.uuid);
    }
    if (typeof name === 'string') listener.name = name;
    if (protocol) listener.protocol = protocol;
    if (typeof protocolPort === 'number') listener.protocolPort = protocolPort;
    if (allowedCidrs !== undefined) listener.allowedCidrs = allowedCidrs;
    if (timeouts.client !== undefined) listener.timeoutClientDataMs = timeouts.client;
    if (timeouts.connect !== undefined) listener.timeoutMemberConnectMs = timeouts.connect;
    if (timeouts.data !== undefined) listener.timeoutMemberDataMs = timeouts.data;
    if (tags !== undefined) listener.tags = tags;
    if (protocol || typeof protocolPort === 'number') listenerConfigured(ctx.state, listener, 'listener');
    else if (allowedCidrs !== undefined) listenerConfigured(ctx.state, listener, 'allowedCidrs');
  }),
];

// ---- health monitors -----------------------------------------------------------------------

const isHttpType = (type: HealthMonitorType): boolean => type === 'http' || type === 'https';

/** Reads the fields of an `http` object; `version` only when creating (it is immutable). */
function readHttp(value: unknown, creating: boolean): { http: Partial<HealthMonitorHttp>; errors: Dict } {
  if (!isDict(value)) {
    return { http: {}, errors: { non_field_errors: `Invalid data. Expected a dictionary, but got ${typeof value}.` } };
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
  return { http, errors: fields.errors };
}

const HTTP_DEFAULTS: HealthMonitorHttp = { expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.1', host: null };

function monitorNumbers(fields: Fields) {
  return {
    delayS: fields.integer('delay_s', API_LIMITS.delay_s) ?? undefined,
    timeoutS: fields.integer('timeout_s', API_LIMITS.timeout_s) ?? undefined,
    upThreshold: fields.integer('up_threshold', API_LIMITS.up_threshold) ?? undefined,
    downThreshold: fields.integer('down_threshold', API_LIMITS.down_threshold) ?? undefined,
  };
}

/** The data plane learns the monitor's timings as they are now. */
function monitorConfigured(state: SimState, monitor: MonitorRecord): void {
  state.configured(state.pools.get(monitor.poolUuid)!.loadBalancerUuid, {
    kind: 'monitor',
    uuid: monitor.uuid,
    poolUuid: monitor.poolUuid,
    delayS: monitor.delayS,
    upThreshold: monitor.upThreshold,
    downThreshold: monitor.downThreshold,
  });
}

function lbOfMonitor(ctx: RequestContext): string | undefined {
  const monitor = ctx.state.monitors.get(ctx.params.uuid?.toLowerCase() ?? '');
  return monitor === undefined ? undefined : lbOfPool(ctx, monitor.poolUuid);
}

const monitors = resource({
  path: '/v1/load-balancers/health-monitors',
  records: (state) => state.monitors,
  render: (state, monitor) => state.renderMonitor(monitor),
  remove: (ctx, monitor) => {
    ctx.state.monitors.delete(monitor.uuid);
    ctx.state.configured(lbOfPool(ctx, monitor.poolUuid)!, { kind: 'monitor-deleted', uuid: monitor.uuid });
  },
  lockKey: lbOfMonitor,
});

export const monitorRoutes: Route[] = [
  ...monitors.routes,
  {
    method: 'POST',
    pattern: monitors.path,
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
        if (http.version === '1.0' && http.host !== null) fields.errors.http = { host: HOST_WITH_HTTP_10 };
      }
      fields.check();
      if (!pool || !type) throw new ApiError(400, fields.errors);
      if ([...ctx.state.monitors.values()].some((m) => m.poolUuid === pool.uuid)) {
        throw new ApiError(400, { pool: 'This pool already has a health monitor.' });
      }
      const { dataPlane } = ctx.state;
      if (dataPlane.timings.deletesHoldUntilPropagated && dataPlane.monitorOf(pool.loadBalancerUuid, pool.uuid) !== undefined) {
        throw new ApiError(400, { pool: "This pool's previous health monitor is still being deleted; try again later." });
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
      monitorConfigured(ctx.state, monitor);
      return created(ctx.state.renderMonitor(monitor));
    },
  },
  patch(monitors, ['pool', 'type'], (fields, monitor, ctx) => {
    const numbers = monitorNumbers(fields);
    const tags = fields.tags();
    let http: HealthMonitorHttp | null = monitor.http;
    if (fields.has('http') && ctx.body.http !== null) {
      const given = readHttp(ctx.body.http, false);
      if (Object.keys(given.errors).length > 0) fields.errors.http = given.errors;
      else if (monitor.http === null) {
        if (Object.keys(given.http).length > 0) fields.errors.http = { non_field_errors: `HTTP options do not apply to ${monitor.type} health monitors.` };
      } else {
        http = { ...monitor.http, ...given.http };
        if (http.version === '1.0' && http.host !== null) fields.errors.http = { host: HOST_WITH_HTTP_10 };
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
    if (Object.values(numbers).some((n) => n !== undefined)) monitorConfigured(ctx.state, monitor);
  }),
];

/**
 * The PATCH of one record of `kind`: one attribute at a time with `onePatchAttribute`, the
 * `immutable` fields refused; `change` reads the others (then `fields.check()`) and applies them.
 */
function patch<R>(kind: Resource<R>, immutable: readonly string[], change: (fields: Fields, record: R, ctx: RequestContext) => void): Route {
  return {
    method: 'PATCH',
    pattern: kind.item,
    lockKey: kind.lockKey,
    handle: (ctx) => {
      oneAttributeOnly(ctx);
      const record = kind.one(ctx);
      const fields = new Fields(ctx.body);
      fields.immutable(immutable);
      change(fields, record, ctx);
      return noContent;
    },
  };
}

/** The change of a record whose only changeable fields are `name` and `tags`. */
function nameAndTags(fields: Fields, record: { name: string; tags: Tags }): void {
  const name = fields.string('name');
  const tags = fields.tags();
  fields.check();
  if (typeof name === 'string') record.name = name;
  if (tags !== undefined) record.tags = tags;
}

/** The behaviour switch `onePatchAttribute`: a PATCH changes one attribute at a time. */
function oneAttributeOnly(ctx: RequestContext): void {
  if (ctx.state.behaviour.onePatchAttribute && Object.keys(ctx.body).length > 1) {
    throw badRequest('Only one attribute can be changed at a time.');
  }
}
