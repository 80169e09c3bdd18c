// Make-before-break strategies as data. Each strategy is an ordered list of actions, with the
// waits among them (`await-members`), that the planner puts into a plan and the executor runs
// like any other action: nothing here talks to an API. What the API allows decides which one
// applies (docs/cloudscale-api.md, "What can change in place"):
//
// - A pool's algorithm and protocol cannot change, a listener's pool cannot change, and a
//   monitor's type and HTTP version cannot change: such a change is a **pool swap**. The
//   successor pool is built beside the old one (members, monitor), awaited healthy, and only
//   then does the port's listener move to it (delete and create: the only moment the port is
//   down); then the old pool goes.
// - A member's address, ports and subnet cannot change, but a pool holds several members as
//   long as no two share address and port: new members are added, awaited healthy, and only
//   then are the old ones removed (**member rotation**). When every new member would clash with
//   an old one and no other member keeps serving, the pool is swapped instead.
// - A member leaving the pool is **drained**: tagged with when draining began and disabled (it
//   takes no new connections), and deleted by a later pass once the drain period has passed.
//
// A pass killed between any two steps leaves a state the next pass recognises and finishes (see
// the planner: a successor pool is the pool that matches the Service but serves no listener
// while an old pool still holds the port; a drained member carries its tag).
//
// Serving decides, in every pass: a step that takes serving capacity away (members deleted or
// disabled, a listener moved) runs only once what replaces it is observed `up` by the health
// monitors — an `await-members` gate before it — whichever pass reaches it: the one that built
// the replacement, or a later one finishing what a failed, killed or stopped pass left half
// done. When nothing would replace it (a successor pool without members), it does not run.
import type { HealthMonitor, Listener, MemberState, Tags } from '../cloudscale/types.js';
import {
  buildAction,
  poolRef,
  type ActionDraft,
  type ExistingRef,
  type ObjectRef,
  type PlannedAction,
  type Reason,
} from './actions.js';
import type { ActualPool } from './actual.js';
import type { DesiredMember, DesiredMonitor, DesiredPool } from './desired.js';
import { describeDown, mayServe, serving } from './health.js';
import { actualMemberKey, desiredMemberKey, diffBy, monitorKey, poolKey } from './identity.js';
import type { ImpactClass, MonitorTiming } from './impact.js';
import type { DrainPolicy, PendingAction } from './service-plan.js';
import type { PlanWarning } from './problems.js';
import { memberChangeReason, monitorRecreationReason, poolRecreationReason } from './reasons.js';

/** How long a drained member is kept (disabled) before it is deleted, unless --drain-seconds says otherwise. */
export const DEFAULT_DRAIN_SECONDS = 60;

/** The tag that records, on a disabled member, when this tool began to drain it (ISO-8601). */
export const MEMBER_DRAINING_TAG = 'k8s.cloudscale.ch/draining-since';

/**
 * How long configuration changes take to reach the data plane: "within about 15–20 s"
 * (docs/cloudscale-api.md). An await allows its members' checks plus this.
 */
const DATA_PLANE_PROPAGATION_SECONDS = 20;

/** The longest an `await-members` step waits: every new member checked by its monitor, plus propagation. */
function awaitSeconds(monitor: Pick<DesiredMonitor, 'delay_s' | 'up_threshold' | 'down_threshold'>): number {
  return monitor.delay_s * Math.max(monitor.up_threshold, monitor.down_threshold) + DATA_PLANE_PROPAGATION_SECONDS;
}

/** What an action is part of: its impact and why. */
export interface Story {
  readonly impact: ImpactClass;
  readonly reason: Reason;
}

/** Builds the actions of strategies with the monitor timing that refines their downtime. */
export class Strategies {
  constructor(private readonly timing: MonitorTiming | undefined) {}

  act<D extends ActionDraft>(draft: D): Extract<PlannedAction, { kind: D['kind'] }> {
    return buildAction(draft, this.timing);
  }

  // ---- single steps ------------------------------------------------------------------------

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

  createListener(pool: { ref: ObjectRef; desired: DesiredPool }, story: Story): PlannedAction {
    const wanted = pool.desired.listener;
    return this.act({
      kind: 'create-listener',
      object: `listener ${wanted.name}`,
      ...story,
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

  awaitMembers(
    pool: { ref: ObjectRef; name: string },
    members: readonly string[],
    protects: { pool: ExistingRef; members: readonly string[] },
    monitor: DesiredMonitor,
    story: Story,
  ): PlannedAction {
    const timeoutSeconds = awaitSeconds(monitor);
    return this.act({
      kind: 'await-members',
      object: `${members.length === 1 ? 'member' : `${members.length} members`} of pool ${pool.name} healthy`,
      impact: story.impact,
      reason: {
        ...story.reason,
        text: `${story.reason.text}; the old ${protects.members.length === 1 ? 'member serves' : 'members serve'} until ${members.length === 1 ? 'the new one passes' : 'the new ones pass'} ${monitor.up_threshold} checks ${monitor.delay_s} s apart (at most ${timeoutSeconds} s, else the next pass goes on)`,
      },
      pool: pool.ref,
      poolName: pool.name,
      members: [...members],
      protects: { pool: protects.pool, members: [...protects.members] },
      timeoutSeconds,
    });
  }

  /**
   * The gate before members leave a pool whose port stays: one that may serve (`mayServe`)
   * leaves only once a member that stays is observed `up`. The pass that adds members awaits
   * them (member rotation); a later pass that finds the members that stay not `up` — a rotation
   * a killed pass left half done, or a selector narrowed onto Nodes whose members are not up —
   * awaits those. No gate when a member that stays is `up` and none is added, or when nothing
   * that leaves serves. When nothing stays, the caller decides (the last members are kept, or
   * deleted as a predicted outage). A `MembersKept` warning names the members that stay and are
   * `down`: the gate then holds the leaving ones until one passes its check, else the pass
   * stops with them in place.
   */
  memberGate(input: {
    readonly pool: { readonly ref: ExistingRef; readonly name: string };
    readonly desired: DesiredPool;
    /** The members that stay, as read (those disabled are enabled again by the same plan). */
    readonly staying: readonly MemberState[];
    /** The members this plan creates; `added` are those beside an old one, not in its place. */
    readonly created: readonly DesiredMember[];
    readonly added: readonly DesiredMember[];
    readonly leaving: readonly MemberState[];
    /** Why the first protected member leaves (the gate's reason). */
    readonly reason: (member: MemberState) => Reason;
    /** The pool's monitor as read, to name the check that members fail. */
    readonly monitor: HealthMonitor | undefined;
    readonly nodeOf: (address: string) => string | undefined;
  }): { readonly step?: PlannedAction; readonly warning?: PlanWarning } {
    const protects = input.leaving.filter(mayServe);
    if (protects.length === 0) return {};
    const up = input.staying.some(serving);
    const awaited = up ? input.added : [...input.staying, ...input.created];
    if (awaited.length === 0) return {};
    const step = this.awaitMembers(
      input.pool,
      awaited.map((m) => m.name),
      { pool: input.pool.ref, members: protects.map((m) => m.name) },
      input.desired.monitor,
      { impact: 'member-rotation', reason: input.reason(protects[0]!) },
    );
    const down = !up && input.created.length === 0 && input.staying.every((m) => m.monitor_status === 'down');
    if (!down) return { step };
    const kept = protects.map((m) => m.name).join(', ');
    return {
      step,
      warning: {
        reason: 'MembersKept',
        message:
          `pool ${input.pool.name}: ${kept} keep serving, because the members that would replace them are down: ` +
          `${describeDown(input.staying, input.monitor, input.nodeOf)}. The pass waits up to ${awaitSeconds(input.desired.monitor)} s ` +
          'for one of them to pass its check; until one does, nothing is taken out of service.',
      },
    };
  }

  /** Takes a member out of service gently: when draining began (a tag), then disabled. */
  drainMember(member: MemberState, pool: ExistingRef, poolName: string, nowMs: number, reason: Reason): PlannedAction[] {
    const story: Story = { impact: 'member-drain', reason };
    const object = `member ${member.name} of pool ${poolName}`;
    const steps: PlannedAction[] = [];
    if (member.tags?.[MEMBER_DRAINING_TAG] === undefined) {
      steps.push(
        this.act({
          kind: 'update-member',
          object,
          ...story,
          pool,
          member: { uuid: member.uuid, name: member.name },
          patch: { tags: { ...member.tags, [MEMBER_DRAINING_TAG]: new Date(nowMs).toISOString() } },
        }),
      );
    }
    if (member.enabled) {
      steps.push(
        this.act({ kind: 'update-member', object, ...story, pool, member: { uuid: member.uuid, name: member.name }, patch: { enabled: false } }),
      );
    }
    return steps;
  }

  /**
   * How a member leaves a pool whose port stays, after the gate (`gated`), if any: deleted at
   * once when no server has its address any more (it serves nothing), or when there is no drain
   * period (as the Go CCM does; the pool's last members then as the outage `no-members`, which
   * the plan predicts and the budget judges); else drained: tagged and disabled now, deleted by
   * the first pass after the drain period (`pending` until then). The last members that may
   * serve, with nothing staying, are `kept` (the caller warns).
   */
  leaveMember(
    member: MemberState,
    input: {
      readonly pool: ExistingRef;
      readonly poolName: string;
      readonly reason: Reason;
      /** Whether any member stays in the pool (kept or created). */
      readonly othersServe: boolean;
      readonly gated: boolean;
      readonly drain: DrainPolicy | undefined;
      /** Whether a server still has the member's address. */
      readonly serverExists: boolean;
    },
  ): { readonly steps: PlannedAction[]; readonly pending?: PendingAction; readonly kept?: true } {
    const { pool, poolName, reason, drain } = input;
    const remove = (story: Story) => this.deleteMember(member, pool, poolName, story);
    const since = member.tags?.[MEMBER_DRAINING_TAG];
    if (!input.serverExists) return { steps: [remove({ impact: 'none', reason: { ...reason, text: `${reason.text}; no server has this address any more` } })] };
    if (drain === undefined || drain.seconds === 0) {
      return { steps: [remove({ impact: !input.othersServe ? 'no-members' : input.gated ? 'member-rotation' : 'minimal', reason })] };
    }
    if (!input.othersServe && member.enabled) return { steps: [], kept: true };
    if (!member.enabled && since === undefined) {
      // Disabled by someone else: it takes no traffic, so there is nothing to drain.
      return { steps: [remove({ impact: 'none', reason: { ...reason, text: `${reason.text} (it is disabled)` } })] };
    }
    const deletion = (began: string) =>
      remove({ impact: 'none', reason: { ...reason, text: `${reason.text}; drained since ${began} (drain period ${drain.seconds} s)` } });
    const parsed = since === undefined ? Number.NaN : Date.parse(since);
    if (!member.enabled) {
      // Drained by an earlier pass: deleted once its drain period has passed (or its tag is unreadable).
      if (Number.isNaN(parsed) || drain.nowMs - parsed >= drain.seconds * 1000) return { steps: [deletion(since!)] };
      return { steps: [], pending: { action: deletion(since!), after: new Date(parsed + drain.seconds * 1000).toISOString() } };
    }
    // A tag already there keeps its time: the deletion follows once the drain has run its course.
    const began = Number.isNaN(parsed) ? drain.nowMs : parsed;
    const pending = { action: deletion(new Date(began).toISOString()), after: new Date(began + drain.seconds * 1000).toISOString() };
    const drainSteps = this.drainMember(member, pool, poolName, drain.nowMs, {
      ...reason,
      text: `${reason.text}: drained (no new connections), deleted after ${drain.seconds} s`,
    });
    return { steps: drainSteps, pending };
  }

  /** A member wanted again (its node came back, or it was disabled by hand): enabled, its drain tag dropped. */
  restoreMember(member: MemberState, pool: ExistingRef, poolName: string, reason: Reason): PlannedAction[] {
    const story: Story = { impact: 'none', reason };
    const object = `member ${member.name} of pool ${poolName}`;
    const steps: PlannedAction[] = [];
    if (!member.enabled) {
      steps.push(this.act({ kind: 'update-member', object, ...story, pool, member: { uuid: member.uuid, name: member.name }, patch: { enabled: true } }));
    }
    if (member.tags?.[MEMBER_DRAINING_TAG] !== undefined) {
      const tags: Tags = { ...member.tags };
      delete tags[MEMBER_DRAINING_TAG];
      steps.push(this.act({ kind: 'update-member', object, ...story, pool, member: { uuid: member.uuid, name: member.name }, patch: { tags } }));
    }
    return steps;
  }

  // ---- whole pools -------------------------------------------------------------------------

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

  /**
   * The pool swap: the successor pool is built (or, after a pass that stopped midway, taken as
   * it is: `successor`), awaited healthy while the old pool keeps serving, then the port's
   * listener moves to it, then the old pool is deleted. Only the listener move interrupts the
   * port. The successor's missing members and monitor, when it exists already, are planned by
   * the caller before these steps. A successor without members (the node selector matches no
   * Node) would take the port from members that may serve onto nothing: the swap is held
   * instead (no steps, a `PoolSwapHeld` warning), and the old pool keeps the port.
   */
  swapPool(input: {
    readonly old: ActualPool;
    readonly desired: DesiredPool;
    readonly loadBalancer: ExistingRef;
    readonly reason: Reason;
    readonly successor?: ActualPool;
    /** The selected Node of an address, to name it beside a member that is down. */
    readonly nodeOf?: (address: string) => string | undefined;
  }): { readonly steps: PlannedAction[]; readonly warning?: PlanWarning } {
    const { old, desired, reason } = input;
    const protects = old.members.filter(mayServe).map((m) => m.name);
    const wanted = new Set(desired.members.map((m) => m.name));
    const built = input.successor?.members.filter((m) => wanted.has(m.name)) ?? [];
    if (desired.members.length === 0 && protects.length > 0) {
      return {
        steps: [],
        warning: {
          reason: 'PoolSwapHeld',
          message:
            `pool ${old.pool.name} is not swapped for pool ${desired.name} (${reason.text}): no selected Node would be a member ` +
            `of it, so port ${desired.listener.protocol.toUpperCase()} ${desired.listener.protocol_port} stays on the old pool, whose ` +
            `${protects.length === 1 ? 'member keeps' : `${protects.length} members keep`} serving. The swap runs once a Node is selected.`,
        },
      };
    }
    const building: Story = { impact: 'none', reason: { ...reason, text: `${reason.text}: a successor pool is built beside it` } };
    const moving: Story = { impact: 'pool-swap', reason };
    const retiring: Story = { impact: 'none', reason: { ...reason, text: `${reason.text}: the old pool serves no port any more` } };
    const ref: ObjectRef = input.successor === undefined ? { ref: poolRef(desired.name) } : { uuid: input.successor.pool.uuid };
    const successor = { ref, name: desired.name };
    const steps: PlannedAction[] = [];
    if (input.successor === undefined) {
      steps.push(
        this.act({
          kind: 'create-pool',
          object: `pool ${desired.name}`,
          ...building,
          ref: poolRef(desired.name),
          loadBalancer: input.loadBalancer,
          body: { name: desired.name, algorithm: desired.algorithm, protocol: desired.protocol },
        }),
        ...desired.members.map((member) => this.createMember(successor, member, building)),
        this.createMonitor(successor, desired.monitor, building),
      );
    }
    const servingPort = old.listeners.filter(
      (l) => l.protocol === desired.listener.protocol && l.protocol_port === desired.listener.protocol_port,
    );
    // A successor a stopped pass built, whose members are all reported down: the gate holds the
    // listener on the old pool, and the warning says why.
    const down = protects.length > 0 && built.length === wanted.size && built.every((m) => m.monitor_status === 'down');
    if (desired.members.length > 0 && protects.length > 0) {
      steps.push(
        this.awaitMembers(successor, desired.members.map((m) => m.name), { pool: { uuid: old.pool.uuid }, members: protects }, desired.monitor, building),
      );
    }
    steps.push(
      ...servingPort.map((listener) => this.deleteListener(listener, moving)),
      // The port's number changed too: no listener of the old pool holds the new number, so the
      // new listener takes nothing over (the old number leaves as a removed port): a port move.
      this.createListener({ ref, desired }, servingPort.length > 0 ? moving : { impact: 'port-move', reason }),
      ...this.retirePool({ ...old, listeners: old.listeners.filter((l) => !servingPort.includes(l)) }, retiring, {
        impact: 'port-removal',
        reason: { text: `no Service port maps to this listener of the old pool ${old.pool.name} any more: it stops serving` },
      }),
    );
    if (!down) return { steps };
    const message =
      `pool ${old.pool.name} keeps port ${desired.listener.protocol.toUpperCase()} ${desired.listener.protocol_port}, because the members of its successor are down: ` +
      `${describeDown(built, input.successor?.monitors[0], input.nodeOf ?? (() => undefined))}. The pass waits up to ${awaitSeconds(desired.monitor)} s ` +
      'for one of them to pass its check; until one does, the listener does not move.';
    return { steps, warning: { reason: 'MembersKept', message } };
  }
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

// ---- which strategy applies ------------------------------------------------------------------

/** One pool swap planned for a load balancer: `successor` when an earlier pass built it already. */
export interface Swap {
  readonly old: ActualPool;
  readonly desired: DesiredPool;
  readonly reason: Reason;
  readonly successor?: ActualPool;
}

/**
 * The desired pools paired with the load balancer's, and when a pool swap applies: a pool that
 * no longer matches gives its port to a new one (name, algorithm or protocol changed), or a pool
 * that matches cannot serve through the change in place (`swapInPlaceReason`). How a swap
 * resumes: a successor an earlier pass built — it matches the Service and serves no listener
 * while the old pool still holds the port — is finished, never built again. `retired`: the
 * pools no Service port maps to any more (neither swapped nor a successor).
 */
export function matchPools(
  desired: readonly DesiredPool[],
  actual: readonly ActualPool[],
): { readonly matched: readonly [DesiredPool, ActualPool][]; readonly swaps: readonly Swap[]; readonly retired: readonly ActualPool[] } {
  const holdsPort = (pool: ActualPool, wanted: DesiredPool) =>
    pool.listeners.some((l) => l.protocol === wanted.listener.protocol && l.protocol_port === wanted.listener.protocol_port);
  // Several pools may share a desired pool's name, algorithm and protocol while a swap is under
  // way (an externalTrafficPolicy or health-check-port change keeps them). The one the Service
  // is matched with is the one that already fits it (its members and monitor), else the one
  // that holds the port: so a successor is found whether or not the old pool still serves.
  const desiredByKey = new Map(desired.map((p) => [poolKey(p.name, p.algorithm, p.protocol), p] as const));
  const preference = (have: ActualPool): number => {
    const wanted = desiredByKey.get(poolKey(have.pool.name, have.pool.algorithm, have.pool.protocol));
    if (wanted === undefined) return 0;
    return (swapInPlaceReason(wanted, have) === undefined ? 2 : 0) + (holdsPort(have, wanted) ? 1 : 0);
  };
  // Ranked once per pool: the sort would otherwise compare members again on every comparison.
  const ranks = new Map(actual.map((p) => [p, preference(p)] as const));
  const { create, remove, matched } = diffBy(
    desired,
    [...actual].sort((a, b) => ranks.get(b)! - ranks.get(a)!),
    (p) => poolKey(p.name, p.algorithm, p.protocol),
    (p) => poolKey(p.pool.name, p.pool.algorithm, p.pool.protocol),
  );
  const swaps: Swap[] = [];
  const swapped = new Set<ActualPool>();

  // A swap an earlier pass began: the pool that matches the Service serves no listener on
  // its port, while a pool that no longer matches still does. It is finished, not redone.
  for (const [pool, successor] of matched) {
    if (holdsPort(successor, pool)) continue;
    const old = remove.find((r) => !swapped.has(r) && holdsPort(r, pool));
    if (old === undefined) continue;
    swaps.push({ old, desired: pool, reason: swapInPlaceReason(pool, old) ?? poolRecreationReason(old, pool), successor });
    swapped.add(old);
  }
  // A new pool that takes over a port from a pool that no longer matches (same name with
  // another algorithm or protocol, or the same listener port under a new port name).
  for (const pool of create) {
    const old =
      remove.find((r) => r.pool.name === pool.name && !swapped.has(r)) ??
      remove.find((r) => !swapped.has(r) && holdsPort(r, pool));
    if (old === undefined) continue;
    swaps.push({ old, desired: pool, reason: poolRecreationReason(old, pool) });
    swapped.add(old);
  }
  // A pool that matches but cannot keep serving through the change in place: its monitor's
  // type or HTTP version changes, or every member would be replaced by one with the same
  // address and port (which the API cannot hold beside it). Its successor has the same name,
  // algorithm and protocol; one an earlier pass built (no listener, the new monitor) is
  // finished rather than built again.
  const successors = new Set<ActualPool>();
  for (const [pool, have] of matched) {
    if (swaps.some((s) => s.successor === have || s.old === have) || !holdsPort(have, pool)) continue;
    const reason = swapInPlaceReason(pool, have);
    if (reason === undefined) continue;
    const successor = remove.find(
      (r) =>
        !swapped.has(r) &&
        !successors.has(r) &&
        r.listeners.length === 0 &&
        poolKey(r.pool.name, r.pool.algorithm, r.pool.protocol) === poolKey(pool.name, pool.algorithm, pool.protocol) &&
        swapInPlaceReason(pool, r) === undefined,
    );
    if (successor !== undefined) successors.add(successor);
    swaps.push({ old: have, desired: pool, reason, ...(successor === undefined ? {} : { successor }) });
  }
  return { matched, swaps, retired: remove.filter((old) => !swapped.has(old) && !successors.has(old)) };
}

/**
 * Why a pool that matches the Service must still be swapped to serve through the change: its
 * monitor's type or HTTP version changes (the API cannot change them in place), or every member
 * is replaced by one with the same address and port (the API holds one member per address and
 * port, so the new ones cannot be added beside the old) while no other member serves (the
 * members that stay are all reported down or disabled: deleting the old ones first would leave
 * the port without an up member).
 */
export function swapInPlaceReason(pool: DesiredPool, have: ActualPool): Reason | undefined {
  if (have.monitors.length > 0 && !have.monitors.some((m) => monitorKey(m) === monitorKey(pool.monitor))) {
    const reason = monitorRecreationReason(have.monitors[0]!, pool.monitor);
    return { ...reason, text: `the monitor type or HTTP version cannot change in place: pool ${pool.name} is swapped for one with the new monitor` };
  }
  const { create, remove, matched } = diffBy(pool.members, have.members, desiredMemberKey, actualMemberKey);
  if (matched.some(([, kept]) => serving(kept)) || create.length === 0) return undefined;
  const slot = (m: { address: string; protocol_port: number }) => `${m.address}|${m.protocol_port}`;
  const removedSlots = new Set(remove.map(slot));
  if (!create.every((m) => removedSlots.has(slot(m)))) return undefined;
  const first = remove.find((r) => slot(r) === slot(create[0]!))!;
  const reason = memberChangeReason(first, create[0]!, pool);
  return { ...reason, text: `${reason.text.replace(/: a new member replaces this one$/, '')}: every member changes at the same address and port, so pool ${pool.name} is swapped` };
}
