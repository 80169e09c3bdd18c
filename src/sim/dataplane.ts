// The simulated data plane: what the load balancers actually do, as opposed to what the API
// says. Configuration changes reach it `propagationMs` after the API answered; health monitors
// check members every `delay_s` and turn them `up` or `down` after their thresholds; a listener
// port serves while its pool has an enabled member that takes traffic. Every change of a port's
// serving state is kept, so a test (or a user in the sandbox) can measure downtime instead of
// asserting it. docs/sim.md ("Data plane") describes the model and which parts are guesses.
//
// The model is event-driven and lazy: nothing runs in the background. Every API change, admin
// change and query first advances the data plane to the current time, processing the due events
// (configuration that became effective, health inputs that changed, members that crossed a
// threshold) in time order. Health checks are not simulated one by one: a member's next status
// change is computed from its counters and scheduled as one event, so an idle simulator costs
// nothing and a stable member costs nothing per check.

import type { ListenerProtocol, MonitorStatus } from '../core/cloudscale/types.js';
import { cidrContains, parseCidr, type CidrNetwork, type IpAddress } from './net.js';

/**
 * Per kind of configuration change, how long after the API answered it reaches the data plane
 * (docs/sim.md, "Data plane"; the real API's figures: docs/cloudscale-api.md).
 */
export interface PropagationTable {
  /** A listener created on a port (and protocol) the load balancer never had a listener on. */
  newListener: number;
  /** A listener re-created on a port the load balancer had one on, or a PATCH of its port or protocol. */
  listener: number;
  /** A PATCH of a listener's `allowed_cidrs`. */
  allowedCidrs: number;
  /** A member created, enabled, disabled or deleted. */
  member: number;
  /** A health monitor created, PATCHed or deleted. */
  monitor: number;
  /** A listener, pool or load balancer deleted. */
  delete: number;
}

export type PropagationKind = keyof PropagationTable;
const PROPAGATION_KINDS: readonly PropagationKind[] = ['newListener', 'listener', 'allowedCidrs', 'member', 'monitor', 'delete'];
const MAX_PROPAGATION_MS = 3_600_000;

/** The delay of one kind of change: a number is the same delay for every kind. */
export function propagationOf(propagation: number | PropagationTable, kind: PropagationKind): number {
  return typeof propagation === 'number' ? propagation : propagation[kind];
}

export interface DataPlaneTimings {
  /**
   * How long after the API answered a configuration change reaches the data plane: one delay
   * for every change, or one per kind of change.
   */
  propagationMs: number | PropagationTable;
  /**
   * false: a monitored, enabled member is `up` while its server runs, at once (the simulator's
   * behaviour before it had a data plane). true: health monitors check members every `delay_s`.
   */
  healthChecks: boolean;
  /**
   * true: a listener port, a member's address and port in a pool, or a pool's monitor stays
   * taken until its delete (or port change) reached the data plane; a create that needs it
   * meanwhile is refused (400). false: free as soon as the API answered the delete.
   */
  deletesHoldUntilPropagated: boolean;
  /**
   * true: a running load balancer shows status `error` while one of its pools has a health
   * monitor and every enabled member of it is `down` (seen on the real platform).
   */
  errorWhilePoolDown: boolean;
}

/** Timings as a seed, `startSimulator` or the admin API give them: some fields, some kinds of propagation. */
export type DataPlaneChanges = Partial<Omit<DataPlaneTimings, 'propagationMs'>> & {
  propagationMs?: number | Partial<PropagationTable>;
};

export const DEFAULT_DATA_PLANE: DataPlaneTimings = {
  propagationMs: 0,
  healthChecks: false,
  deletesHoldUntilPropagated: false,
  errorWhilePoolDown: false,
};
const TIMING_NAMES = Object.keys(DEFAULT_DATA_PLANE).join(', ');

/**
 * `base` with the timings of `value` (the seed's `dataPlane`, the admin API's body) applied;
 * `problems` names each bad field under `where`, and is empty when all are fine.
 */
export function readDataPlaneTimings(
  value: unknown,
  base: DataPlaneTimings,
  where: string,
): { timings: DataPlaneTimings; problems: string[] } {
  const timings = { ...base };
  const problems: string[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { timings, problems: [`${where}: expected a mapping with any of ${TIMING_NAMES}`] };
  }
  for (const [key, field] of Object.entries(value)) {
    if (key === 'propagationMs') {
      const read = readPropagation(field, timings.propagationMs, `${where}.propagationMs`);
      timings.propagationMs = read.propagation;
      problems.push(...read.problems);
    } else if (key === 'healthChecks' || key === 'deletesHoldUntilPropagated' || key === 'errorWhilePoolDown') {
      if (typeof field === 'boolean') timings[key] = field;
      else problems.push(`${where}.${key}: expected true or false, got ${JSON.stringify(field)}`);
    } else {
      problems.push(`${where}: unknown field "${key}" (expected one of: ${TIMING_NAMES})`);
    }
  }
  return { timings, problems };
}

const isMilliseconds = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_PROPAGATION_MS;

/**
 * `propagationMs` as given: milliseconds for every kind, or a mapping of some kinds (the others
 * keep their delay from `current`).
 */
function readPropagation(
  value: unknown,
  current: number | PropagationTable,
  where: string,
): { propagation: number | PropagationTable; problems: string[] } {
  const expected = `expected milliseconds from 0 to ${MAX_PROPAGATION_MS}`;
  if (isMilliseconds(value)) return { propagation: value, problems: [] };
  if (typeof value === 'number') return { propagation: current, problems: [`${where}: ${expected}, got ${JSON.stringify(value)}`] };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { propagation: current, problems: [`${where}: ${expected}, or a mapping of ${PROPAGATION_KINDS.join(', ')} to them, got ${JSON.stringify(value)}`] };
  }
  const table = Object.fromEntries(PROPAGATION_KINDS.map((kind) => [kind, propagationOf(current, kind)])) as unknown as PropagationTable;
  const problems: string[] = [];
  for (const [kind, ms] of Object.entries(value)) {
    if (!(PROPAGATION_KINDS as readonly string[]).includes(kind)) {
      problems.push(`${where}: unknown kind "${kind}" (expected one of: ${PROPAGATION_KINDS.join(', ')})`);
    } else if (isMilliseconds(ms)) table[kind as PropagationKind] = ms;
    else problems.push(`${where}.${kind}: ${expected}, got ${JSON.stringify(ms)}`);
  }
  return { propagation: problems.length > 0 ? current : table, problems };
}

/** One configuration change of a load balancer, with the values it had when the API took it. */
export type ConfigChange =
  | {
      kind: 'listener';
      uuid: string;
      protocol: ListenerProtocol;
      port: number;
      poolUuid: string | null;
      /** CIDR texts; empty or absent: every source is allowed. */
      allowedCidrs?: readonly string[];
    }
  | { kind: 'listener-deleted'; uuid: string }
  | { kind: 'pool-deleted'; uuid: string; keepListeners: boolean }
  | {
      kind: 'member';
      uuid: string;
      poolUuid: string;
      address: string;
      port: number;
      monitorPort: number | null;
      enabled: boolean;
    }
  | { kind: 'member-deleted'; uuid: string }
  | { kind: 'monitor'; uuid: string; poolUuid: string; delayS: number; upThreshold: number; downThreshold: number }
  | { kind: 'monitor-deleted'; uuid: string }
  | { kind: 'lb-deleted' };

/** Whether a member's checked endpoint answers at a given time: its server runs, no admin mark. */
export type HealthInput = (address: string, port: number, at: number) => boolean;

// ---- pure parts: health-check arithmetic and intervals --------------------------------------

export type CheckedStatus = 'changing' | 'up' | 'down';

export interface CheckCounters {
  status: CheckedStatus;
  /** Consecutive successful checks (0 after a failure). */
  ok: number;
  /** Consecutive failed checks (0 after a success). */
  failed: number;
}

export interface MonitorTiming {
  delayMs: number;
  upThreshold: number;
  downThreshold: number;
}

/** How many checks fall in (from, to] when checks run at anchor + k × delay, k ≥ 1. */
export function checksBetween(anchor: number, delayMs: number, from: number, to: number): number {
  if (to <= from) return 0;
  const index = (t: number): number => (t < anchor ? 0 : Math.floor((t - anchor) / delayMs));
  return index(to) - index(from);
}

/** The counters after `count` checks that all succeeded (`healthy`) or all failed. */
export function applyChecks(counters: CheckCounters, count: number, healthy: boolean, timing: MonitorTiming): CheckCounters {
  if (count <= 0) return counters;
  if (healthy) {
    const ok = counters.ok + count;
    return { status: ok >= timing.upThreshold ? 'up' : counters.status, ok, failed: 0 };
  }
  const failed = counters.failed + count;
  return { status: failed >= timing.downThreshold ? 'down' : counters.status, ok: 0, failed };
}

/**
 * When the status next changes if every check after `now` gives `healthy`: the time of the check
 * that reaches the threshold, or undefined when the status is already where that leads.
 */
export function nextStatusChange(
  counters: CheckCounters,
  healthy: boolean,
  anchor: number,
  now: number,
  timing: MonitorTiming,
): number | undefined {
  if (healthy ? counters.status === 'up' : counters.status === 'down') return undefined;
  const needed = Math.max(1, healthy ? timing.upThreshold - counters.ok : timing.downThreshold - counters.failed);
  const firstIndex = (now < anchor ? 0 : Math.floor((now - anchor) / timing.delayMs)) + 1;
  return anchor + (firstIndex + needed - 1) * timing.delayMs;
}

/** A change of a port's serving state, in time order; the first is the load balancer's creation. */
export interface Transition {
  at: number;
  serving: boolean;
}

export interface ServingInterval {
  from: number;
  /** null: still so now. */
  to: number | null;
  serving: boolean;
}

/** The intervals of [since, now], adjacent equal states merged; the last one is open (to null). */
export function servingIntervals(transitions: readonly Transition[], since: number, now: number): ServingInterval[] {
  const intervals: ServingInterval[] = [];
  if (transitions.length === 0 || since > now) return intervals;
  const start = Math.max(since, transitions[0]!.at);
  for (let i = 0; i < transitions.length; i++) {
    const current = transitions[i]!;
    const end = transitions[i + 1]?.at ?? Infinity;
    if (end <= start || current.at > now) continue;
    const from = Math.max(current.at, start);
    const last = intervals.at(-1);
    if (last !== undefined && last.serving === current.serving) {
      last.to = end === Infinity || end > now ? null : end;
      continue;
    }
    if (last !== undefined) last.to = from;
    intervals.push({ from, to: end === Infinity || end > now ? null : end, serving: current.serving });
  }
  return intervals;
}

/**
 * The longest interval without serving within [since, now], counted only after the port first
 * served (at any time, also before `since`): a port that never served has no outage yet. An
 * outage still going on counts up to `now`.
 */
export function longestOutageMs(transitions: readonly Transition[], since: number, now: number): number {
  const firstServed = transitions.find((t) => t.serving)?.at;
  if (firstServed === undefined) return 0;
  let longest = 0;
  for (const interval of servingIntervals(transitions, Math.max(since, firstServed), now)) {
    if (!interval.serving) longest = Math.max(longest, (interval.to ?? now) - interval.from);
  }
  return longest;
}

// ---- the data plane ------------------------------------------------------------------------

interface MemberPlane {
  uuid: string;
  lbUuid: string;
  poolUuid: string;
  address: string;
  port: number;
  monitorPort: number | null;
  enabled: boolean;
  counters: CheckCounters;
  /** Checks run at anchor + k × delay; set when checking (re)starts. */
  anchor: number;
  /** Checks up to this time are in the counters. */
  countedUntil: number;
  /** The health input since countedUntil. */
  healthy: boolean;
  /** Whether the member takes traffic (enabled, and up or unmonitored). */
  serving: boolean;
  /** Bumped whenever its scheduled status change is replaced. */
  version: number;
}

interface PoolPlane {
  members: Map<string, MemberPlane>;
  monitor: ({ uuid: string } & MonitorTiming) | null;
  servingMembers: number;
}

interface ListenerPlane {
  protocol: ListenerProtocol;
  port: number;
  poolUuid: string | null;
  /** Empty: every source is allowed. */
  allowedCidrs: CidrNetwork[];
}

/** A connection a client opened through a listener to a member: it lives on until closed. */
interface ConnectionPlane {
  id: string;
  lbUuid: string;
  listenerUuid: string;
  protocol: ListenerProtocol;
  port: number;
  member: { uuid: string; address: string; protocol_port: number };
  openedAt: number;
  closed?: { at: number; reason: string };
}

interface PortHistory {
  protocol: ListenerProtocol;
  port: number;
  transitions: Transition[];
}

interface LbPlane {
  createdAt: number;
  /** Nothing reaches the data plane before the LB runs (only with a non-default timing). */
  readyAt: number;
  /** The effective time of the latest change: later changes never overtake earlier ones. */
  lastEffective: number;
  listeners: Map<string, ListenerPlane>;
  pools: Map<string, PoolPlane>;
  ports: Map<string, PortHistory>;
  roundRobin: Map<string, number>;
}

type DataPlaneEvent =
  | { kind: 'config'; lbUuid: string; change: ConfigChange }
  | { kind: 'input'; addresses: readonly string[] }
  | { kind: 'status'; memberUuid: string; version: number };

interface Queued {
  at: number;
  seq: number;
  event: DataPlaneEvent;
}

export interface PortServing {
  protocol: ListenerProtocol;
  port: number;
  intervals: { from: string; to: string | null; serving: boolean }[];
  longestOutageMs: number;
}

export type ProbeResult =
  | { served: true; member: { uuid: string; address: string; protocol_port: number } }
  | { served: false; reason: string };

/** A simulated client connection as the admin API shows it. */
export interface ConnectionInfo {
  id: string;
  protocol: ListenerProtocol;
  port: number;
  member: { uuid: string; address: string; protocol_port: number };
  openedAt: string;
  open: boolean;
  closedAt: string | null;
  /** Why it closed: the client closed it, its listener left the data plane, its server stopped. */
  closedReason: string | null;
}

export type ConnectResult = { opened: true; connection: ConnectionInfo } | { opened: false; reason: string };

const portKey = (protocol: string, port: number): string => `${protocol}/${port}`;

export class DataPlane {
  private readonly lbs = new Map<string, LbPlane>();
  private readonly members = new Map<string, MemberPlane>();
  private readonly membersByAddress = new Map<string, Set<string>>();
  /** Endpoints (`address/port`) an admin marked as failing their health checks. */
  private readonly failing = new Set<string>();
  private readonly queue = new EventQueue();
  private readonly connections = new Map<string, ConnectionPlane>();
  private connectionCount = 0;
  private clock: number;

  /**
   * `timeScale` multiplies every modelled duration: the propagation delays and the monitors'
   * `delay_s` (0.05: a 15 s propagation takes 750 ms, checks every 2 s run every 100 ms).
   */
  constructor(
    private timingsInForce: DataPlaneTimings,
    private readonly now: () => number,
    private readonly serverHealthy: (address: string, at: number) => boolean,
    readonly timeScale = 1,
  ) {
    this.clock = now();
  }

  get timings(): DataPlaneTimings {
    return { ...this.timingsInForce };
  }

  /**
   * New timings from now on. Changes already taken keep their effective time. Switching health
   * checks on or off keeps each member's status and counts checks from now on (no artificial
   * outage in the history).
   */
  setTimings(timings: DataPlaneTimings): void {
    const now = this.now();
    this.advance(now);
    const restart = timings.healthChecks !== this.timingsInForce.healthChecks;
    this.timingsInForce = { ...timings };
    if (!restart) return;
    for (const member of this.members.values()) {
      member.anchor = now;
      member.countedUntil = now;
      this.recheck(member, now);
    }
  }

  // ---- input from the API and the admin --------------------------------------------------

  loadBalancerCreated(lbUuid: string, createdAt: number, readyAt: number): void {
    this.lbs.set(lbUuid, {
      createdAt,
      readyAt,
      lastEffective: createdAt,
      listeners: new Map(),
      pools: new Map(),
      ports: new Map(),
      roundRobin: new Map(),
    });
  }

  /**
   * A configuration change the API just took; it reaches the data plane after the propagation
   * delay of its kind (`as`, or the kind the change implies: a listener on a port the load
   * balancer never had one on is a `newListener`).
   */
  configure(lbUuid: string, change: ConfigChange, as?: PropagationKind): void {
    const now = this.now();
    this.advance(now);
    const lb = this.lbPlane(lbUuid, now);
    const kind = as ?? this.propagationKind(lb, change);
    if (change.kind === 'listener') this.portHistory(lb, change.protocol, change.port);
    const { propagationMs, healthChecks } = this.timingsInForce;
    const realistic = healthChecks || PROPAGATION_KINDS.some((k) => propagationOf(propagationMs, k) > 0);
    const delay = propagationOf(propagationMs, kind) * this.timeScale;
    const effective = Math.max(now + delay, realistic ? lb.readyAt : now, lb.lastEffective);
    lb.lastEffective = effective;
    this.queue.push(effective, { kind: 'config', lbUuid, change });
    this.advance(now);
  }

  private propagationKind(lb: LbPlane, change: ConfigChange): PropagationKind {
    switch (change.kind) {
      case 'listener':
        return lb.ports.has(portKey(change.protocol, change.port)) ? 'listener' : 'newListener';
      case 'member':
      case 'member-deleted':
        return 'member';
      case 'monitor':
      case 'monitor-deleted':
        return 'monitor';
      case 'listener-deleted':
      case 'pool-deleted':
      case 'lb-deleted':
        return 'delete';
    }
  }

  /**
   * Call before a server changes (status, addresses, existence): the data plane catches up with
   * the server as it was. Then call `serverChanged` with the addresses involved.
   */
  beforeServerChange(): void {
    this.advance(this.now());
  }

  /** The servers with these addresses changed now; `settlesAt`: when a `changing` status ends. */
  serverChanged(addresses: readonly string[], settlesAt: number): void {
    const now = this.now();
    this.queue.push(now, { kind: 'input', addresses });
    if (settlesAt > now) this.queue.push(settlesAt, { kind: 'input', addresses });
    this.advance(now);
  }

  /** Marks an endpoint (the member's monitor port, or its port) as failing its checks, or not. */
  setEndpointHealth(address: string, port: number, healthy: boolean): void {
    const now = this.now();
    this.advance(now);
    if (healthy) this.failing.delete(`${address}/${port}`);
    else this.failing.add(`${address}/${port}`);
    this.queue.push(now, { kind: 'input', addresses: [address] });
    this.advance(now);
  }

  failingEndpoints(): { address: string; port: number }[] {
    return [...this.failing].map((key) => {
      const slash = key.lastIndexOf('/');
      return { address: key.slice(0, slash), port: Number(key.slice(slash + 1)) };
    });
  }

  // ---- queries ---------------------------------------------------------------------------

  /**
   * The member's `monitor_status` as the data plane has it; undefined when the member has not
   * reached the data plane yet (the API then shows what it can tell without it).
   */
  monitorStatus(memberUuid: string): MonitorStatus | undefined {
    this.advance(this.now());
    const member = this.members.get(memberUuid);
    if (member === undefined) return undefined;
    const pool = this.lbs.get(member.lbUuid)?.pools.get(member.poolUuid);
    if (pool?.monitor == null) return 'no_monitor';
    if (!member.enabled) return 'unknown';
    return member.counters.status;
  }

  /** Whether a monitored pool of the load balancer has enabled members, all of them `down`. */
  hasPoolDown(lbUuid: string): boolean {
    this.advance(this.now());
    for (const pool of this.lbs.get(lbUuid)?.pools.values() ?? []) {
      if (pool.monitor === null) continue;
      const enabled = [...pool.members.values()].filter((m) => m.enabled);
      if (enabled.length > 0 && enabled.every((m) => m.counters.status === 'down')) return true;
    }
    return false;
  }

  /** The listeners the data plane has now on the load balancer's `protocol` `port`. */
  listenersOnPort(lbUuid: string, protocol: ListenerProtocol, port: number): string[] {
    this.advance(this.now());
    const lb = this.lbs.get(lbUuid);
    if (lb === undefined) return [];
    return [...lb.listeners].filter(([, l]) => l.protocol === protocol && l.port === port).map(([uuid]) => uuid);
  }

  /** The members the data plane has now in the pool with that address and port. */
  membersAt(lbUuid: string, poolUuid: string, address: string, port: number): string[] {
    this.advance(this.now());
    const pool = this.lbs.get(lbUuid)?.pools.get(poolUuid);
    return [...(pool?.members.values() ?? [])].filter((m) => m.address === address && m.port === port).map((m) => m.uuid);
  }

  /** The pool's health monitor as the data plane has it now. */
  monitorOf(lbUuid: string, poolUuid: string): string | undefined {
    this.advance(this.now());
    return this.lbs.get(lbUuid)?.pools.get(poolUuid)?.monitor?.uuid;
  }

  /** Per listener port, the intervals of [since, now] in which it could serve. */
  serving(lbUuid: string, since?: number): PortServing[] | undefined {
    const now = this.now();
    this.advance(now);
    const lb = this.lbs.get(lbUuid);
    if (lb === undefined) return undefined;
    const from = since ?? lb.createdAt;
    return [...lb.ports.values()]
      .sort((a, b) => a.protocol.localeCompare(b.protocol) || a.port - b.port)
      .map((history) => ({
        protocol: history.protocol,
        port: history.port,
        intervals: servingIntervals(history.transitions, from, now).map((interval) => ({
          from: new Date(interval.from).toISOString(),
          to: interval.to === null ? null : new Date(interval.to).toISOString(),
          serving: interval.serving,
        })),
        longestOutageMs: longestOutageMs(history.transitions, from, now),
      }));
  }

  /**
   * Where a connection to the load balancer's port would go now (round robin over serving
   * members); `source`, when given, must be allowed by the listener's `allowed_cidrs`.
   */
  probe(lbUuid: string, protocol: ListenerProtocol, port: number, source?: IpAddress): ProbeResult {
    this.advance(this.now());
    const routed = this.route(lbUuid, protocol, port, source);
    if ('reason' in routed) return { served: false, reason: routed.reason };
    return { served: true, member: routed.member };
  }

  /**
   * Opens a connection as `probe` would route it. It stays open through a disable or delete of
   * its member (cloudscale's acceptance tests assert that open connections are not affected by
   * member changes) and closes when the client closes it, when the delete or move of its
   * listener reaches the data plane, or when its member's server stops running.
   */
  connect(lbUuid: string, protocol: ListenerProtocol, port: number, source?: IpAddress): ConnectResult {
    const now = this.now();
    this.advance(now);
    const routed = this.route(lbUuid, protocol, port, source);
    if ('reason' in routed) return { opened: false, reason: routed.reason };
    const id = `c${++this.connectionCount}`;
    const connection: ConnectionPlane = { id, lbUuid, listenerUuid: routed.listenerUuid, protocol, port, member: routed.member, openedAt: now };
    this.connections.set(id, connection);
    return { opened: true, connection: connectionInfo(connection) };
  }

  /** The connection now; undefined for an id never opened. */
  connection(id: string): ConnectionInfo | undefined {
    this.advance(this.now());
    const connection = this.connections.get(id);
    return connection === undefined ? undefined : connectionInfo(connection);
  }

  /** Every connection opened so far, open or closed, in the order they were opened. */
  allConnections(): ConnectionInfo[] {
    this.advance(this.now());
    return [...this.connections.values()].map(connectionInfo);
  }

  /** The client closes the connection (nothing happens when it is closed already); false for an unknown id. */
  closeConnection(id: string): boolean {
    const now = this.now();
    this.advance(now);
    const connection = this.connections.get(id);
    if (connection === undefined) return false;
    connection.closed ??= { at: now, reason: 'closed by the client' };
    return true;
  }

  private route(
    lbUuid: string,
    protocol: ListenerProtocol,
    port: number,
    source: IpAddress | undefined,
  ): { listenerUuid: string; member: { uuid: string; address: string; protocol_port: number } } | { reason: string } {
    const lb = this.lbs.get(lbUuid);
    const found = lb === undefined ? undefined : [...lb.listeners].find(([, l]) => l.protocol === protocol && l.port === port);
    if (lb === undefined || found === undefined) {
      return { reason: `the data plane has no ${protocol} listener on port ${port} (none in the API, or not propagated yet)` };
    }
    const [listenerUuid, listener] = found;
    if (source !== undefined && listener.allowedCidrs.length > 0 && !listener.allowedCidrs.some((cidr) => cidrContains(cidr, source))) {
      return { reason: `the ${protocol} listener on port ${port} does not allow ${source.text} (allowed_cidrs ${listener.allowedCidrs.map((c) => c.text).join(', ')})` };
    }
    const pool = listener.poolUuid === null ? undefined : lb.pools.get(listener.poolUuid);
    const candidates = pool === undefined ? [] : [...pool.members.values()].filter((m) => m.serving);
    if (pool === undefined || candidates.length === 0) {
      const why = pool?.monitor == null ? 'no enabled member' : 'no enabled member that is up';
      return { reason: `the ${protocol} listener on port ${port} has ${why} in the data plane` };
    }
    const key = portKey(protocol, port);
    const turn = lb.roundRobin.get(key) ?? 0;
    lb.roundRobin.set(key, turn + 1);
    const member = candidates[turn % candidates.length]!;
    return { listenerUuid, member: { uuid: member.uuid, address: member.address, protocol_port: member.port } };
  }

  /** Closes the open connections that `matches`, at `at`, saying why. */
  private closeConnections(matches: (connection: ConnectionPlane) => boolean, at: number, reason: string): void {
    for (const connection of this.connections.values()) {
      if (connection.closed === undefined && matches(connection)) connection.closed = { at, reason };
    }
  }

  // ---- the clock -------------------------------------------------------------------------

  /** Processes every event due by `until`, in time order. */
  private advance(until: number): void {
    for (let next = this.queue.peek(); next !== undefined && next.at <= until; next = this.queue.peek()) {
      this.queue.pop();
      this.clock = Math.max(this.clock, next.at);
      this.process(next.event, this.clock);
    }
    this.clock = Math.max(this.clock, until);
  }

  private process(event: DataPlaneEvent, at: number): void {
    switch (event.kind) {
      case 'config':
        this.apply(event.lbUuid, event.change, at);
        return;
      case 'input':
        for (const address of event.addresses) {
          for (const uuid of this.membersByAddress.get(address) ?? []) this.recheck(this.members.get(uuid)!, at);
          if (!this.serverHealthy(address, at)) {
            this.closeConnections((c) => c.member.address === address, at, `the server with address ${address} stopped running`);
          }
        }
        return;
      case 'status': {
        const member = this.members.get(event.memberUuid);
        if (member !== undefined && member.version === event.version) this.recheck(member, at);
        return;
      }
    }
  }

  // ---- configuration ---------------------------------------------------------------------

  private lbPlane(lbUuid: string, now: number): LbPlane {
    if (!this.lbs.has(lbUuid)) this.loadBalancerCreated(lbUuid, now, now);
    return this.lbs.get(lbUuid)!;
  }

  private portHistory(lb: LbPlane, protocol: ListenerProtocol, port: number): PortHistory {
    const key = portKey(protocol, port);
    let history = lb.ports.get(key);
    if (history === undefined) {
      history = { protocol, port, transitions: [{ at: lb.createdAt, serving: false }] };
      lb.ports.set(key, history);
    }
    return history;
  }

  private pool(lb: LbPlane, poolUuid: string): PoolPlane {
    let pool = lb.pools.get(poolUuid);
    if (pool === undefined) {
      pool = { members: new Map(), monitor: null, servingMembers: 0 };
      lb.pools.set(poolUuid, pool);
    }
    return pool;
  }

  private apply(lbUuid: string, change: ConfigChange, at: number): void {
    const lb = this.lbPlane(lbUuid, at);
    switch (change.kind) {
      case 'listener': {
        const before = lb.listeners.get(change.uuid);
        const allowedCidrs = (change.allowedCidrs ?? []).map((text) => parseCidr(text)).filter((cidr) => cidr !== undefined);
        lb.listeners.set(change.uuid, { protocol: change.protocol, port: change.port, poolUuid: change.poolUuid, allowedCidrs });
        if (before !== undefined && (before.protocol !== change.protocol || before.port !== change.port)) {
          const reason = `the ${before.protocol} listener on port ${before.port} moved to ${change.protocol} port ${change.port}`;
          this.closeConnections((c) => c.listenerUuid === change.uuid, at, reason);
        }
        if (before !== undefined) this.refreshPort(lb, before.protocol, before.port, at);
        this.refreshPort(lb, change.protocol, change.port, at);
        return;
      }
      case 'listener-deleted':
        this.deleteListener(lb, change.uuid, at);
        return;
      case 'pool-deleted': {
        const pool = lb.pools.get(change.uuid);
        for (const member of pool?.members.values() ?? []) this.forgetMember(member);
        lb.pools.delete(change.uuid);
        for (const [uuid, listener] of lb.listeners) {
          if (listener.poolUuid !== change.uuid) continue;
          if (change.keepListeners) {
            listener.poolUuid = null;
            this.refreshPort(lb, listener.protocol, listener.port, at);
          } else this.deleteListener(lb, uuid, at);
        }
        return;
      }
      case 'member':
        this.applyMember(lb, lbUuid, change, at);
        return;
      case 'member-deleted': {
        const member = this.members.get(change.uuid);
        if (member === undefined) return;
        const pool = this.pool(lb, member.poolUuid);
        this.setServing(lb, member, false, at);
        pool.members.delete(member.uuid);
        this.forgetMember(member);
        return;
      }
      case 'monitor':
        this.applyMonitor(lb, change, at);
        return;
      case 'monitor-deleted':
        for (const pool of lb.pools.values()) {
          if (pool.monitor?.uuid !== change.uuid) continue;
          pool.monitor = null;
          for (const member of pool.members.values()) this.recheck(member, at);
        }
        return;
      case 'lb-deleted':
        for (const uuid of [...lb.listeners.keys()]) this.deleteListener(lb, uuid, at);
        for (const pool of lb.pools.values()) for (const member of pool.members.values()) this.forgetMember(member);
        lb.pools.clear();
        return;
    }
  }

  private deleteListener(lb: LbPlane, uuid: string, at: number): void {
    const listener = lb.listeners.get(uuid);
    if (listener === undefined) return;
    lb.listeners.delete(uuid);
    this.closeConnections((c) => c.listenerUuid === uuid, at, `the ${listener.protocol} listener on port ${listener.port} was deleted`);
    this.refreshPort(lb, listener.protocol, listener.port, at);
  }

  private applyMember(lb: LbPlane, lbUuid: string, change: Extract<ConfigChange, { kind: 'member' }>, at: number): void {
    const existing = this.members.get(change.uuid);
    if (existing !== undefined) {
      if (existing.enabled === change.enabled) return;
      existing.enabled = change.enabled;
      // A re-enabled member is checked afresh (a guess: the real platform may keep its state).
      if (change.enabled) this.restartChecks(existing, at);
      this.recheck(existing, at);
      return;
    }
    const member: MemberPlane = {
      uuid: change.uuid,
      lbUuid,
      poolUuid: change.poolUuid,
      address: change.address,
      port: change.port,
      monitorPort: change.monitorPort,
      enabled: change.enabled,
      counters: { status: 'changing', ok: 0, failed: 0 },
      anchor: at,
      countedUntil: at,
      healthy: this.inputAt(change.address, change.monitorPort ?? change.port, at),
      serving: false,
      version: 0,
    };
    this.members.set(member.uuid, member);
    let sameAddress = this.membersByAddress.get(member.address);
    if (sameAddress === undefined) {
      sameAddress = new Set();
      this.membersByAddress.set(member.address, sameAddress);
    }
    sameAddress.add(member.uuid);
    this.pool(lb, member.poolUuid).members.set(member.uuid, member);
    this.recheck(member, at);
  }

  private applyMonitor(lb: LbPlane, change: Extract<ConfigChange, { kind: 'monitor' }>, at: number): void {
    const pool = this.pool(lb, change.poolUuid);
    const timing = { delayMs: change.delayS * 1000 * this.timeScale, upThreshold: change.upThreshold, downThreshold: change.downThreshold };
    const before = pool.monitor;
    if (before?.uuid === change.uuid) {
      // New timings: the checks so far count with the old ones, later checks run with the new.
      for (const member of pool.members.values()) this.settle(member, before, at);
      pool.monitor = { uuid: change.uuid, ...timing };
      for (const member of pool.members.values()) {
        member.anchor = at;
        this.recheck(member, at);
      }
      return;
    }
    // A new monitor checks every member from scratch.
    pool.monitor = { uuid: change.uuid, ...timing };
    for (const member of pool.members.values()) {
      this.restartChecks(member, at);
      this.recheck(member, at);
    }
  }

  private forgetMember(member: MemberPlane): void {
    this.members.delete(member.uuid);
    member.version++;
    const sameAddress = this.membersByAddress.get(member.address);
    sameAddress?.delete(member.uuid);
    if (sameAddress?.size === 0) this.membersByAddress.delete(member.address);
  }

  // ---- health ----------------------------------------------------------------------------

  private inputAt(address: string, port: number, at: number): boolean {
    return !this.failing.has(`${address}/${port}`) && this.serverHealthy(address, at);
  }

  private restartChecks(member: MemberPlane, at: number): void {
    member.counters = { status: 'changing', ok: 0, failed: 0 };
    member.anchor = at;
    member.countedUntil = at;
  }

  /** Counts the checks up to `at` with the input they saw. */
  private settle(member: MemberPlane, monitor: MonitorTiming, at: number): void {
    if (!this.timingsInForce.healthChecks) return;
    const count = checksBetween(member.anchor, monitor.delayMs, member.countedUntil, at);
    member.counters = applyChecks(member.counters, count, member.healthy, monitor);
    member.countedUntil = Math.max(member.countedUntil, at);
  }

  /**
   * Brings a member up to date at `at`: counts its checks, reads its health input afresh,
   * updates whether it takes traffic, and schedules its next status change.
   */
  private recheck(member: MemberPlane, at: number): void {
    const lb = this.lbs.get(member.lbUuid)!;
    const pool = this.pool(lb, member.poolUuid);
    const monitor = pool.monitor;
    member.version++;
    const healthy = this.inputAt(member.address, member.monitorPort ?? member.port, at);
    if (monitor !== null && member.enabled) {
      if (this.timingsInForce.healthChecks) {
        this.settle(member, monitor, at);
        member.healthy = healthy;
        const next = nextStatusChange(member.counters, healthy, member.anchor, at, monitor);
        if (next !== undefined) this.queue.push(next, { kind: 'status', memberUuid: member.uuid, version: member.version });
      } else {
        member.healthy = healthy;
        member.counters = { status: healthy ? 'up' : 'down', ok: 0, failed: 0 };
      }
    } else {
      member.healthy = healthy;
    }
    const serving = member.enabled && (monitor === null || member.counters.status === 'up');
    this.setServing(lb, member, serving, at);
  }

  private setServing(lb: LbPlane, member: MemberPlane, serving: boolean, at: number): void {
    if (member.serving === serving) return;
    member.serving = serving;
    const pool = this.pool(lb, member.poolUuid);
    const before = pool.servingMembers > 0;
    pool.servingMembers += serving ? 1 : -1;
    if (pool.servingMembers > 0 === before) return;
    for (const listener of lb.listeners.values()) {
      if (listener.poolUuid === member.poolUuid) this.refreshPort(lb, listener.protocol, listener.port, at);
    }
  }

  private refreshPort(lb: LbPlane, protocol: ListenerProtocol, port: number, at: number): void {
    const serving = [...lb.listeners.values()].some(
      (l) => l.protocol === protocol && l.port === port && l.poolUuid !== null && (lb.pools.get(l.poolUuid)?.servingMembers ?? 0) > 0,
    );
    const history = this.portHistory(lb, protocol, port);
    const last = history.transitions.at(-1)!;
    if (last.serving === serving) return;
    if (last.at === at) {
      history.transitions.pop();
      if (history.transitions.at(-1)?.serving === serving) return;
    }
    history.transitions.push({ at, serving });
  }
}

function connectionInfo(connection: ConnectionPlane): ConnectionInfo {
  return {
    id: connection.id,
    protocol: connection.protocol,
    port: connection.port,
    member: { ...connection.member },
    openedAt: new Date(connection.openedAt).toISOString(),
    open: connection.closed === undefined,
    closedAt: connection.closed === undefined ? null : new Date(connection.closed.at).toISOString(),
    closedReason: connection.closed?.reason ?? null,
  };
}

/** A binary min-heap of events by time, then by order of insertion. */
class EventQueue {
  private readonly heap: Queued[] = [];
  private seq = 0;

  push(at: number, event: DataPlaneEvent): void {
    const heap = this.heap;
    heap.push({ at, seq: this.seq++, event });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  peek(): Queued | undefined {
    return this.heap[0];
  }

  pop(): Queued | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
    return top;
  }
}

function before(a: Queued, b: Queued): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
