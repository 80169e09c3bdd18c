// The pool swap: a pool's algorithm and protocol cannot change, a listener's pool cannot change,
// and a monitor's type and HTTP version cannot change (docs/cloudscale-api.md, "What can change
// in place"). The successor pool is built beside the old one (members, monitor), awaited
// healthy (the serving-aware gate, gates.ts), and only then does the port's listener move to it
// (delete and create: the only moment the port is down); then the old pool goes.
//
// Applies to: a pool that no longer matches the Service giving its port to a new one (name,
// algorithm or protocol changed), or a pool that matches but cannot serve through the change in
// place (`swapInPlaceReason`: its monitor's type or HTTP version, or every member replaced at
// the same address and port while none serves). Resumes: a successor an earlier pass built —
// it matches the Service and serves no listener while the old pool still holds the port — is
// finished (its missing members and monitor completed), never built again.
import type { ObjectRef, PlannedAction, Reason } from '../actions.js';
import { poolRef } from '../actions.js';
import type { ActualPool } from '../actual.js';
import type { DesiredPool } from '../desired.js';
import { describeDown, mayServe, serving } from '../health.js';
import { actualMemberKey, desiredMemberKey, diffBy, monitorKey, poolKey } from '../identity.js';
import type { PlanWarning } from '../problems.js';
import { memberGoneReason, monitorRecreationReason, poolRecreationReason, memberChangeReason } from '../reasons.js';
import { awaitMembers, awaitSeconds } from './gates.js';
import type { Steps, Story } from './steps.js';
import type { ChangeStrategy, MembersChange, PoolsChange, PoolsTaken, Taken } from './strategy.js';

/** One pool swap planned for a load balancer: `successor` when an earlier pass built it already. */
interface Swap {
  readonly old: ActualPool;
  readonly desired: DesiredPool;
  readonly reason: Reason;
  readonly successor?: ActualPool;
}

const holdsPort = (pool: ActualPool, wanted: DesiredPool) =>
  pool.listeners.some((l) => l.protocol === wanted.listener.protocol && l.protocol_port === wanted.listener.protocol_port);

export const poolSwap: ChangeStrategy = {
  name: 'pool swap',
  // Several pools may share a desired pool's name, algorithm and protocol while a swap is under
  // way (an externalTrafficPolicy or health-check-port change keeps them). The one the Service
  // is matched with is the one that already fits it (its members and monitor), else the one
  // that holds the port: so a successor is found whether or not the old pool still serves.
  rankPool: (wanted, have) => (swapInPlaceReason(wanted, have) === undefined ? 2 : 0) + (holdsPort(have, wanted) ? 1 : 0),

  pools(change: PoolsChange): PoolsTaken | undefined {
    const swaps = findSwaps(change);
    if (swaps.length === 0) return undefined;
    const swapSteps: PlannedAction[] = [];
    const warnings: PlanWarning[] = [];
    for (const swap of swaps) {
      const { steps, warning } = swapPool(change.steps, { ...swap, loadBalancer: change.loadBalancer, nodeOf: change.nodeOf });
      swapSteps.push(...steps);
      if (warning !== undefined) warnings.push(warning);
    }
    const resumed = new Map(swaps.flatMap((s) => (s.successor === undefined ? [] : [[s.desired, s.successor] as const])));
    return {
      steps: { swaps: swapSteps },
      warnings,
      built: new Set(swaps.filter((s) => s.successor === undefined).map((s) => s.desired)),
      resumed,
      taken: new Set(swaps.flatMap((s) => (s.successor === undefined ? [s.old] : [s.old, s.successor]))),
    };
  },

  // A successor pool serves no port yet: nothing to protect, nothing to drain.
  members(change: MembersChange): Taken | undefined {
    if (change.serving || (change.created.length === 0 && change.removed.length === 0)) return undefined;
    const { steps, desired: pool, pool: into } = change;
    const story = (reason: Reason): Story => ({ impact: 'none', reason: { ...reason, text: `${reason.text} (in the successor pool, which serves no port yet)` } });
    return {
      steps: {
        memberDeletesFirst: change.removed.map((member) => steps.deleteMember(member, into.ref, pool.name, story(memberGoneReason(member, pool)))),
        memberCreates: change.created.map((member) => steps.createMember(into, member, story({ text: `node ${member.node} is selected` }))),
      },
    };
  },
};

/**
 * The pool swaps of a load balancer, found in the pairing of its pools: how a half-done swap is
 * resumed (its successor found), then the swaps a changed pool key or a pool that cannot change
 * in place asks for.
 */
function findSwaps(change: PoolsChange): Swap[] {
  const { matched, created: create, removed: remove } = change;
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
  return swaps;
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

/**
 * The steps of one swap: the successor pool is built (or, after a pass that stopped midway,
 * taken as it is: `successor`), awaited healthy while the old pool keeps serving, then the
 * port's listener moves to it, then the old pool is deleted. Only the listener move interrupts
 * the port. The successor's missing members and monitor, when it exists already, are planned
 * with its members (`members` above) and monitor before these steps. A successor without
 * members (the node selector matches no Node) would take the port from members that may serve
 * onto nothing: the swap is held instead (no steps, a `PoolSwapHeld` warning), and the old
 * pool keeps the port.
 */
function swapPool(
  steps: Steps,
  input: Swap & {
    readonly loadBalancer: { readonly uuid: string };
    /** The selected Node of an address, to name it beside a member that is down. */
    readonly nodeOf: (address: string) => string | undefined;
  },
): { readonly steps: PlannedAction[]; readonly warning?: PlanWarning } {
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
  const taken: PlannedAction[] = [];
  if (input.successor === undefined) {
    taken.push(
      steps.act({
        kind: 'create-pool',
        object: `pool ${desired.name}`,
        ...building,
        ref: poolRef(desired.name),
        loadBalancer: input.loadBalancer,
        body: { name: desired.name, algorithm: desired.algorithm, protocol: desired.protocol },
      }),
      ...desired.members.map((member) => steps.createMember(successor, member, building)),
      steps.createMonitor(successor, desired.monitor, building),
    );
  }
  const servingPort = old.listeners.filter(
    (l) => l.protocol === desired.listener.protocol && l.protocol_port === desired.listener.protocol_port,
  );
  // A successor a stopped pass built, whose members are all reported down: the gate holds the
  // listener on the old pool, and the warning says why.
  const down = protects.length > 0 && built.length === wanted.size && built.every((m) => m.monitor_status === 'down');
  if (desired.members.length > 0 && protects.length > 0) {
    taken.push(
      awaitMembers(steps, successor, desired.members.map((m) => m.name), { pool: { uuid: old.pool.uuid }, members: protects }, desired.monitor, building),
    );
  }
  taken.push(
    ...servingPort.map((listener) => steps.deleteListener(listener, moving)),
    // The port's number changed too: no listener of the old pool holds the new number, so the
    // new listener takes nothing over (the old number leaves as a removed port): a port move.
    // A move of one listener puts it back on the old pool, whose members still serve, if the
    // successor's listener cannot be created.
    steps.createListener(
      { ref, desired },
      servingPort.length > 0 ? moving : { impact: 'port-move', reason },
      servingPort.length === 1 ? { listener: servingPort[0]!, poolName: old.pool.name } : undefined,
    ),
    ...steps.retirePool({ ...old, listeners: old.listeners.filter((l) => !servingPort.includes(l)) }, retiring, {
      impact: 'port-removal',
      reason: { text: `no Service port maps to this listener of the old pool ${old.pool.name} any more: it stops serving` },
    }),
  );
  if (!down) return { steps: taken };
  const message =
    `pool ${old.pool.name} keeps port ${desired.listener.protocol.toUpperCase()} ${desired.listener.protocol_port}, because the members of its successor are down: ` +
    `${describeDown(built, input.successor?.monitors[0], input.nodeOf)}. The pass waits up to ${awaitSeconds(desired.monitor)} s ` +
    'for one of them to pass its check; until one does, the listener does not move.';
  return { steps: taken, warning: { reason: 'MembersKept', message } };
}
