// The cloud actions of one load balancer: its pools, members, listeners and health monitors,
// created, updated or replaced in an order that keeps traffic flowing. When a change strategy
// applies and how it resumes is the strategy's (strategies.ts); this file orders their steps.
import type { HealthMonitor, Listener, LoadBalancer, MemberState, Server } from '../cloudscale/types.js';
import {
  LB_REF,
  buildAction,
  isChildCreate,
  mergeObjectUpdates,
  type ActionDraft,
  poolRef,
  type LostLoadBalancer,
  type ObjectRef,
  type PlannedAction,
  type Reason,
} from './actions.js';
import type { ActualLoadBalancer, ActualPool } from './actual.js';
import { LB_ANNOTATIONS } from './annotations.js';
import { parseOwnershipTags } from './ownership.js';
import { OWNER_KUBE_SYSTEM_UID_TAG, taggedKubeSystemUid } from './cluster-identity.js';
import type { DesiredListener, DesiredLoadBalancer, DesiredMember, DesiredMonitor, DesiredPool } from './desired.js';
import type { ImpactClass, MonitorTiming } from './impact.js';
import type { PlanWarning } from './problems.js';
import { actualMemberKey, desiredMemberKey, diffBy, listenerKey, monitorKey } from './identity.js';
import { describePort, memberChangeReason, memberGoneReason, monitorRecreationReason } from './reasons.js';
import { MEMBER_DRAINING_TAG, Strategies, matchPools, type Story } from './strategies.js';
import { lostReason } from './guards.js';
import type { PendingAction, DrainPolicy } from './service-plan.js';

/** Where a desired pool's objects come from: a kept pool, or one created in this plan. */
interface PoolTarget {
  readonly desired: DesiredPool;
  readonly ref: ObjectRef;
  /** The impact class of everything created in a new pool (its port's story). */
  readonly newPool?: { impact: ImpactClass; reason: Reason };
  readonly actual?: ActualPool;
  /**
   * A successor pool built by an earlier pass that stopped midway through a swap: its members
   * and monitor are completed here, its listener comes with the rest of the swap.
   */
  readonly successor?: boolean;
}

/** The cloud actions of one load balancer, created or updated, in execution order (`actions`). */
export class CloudPlan {
  // Categories in execution order; `actions` concatenates them.
  private readonly poolDeletes: PlannedAction[] = [];
  private readonly poolCreates: PlannedAction[] = [];
  // Members: those that must make room first (same address and port), then the new ones, the
  // wait until they are healthy, and only then those that leave (drained or deleted).
  private readonly memberDeletesFirst: PlannedAction[] = [];
  private readonly memberCreates: PlannedAction[] = [];
  private readonly memberAwaits: PlannedAction[] = [];
  private readonly memberLeaves: PlannedAction[] = [];
  // Every listener delete comes before every create: a port may move between pools (two named
  // ports swapping numbers), and the API allows one listener per port and protocol.
  private readonly listenerDeletes: PlannedAction[] = [];
  private readonly listenerCreates: PlannedAction[] = [];
  private readonly monitorChanges: PlannedAction[] = [];
  private readonly updates: PlannedAction[] = [];
  // Pool swaps run last: each is an ordered strategy (src/core/lb/strategies.ts).
  private readonly swaps: PlannedAction[] = [];
  private readonly lbChanges: PlannedAction[] = [];
  private readonly head: PlannedAction[] = [];
  private readonly strategies: Strategies;
  /** The existing pools, members, listeners and monitors by display name, for what a create replaces. */
  private existing: ReadonlyMap<string, object> = new Map();
  /** Every listener of the load balancer, for the port-in-use check of an in-place port move. */
  private actualListeners: readonly Listener[] = [];
  /** Warnings for the Service (members kept because nothing else would serve). */
  readonly warnings: PlanWarning[] = [];
  /** Deletions of drained members that a later pass makes once their drain period has passed. */
  readonly pending: PendingAction[] = [];
  /** The selected Node whose server has an address, to name it beside a member. */
  readonly nodeOf: (address: string) => string | undefined;

  constructor(
    private readonly desired: DesiredLoadBalancer,
    private readonly timing: MonitorTiming | undefined,
    private readonly context: { readonly drain: DrainPolicy | undefined; readonly serverAddresses: ReadonlySet<string> },
  ) {
    this.strategies = new Strategies(timing);
    const nodes = new Map(desired.pools.flatMap((p) => p.members.map((m) => [m.address, m.node] as const)));
    this.nodeOf = (address) => nodes.get(address);
  }

  /** In execution order; the updates of one object that follow each other are one (one PATCH). */
  get actions(): PlannedAction[] {
    return withReplacedFields(mergeObjectUpdates([
      ...this.head,
      ...this.poolDeletes,
      ...this.poolCreates,
      ...this.memberDeletesFirst,
      ...this.memberCreates,
      ...this.memberAwaits,
      ...this.memberLeaves,
      ...this.listenerDeletes,
      // A new port's monitor comes before its listener: the port serves only checked members.
      ...this.monitorChanges,
      ...this.listenerCreates,
      ...this.updates,
      ...this.swaps,
      ...this.lbChanges,
    ]), this.existing);
  }

  private act<D extends ActionDraft>(draft: D): Extract<PlannedAction, { kind: D['kind'] }> {
    return buildAction(draft, this.timing);
  }

  /** A new load balancer; `lost`: the one the Service records is gone, and this one replaces it. */
  create(lost: LostLoadBalancer | null): void {
    const d = this.desired;
    this.head.push(
      this.act({
        kind: 'create-lb',
        object: `load balancer ${d.name}`,
        reason: lost === null ? { text: 'the Service has no load balancer yet' } : lostReason(lost),
        impact: lost === null ? 'none' : 'lb-lost',
        lost,
        ref: LB_REF,
        body: {
          name: d.name,
          flavor: d.flavor,
          ...(d.zone === null ? {} : { zone: d.zone }),
          vip_addresses: d.vipAddresses.map((v) => ({ ...v })),
          tags: { ...d.tags },
        },
      }),
    );
    const reason = { text: 'part of the new load balancer' };
    this.createPools(
      d.pools.map((pool) => ({ desired: pool, ref: { ref: poolRef(pool.name) }, newPool: { impact: 'none', reason } })),
      { ref: LB_REF },
    );
  }

  update(actual: ActualLoadBalancer): void {
    const d = this.desired;
    this.existing = existingByObject(actual);
    this.actualListeners = [...actual.pools.flatMap((p) => p.listeners), ...actual.freeListeners];
    const { matched, swaps, retired } = matchPools(d.pools, actual.pools);
    for (const old of retired) {
      this.poolDeletes.push(
        ...this.strategies.retirePool(
          old,
          old.listeners.length > 0
            ? {
                impact: 'port-removal',
                reason: {
                  text: `no Service port maps to this pool any more: port ${old.listeners.map((l) => `${l.protocol}/${l.protocol_port}`).join(', ')} stops serving`,
                },
              }
            : { impact: 'none', reason: { text: 'no Service port maps to this pool any more (it serves no port)' } },
        ),
      );
    }

    const targets: PoolTarget[] = [];
    for (const pool of d.pools) {
      const swap = swaps.find((s) => s.desired === pool);
      const kept = matched.find(([dp]) => dp === pool);
      if (swap?.successor !== undefined) {
        targets.push({ desired: pool, ref: { uuid: swap.successor.pool.uuid }, actual: swap.successor, successor: true });
      } else if (swap !== undefined) {
        continue; // built whole by the swap
      } else if (kept !== undefined) {
        targets.push({ desired: pool, ref: { uuid: kept[1].pool.uuid }, actual: kept[1] });
      } else {
        targets.push({
          desired: pool,
          ref: { ref: poolRef(pool.name) },
          newPool: { impact: 'none', reason: { text: `new Service port ${describePort(pool)}` } },
        });
      }
    }
    this.createPools(targets, { uuid: actual.lb.uuid });
    this.deleteBlockingFreeListeners(actual);
    for (const swap of swaps) {
      const { steps, warning } = this.strategies.swapPool({ ...swap, loadBalancer: { uuid: actual.lb.uuid }, nodeOf: this.nodeOf });
      this.swaps.push(...steps);
      if (warning !== undefined) this.warnings.push(warning);
    }

    if (d.name !== actual.lb.name) {
      this.lbChanges.push(
        this.act({
          kind: 'rename-lb',
          object: `load balancer ${actual.lb.name}`,
          reason: { text: 'renamed in place', field: LB_ANNOTATIONS.name.key, from: actual.lb.name, to: d.name },
          impact: 'none',
          loadBalancer: { uuid: actual.lb.uuid },
          patch: { name: d.name },
        }),
      );
    }
    const tags = { ...actual.lb.tags, ...d.tags };
    const sameTags = (a: LoadBalancer['tags'], b: LoadBalancer['tags']) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
    if (!sameTags(tags, actual.lb.tags)) {
      const adopted = parseOwnershipTags(actual.lb.tags).kind === 'untagged';
      // Only the kube-system uid tag missing: a load balancer made before the tag existed.
      const { [OWNER_KUBE_SYSTEM_UID_TAG]: _uid, ...others } = tags;
      const uidOnly = taggedKubeSystemUid(actual.lb) === null && sameTags(others, actual.lb.tags);
      this.lbChanges.push(
        this.act({
          kind: 'tag-lb',
          object: `load balancer ${d.name}`,
          reason: {
            text: adopted
              ? 'adopt the load balancer (created without ownership tags, e.g. by the Go CCM): tag it as owned by this cluster and Service'
              : uidOnly
                ? "add this cluster's kube-system-uid tag (made before the tag existed): cleanup deletes no load balancer without it"
                : 'ownership tags differ',
            field: 'tags',
            from: JSON.stringify(actual.lb.tags),
            to: JSON.stringify(tags),
          },
          impact: 'none',
          loadBalancer: { uuid: actual.lb.uuid },
          patch: { tags },
        }),
      );
    }
  }

  /**
   * Listeners without a pool are never touched (as the Go CCM), except one on a port and
   * protocol a desired listener needs: it is what is left when a pool was deleted outside this
   * tool, serves nothing, and would make the API refuse the new listener on every pass.
   */
  private deleteBlockingFreeListeners(actual: ActualLoadBalancer): void {
    for (const listener of actual.freeListeners) {
      const needed = this.desired.pools.find(
        (p) => p.listener.protocol === listener.protocol && p.listener.protocol_port === listener.protocol_port,
      );
      if (needed === undefined) continue;
      this.listenerDeletes.push(
        this.strategies.deleteListener(listener, {
          impact: 'none',
          reason: {
            text: `left without a pool (its pool was deleted), it blocks port ${describePort(needed)} of pool ${needed.name}`,
          },
        }),
      );
    }
  }

  /** Creates pools as needed and plans the children of every target pool. */
  private createPools(targets: readonly PoolTarget[], lb: ObjectRef): void {
    for (const target of targets) {
      const { desired: pool, newPool } = target;
      if (newPool !== undefined) {
        this.poolCreates.push(
          this.act({
            kind: 'create-pool',
            object: `pool ${pool.name}`,
            reason: newPool.reason,
            impact: newPool.impact,
            ref: poolRef(pool.name),
            loadBalancer: lb,
            body: { name: pool.name, algorithm: pool.algorithm, protocol: pool.protocol },
          }),
        );
      }
    }
    for (const target of targets) this.planMembers(target);
    for (const target of targets) this.planMonitors(target);
    for (const target of targets) if (target.successor !== true) this.planListeners(target);
  }

  private planMembers(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const strategies = this.strategies;
    const into = { ref: target.ref, name: pool.name };
    if (actual === undefined) {
      for (const member of pool.members) this.memberCreates.push(strategies.createMember(into, member, target.newPool!));
      return;
    }
    const poolRefOf = { uuid: actual.pool.uuid };
    const { create, remove, matched } = diffBy(pool.members, actual.members, desiredMemberKey, actualMemberKey);
    for (const [, have] of matched) {
      const restore = strategies.restoreMember(have, poolRefOf, pool.name, {
        text: have.tags?.[MEMBER_DRAINING_TAG] === undefined ? 'the member is disabled, but its node is selected' : 'its node is selected again: the drain stops',
        field: 'enabled',
        from: String(have.enabled),
        to: 'true',
      });
      this.memberCreates.push(...restore);
    }
    if (create.length === 0 && remove.length === 0) return;

    const slot = (m: { address: string; protocol_port: number }) => `${m.address}|${m.protocol_port}`;
    const removedSlots = new Set(remove.map(slot));
    const inPlace = create.filter((m) => removedSlots.has(slot(m)));
    const inPlaceSlots = new Set(inPlace.map(slot));
    const added = create.filter((m) => !inPlaceSlots.has(slot(m)));
    const replacedInPlace = remove.filter((m) => inPlaceSlots.has(slot(m)));
    const leaving = remove.filter((m) => !inPlaceSlots.has(slot(m)));
    const successorOf = (member: MemberState) => create.find((c) => c.name === member.name) ?? create.find((c) => c.address === member.address);
    const predecessorOf = (member: DesiredMember) => remove.find((r) => r.name === member.name) ?? remove.find((r) => r.address === member.address);

    // A successor pool serves no port yet: nothing to protect, nothing to drain.
    if (target.successor === true) {
      const story = (reason: Reason): Story => ({ impact: 'none', reason: { ...reason, text: `${reason.text} (in the successor pool, which serves no port yet)` } });
      for (const member of remove) this.memberDeletesFirst.push(strategies.deleteMember(member, poolRefOf, pool.name, story(memberGoneReason(member, pool))));
      for (const member of create) this.memberCreates.push(strategies.createMember(into, member, story({ text: `node ${member.node} is selected` })));
      return;
    }

    // Same address and port: the old member makes room first; the others serve meanwhile.
    for (const member of replacedInPlace) {
      const reason = memberChangeReason(member, successorOf(member)!, pool);
      this.memberDeletesFirst.push(strategies.deleteMember(member, poolRefOf, pool.name, { impact: 'minimal', reason }));
    }
    for (const member of inPlace) {
      this.memberCreates.push(strategies.createMember(into, member, { impact: 'minimal', reason: memberChangeReason(predecessorOf(member)!, member, pool) }));
    }

    const reasonFor = (member: MemberState): Reason => {
      const successor = successorOf(member);
      return successor === undefined ? memberGoneReason(member, pool) : memberChangeReason(member, successor, pool);
    };
    const gate = strategies.memberGate({
      pool: { ref: poolRefOf, name: pool.name },
      desired: pool,
      staying: matched.map(([, have]) => have),
      created: create,
      added,
      leaving,
      reason: reasonFor,
      monitor: actual.monitors[0],
      nodeOf: this.nodeOf,
    });
    const rotation = gate.step !== undefined;
    for (const member of added) {
      const predecessor = predecessorOf(member);
      const reason =
        predecessor === undefined
          ? { text: `node ${member.node} is selected: its address ${member.address} joins the pool` }
          : memberChangeReason(predecessor, member, pool);
      this.memberCreates.push(strategies.createMember(into, member, { impact: rotation ? 'member-rotation' : 'minimal', reason }));
    }
    if (gate.step !== undefined) this.memberAwaits.push(gate.step);
    if (gate.warning !== undefined) this.warnings.push(gate.warning);

    let kept = 0;
    for (const member of leaving) {
      const left = strategies.leaveMember(member, {
        pool: poolRefOf,
        poolName: pool.name,
        reason: reasonFor(member),
        othersServe: matched.length + create.length > 0,
        gated: rotation,
        drain: this.context.drain,
        serverExists: this.context.serverAddresses.has(member.address),
      });
      this.memberLeaves.push(...left.steps);
      if (left.pending !== undefined) this.pending.push(left.pending);
      if (left.kept) kept += 1;
    }
    if (kept > 0) {
      this.warnings.push({
        reason: 'MembersKept',
        message: `pool ${pool.name}: no selected node remains, so the ${kept} member(s) of the nodes leaving it keep serving until a replacement is up or their servers are gone`,
      });
    }
  }

  private planListeners(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const wanted = pool.listener;
    if (actual === undefined) {
      this.listenerCreates.push(this.strategies.createListener(target, target.newPool!));
      return;
    }
    const { create, remove, matched } = diffBy([wanted], actual.listeners, listenerKey, listenerKey);
    const old = remove[0];
    // A new port number for the same pool and protocol moves the listener in place, unless
    // another listener holds that port now (two ports swapping numbers: deleted, then created).
    // It frees its old port before listeners are created (one may need that port: a listener
    // re-creation a pass left half done, or a new port that takes the old number).
    if (create.length === 1 && remove.length === 1 && old!.protocol === wanted.protocol && !this.portTaken(old!, wanted)) {
      const field = `spec.ports[${pool.port.name || 0}].port`;
      this.listenerDeletes.push(
        this.act({
          kind: 'update-listener',
          object: `listener ${old!.name}`,
          reason: { text: `the Service port changed: the listener of pool ${pool.name} moves to the new port in place`, field, from: String(old!.protocol_port), to: String(wanted.protocol_port) },
          impact: 'port-move',
          listener: { uuid: old!.uuid },
          patch: { protocol_port: wanted.protocol_port },
        }),
      );
      if (old!.name !== wanted.name) {
        this.listenerDeletes.push(
          this.act({
            kind: 'update-listener',
            object: `listener ${old!.name}`,
            reason: { text: 'the listener is named after its port', field: 'name', from: old!.name, to: wanted.name },
            impact: 'none',
            listener: { uuid: old!.uuid },
            patch: { name: wanted.name },
          }),
        );
      }
      this.updateListener({ ...old!, name: wanted.name }, wanted, this.listenerDeletes);
      return;
    }
    const recreated = create.length > 0 && remove.length > 0;
    const recreation: Reason | undefined =
      old === undefined
        ? undefined
        : old.protocol_port !== wanted.protocol_port
          ? {
              text: `the Service port changed, the pool ${pool.name} is kept`,
              field: `spec.ports[${pool.port.name || 0}].port`,
              from: String(old.protocol_port),
              to: String(wanted.protocol_port),
            }
          : { text: 'the listener protocol changed', field: LB_ANNOTATIONS.listenerProtocol.key, from: old.protocol, to: wanted.protocol };
    for (const listener of remove) {
      this.listenerDeletes.push(
        this.strategies.deleteListener(listener, {
          reason: recreated
            ? recreation!
            : { text: `not a port of the Service (pool ${pool.name}): port ${listener.protocol}/${listener.protocol_port} stops serving` },
          impact: recreated ? 'listener-recreation' : 'port-removal',
        }),
      );
    }
    if (create.length > 0) {
      this.listenerCreates.push(
        this.strategies.createListener(
          target,
          recreated
            ? { impact: 'listener-recreation', reason: recreation! }
            : { impact: 'listener-missing', reason: { text: `the listener of port ${describePort(pool)} is missing` } },
        ),
      );
    }
    for (const [, have] of matched) this.updateListener(have, wanted);
  }

  /** Whether a listener other than `own` holds the port and protocol `wanted` asks for. */
  private portTaken(own: Listener, wanted: DesiredListener): boolean {
    return this.actualListeners.some(
      (l) => l.uuid !== own.uuid && l.protocol === wanted.protocol && l.protocol_port === wanted.protocol_port,
    );
  }

  /** Plans the in-place updates of a listener's other fields, into `into` (beside its other updates: one PATCH). */
  private updateListener(have: { uuid: string; name: string } & DesiredListener, want: DesiredListener, into: PlannedAction[] = this.updates): void {
    const update = (
      patch: Extract<PlannedAction, { kind: 'update-listener' }>['patch'],
      field: string,
      from: string,
      to: string,
      impact: ImpactClass,
    ) =>
      into.push(
        this.act({
          kind: 'update-listener',
          object: `listener ${have.name}`,
          reason: { text: `${Object.keys(patch)[0]} changes in place`, field, from, to },
          impact,
          listener: { uuid: have.uuid },
          patch,
        }),
      );
    if (!sameList(have.allowed_cidrs, want.allowed_cidrs)) {
      update(
        { allowed_cidrs: [...want.allowed_cidrs] },
        this.desired.allowedCidrsSource,
        JSON.stringify(have.allowed_cidrs),
        JSON.stringify(want.allowed_cidrs),
        'minimal',
      );
    }
    const timeouts = [
      ['timeout_client_data_ms', LB_ANNOTATIONS.timeoutClientDataMs.key],
      ['timeout_member_connect_ms', LB_ANNOTATIONS.timeoutMemberConnectMs.key],
      ['timeout_member_data_ms', LB_ANNOTATIONS.timeoutMemberDataMs.key],
    ] as const;
    for (const [attribute, key] of timeouts) {
      if (have[attribute] !== want[attribute]) {
        update({ [attribute]: want[attribute] } as Extract<PlannedAction, { kind: 'update-listener' }>['patch'], key, String(have[attribute]), String(want[attribute]), 'none');
      }
    }
  }

  private planMonitors(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const wanted = pool.monitor;
    const into = { ref: target.ref, name: pool.name };
    if (actual === undefined) {
      this.monitorChanges.push(this.strategies.createMonitor(into, wanted, target.newPool!));
      return;
    }
    const { create, remove, matched } = diffBy([wanted], actual.monitors, monitorKey, monitorKey);
    // A serving pool whose monitor's type or version changes is swapped (swapInPlaceReason);
    // here that happens only to a pool that serves no port, or one with extra monitors.
    const recreated = create.length > 0 && remove.length > 0;
    const old = remove[0];
    const recreation = old === undefined ? undefined : monitorRecreationReason(old, wanted);
    const story = (impact: ImpactClass): ImpactClass => (target.successor === true ? 'none' : impact);
    for (const monitor of remove) {
      this.monitorChanges.push(
        this.strategies.deleteMonitor(monitor, pool.name, {
          impact: story(recreated ? 'monitor-recreation' : 'minimal'),
          reason: recreated ? recreation! : { text: `pool ${pool.name} has more than one health monitor` },
        }),
      );
    }
    if (create.length > 0) {
      this.monitorChanges.push(
        this.strategies.createMonitor(
          into,
          wanted,
          recreated
            ? { impact: story('monitor-recreation'), reason: recreation! }
            : { impact: story('minimal'), reason: { text: `pool ${pool.name} has no health monitor` } },
        ),
      );
    }
    for (const [, have] of matched) this.updateMonitor(have, wanted, pool.name);
  }

  private updateMonitor(have: HealthMonitor, want: DesiredMonitor, poolName: string): void {
    const object = `health monitor of pool ${poolName}`;
    const update = (patch: Extract<PlannedAction, { kind: 'update-monitor' }>['patch'], attribute: string, field: string, from: string, to: string) =>
      this.updates.push(
        this.act({
          kind: 'update-monitor',
          object,
          reason: { text: `${attribute} changes in place`, field, from, to },
          impact: 'minimal',
          monitor: { uuid: have.uuid },
          patch,
        }),
      );
    if (have.http !== null && want.http !== null) {
      const httpKey = LB_ANNOTATIONS.healthMonitorHttp.key;
      const hostHave = have.http.host || null;
      const hostWant = want.http.host || null;
      if (hostHave !== hostWant) update({ http: { host: hostWant } }, 'http.host', httpKey, String(hostHave), String(hostWant));
      if (have.http.url_path !== want.http.url_path) {
        update({ http: { url_path: want.http.url_path } }, 'http.url_path', httpKey, have.http.url_path, want.http.url_path);
      }
      if (have.http.method !== want.http.method) {
        update({ http: { method: want.http.method } }, 'http.method', httpKey, have.http.method, want.http.method);
      }
      if (!sameList(have.http.expected_codes, want.http.expected_codes)) {
        update(
          { http: { expected_codes: [...want.http.expected_codes] } },
          'http.expected_codes',
          httpKey,
          JSON.stringify(have.http.expected_codes),
          JSON.stringify(want.http.expected_codes),
        );
      }
    }
    const numbers = [
      ['delay_s', LB_ANNOTATIONS.healthMonitorDelayS.key],
      ['timeout_s', LB_ANNOTATIONS.healthMonitorTimeoutS.key],
      ['up_threshold', LB_ANNOTATIONS.healthMonitorUpThreshold.key],
      ['down_threshold', LB_ANNOTATIONS.healthMonitorDownThreshold.key],
    ] as const;
    for (const [attribute, key] of numbers) {
      if (have[attribute] !== want[attribute]) {
        update(
          { [attribute]: want[attribute] } as Extract<PlannedAction, { kind: 'update-monitor' }>['patch'],
          attribute,
          key,
          String(have[attribute]),
          String(want[attribute]),
        );
      }
    }
  }
}

/** The objects of a load balancer by the display name actions give them (`pool tcp/http`, …). */
function existingByObject(actual: ActualLoadBalancer): Map<string, object> {
  const existing = new Map<string, object>();
  for (const { pool, members, listeners, monitors } of actual.pools) {
    existing.set(`pool ${pool.name}`, pool);
    for (const member of members) existing.set(`member ${member.name} of pool ${pool.name}`, member);
    for (const listener of listeners) existing.set(`listener ${listener.name}`, listener);
    for (const monitor of monitors) existing.set(`health monitor of pool ${pool.name}`, monitor);
  }
  return existing;
}

/**
 * Each create that replaces an object of the same name, which the plan deletes, lists every
 * field in which the new one differs from it: a listener moved to a successor pool with new
 * allowed CIDRs says so, not only why the pool was swapped.
 */
function withReplacedFields(actions: PlannedAction[], existing: ReadonlyMap<string, object>): PlannedAction[] {
  const deleted = new Set(actions.filter((a) => a.verb === 'delete').map((a) => a.object));
  return actions.map((action) => {
    if (!isChildCreate(action) || !deleted.has(action.object)) return action;
    const old = existing.get(action.object);
    if (old === undefined) return action;
    const changes = fieldDifferences(old as Record<string, unknown>, action.body as Record<string, unknown>);
    return changes.length === 0 ? action : { ...action, changes };
  });
}

/** Fields of a create body that differ from the object it replaces; references and names are not compared. */
function fieldDifferences(old: Record<string, unknown>, body: Record<string, unknown>): Reason[] {
  const flat = (value: Record<string, unknown>) => {
    const entries: [string, unknown][] = [];
    for (const [key, field] of Object.entries(value)) {
      if (['name', 'tags', 'pool', 'load_balancer', 'subnet'].includes(key)) continue;
      if (key === 'http' && typeof field === 'object' && field !== null) {
        for (const [sub, inner] of Object.entries(field)) entries.push([`http.${sub}`, inner]);
      } else {
        entries.push([key, field]);
      }
    }
    return new Map(entries);
  };
  const before = flat(old);
  const show = (value: unknown) => (value === undefined || value === null ? '(none)' : typeof value === 'string' ? value : JSON.stringify(value));
  const changes: Reason[] = [];
  for (const [field, value] of flat(body)) {
    const was = before.get(field);
    if (show(was) === show(value)) continue;
    changes.push({ text: `${field} changes`, field, from: show(was), to: show(value) });
  }
  return changes;
}

/** Every address of every server: a member whose address no server has any more serves nothing. */
export function serverAddresses(servers: readonly Server[]): ReadonlySet<string> {
  const addresses = new Set<string>();
  for (const server of servers) for (const iface of server.interfaces) for (const a of iface.addresses) addresses.add(a.address);
  return addresses;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
