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
import { PROPAGATION_KINDS, propagationOf, type DataPlaneTimings, type PropagationKind } from './dataplane-timings.js';
import {
  connectionInfo,
  portServing,
  type ConnectionInfo,
  type ConnectionPlane,
  type ConnectResult,
  type PortHistory,
  type PortServing,
  type ProbeResult,
  type ReachedMember,
} from './dataplane-views.js';
import { portKey, TakenChanges, type ConfigChange } from './dataplane-kinds.js';
import { EventQueue } from './event-queue.js';
import { applyChecks, checksBetween, nextStatusChange, type CheckCounters, type MonitorTiming } from './health-checks.js';
import { cidrContains, parseCidr, type CidrNetwork, type IpAddress } from './net.js';

export type { ConfigChange } from './dataplane-kinds.js';

/** Whether a member's checked endpoint answers at a given time: its server runs, no admin mark. */
export type HealthInput = (address: string, port: number, at: number) => boolean;

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
  /** What the API took, in its order: it decides each change's propagation kind. */
  taken: TakenChanges;
}

type DataPlaneEvent =
  | { kind: 'config'; lbUuid: string; change: ConfigChange }
  | { kind: 'input'; addresses: readonly string[] }
  | { kind: 'status'; memberUuid: string; version: number };

export class DataPlane {
  private readonly lbs = new Map<string, LbPlane>();
  private readonly members = new Map<string, MemberPlane>();
  private readonly membersByAddress = new Map<string, Set<string>>();
  /** Endpoints (`address/port`) an admin marked as failing their health checks. */
  private readonly failing = new Set<string>();
  private readonly queue = new EventQueue<DataPlaneEvent>();
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
      taken: new TakenChanges(),
    });
  }

  /** The API created a pool: nothing reaches the data plane, but a listener on it may be a `newPool`. */
  poolCreated(lbUuid: string, poolUuid: string): void {
    this.lbPlane(lbUuid, this.now()).taken.poolCreated(poolUuid);
  }

  /**
   * A configuration change the API just took; it reaches the data plane after the propagation
   * delay of its kind (`as`, or the kind the change implies, dataplane-kinds.ts: a listener on
   * a port the load balancer never had one on is a `newListener`, one on a re-created pool a
   * `newPool`).
   */
  configure(lbUuid: string, change: ConfigChange, as?: PropagationKind): void {
    const now = this.now();
    this.advance(now);
    const lb = this.lbPlane(lbUuid, now);
    const implied = lb.taken.take(change, lb.ports);
    const kind = as ?? implied;
    if (change.kind === 'listener') this.portHistory(lb, change.protocol, change.port);
    const { propagationMs, healthChecks } = this.timingsInForce;
    const realistic = healthChecks || PROPAGATION_KINDS.some((k) => propagationOf(propagationMs, k) > 0);
    const delay = propagationOf(propagationMs, kind) * this.timeScale;
    const effective = Math.max(now + delay, realistic ? lb.readyAt : now, lb.lastEffective);
    lb.lastEffective = effective;
    this.queue.push(effective, { kind: 'config', lbUuid, change });
    this.advance(now);
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
      .map((history) => portServing(history, from, now));
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
  ): { listenerUuid: string; member: ReachedMember } | { reason: string } {
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
