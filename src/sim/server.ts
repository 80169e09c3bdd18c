// The simulator's HTTP server on 127.0.0.1: routing, bearer-token check, faults, the per-LB
// serialisation of mutations, the request log, and the admin endpoints under /_sim/.

import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CcmError } from '../core/errors.js';
import { API_ROUTES, serverAction, type ApiResult, type RequestContext, type Route } from './api.js';
import {
  readDataPlaneTimings,
  type ConnectionInfo,
  type ConnectResult,
  type DataPlaneChanges,
  type DataPlaneTimings,
  type PortServing,
  type ProbeResult,
} from './dataplane.js';
import { Faults, FaultConfigError, type FaultConfig, type FaultDecision } from './faults.js';
import { ApiError, isDict, type Dict } from './fields.js';
import { parseIp, type IpAddress } from './net.js';
import { validateSeed, type SimSeed } from './seed.js';
import { DEFAULT_BEHAVIOUR, SimState, type SimBehaviour } from './state.js';
import { DEFAULT_WORLD, isTimeScale, isWorldName, TIME_SCALE_RANGE, WORLD_NAMES, WORLDS, type WorldName } from './world.js';

export interface SimulatorOptions {
  /** The cloud to start with; an empty cloud when absent. Validated like a seed file. */
  seed?: SimSeed;
  /** 0 or absent: a free port. */
  port?: number;
  /** How long a new load balancer stays `changing` (default 2000 ms), times the time scale. */
  lbProvisionMs?: number;
  /** How long a server start/stop/reboot stays `changing` (default 0), times the time scale. */
  serverActionMs?: number;
  /**
   * How strictly the simulator plays the real API: `strict` (its timings, health checks, `error`
   * status, deletes that settle) or `forgiving`; default DEFAULT_WORLD (src/sim/world.ts). The
   * seed's `dataPlane`, then `dataPlane` and `behaviour` below, change single settings over it.
   */
  world?: WorldName;
  /**
   * Multiplies every duration the simulator models (provisioning, server actions, propagation,
   * health monitors' `delay_s`), not the faults: 0.05 runs the real API's 15 s in 750 ms with the
   * same order of events. Default 1.
   */
  timeScale?: number;
  /**
   * When set, API requests need `Authorization: Bearer <token>`; admin requests never do. It is
   * the token named `default`; `sim.admin.setTokens` changes the accepted tokens while running.
   */
  token?: string;
  /** Behaviour switches over the world's. Changeable later via the admin API. */
  behaviour?: Partial<SimBehaviour>;
  /**
   * The data plane's timings, over the world's and the seed's `dataPlane` (docs/sim.md, "Data
   * plane"). In the forgiving world (propagationMs 0, healthChecks false) it follows the API at once.
   */
  dataPlane?: DataPlaneChanges;
}

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

export interface RequestLogEntry {
  /**
   * The order of arrival: 1 for the first API request since the simulator started, counting on
   * across `resetRequests`. The log itself is in the order requests finished; a request that
   * waited (latency, a hang, the LB queue) comes later in the log than its `seq` says.
   */
  seq: number;
  method: string;
  /** Path and query as received. */
  path: string;
  /** The route pattern, e.g. `/v1/load-balancers/pools/{uuid}/members`; the path if none matched. */
  route: string;
  /** The status answered; 0 when no answer was sent (connection reset, or the client gave up). */
  status: number;
  /** The fault that changed this request, if one did. */
  fault?: 'error' | 'rateLimit' | 'connectionReset' | 'hang' | 'shortList';
  /** When the request arrived (ISO-8601). */
  time: string;
  durationMs: number;
  /** The name of the accepted token it authenticated with (see setTokens); absent without one. */
  token?: string;
}

export interface RouteCount {
  method: string;
  route: string;
  count: number;
  /** Count per answered status code. */
  statuses: Record<string, number>;
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

export interface Simulator {
  /** `http://127.0.0.1:PORT`, no trailing slash: the API is under /v1, the admin API under /_sim. */
  url: string;
  stop(): Promise<void>;
  admin: SimulatorAdmin;
}

/** A refused admin operation: unknown server, invalid fault configuration. */
export class SimAdminError extends CcmError {}

const MAX_LOG_ENTRIES = 100_000;

/** The answer to an overlapping write with `refuseOverlappingWrites` (its text is a guess). */
const OVERLAPPING_WRITE = 'Another change to this load balancer is still being processed; try again later.';

function unknownConnection(id: string): never {
  throw new SimAdminError(`no simulated connection has id ${id}`, { hint: 'GET /_sim/connections lists them.' });
}

/**
 * Starts a simulator on 127.0.0.1. Throws ConfigError for an invalid seed, SimAdminError for an
 * unknown world, a time scale out of range, an unknown behaviour switch or bad timings.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = validateSeed(options.seed ?? {}, 'seed');
  const worldName = options.world ?? DEFAULT_WORLD;
  if (!isWorldName(worldName)) {
    throw new SimAdminError(`world: "${String(worldName)}" is no world of the simulator (expected one of: ${WORLD_NAMES.join(', ')})`);
  }
  const timeScale = options.timeScale ?? 1;
  if (!isTimeScale(timeScale)) {
    throw new SimAdminError(`timeScale: expected a number from ${TIME_SCALE_RANGE.min} to ${TIME_SCALE_RANGE.max}, got ${String(timeScale)}`, {
      hint: '0.05 runs every timing 20 times faster; 1 is real time.',
    });
  }
  const world = WORLDS[worldName];
  const behaviour = checkBehaviour(options.behaviour ?? {}, world.behaviour);
  const timings = checkDataPlane(options.dataPlane ?? {}, checkDataPlane(seed.dataPlane ?? {}, world.dataPlane, 'seed dataPlane'), 'dataPlane');
  const http = createServer();
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const state = new SimState(url, seed, Date.now, { dataPlane: timings, timeScale });
  state.behaviour = behaviour;
  const sim = new RunningSimulator(http, state, options, { world: worldName, timeScale });
  http.on('request', (req, res) => {
    sim.handle(req, res).catch((error: unknown) => {
      // A bug in the simulator: answer 500 like the real API would, and keep the cause visible.
      console.error('cloudscale-ccm sim: internal error', error);
      if (!res.headersSent) send(res, 500, { detail: 'Server error.' });
      else res.destroy();
    });
  });
  return { url, stop: () => sim.stop(), admin: sim.admin() };
}

interface MatchedRoute {
  route: Route;
  params: Record<string, string>;
}

const ROUTE_TABLE = API_ROUTES.map((route) => ({ route, segments: route.pattern.split('/').slice(1) }));

/** The route as the request log shows it: every UUID parameter reads `{uuid}`. */
function routeLabel(route: Route): string {
  return route.pattern.replace(/\{(?!ip\})[a-z_]+\}/g, '{uuid}');
}

function matchRoute(method: string, segments: string[]): { matched?: MatchedRoute; pathKnown: boolean } {
  let pathKnown = false;
  let best: { matched: MatchedRoute; literals: number } | undefined;
  for (const { route, segments: pattern } of ROUTE_TABLE) {
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    const fits = pattern.every((part, index) => {
      const actual = segments[index]!;
      if (part.startsWith('{')) {
        params[part.slice(1, -1)] = actual;
        return true;
      }
      literals++;
      return part === actual;
    });
    if (!fits) continue;
    pathKnown = true;
    if (route.method !== method) continue;
    if (best === undefined || literals > best.literals) best = { matched: { route, params }, literals };
  }
  return { matched: best?.matched, pathKnown };
}

class RunningSimulator {
  private readonly faults = new Faults();
  private log: RequestLogEntry[] = [];
  private arrived = 0;
  /** Token → its name; null: any request is accepted. */
  private tokens: Map<string, string> | null;
  /** The tail of each LB's queue of mutations. */
  private readonly lbQueues = new Map<string, Promise<unknown>>();
  private readonly stopping = new AbortController();
  private readonly lbProvisionMs: number;
  private readonly serverActionMs: number;

  constructor(
    private readonly http: HttpServer,
    private readonly state: SimState,
    private readonly options: SimulatorOptions,
    private readonly worldInfo: WorldInfo,
  ) {
    this.lbProvisionMs = (options.lbProvisionMs ?? 2000) * worldInfo.timeScale;
    this.serverActionMs = (options.serverActionMs ?? 0) * worldInfo.timeScale;
    this.tokens = options.token === undefined ? null : checkTokens({ default: options.token });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    const closed = new Promise<void>((resolve, reject) => {
      this.http.close((error) => (error === undefined ? resolve() : reject(error)));
    });
    this.http.closeAllConnections();
    await closed;
  }

  admin(): SimulatorAdmin {
    return {
      stopServer: (uuid) => this.adminServerAction(uuid, 'stop'),
      startServer: (uuid) => this.adminServerAction(uuid, 'start'),
      deleteServer: (uuid) => {
        this.knownServer(uuid);
        this.state.deleteServer(uuid.toLowerCase());
      },
      setFaults: (faults) => {
        try {
          this.applyFaults(faults);
        } catch (error) {
          if (error instanceof FaultConfigError) throw new SimAdminError(error.message, { hint: 'docs/sim.md lists the fault fields.' });
          throw error;
        }
      },
      clearFaults: () => this.applyFaults(undefined),
      setBehaviour: (behaviour) => {
        this.state.behaviour = checkBehaviour(behaviour, this.state.behaviour);
        return { ...this.state.behaviour };
      },
      behaviour: () => ({ ...this.state.behaviour }),
      requests: () => this.log.map((entry) => ({ ...entry })),
      requestSummary: () => this.summary(),
      resetRequests: () => {
        this.log = [];
      },
      arrivals: () => this.arrived,
      setTokens: (tokens) => {
        this.tokens = tokens === null ? null : checkTokens(tokens);
      },
      tokenNames: () => (this.tokens === null ? null : [...this.tokens.values()]),
      serving: (lbUuid, options = {}) => {
        const ports = this.state.dataPlane.serving(lbUuid.toLowerCase(), options.since);
        if (ports === undefined) {
          throw new SimAdminError(`no simulated load balancer has uuid ${lbUuid}`, { hint: 'GET /v1/load-balancers lists them.' });
        }
        return { ports };
      },
      probe: (request) => {
        const target = this.target(request);
        return 'reason' in target ? { served: false, reason: target.reason } : this.state.dataPlane.probe(target.lbUuid, target.protocol, target.port, target.source);
      },
      connect: (request) => {
        const target = this.target(request);
        return 'reason' in target ? { opened: false, reason: target.reason } : this.state.dataPlane.connect(target.lbUuid, target.protocol, target.port, target.source);
      },
      connection: (id) => this.state.dataPlane.connection(id) ?? unknownConnection(id),
      connections: () => this.state.dataPlane.allConnections(),
      closeConnection: (id) => {
        if (!this.state.dataPlane.closeConnection(id)) unknownConnection(id);
      },
      world: () => ({ ...this.worldInfo }),
      setEndpointHealth: (address, port, healthy) => {
        const ip = parseIp(address);
        if (ip === undefined) throw new SimAdminError(`endpoint health: "${address}" is not an IP address`);
        if (!Number.isInteger(port) || port < 1 || port > 65535) {
          throw new SimAdminError(`endpoint health: port ${port} is not a port number from 1 to 65535`);
        }
        this.state.dataPlane.setEndpointHealth(ip.text, port, healthy);
      },
      failingEndpoints: () => this.state.dataPlane.failingEndpoints(),
      setDataPlane: (timings) => {
        this.state.dataPlane.setTimings(checkDataPlane(timings, this.state.dataPlane.timings, 'dataPlane'));
        return this.state.dataPlane.timings;
      },
      dataPlane: () => this.state.dataPlane.timings,
    };
  }

  /**
   * The load balancer that has `address` as VIP or assigned floating IP, with the checked
   * protocol, port and source; or why no load balancer answers there.
   */
  private target(
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
    const byVip = [...this.state.loadBalancers.values()].find((lb) => lb.vips.some((vip) => vip.ip.text === ip.text));
    const lbUuid = byVip?.uuid ?? this.state.floatingIps.get(ip.text)?.loadBalancerUuid ?? undefined;
    if (lbUuid === undefined) return { reason: `no load balancer has the address ${ip.text}` };
    return { lbUuid, protocol, port: request.port, ...(source === undefined ? {} : { source }) };
  }

  private knownServer(uuid: string): void {
    if (!this.state.servers.has(uuid.toLowerCase())) {
      throw new SimAdminError(`no simulated server has uuid ${uuid}`, { hint: 'GET /v1/servers lists the servers.' });
    }
  }

  private adminServerAction(uuid: string, action: 'start' | 'stop'): void {
    this.knownServer(uuid);
    try {
      serverAction(this.state, uuid.toLowerCase(), action, this.serverActionMs);
    } catch (error) {
      if (error instanceof ApiError) throw new SimAdminError(`cannot ${action} server ${uuid}: ${JSON.stringify(error.body)}`);
      throw error;
    }
  }

  private applyFaults(faults: unknown): void {
    if (faults === undefined) this.faults.clear();
    else this.faults.set(faults);
    this.state.pinnedLbStatus = new Map(Object.entries(this.faults.stuckLoadBalancers));
  }

  private summary(): RouteCount[] {
    const counts = new Map<string, RouteCount>();
    for (const entry of this.log) {
      const key = `${entry.method} ${entry.route}`;
      let count = counts.get(key);
      if (count === undefined) {
        count = { method: entry.method, route: entry.route, count: 0, statuses: {} };
        counts.set(key, count);
      }
      count.count++;
      count.statuses[entry.status] = (count.statuses[entry.status] ?? 0) + 1;
    }
    return [...counts.values()];
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = performance.now();
    const time = new Date().toISOString();
    const method = (req.method ?? 'GET').toUpperCase();
    const target = req.url ?? '/';
    const queryStart = target.indexOf('?');
    let pathname = queryStart < 0 ? target : target.slice(0, queryStart);
    const rawQuery = queryStart < 0 ? '' : target.slice(queryStart + 1);
    if (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.slice(0, -1);

    if (pathname === '/_sim' || pathname.startsWith('/_sim/')) {
      await this.handleAdmin(req, res, method, pathname, rawQuery);
      return;
    }

    let segments: string[];
    try {
      segments = pathname.split('/').slice(1).map(decodeURIComponent);
    } catch {
      segments = [];
    }
    const seq = ++this.arrived;
    const { matched, pathKnown } = matchRoute(method, segments);
    const routeName = matched === undefined ? pathname : routeLabel(matched.route);
    const clientGone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) clientGone.abort();
    });
    const answer = await this.answerApi(req, method, `/${segments.join('/')}`, matched, pathKnown, rawQuery, clientGone.signal);
    let status = 0;
    if (answer.drop === undefined && !res.destroyed) {
      send(res, answer.status, answer.body, answer.headers);
      status = answer.status;
    } else if (answer.drop === 'reset') {
      req.socket.resetAndDestroy();
    } else {
      res.destroy();
    }
    this.record({
      seq,
      method,
      path: target,
      route: routeName,
      status,
      ...(answer.fault === undefined ? {} : { fault: answer.fault }),
      time,
      durationMs: Math.round((performance.now() - arrived) * 1000) / 1000,
      ...(answer.token === undefined ? {} : { token: answer.token }),
    });
  }

  private record(entry: RequestLogEntry): void {
    this.log.push(entry);
    if (this.log.length > MAX_LOG_ENTRIES) this.log.splice(0, this.log.length - MAX_LOG_ENTRIES);
  }

  /** `path` is decoded and without trailing slash: what fault patterns are matched against. */
  private async answerApi(
    req: IncomingMessage,
    method: string,
    path: string,
    matched: MatchedRoute | undefined,
    pathKnown: boolean,
    rawQuery: string,
    clientGone: AbortSignal,
  ): Promise<Answer> {
    const bodyText = await readBody(req);
    if (matched === undefined) {
      if (pathKnown) return { status: 405, body: { detail: `Method "${method}" not allowed.` } };
      return { status: 404, body: { detail: 'Not found.' } };
    }
    const auth = this.authenticate(req);
    if ('problem' in auth) {
      return { status: 401, body: { detail: auth.problem }, headers: { 'WWW-Authenticate': 'Bearer realm="api"' } };
    }
    const token = auth.token;
    let body: Dict = {};
    if (method === 'POST' || method === 'PATCH' || method === 'PUT') {
      const parsed = parseJsonBody(bodyText);
      if ('error' in parsed) return { status: 400, body: parsed.error };
      body = parsed.body;
    }
    const ctx: RequestContext = {
      state: this.state,
      params: matched.params,
      body,
      query: parseQuery(rawQuery),
      lbProvisionMs: this.lbProvisionMs,
      serverActionMs: this.serverActionMs,
    };
    const route = routeLabel(matched.route);
    const fault = this.faults.decide(method, path, route);
    const run = async (): Promise<Answer> => {
      await this.delay(this.faults.latencyMs);
      if (fault === undefined) {
        const result = runHandler(matched.route, ctx);
        const shortened = this.faults.shortenList(method, path, route, result.status, result.body);
        return shortened === undefined ? result : { ...result, body: shortened, fault: 'shortList' };
      }
      if (!fault.afterApplying) {
        // Only a hang with `forMs` lets the request through, late.
        return (await this.faultAnswer(fault, clientGone)) ?? { ...runHandler(matched.route, ctx), fault: 'hang' };
      }
      const result = runHandler(matched.route, ctx);
      return (await this.faultAnswer(fault, clientGone)) ?? { ...result, fault: 'hang' };
    };
    const lockKey = method === 'GET' ? undefined : matched.route.lockKey?.(ctx);
    if (lockKey !== undefined && this.state.behaviour.refuseOverlappingWrites && this.lbQueues.has(lockKey)) {
      return { status: 400, body: { detail: OVERLAPPING_WRITE }, ...(token === undefined ? {} : { token }) };
    }
    const answer = await (lockKey === undefined ? run() : this.serialised(lockKey, run));
    return token === undefined ? answer : { ...answer, token };
  }

  /**
   * The answer a fault gives instead of the handler's, or `undefined` when the request is to be
   * answered as usual after all (a hang with `forMs` that has run out).
   */
  private async faultAnswer(fault: FaultDecision, clientGone: AbortSignal): Promise<Answer | undefined> {
    switch (fault.kind) {
      case 'error':
        return { status: fault.status, body: fault.body, headers: fault.headers, fault: fault.status === 429 ? 'rateLimit' : 'error' };
      case 'reset':
        return { drop: 'reset', fault: 'connectionReset' };
      case 'hang':
        if (fault.forMs !== undefined) {
          await this.delay(fault.forMs);
          return undefined;
        }
        await this.untilAborted(clientGone);
        return { drop: 'unanswered', fault: 'hang' };
    }
  }

  /** Resolves when `signal` aborts or the simulator stops. */
  private untilAborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const signals = [signal, this.stopping.signal];
      if (signals.some((s) => s.aborted)) return resolve();
      const done = (): void => {
        for (const s of signals) s.removeEventListener('abort', done);
        resolve();
      };
      for (const s of signals) s.addEventListener('abort', done, { once: true });
    });
  }

  /** Runs `task` after every earlier task of the same LB has finished. */
  private serialised<T>(lbUuid: string, task: () => Promise<T>): Promise<T> {
    const previous = this.lbQueues.get(lbUuid) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.lbQueues.set(lbUuid, tail);
    void tail.then(() => {
      if (this.lbQueues.get(lbUuid) === tail) this.lbQueues.delete(lbUuid);
    });
    return result;
  }

  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    const { signal } = this.stopping;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onStop = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onStop);
        resolve();
      }, ms);
      signal.addEventListener('abort', onStop, { once: true });
    });
  }

  /** The name of the accepted token the request carries (none when any is accepted), or why it is refused. */
  private authenticate(req: IncomingMessage): { token?: string } | { problem: string } {
    if (this.tokens === null) return {};
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') return { problem: 'Authentication credentials were not provided.' };
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match === null) {
      return {
        problem: /^Bearer\s*$/i.test(header)
          ? 'Invalid token header. No credentials provided.'
          : 'Authentication credentials were not provided.',
      };
    }
    const name = this.tokens.get(match[1]!);
    return name === undefined ? { problem: 'Invalid token.' } : { token: name };
  }

  // ---- admin ---------------------------------------------------------------------------------

  private async handleAdmin(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    pathname: string,
    rawQuery: string,
  ): Promise<void> {
    const bodyText = await readBody(req);
    const parts = pathname.split('/').slice(2);
    const admin = this.admin();
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
        if (method === 'GET') return send(res, 200, this.faults.describe());
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
}

/** An HTTP answer, or none at all (`drop`); `fault` names the fault that shaped it. */
type Answer = (
  | { drop?: undefined; status: number; body?: unknown; headers?: Record<string, string>; fault?: RequestLogEntry['fault'] }
  | { drop: 'reset' | 'unanswered'; fault: RequestLogEntry['fault'] }
) & { token?: string };

/** `current` with the timings of `changes`; SimAdminError names every bad field. */
function checkDataPlane(changes: unknown, current: DataPlaneTimings, where: string): DataPlaneTimings {
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

/** The first value of query parameter `name`. */
function queryValue(rawQuery: string, name: string): string | undefined {
  return parseQuery(rawQuery).find(([key]) => key === name)?.[1];
}

/** `since` as epoch milliseconds or an ISO-8601 time. */
function parseSince(text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(value)) throw new SimAdminError(`since: "${text}" is neither epoch milliseconds nor an ISO-8601 time`);
  return value;
}

/** Token → name, checked; SimAdminError names the first problem. */
function checkTokens(tokens: unknown): Map<string, string> {
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
function checkBehaviour(changes: unknown, current: SimBehaviour): SimBehaviour {
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

function runHandler(route: Route, ctx: RequestContext): { status: number; body?: unknown; headers?: Record<string, string> } {
  try {
    const result: ApiResult = route.handle(ctx);
    return result;
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, body: error.body, headers: error.headers };
    throw error;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJsonBody(text: string): { body: Dict } | { error: unknown } {
  if (text.trim() === '') return { body: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: { detail: `JSON parse error - ${(error as Error).message}` } };
  }
  if (!isDict(value)) {
    const kind = Array.isArray(value) ? 'list' : value === null ? 'NoneType' : typeof value;
    return { error: { non_field_errors: [`Invalid data. Expected a dictionary, but got ${kind}.`] } };
  }
  return { body: value };
}

/** `tag%3Aenv=prod&tag:team` → [['tag:env', 'prod'], ['tag:team', undefined]]; `+` is a space. */
export function parseQuery(raw: string): [string, string | undefined][] {
  if (raw === '') return [];
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text.replaceAll('+', ' '));
    } catch {
      return text;
    }
  };
  return raw
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals < 0 ? [decode(part), undefined] : [decode(part.slice(0, equals)), decode(part.slice(equals + 1))];
    });
}

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS, PUT, PATCH, DELETE',
};

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, { ...CORS_HEADERS, ...headers });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...CORS_HEADERS,
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
