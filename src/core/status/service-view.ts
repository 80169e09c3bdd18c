// `status service/NAME`: the load balancer of one Service as it serves, built from what the
// cloudscale API answered and the cluster's Nodes. Pure: the reads are in service-read.ts.
//
// A listener port serves when its pool has an enabled member that takes traffic: `up`, or any
// enabled member of a pool without health monitor (`no_monitor`: nothing checks it). This is the
// rule of cloudscale's data plane as docs/sim.md describes it. When no member takes traffic, the
// view says why, member by member: disabled (draining or by hand), not checked yet (`changing`),
// or its health check failing, with the check's type and the port it probes (the member's
// `monitor_port`, else its `protocol_port`).
import type { HealthMonitor, Listener, LoadBalancer, Pool, PoolMember } from '../cloudscale/types.js';
import { counted } from '../text/wording.js';
import { MEMBER_DRAINING_TAG } from '../lb/strategies/member-drain.js';
import { recordedTime } from './health.js';

export interface ServiceLbInput {
  readonly service: { readonly namespace: string; readonly name: string };
  readonly lb: LoadBalancer | null;
  readonly pools: readonly { readonly pool: Pool; readonly members: readonly PoolMember[] }[];
  readonly listeners: readonly Listener[];
  readonly monitors: readonly HealthMonitor[];
  /** Node name by each of its addresses (status.addresses). */
  readonly nodeByAddress: ReadonlyMap<string, string>;
  /** --drain-seconds of the passes: how long a drained member is kept. */
  readonly drainSeconds: number;
  readonly nowMs: number;
}

export interface MemberView {
  readonly name: string;
  /** The Node with the member's address; null when no Node has it. */
  readonly node: string | null;
  readonly address: string;
  readonly port: number;
  /** The port its health check probes. */
  readonly checkedPort: number;
  readonly enabled: boolean;
  readonly monitorStatus: PoolMember['monitor_status'];
  /** Tagged as draining by a pass: since when, and when a pass removes it at the earliest. */
  readonly draining: { readonly since: string; readonly until: string | null } | null;
  /** Whether it takes traffic now (enabled, and up or unmonitored). */
  readonly takesTraffic: boolean;
}

export interface PoolView {
  readonly uuid: string;
  readonly name: string;
  readonly protocol: Pool['protocol'];
  readonly algorithm: Pool['algorithm'];
  /** `tcp`, `http GET /healthz` …, with its timing; null without health monitor. */
  readonly healthCheck: { readonly check: string; readonly delaySeconds: number; readonly upThreshold: number; readonly downThreshold: number } | null;
  readonly members: readonly MemberView[];
}

export interface ListenerView {
  readonly name: string;
  readonly protocol: Listener['protocol'];
  readonly port: number;
  readonly pool: string | null;
  readonly allowedCidrs: readonly string[];
  /** Members taking traffic of the listener's pool. */
  readonly membersUp: number;
  readonly serving: boolean;
  /** Why it does not serve, one clause per cause; empty while it serves. */
  readonly why: readonly string[];
}

export interface ServiceLbView {
  readonly service: string;
  readonly loadBalancer: {
    readonly uuid: string;
    readonly name: string;
    readonly status: LoadBalancer['status'];
    readonly zone: string;
    readonly vipAddresses: readonly string[];
  } | null;
  readonly listeners: readonly ListenerView[];
  readonly pools: readonly PoolView[];
  readonly drainSeconds: number;
}

export function serviceLbView(input: ServiceLbInput): ServiceLbView {
  const service = `${input.service.namespace}/${input.service.name}`;
  if (input.lb === null) return { service, loadBalancer: null, listeners: [], pools: [], drainSeconds: input.drainSeconds };
  const pools = input.pools.map(({ pool, members }) => poolView(pool, members, input));
  const listeners = input.listeners.map((listener) => listenerView(listener, pools));
  return {
    service,
    loadBalancer: {
      uuid: input.lb.uuid,
      name: input.lb.name,
      status: input.lb.status,
      zone: input.lb.zone.slug,
      vipAddresses: input.lb.vip_addresses.map((v) => v.address),
    },
    listeners,
    pools,
    drainSeconds: input.drainSeconds,
  };
}

function poolView(pool: Pool, members: readonly PoolMember[], input: ServiceLbInput): PoolView {
  const monitor = input.monitors.find((m) => m.pool.uuid === pool.uuid);
  return {
    uuid: pool.uuid,
    name: pool.name,
    protocol: pool.protocol,
    algorithm: pool.algorithm,
    healthCheck:
      monitor === undefined
        ? null
        : {
            check: monitor.http === null ? monitor.type : `${monitor.type} ${monitor.http.method} ${monitor.http.url_path}`,
            delaySeconds: monitor.delay_s,
            upThreshold: monitor.up_threshold,
            downThreshold: monitor.down_threshold,
          },
    members: members.map((member) => memberView(member, input)),
  };
}

function memberView(member: PoolMember, input: ServiceLbInput): MemberView {
  const since = member.tags?.[MEMBER_DRAINING_TAG];
  const sinceTime = since === undefined ? undefined : recordedTime(since, input.nowMs);
  return {
    name: member.name,
    node: input.nodeByAddress.get(member.address) ?? null,
    address: member.address,
    port: member.protocol_port,
    checkedPort: member.monitor_port ?? member.protocol_port,
    enabled: member.enabled,
    monitorStatus: member.monitor_status,
    draining:
      since === undefined
        ? null
        : {
            since,
            // A tag that is no time cannot say when the drain ends (the planner treats it as over).
            until: sinceTime?.kind === 'unparseable' ? null : new Date(Date.parse(since) + input.drainSeconds * 1000).toISOString(),
          },
    takesTraffic: member.enabled && (member.monitor_status === 'up' || member.monitor_status === 'no_monitor'),
  };
}

function listenerView(listener: Listener, pools: readonly PoolView[]): ListenerView {
  const pool = listener.pool === null ? undefined : pools.find((p) => p.uuid === listener.pool!.uuid);
  const membersUp = pool?.members.filter((m) => m.takesTraffic).length ?? 0;
  return {
    name: listener.name,
    protocol: listener.protocol,
    port: listener.protocol_port,
    pool: pool?.name ?? null,
    allowedCidrs: listener.allowed_cidrs,
    membersUp,
    serving: membersUp > 0,
    why: membersUp > 0 ? [] : whyNotServing(pool),
  };
}

/** Why no member of `pool` takes traffic: one clause per kind of member. */
function whyNotServing(pool: PoolView | undefined): string[] {
  if (pool === undefined) return ['the listener has no pool'];
  if (pool.members.length === 0) return [`pool ${pool.name} has no members`];
  const who = (members: readonly MemberView[]) => members.map((m) => `${m.node ?? 'no node'} (${m.address})`).join(', ');
  const why: string[] = [];
  const disabled = pool.members.filter((m) => !m.enabled);
  if (disabled.length > 0) {
    const draining = disabled.filter((m) => m.draining !== null).length;
    why.push(`${counted(disabled.length, 'member')} disabled${draining > 0 ? ` (${draining} draining)` : ''}: ${who(disabled)}`);
  }
  const down = pool.members.filter((m) => m.enabled && m.monitorStatus === 'down');
  for (const port of [...new Set(down.map((m) => m.checkedPort))].sort((a, b) => a - b)) {
    const failing = down.filter((m) => m.checkedPort === port);
    why.push(`the ${pool.healthCheck?.check ?? 'health'} check on port ${port} fails on ${who(failing)}`);
  }
  const other = pool.members.filter((m) => m.enabled && m.monitorStatus !== 'down');
  for (const status of [...new Set(other.map((m) => m.monitorStatus))]) {
    const members = other.filter((m) => m.monitorStatus === status);
    why.push(`${counted(members.length, 'member')} ${status === 'changing' ? 'not checked yet (changing)' : status}: ${who(members)}`);
  }
  return why;
}
