// What the health monitors report about a load balancer's members, in words: which members
// serve, which are down and on which check. The strategies gate every step that takes serving
// capacity away on it (src/core/lb/strategies/gates.ts), and the planner explains with it why a load
// balancer is in status `error` (the API reports `error` while every member of a pool is down,
// docs/cloudscale-api.md) and whether the plan repairs it. Pure: nothing here reads an API.
import type { HealthMonitor, MemberState, MonitorStatus } from '../cloudscale/types.js';
import type { ObjectRef, PlannedAction } from './actions.js';
import type { ActualLoadBalancer, ActualPool } from './actual.js';
import type { DesiredMonitor, DesiredPool } from './desired.js';
import type { PlanWarning } from './problems.js';

/** A monitor status that takes traffic: checked healthy, or in a pool without a monitor. */
export function servesStatus(status: MonitorStatus): boolean {
  return status === 'up' || status === 'no_monitor';
}

/** A member that takes traffic now, as its health monitor reports it. */
export function serving(member: MemberState): boolean {
  return member.enabled && servesStatus(member.monitor_status);
}

/**
 * A member that may take traffic now: enabled and not reported `down` (one whose check has not
 * run yet may be up already). What a step takes away is judged by this; what replaces it must
 * be `serving`.
 */
export function mayServe(member: MemberState): boolean {
  return member.enabled && member.monitor_status !== 'down';
}

/** The check a monitor makes on a member: `tcp check on port 30080`, `http GET /livez check on port 31201`. */
export function checkOn(monitor: Pick<HealthMonitor | DesiredMonitor, 'type' | 'http'> | undefined, member: Pick<MemberState, 'monitor_port' | 'protocol_port'>): string {
  const port = member.monitor_port ?? member.protocol_port;
  if (monitor === undefined) return `check on port ${port}`;
  const http = monitor.http === null ? '' : ` ${monitor.http.method} ${monitor.http.url_path}`;
  return `${monitor.type}${http} check on port ${port}`;
}

/** `10.0.0.1:31000 (node worker-1) fails its tcp check on port 31000`, for each member, joined. */
export function describeDown(
  members: readonly MemberState[],
  monitor: Pick<HealthMonitor | DesiredMonitor, 'type' | 'http'> | undefined,
  nodeOf: (address: string) => string | undefined,
): string {
  return members
    .map((member) => {
      const node = nodeOf(member.address);
      return `${member.name}${node === undefined ? '' : ` (node ${node})`} fails its ${checkOn(monitor, member)}`;
    })
    .join(', ');
}

/** A pool whose monitor reports every enabled member `down`: its ports serve nothing. */
export interface DownPool {
  readonly pool: ActualPool;
  readonly down: readonly MemberState[];
}

/** The pools of a load balancer that serve nothing because every enabled member fails its check. */
export function poolsDown(actual: ActualLoadBalancer): DownPool[] {
  return actual.pools.flatMap((pool) => {
    const enabled = pool.members.filter((m) => m.enabled);
    if (pool.monitors.length === 0 || enabled.length === 0 || !enabled.every((m) => m.monitor_status === 'down')) return [];
    return [{ pool, down: enabled }];
  });
}

/** What a plan does to a pool that may bring it back: adds or enables members, changes its monitor, moves its port. */
function repairsOf(pool: ActualPool, actions: readonly PlannedAction[]): string[] {
  const uuid = pool.pool.uuid;
  const inPool = (ref: ObjectRef) => 'uuid' in ref && ref.uuid === uuid;
  const monitors = new Set(pool.monitors.map((m) => m.uuid));
  const listeners = new Set(pool.listeners.map((l) => l.uuid));
  const found = new Set<string>();
  // A pool this plan retires is repaired, if at all, by its port moving to the new pool.
  const retired = actions.some((a) => a.kind === 'delete-pool' && a.pool.uuid === uuid);
  for (const action of actions) {
    if (retired && action.kind !== 'delete-listener') continue;
    if (action.kind === 'create-member' && inPool(action.pool)) found.add('adds members');
    else if (action.kind === 'update-member' && inPool(action.pool) && 'enabled' in action.patch && action.patch.enabled) found.add('enables members');
    else if (action.kind === 'update-monitor' && monitors.has(action.monitor.uuid)) found.add('changes its health monitor');
    else if ((action.kind === 'create-monitor' && inPool(action.pool)) || (action.kind === 'delete-monitor' && monitors.has(action.monitor.uuid))) {
      found.add('replaces its health monitor');
    } else if (action.kind === 'delete-listener' && listeners.has(action.listener.uuid)) found.add('moves its port to a new pool');
  }
  return [...found];
}

/**
 * Why a load balancer is in status `error`, for `plan`, the pass and an Event: which pool is
 * down, on which port, which members fail which check, and whether this plan repairs it. It is
 * planned and changed as usual: the API accepts changes in `error`, and they are the way out.
 */
export function errorExplanation(
  actual: ActualLoadBalancer,
  desiredPools: readonly DesiredPool[],
  actions: readonly PlannedAction[],
  nodeOf: (address: string) => string | undefined,
): PlanWarning {
  const { lb } = actual;
  const head = `load balancer ${lb.name} (${lb.uuid}) is in status "error"`;
  const down = poolsDown(actual);
  if (down.length === 0) {
    return {
      reason: 'LoadBalancerError',
      message: `${head}, but no pool has every member down as the API lists them: the cause is not visible in the API. It is planned and changed as usual; if it stays in "error", ask cloudscale support.`,
    };
  }
  const pools = down.map(({ pool, down: members }) => {
    const serves = pool.listeners.length > 0 ? `port ${pool.listeners.map(portName).join(', ')}` : portToServe(pool, desiredPools);
    const repairs = repairsOf(pool, actions);
    const verdict =
      repairs.length > 0
        ? `this plan ${repairs.join(', ')}, which repairs it once a member passes its check`
        : 'this plan does not change it: it serves again once a member passes its check (check that the nodes answer on that port)';
    return `pool ${pool.pool.name} (${serves}) has every member down: ${describeDown(members, pool.monitors[0], nodeOf)}; ${verdict}`;
  });
  return { reason: 'LoadBalancerError', message: `${head}: ${pools.join('; ')}` };
}

function portName(listener: { protocol: string; protocol_port: number }): string {
  return `${listener.protocol.toUpperCase()} ${listener.protocol_port}`;
}

/** What a pool without a listener is for: a successor, or a pool whose listener is gone, is to serve the port of the desired pool of its name; any other serves none. */
function portToServe(pool: ActualPool, desiredPools: readonly DesiredPool[]): string {
  const desired = desiredPools.find((d) => d.name === pool.pool.name);
  return desired === undefined ? 'no port' : `no port yet: it is to serve ${portName(desired.listener)}`;
}
