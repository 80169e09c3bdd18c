// The simulator's admin API: what a test (or a user in the sandbox) does to the simulated cloud
// besides calling the API (stop a server, inject faults, switch behaviours and data-plane
// timings, change tokens, read the request log, probe and connect through load balancers),
// as the functions of `Simulator.admin` and as the HTTP endpoints under /_sim/ (docs/sim.md,
// "Admin API"). Admin requests need no token and are not logged.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { CcmError } from '../core/errors.js';
import { serverAction } from './api.js';
import { DEFAULT_BEHAVIOUR, type SimBehaviour } from './behaviour.js';
import { readDataPlaneTimings, type DataPlaneChanges, type DataPlaneTimings } from './dataplane-timings.js';
import type { ConnectionInfo, ConnectResult, PortServing, ProbeResult } from './dataplane-views.js';
import { FaultConfigError, type FaultConfig, type Faults } from './faults.js';
import { ApiError, isDict, type Dict } from './fields.js';
import { parseJsonBody, queryValue, readBody, send } from './http.js';
import { parseIp, type IpAddress } from './net.js';
import type { RequestLog, RequestLogEntry, RouteCount } from './request-log.js';
import type { SimState } from './state.js';
import type { WorldName } from './world.js';

/** A refused admin operation: unknown server, invalid fault configuration. */
export class SimAdminError extends CcmError {}

export interface ProbeRequest {
  /** A VIP of a load balancer, or a floating IP assigned to one. */
  address: string;
  port: number;
  /** Default `tcp`. */
  protocol?: 'tcp' | 'udp';
  /** The client's address, checked against the listener's `allowed_cidrs`; absent: not checked. */
  source?: string;
}

/** The world a simulator runs in (docs/sim.md, "Worlds"). */
export interface WorldInfo {
  world: WorldName;
  timeScale: number;
}

export interface SimulatorAdmin {
  stopServer(uuid: string): void;
  startServer(uuid: string): void;
  deleteServer(uuid: string): void;
  /** Replaces the fault configuration; throws SimAdminError for an invalid one. */
  setFaults(faults: FaultConfig): void;
  clearFaults(): void;
  /** Changes the given behaviour switches (the others stay); returns all of them. */
  setBehaviour(behaviour: Partial<SimBehaviour>): SimBehaviour;
  behaviour(): SimBehaviour;
  requests(): RequestLogEntry[];
  requestSummary(): RouteCount[];
  resetRequests(): void;
  /** How many API requests have arrived so far: the `seq` of the latest (finished or not). */
  arrivals(): number;
  /**
   * Replaces the accepted tokens, name → token, effective for every request that arrives from
   * now on: a token no longer listed is answered 401 "Invalid token.". `null` accepts any
   * request (as without `token`). The log names the token of each request, never its value.
   * Throws SimAdminError for an empty map, a blank name, a token with whitespace, or one token
   * under two names.
   */
  setTokens(tokens: Record<string, string> | null): void;
  /** The names of the accepted tokens; null when any request is accepted. */
  tokenNames(): string[] | null;
  /**
   * Per listener port of the load balancer, the intervals from its creation (or `since`, epoch
   * ms) to now in which the port could serve, and the longest outage after it first served.
   * Throws SimAdminError for a load balancer the simulator never had.
   */
  serving(lbUuid: string, options?: { since?: number }): { ports: PortServing[] };
  /** Where a connection to `address:port` would go now, as the data plane has it. */
  probe(request: ProbeRequest): ProbeResult;
  /**
   * Opens a connection routed as `probe` would route it; it stays open through a disable or
   * delete of its member and closes when closed, when its listener's delete or move reaches the
   * data plane, or when its member's server stops.
   */
  connect(request: ProbeRequest): ConnectResult;
  /** A connection opened with `connect`; throws SimAdminError for an unknown id. */
  connection(id: string): ConnectionInfo;
  /** Every connection opened so far, open or closed. */
  connections(): ConnectionInfo[];
  /** Closes a connection as its client would; throws SimAdminError for an unknown id. */
  closeConnection(id: string): void;
  /** The world and time scale the simulator started with. */
  world(): WorldInfo;
  /**
   * Makes the health checks of `address:port` fail (`healthy` false) or pass again, e.g. a
   * node without local endpoints under externalTrafficPolicy Local. The port is the one the
   * monitor checks: the member's monitor_port, or its protocol_port.
   */
  setEndpointHealth(address: string, port: number, healthy: boolean): void;
  /** The endpoints marked as failing. */
  failingEndpoints(): { address: string; port: number }[];
  /** Changes the given data-plane timings from now on; returns all of them. */
  setDataPlane(timings: DataPlaneChanges): DataPlaneTimings;
  dataPlane(): DataPlaneTimings;
}

/** The parts of a running simulator the admin API reads and changes. */
export interface AdminHost {
  readonly state: SimState;
  readonly faults: Faults;
  readonly log: RequestLog;
  readonly world: WorldInfo;
  /** How long a server start or stop stays `changing`. */
  readonly serverActionMs: number;
  /** Token → its name; null: any request is accepted. */
  tokens: Map<string, string> | null;
}

/** The admin functions over a running simulator's parts. */
export function simulatorAdmin(host: AdminHost): SimulatorAdmin {
  return {
    stopServer: (uuid) => serverActionByAdmin(host, uuid, 'stop'),
    startServer: (uuid) => serverActionByAdmin(host, uuid, 'start'),
    deleteServer: (uuid) => {
      knownServer(host.state, uuid);
      host.state.deleteServer(uuid.toLowerCase());
    },
    setFaults: (faults) => {
      try {
        applyFaults(host, faults);
      } catch (error) {
        if (error instanceof FaultConfigError) throw new SimAdminError(error.message, { hint: 'docs/sim.md lists the fault fields.' });
        throw error;
      }
    },
    clearFaults: () => applyFaults(host, undefined),
    setBehaviour: (behaviour) => {
      host.state.behaviour = checkBehaviour(behaviour, host.state.behaviour);
      return { ...host.state.behaviour };
    },
    behaviour: () => ({ ...host.state.behaviour }),
    requests: () => host.log.all(),
    requestSummary: () => host.log.summary(),
    resetRequests: () => host.log.reset(),
    arrivals: () => host.log.arrivals,
    setTokens: (tokens) => {
      host.tokens = tokens === null ? null : checkTokens(tokens);
    },
    tokenNames: () => (host.tokens === null ? null : [...host.tokens.values()]),
    serving: (lbUuid, options = {}) => {
      const ports = host.state.dataPlane.serving(lbUuid.toLowerCase(), options.since);
      if (ports === undefined) {
        throw new SimAdminError(`no simulated load balancer has uuid ${lbUuid}`, { hint: 'GET /v1/load-balancers lists them.' });
      }
      return { ports };
    },
    probe: (request) => {
      const to = target(host.state, request);
      return 'reason' in to ? { served: false, reason: to.reason } : host.state.dataPlane.probe(to.lbUuid, to.protocol, to.port, to.source);
    },
    connect: (request) => {
      const to = target(host.state, request);
      return 'reason' in to ? { opened: false, reason: to.reason } : host.state.dataPlane.connect(to.lbUuid, to.protocol, to.port, to.source);
    },
    connection: (id) => host.state.dataPlane.connection(id) ?? unknownConnection(id),
    connections: () => host.state.dataPlane.allConnections(),
    closeConnection: (id) => {
      if (!host.state.dataPlane.closeConnection(id)) unknownConnection(id);
    },
    world: () => ({ ...host.world }),
    setEndpointHealth: (address, port, healthy) => {
      const ip = parseIp(address);
      if (ip === undefined) throw new SimAdminError(`endpoint health: "${address}" is not an IP address`);
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        throw new SimAdminError(`endpoint health: port ${port} is not a port number from 1 to 65535`);
      }
      host.state.dataPlane.setEndpointHealth(ip.text, port, healthy);
    },
    failingEndpoints: () => host.state.dataPlane.failingEndpoints(),
    setDataPlane: (timings) => {
      host.state.dataPlane.setTimings(checkDataPlane(timings, host.state.dataPlane.timings, 'dataPlane'));
      return host.state.dataPlane.timings;
    },
    dataPlane: () => host.state.dataPlane.timings,
  };
}

function unknownConnection(id: string): never {
  throw new SimAdminError(`no simulated connection has id ${id}`, { hint: 'GET /_sim/connections lists them.' });
}

function knownServer(state: SimState, uuid: string): void {
  if (!state.servers.has(uuid.toLowerCase())) {
    throw new SimAdminError(`no simulated server has uuid ${uuid}`, { hint: 'GET /v1/servers lists the servers.' });
  }
}

function serverActionByAdmin(host: AdminHost, uuid: string, action: 'start' | 'stop'): void {
  knownServer(host.state, uuid);
  try {
    serverAction(host.state, uuid.toLowerCase(), action, host.serverActionMs);
  } catch (error) {
    if (error instanceof ApiError) throw new SimAdminError(`cannot ${action} server ${uuid}: ${JSON.stringify(error.body)}`);
    throw error;
  }
}

/** Replaces the faults (none: `undefined`); load balancers a fault holds in a status show it. */
function applyFaults(host: AdminHost, faults: unknown): void {
  if (faults === undefined) host.faults.clear();
  else host.faults.set(faults);
  host.state.pinnedLbStatus = new Map(Object.entries(host.faults.stuckLoadBalancers));
}

/**
 * The load balancer that has `address` as VIP or assigned floating IP, with the checked
 * protocol, port and source; or why no load balancer answers there.
 */
function target(
  state: SimState,
  request: ProbeRequest,
): { lbUuid: string; protocol: 'tcp' | 'udp'; port: number; source?: IpAddress } | { reason: string } {
  const protocol = request.protocol ?? 'tcp';
  if (protocol !== 'tcp' && protocol !== 'udp') throw new SimAdminError(`probe: protocol "${String(protocol)}" is not tcp or udp`);
  if (!Number.isInteger(request.port) || request.port < 1 || request.port > 65535) {
    throw new SimAdminError(`probe: port ${request.port} is not a port number from 1 to 65535`);
  }
  const ip = parseIp(request.address);
  if (ip === undefined) throw new SimAdminError(`probe: address "${request.address}" is not an IP address`);
  const source = request.source === undefined ? undefined : parseIp(request.source);
  if (request.source !== undefined && source === undefined) throw new SimAdminError(`probe: source "${request.source}" is not an IP address`);
  const byVip = [...state.loadBalancers.values()].find((lb) => lb.vips.some((vip) => vip.ip.text === ip.text));
  const lbUuid = byVip?.uuid ?? state.floatingIps.get(ip.text)?.loadBalancerUuid ?? undefined;
  if (lbUuid === undefined) return { reason: `no load balancer has the address ${ip.text}` };
  return { lbUuid, protocol, port: request.port, ...(source === undefined ? {} : { source }) };
}

/** Answers a request under /_sim/; 404 for an endpoint there is none of. */
export async function handleAdmin(
  host: AdminHost,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  pathname: string,
  rawQuery: string,
): Promise<void> {
  const bodyText = await readBody(req);
  const parts = pathname.split('/').slice(2);
  const admin = simulatorAdmin(host);
  try {
    if (parts.length === 3 && parts[0] === 'load-balancers' && parts[2] === 'serving' && method === 'GET') {
      const since = queryValue(rawQuery, 'since');
      const sinceMs = since === undefined ? undefined : parseSince(since);
      return send(res, 200, admin.serving(decodeURIComponent(parts[1]!), { since: sinceMs }));
    }
    if (parts.length === 1 && parts[0] === 'probe' && method === 'GET') {
      const request = probeRequest(rawQuery);
      if (request === undefined) {
        return send(res, 400, { detail: 'probe: give ?address=VIP&port=N (and &protocol=tcp|udp, default tcp; &source=IP)' });
      }
      const answer = admin.probe(request);
      return send(res, answer.served ? 200 : 503, answer);
    }
    if (parts[0] === 'connections' && parts.length <= 2) {
      const id = parts[1] === undefined ? undefined : decodeURIComponent(parts[1]);
      if (id === undefined && method === 'GET') return send(res, 200, admin.connections());
      if (id === undefined && method === 'POST') {
        const request = probeRequest(rawQuery);
        if (request === undefined) {
          return send(res, 400, { detail: 'connections: give ?address=VIP&port=N (and &protocol=tcp|udp, default tcp; &source=IP)' });
        }
        const answer = admin.connect(request);
        return send(res, answer.opened ? 201 : 503, answer.opened ? answer.connection : answer);
      }
      if (id !== undefined && method === 'GET') return send(res, 200, admin.connection(id));
      if (id !== undefined && method === 'DELETE') {
        admin.closeConnection(id);
        return send(res, 204);
      }
    }
    if (parts.length === 1 && parts[0] === 'world' && method === 'GET') return send(res, 200, admin.world());
    // Settings that GET shows and PATCH (or PUT) changes in part, answering all of them.
    const settings: Record<string, { get(): unknown; set(changes: Dict): unknown }> = {
      behaviour: { get: () => admin.behaviour(), set: (changes) => admin.setBehaviour(changes) },
      'data-plane': { get: () => admin.dataPlane(), set: (changes) => admin.setDataPlane(changes) },
    };
    const setting = parts.length === 1 && Object.hasOwn(settings, parts[0]!) ? settings[parts[0]!] : undefined;
    if (setting !== undefined) {
      if (method === 'GET') return send(res, 200, setting.get());
      if (method === 'PATCH' || method === 'PUT') {
        const parsed = parseJsonBody(bodyText);
        if ('error' in parsed) return send(res, 400, parsed.error);
        return send(res, 200, setting.set(parsed.body));
      }
    }
    if (parts.length === 1 && parts[0] === 'endpoint-health') {
      if (method === 'GET') return send(res, 200, { failing: admin.failingEndpoints() });
      if (method === 'PUT') {
        const parsed = parseJsonBody(bodyText);
        if ('error' in parsed) return send(res, 400, parsed.error);
        const { address, port, healthy } = parsed.body;
        if (typeof address !== 'string' || typeof port !== 'number' || typeof healthy !== 'boolean') {
          return send(res, 400, { detail: 'endpoint-health: expected {"address": "10.0.0.5", "port": 30080, "healthy": false}' });
        }
        admin.setEndpointHealth(address, port, healthy);
        return send(res, 204);
      }
    }
    if (parts[0] === 'servers' && parts.length >= 2) {
      const uuid = decodeURIComponent(parts[1]!);
      if (parts.length === 3 && method === 'POST' && (parts[2] === 'stop' || parts[2] === 'start')) {
        if (parts[2] === 'stop') admin.stopServer(uuid);
        else admin.startServer(uuid);
        send(res, 204);
        return;
      }
      if (parts.length === 2 && method === 'DELETE') {
        admin.deleteServer(uuid);
        send(res, 204);
        return;
      }
    }
    if (parts.length === 1 && parts[0] === 'faults') {
      if (method === 'GET') return send(res, 200, host.faults.describe());
      if (method === 'DELETE') {
        admin.clearFaults();
        return send(res, 204);
      }
      if (method === 'PUT') {
        const parsed = parseJsonBody(bodyText);
        if ('error' in parsed) return send(res, 400, parsed.error);
        admin.setFaults(parsed.body as FaultConfig);
        return send(res, 204);
      }
    }
    if (parts.length === 1 && parts[0] === 'tokens') {
      if (method === 'GET') return send(res, 200, { names: admin.tokenNames() });
      if (method === 'DELETE') {
        admin.setTokens(null);
        return send(res, 204);
      }
      if (method === 'PUT') {
        const parsed = parseJsonBody(bodyText);
        if ('error' in parsed) return send(res, 400, parsed.error);
        admin.setTokens(parsed.body as Record<string, string>);
        return send(res, 204);
      }
    }
    if (parts[0] === 'requests' && parts.length === 1) {
      if (method === 'GET') return send(res, 200, admin.requests());
      if (method === 'DELETE') {
        admin.resetRequests();
        return send(res, 204);
      }
    }
    if (parts[0] === 'requests' && parts[1] === 'summary' && parts.length === 2 && method === 'GET') {
      return send(res, 200, admin.requestSummary());
    }
    send(res, 404, { detail: `No admin endpoint ${method} ${pathname}; see docs/sim.md.` });
  } catch (error) {
    if (error instanceof SimAdminError) {
      send(res, error.message.startsWith('no simulated ') ? 404 : 400, { detail: error.message });
      return;
    }
    throw error;
  }
}

/** `current` with the timings of `changes`; SimAdminError names every bad field. */
export function checkDataPlane(changes: unknown, current: DataPlaneTimings, where: string): DataPlaneTimings {
  const { timings, problems } = readDataPlaneTimings(changes, current, where);
  if (problems.length > 0) throw new SimAdminError(problems.join('; '), { hint: 'docs/sim.md, "Data plane", lists the timings.' });
  return timings;
}

/** The probe's question from `?address=…&port=…&protocol=…&source=…`; undefined without address or port. */
function probeRequest(rawQuery: string): ProbeRequest | undefined {
  const address = queryValue(rawQuery, 'address');
  const port = queryValue(rawQuery, 'port');
  if (address === undefined || port === undefined) return undefined;
  const protocol = (queryValue(rawQuery, 'protocol') ?? 'tcp') as 'tcp';
  const source = queryValue(rawQuery, 'source');
  return { address, port: /^\d+$/.test(port) ? Number(port) : NaN, protocol, ...(source === undefined ? {} : { source }) };
}

/** `since` as epoch milliseconds or an ISO-8601 time. */
function parseSince(text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(value)) throw new SimAdminError(`since: "${text}" is neither epoch milliseconds nor an ISO-8601 time`);
  return value;
}

/** Token → name, checked; SimAdminError names the first problem. */
export function checkTokens(tokens: unknown): Map<string, string> {
  if (!isDict(tokens) || Object.keys(tokens).length === 0) {
    throw new SimAdminError('tokens: expected a JSON object of at least one name → token (DELETE /_sim/tokens accepts any token)');
  }
  const byToken = new Map<string, string>();
  for (const [name, token] of Object.entries(tokens)) {
    if (name.trim() === '') throw new SimAdminError('tokens: a token name is blank');
    if (typeof token !== 'string' || token === '' || /\s/.test(token)) {
      throw new SimAdminError(`tokens.${name}: expected a non-empty token without whitespace`);
    }
    const other = byToken.get(token);
    if (other !== undefined) throw new SimAdminError(`tokens.${name}: the same token as tokens.${other}`);
    byToken.set(token, name);
  }
  return byToken;
}

/** `current` with the switches of `changes` applied; SimAdminError for unknown or non-boolean ones. */
export function checkBehaviour(changes: unknown, current: SimBehaviour): SimBehaviour {
  if (!isDict(changes)) throw new SimAdminError('behaviour: expected a JSON object of switches');
  const next = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (!Object.hasOwn(DEFAULT_BEHAVIOUR, key)) {
      throw new SimAdminError(`behaviour: unknown switch "${key}" (expected one of: ${Object.keys(DEFAULT_BEHAVIOUR).join(', ')})`);
    }
    if (typeof value !== 'boolean') throw new SimAdminError(`behaviour.${key}: expected true or false`);
    next[key as keyof SimBehaviour] = value;
  }
  return next;
}

