// The single steps the change strategies are made of: create or delete one member, monitor,
// listener, or a whole pool, each a plan action with its impact and why. Nothing here decides
// when a step is taken: the strategies do (src/core/lb/strategies.ts lists them), and the
// planner (cloud-plan.ts) for what no strategy takes.
import type { HealthMonitor, Listener, MemberState } from '../../cloudscale/types.js';
import { buildAction, type ActionDraft, type ExistingRef, type ListenerPutBack, type ObjectRef, type PlannedAction, type Reason } from '../actions.js';
import type { ActualPool } from '../actual.js';
import type { DesiredMember, DesiredMonitor, DesiredPool } from '../desired.js';
import type { ImpactClass, MonitorTiming } from '../impact.js';

/** What an action is part of: its impact and why. */
export interface Story {
  readonly impact: ImpactClass;
  readonly reason: Reason;
}

/** Builds single steps with the monitor timing that refines their downtime. */
export class Steps {
  constructor(private readonly timing: MonitorTiming | undefined) {}

  act<D extends ActionDraft>(draft: D): Extract<PlannedAction, { kind: D['kind'] }> {
    return buildAction(draft, this.timing);
  }

  createMember(pool: { ref: ObjectRef; name: string }, member: DesiredMember, story: Story): PlannedAction {
    return this.act({
      kind: 'create-member',
      object: `member ${member.name} of pool ${pool.name}`,
      ...story,
      pool: pool.ref,
      poolName: pool.name,
      body: {
        name: member.name,
        protocol_port: member.protocol_port,
        monitor_port: member.monitor_port,
        address: member.address,
        subnet: member.subnet.uuid,
      },
    });
  }

  deleteMember(member: MemberState, pool: ExistingRef, poolName: string, story: Story): PlannedAction {
    return this.act({
      kind: 'delete-member',
      object: `member ${member.name} of pool ${poolName}`,
      ...story,
      pool,
      member: { uuid: member.uuid, href: member.href, name: member.name },
    });
  }

  createMonitor(pool: { ref: ObjectRef; name: string }, monitor: DesiredMonitor, story: Story): PlannedAction {
    return this.act({
      kind: 'create-monitor',
      object: `health monitor of pool ${pool.name}`,
      ...story,
      pool: pool.ref,
      body: {
        type: monitor.type,
        delay_s: monitor.delay_s,
        timeout_s: monitor.timeout_s,
        up_threshold: monitor.up_threshold,
        down_threshold: monitor.down_threshold,
        http: httpBody(monitor.http),
      },
    });
  }

  deleteMonitor(monitor: HealthMonitor, poolName: string, story: Story): PlannedAction {
    return this.act({
      kind: 'delete-monitor',
      object: `health monitor of pool ${poolName}`,
      ...story,
      monitor: { uuid: monitor.uuid, href: monitor.href, name: `${monitor.type} monitor of pool ${poolName}` },
    });
  }

  /** `putBack`: the listener this create replaces, deleted by the same move, and the pool it served (lb-executor.ts). */
  createListener(pool: { ref: ObjectRef; desired: DesiredPool }, story: Story, putBack?: { listener: Listener; poolName: string }): PlannedAction {
    const wanted = pool.desired.listener;
    const back = putBack === undefined ? undefined : listenerPutBack(putBack.listener, putBack.poolName);
    return this.act({
      kind: 'create-listener',
      object: `listener ${wanted.name}`,
      ...story,
      ...(back === undefined ? {} : { putBack: back }),
      pool: pool.ref,
      body: {
        name: wanted.name,
        protocol: wanted.protocol,
        protocol_port: wanted.protocol_port,
        allowed_cidrs: [...wanted.allowed_cidrs],
        timeout_client_data_ms: wanted.timeout_client_data_ms,
        timeout_member_connect_ms: wanted.timeout_member_connect_ms,
        timeout_member_data_ms: wanted.timeout_member_data_ms,
      },
    });
  }

  deleteListener(listener: Listener, story: Story): PlannedAction {
    return this.act({
      kind: 'delete-listener',
      object: `listener ${listener.name}`,
      ...story,
      listener: { uuid: listener.uuid, href: listener.href, name: listener.name },
    });
  }

  /** Deletes a pool and everything in it: its listeners first, then monitor, members, the pool. */
  retirePool(old: ActualPool, story: Story, listenerStory: Story = story): PlannedAction[] {
    const { pool } = old;
    return [
      ...old.listeners.map((listener) => this.deleteListener(listener, listenerStory)),
      ...old.monitors.map((monitor) => this.deleteMonitor(monitor, pool.name, story)),
      ...old.members.map((member) => this.deleteMember(member, { uuid: pool.uuid }, pool.name, story)),
      this.act({
        kind: 'delete-pool',
        object: `pool ${pool.name}`,
        ...story,
        pool: { uuid: pool.uuid, href: pool.href, name: pool.name },
      }),
    ];
  }
}

/** A listener as it was, to be created again on its pool. Undefined for one that served no pool. */
function listenerPutBack(listener: Listener, poolName: string): ListenerPutBack | undefined {
  if (listener.pool === null) return undefined;
  return {
    pool: { uuid: listener.pool.uuid },
    poolName,
    body: {
      name: listener.name,
      protocol: listener.protocol,
      protocol_port: listener.protocol_port,
      allowed_cidrs: [...listener.allowed_cidrs],
      timeout_client_data_ms: listener.timeout_client_data_ms,
      timeout_member_connect_ms: listener.timeout_member_connect_ms,
      timeout_member_data_ms: listener.timeout_member_data_ms,
    },
  };
}

function httpBody(http: DesiredMonitor['http']) {
  if (http === null) return {};
  return {
    expected_codes: [...http.expected_codes],
    method: http.method,
    url_path: http.url_path,
    version: http.version,
    ...(http.host === null || http.host === '' ? {} : { host: http.host }),
  };
}
