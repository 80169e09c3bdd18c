// The cloud actions of one load balancer: its pools, members, listeners and health monitors,
// created, updated or replaced in an order that keeps traffic flowing. When a change strategy
// applies, how it resumes and which steps it takes is the strategy's (strategies/, listed in
// strategies.ts); this file pairs what is with what is wanted, asks the strategies, puts their
// steps into the plan's phases, and plans what no strategy takes (new pools, retired pools,
// removed or missing listeners, monitors, in-place updates).
import type { HealthMonitor, Listener, LoadBalancer, Server } from '../cloudscale/types.js';
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
import type { DesiredListener, DesiredLoadBalancer, DesiredMonitor, DesiredPool } from './desired.js';
import type { ImpactClass, MonitorTiming } from './impact.js';
import type { PlanWarning } from './problems.js';
import { diffBy, listenerKey, monitorKey, poolKey } from './identity.js';
import { describePort, monitorRecreationReason } from './reasons.js';
import { STRATEGIES } from './strategies.js';
import { Steps } from './strategies/steps.js';
import { membersChange, type Phase, type PoolsChange, type PoolsTaken, type Taken } from './strategies/strategy.js';
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
  // Pool swaps run last: each is an ordered strategy (strategies/pool-swap.ts).
  private readonly swaps: PlannedAction[] = [];
  private readonly lbChanges: PlannedAction[] = [];
  private readonly head: PlannedAction[] = [];
  private readonly steps: Steps;
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
    this.steps = new Steps(timing);
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

  /** Puts what a strategy takes into the plan: its steps into their phases, its warnings and pending deletions. */
  private take(taken: Taken | undefined): void {
    if (taken === undefined) return;
    for (const [phase, steps] of Object.entries(taken.steps ?? {}) as [Phase, readonly PlannedAction[]][]) this[phase].push(...steps);
    this.warnings.push(...(taken.warnings ?? []));
    this.pending.push(...(taken.pending ?? []));
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
    const pools = this.pairPools(actual);
    const taken = (pool: ActualPool) => pools.taken.some((t) => t.taken?.has(pool));
    for (const old of pools.removed.filter((pool) => !taken(pool))) {
      this.poolDeletes.push(
        ...this.steps.retirePool(
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
      const resumed = pools.taken.map((t) => t.resumed?.get(pool)).find((p) => p !== undefined);
      const kept = pools.matched.find(([dp]) => dp === pool);
      if (resumed !== undefined) {
        targets.push({ desired: pool, ref: { uuid: resumed.pool.uuid }, actual: resumed, successor: true });
      } else if (pools.taken.some((t) => t.built?.has(pool))) {
        continue; // built whole by a strategy
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
    for (const strategyTaken of pools.taken) this.take(strategyTaken);

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
   * The desired pools paired with the load balancer's by name, algorithm and protocol; among
   * several of the same key, the one the strategies rank highest. Each strategy with a `pools`
   * function then takes what the earlier ones left.
   */
  private pairPools(actual: ActualLoadBalancer): { matched: readonly (readonly [DesiredPool, ActualPool])[]; removed: readonly ActualPool[]; taken: PoolsTaken[] } {
    const key = (p: { name: string; algorithm: string; protocol: string }) => poolKey(p.name, p.algorithm, p.protocol);
    const desiredByKey = new Map(this.desired.pools.map((p) => [key(p), p] as const));
    // Ranked once per pool: the sort would otherwise compare members again on every comparison.
    const ranks = new Map(
      actual.pools.map((have) => {
        const wanted = desiredByKey.get(key(have.pool));
        return [have, wanted === undefined ? 0 : STRATEGIES.reduce((sum, s) => sum + (s.rankPool?.(wanted, have) ?? 0), 0)] as const;
      }),
    );
    const { create, remove, matched } = diffBy(
      this.desired.pools,
      [...actual.pools].sort((a, b) => ranks.get(b)! - ranks.get(a)!),
      key,
      (p) => key(p.pool),
    );
    let change: PoolsChange = { matched, created: create, removed: remove, loadBalancer: { uuid: actual.lb.uuid }, nodeOf: this.nodeOf, steps: this.steps };
    const taken: PoolsTaken[] = [];
    for (const strategy of STRATEGIES) {
      const took = strategy.pools?.(change);
      if (took === undefined) continue;
      taken.push(took);
      const claimed = (pool: DesiredPool) => took.built?.has(pool) === true || took.resumed?.has(pool) === true;
      change = {
        ...change,
        matched: change.matched.filter(([pool, have]) => !claimed(pool) && took.taken?.has(have) !== true),
        created: change.created.filter((pool) => !claimed(pool)),
        removed: change.removed.filter((pool) => took.taken?.has(pool) !== true),
      };
    }
    return { matched, removed: remove, taken };
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
        this.steps.deleteListener(listener, {
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
    if (actual === undefined) {
      const into = { ref: target.ref, name: pool.name };
      for (const member of pool.members) this.memberCreates.push(this.steps.createMember(into, member, target.newPool!));
      return;
    }
    const change = membersChange({
      desired: pool,
      actual,
      serving: target.successor !== true,
      drain: this.context.drain,
      serverAddresses: this.context.serverAddresses,
      nodeOf: this.nodeOf,
      steps: this.steps,
    });
    for (const strategy of STRATEGIES) this.take(strategy.members?.(change));
  }

  private planListeners(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const wanted = pool.listener;
    if (actual === undefined) {
      this.listenerCreates.push(this.steps.createListener(target, target.newPool!));
      return;
    }
    const { create, remove, matched } = diffBy([wanted], actual.listeners, listenerKey, listenerKey);
    const change = {
      target,
      matched,
      created: create,
      removed: remove,
      portTaken: (own: Listener, want: DesiredListener) => this.portTaken(own, want),
      fieldUpdates: (have: { uuid: string; name: string } & DesiredListener, want: DesiredListener) => this.listenerFieldUpdates(have, want),
      steps: this.steps,
    };
    const taken = STRATEGIES.map((strategy) => strategy.listener?.(change)).find((t) => t !== undefined);
    if (taken !== undefined) {
      this.take(taken);
      return;
    }
    for (const listener of remove) {
      this.listenerDeletes.push(
        this.steps.deleteListener(listener, {
          reason: { text: `not a port of the Service (pool ${pool.name}): port ${listener.protocol}/${listener.protocol_port} stops serving` },
          impact: 'port-removal',
        }),
      );
    }
    if (create.length > 0) {
      this.listenerCreates.push(
        this.steps.createListener(target, { impact: 'listener-missing', reason: { text: `the listener of port ${describePort(pool)} is missing` } }),
      );
    }
    for (const [, have] of matched) this.updates.push(...this.listenerFieldUpdates(have, wanted));
  }

  /** Whether a listener other than `own` holds the port and protocol `wanted` asks for. */
  private portTaken(own: Listener, wanted: DesiredListener): boolean {
    return this.actualListeners.some(
      (l) => l.uuid !== own.uuid && l.protocol === wanted.protocol && l.protocol_port === wanted.protocol_port,
    );
  }

  /** The in-place updates of a listener's other fields (allowed CIDRs, timeouts). */
  private listenerFieldUpdates(have: { uuid: string; name: string } & DesiredListener, want: DesiredListener): PlannedAction[] {
    const into: PlannedAction[] = [];
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
    return into;
  }

  private planMonitors(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const wanted = pool.monitor;
    const into = { ref: target.ref, name: pool.name };
    if (actual === undefined) {
      this.monitorChanges.push(this.steps.createMonitor(into, wanted, target.newPool!));
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
        this.steps.deleteMonitor(monitor, pool.name, {
          impact: story(recreated ? 'monitor-recreation' : 'minimal'),
          reason: recreated ? recreation! : { text: `pool ${pool.name} has more than one health monitor` },
        }),
      );
    }
    if (create.length > 0) {
      this.monitorChanges.push(
        this.steps.createMonitor(
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
