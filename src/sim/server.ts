// The simulator's HTTP server on 127.0.0.1: routing, bearer-token check, faults, the per-LB
// serialisation of mutations and the request log; requests under /_sim/ go to the admin API
// (admin.ts).

import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkBehaviour, checkDataPlane, checkTokens, handleAdmin, SimAdminError, simulatorAdmin, type AdminHost, type SimulatorAdmin, type WorldInfo } from './admin.js';
import { API_ROUTES, type ApiResult, type RequestContext, type Route } from './api.js';
import type { DataPlaneChanges } from './dataplane-timings.js';
import { Faults, type FaultDecision } from './faults.js';
import { ApiError, type Dict } from './fields.js';
import { parseJsonBody, parseQuery, readBody, send } from './http.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { validateSeed, type SimSeed } from './seed.js';
import type { SimBehaviour } from './behaviour.js';
import { SimState } from './state.js';
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

export interface Simulator {
  /** `http://127.0.0.1:PORT`, no trailing slash: the API is under /v1, the admin API under /_sim. */
  url: string;
  stop(): Promise<void>;
  admin: SimulatorAdmin;
}

/** The answer to an overlapping write with `refuseOverlappingWrites` (its text is a guess). */
const OVERLAPPING_WRITE = 'Another change to this load balancer is still being processed; try again later.';

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
  return { url, stop: () => sim.stop(), admin: simulatorAdmin(sim) };
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

class RunningSimulator implements AdminHost {
  readonly faults = new Faults();
  readonly log = new RequestLog();
  /** Token → its name; null: any request is accepted. */
  tokens: Map<string, string> | null;
  /** The tail of each LB's queue of mutations. */
  private readonly lbQueues = new Map<string, Promise<unknown>>();
  private readonly stopping = new AbortController();
  private readonly lbProvisionMs: number;
  readonly serverActionMs: number;

  constructor(
    private readonly http: HttpServer,
    readonly state: SimState,
    options: SimulatorOptions,
    readonly world: WorldInfo,
  ) {
    this.lbProvisionMs = (options.lbProvisionMs ?? 2000) * world.timeScale;
    this.serverActionMs = (options.serverActionMs ?? 0) * world.timeScale;
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
      await handleAdmin(this, req, res, method, pathname, rawQuery);
      return;
    }

    let segments: string[];
    try {
      segments = pathname.split('/').slice(1).map(decodeURIComponent);
    } catch {
      segments = [];
    }
    const seq = this.log.arrive();
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
    this.log.record({
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
}

/** An HTTP answer, or none at all (`drop`); `fault` names the fault that shaped it. */
type Answer = (
  | { drop?: undefined; status: number; body?: unknown; headers?: Record<string, string>; fault?: RequestLogEntry['fault'] }
  | { drop: 'reset' | 'unanswered'; fault: RequestLogEntry['fault'] }
) & { token?: string };

function runHandler(route: Route, ctx: RequestContext): { status: number; body?: unknown; headers?: Record<string, string> } {
  try {
    const result: ApiResult = route.handle(ctx);
    return result;
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, body: error.body, headers: error.headers };
    throw error;
  }
}
