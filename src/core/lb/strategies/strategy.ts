// What a change strategy is: a module that says when it applies to a change of a load balancer,
// how it resumes a state a stopped pass left half done, and which steps, with which health
// gates, it takes. The planner (cloud-plan.ts) hands each strategy of the list in
// src/core/lb/strategies.ts the changes it found, scope by scope (the pools, the members of a
// pool, the listener of a pool), and puts the steps a strategy returns into the plan's phases;
// it knows no strategy by name.
import type { Listener, MemberState } from '../../cloudscale/types.js';
import type { ExistingRef, ObjectRef, PlannedAction, Reason } from '../actions.js';
import type { ActualPool } from '../actual.js';
import type { DesiredListener, DesiredMember, DesiredPool } from '../desired.js';
import { actualMemberKey, desiredMemberKey, diffBy } from '../identity.js';
import type { PlanWarning } from '../problems.js';
import { memberChangeReason, memberGoneReason } from '../reasons.js';
import type { DrainPolicy, PendingAction } from '../service-plan.js';
import { memberGate, type MemberGate } from './gates.js';
import type { Steps } from './steps.js';

/**
 * The phases of a load balancer's plan, in the order they run (CloudPlan.actions): pools go,
 * pools come; members that make room first, new members, the gate until they are healthy, and
 * only then those that leave; every listener delete before every create (a port may move
 * between pools); a new port's monitor before its listener; in-place updates; pool swaps last.
 */
export type Phase =
  | 'poolDeletes'
  | 'poolCreates'
  | 'memberDeletesFirst'
  | 'memberCreates'
  | 'memberAwaits'
  | 'memberLeaves'
  | 'listenerDeletes'
  | 'monitorChanges'
  | 'listenerCreates'
  | 'updates'
  | 'swaps';

/** What a strategy takes for a change: its steps by phase, the warnings it gives, the deletions it leaves to a later pass. */
export interface Taken {
  readonly steps?: Partial<Record<Phase, readonly PlannedAction[]>>;
  readonly warnings?: readonly PlanWarning[];
  readonly pending?: readonly PendingAction[];
}

/** The pools of a load balancer, paired with the desired ones by name, algorithm and protocol. */
export interface PoolsChange {
  readonly matched: readonly (readonly [DesiredPool, ActualPool])[];
  /** Desired pools no pool of the load balancer matches. */
  readonly created: readonly DesiredPool[];
  /** Pools of the load balancer no desired pool matches. */
  readonly removed: readonly ActualPool[];
  readonly loadBalancer: ExistingRef;
  /** The selected Node whose server has an address, to name it beside a member. */
  readonly nodeOf: (address: string) => string | undefined;
  readonly steps: Steps;
}

/** What a strategy takes of the pools; the planner plans the rest (kept pools, new pools, retired pools). */
export interface PoolsTaken extends Taken {
  /** Desired pools the strategy builds whole: the planner adds nothing for them. */
  readonly built?: ReadonlySet<DesiredPool>;
  /**
   * Desired pools whose pool an earlier pass built halfway: the planner completes their members
   * and monitor as those of a pool that serves no port yet (`serving: false`), not their listener.
   */
  readonly resumed?: ReadonlyMap<DesiredPool, ActualPool>;
  /** Pools of the load balancer the strategy takes care of: not retired. */
  readonly taken?: ReadonlySet<ActualPool>;
}

/** The members of one existing pool: the desired ones paired with those read. */
export interface MembersChange {
  readonly pool: { readonly ref: ExistingRef; readonly name: string };
  readonly desired: DesiredPool;
  readonly actual: ActualPool;
  /** Whether the pool serves a port: not a successor an earlier pass built, which serves none yet. */
  readonly serving: boolean;
  readonly matched: readonly (readonly [DesiredMember, MemberState])[];
  /** Desired members no member matches: `inPlace` take an old member's address and port, `added` come beside. */
  readonly created: readonly DesiredMember[];
  readonly inPlace: readonly DesiredMember[];
  readonly added: readonly DesiredMember[];
  /** Members no desired one matches: `replacedInPlace` make room for one, `leaving` go. */
  readonly removed: readonly MemberState[];
  readonly replacedInPlace: readonly MemberState[];
  readonly leaving: readonly MemberState[];
  /** The desired member that takes a removed one's place (same name, else same address). */
  readonly successorOf: (member: MemberState) => DesiredMember | undefined;
  /** The removed member a desired one replaces (same name, else same address). */
  readonly predecessorOf: (member: DesiredMember) => MemberState | undefined;
  /** Why a removed member goes: replaced, or its node is gone. */
  readonly reasonFor: (member: MemberState) => Reason;
  /** The serving-aware gate before the leaving members (gates.ts); empty for a pool that serves no port. */
  readonly gate: MemberGate;
  readonly drain: DrainPolicy | undefined;
  readonly serverAddresses: ReadonlySet<string>;
  readonly nodeOf: (address: string) => string | undefined;
  readonly steps: Steps;
}

/** The listener of one existing pool that serves a port: the desired one paired with those read. */
export interface ListenerChange {
  readonly target: { readonly ref: ObjectRef; readonly desired: DesiredPool };
  readonly matched: readonly (readonly [DesiredListener, Listener])[];
  readonly created: readonly DesiredListener[];
  readonly removed: readonly Listener[];
  /** Whether a listener other than `own` holds the port and protocol `wanted` asks for. */
  readonly portTaken: (own: Listener, wanted: DesiredListener) => boolean;
  /** The in-place updates of a listener's other fields (allowed CIDRs, timeouts). */
  readonly fieldUpdates: (have: { uuid: string; name: string } & DesiredListener, want: DesiredListener) => PlannedAction[];
  readonly steps: Steps;
}

/**
 * A change strategy. Each scope it has a function for is asked for every change of that scope,
 * in the order of the list; `undefined` means it does not apply. The pools: each strategy takes
 * the pools the earlier ones left. The members of a pool: each applies to its own members.
 * The listener of a pool: the first strategy that applies takes it.
 */
export interface ChangeStrategy {
  readonly name: string;
  /** Which of several pools of the same name, algorithm and protocol the Service keeps: the highest ranked. */
  readonly rankPool?: (wanted: DesiredPool, have: ActualPool) => number;
  readonly pools?: (change: PoolsChange) => PoolsTaken | undefined;
  readonly members?: (change: MembersChange) => Taken | undefined;
  readonly listener?: (change: ListenerChange) => Taken | undefined;
}

/** The members change of an existing pool, with its serving-aware gate. */
export function membersChange(input: {
  readonly desired: DesiredPool;
  readonly actual: ActualPool;
  readonly serving: boolean;
  readonly drain: DrainPolicy | undefined;
  readonly serverAddresses: ReadonlySet<string>;
  readonly nodeOf: (address: string) => string | undefined;
  readonly steps: Steps;
}): MembersChange {
  const { desired: pool, actual } = input;
  const { create, remove, matched } = diffBy(pool.members, actual.members, desiredMemberKey, actualMemberKey);
  const slot = (m: { address: string; protocol_port: number }) => `${m.address}|${m.protocol_port}`;
  const removedSlots = new Set(remove.map(slot));
  const inPlace = create.filter((m) => removedSlots.has(slot(m)));
  const inPlaceSlots = new Set(inPlace.map(slot));
  const added = create.filter((m) => !inPlaceSlots.has(slot(m)));
  const leaving = remove.filter((m) => !inPlaceSlots.has(slot(m)));
  const successorOf = (member: MemberState) => create.find((c) => c.name === member.name) ?? create.find((c) => c.address === member.address);
  const predecessorOf = (member: DesiredMember) => remove.find((r) => r.name === member.name) ?? remove.find((r) => r.address === member.address);
  const reasonFor = (member: MemberState): Reason => {
    const successor = successorOf(member);
    return successor === undefined ? memberGoneReason(member, pool) : memberChangeReason(member, successor, pool);
  };
  const poolRef = { ref: { uuid: actual.pool.uuid }, name: pool.name };
  const gate =
    input.serving && (create.length > 0 || remove.length > 0)
      ? memberGate(input.steps, {
          pool: poolRef,
          desired: pool,
          staying: matched.map(([, have]) => have),
          created: create,
          added,
          leaving,
          reason: reasonFor,
          monitor: actual.monitors[0],
          nodeOf: input.nodeOf,
        })
      : {};
  return {
    ...input,
    pool: poolRef,
    matched,
    created: create,
    inPlace,
    added,
    removed: remove,
    replacedInPlace: remove.filter((m) => inPlaceSlots.has(slot(m))),
    leaving,
    successorOf,
    predecessorOf,
    reasonFor,
    gate,
  };
}
