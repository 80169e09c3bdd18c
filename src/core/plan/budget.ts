// The downtime budget (`--max-downtime`): which planned actions of a Service run now and which
// are held back until someone approves them. Pure: a plan, a budget and the Service's approval
// annotation in, the plan to run now and its held change out.
//
// What is held:
// - a **trigger**: an action of an `ensure` plan whose predicted interruption exceeds the budget
//   (`interruptionSeconds`);
// - every later action that needs a held one: one that refers (`{ref}`) to an object a held
//   action creates, and one of the same strategy story after it (the steps of a pool swap that
//   retire the old pool come after the listener move and share its reason: deleting the old
//   pool while it still serves its port would take the port down unapproved).
// - a wait step (`await-members`) of the same story before a held step: it guards only the
//   steps after it.
// Everything else runs: the successor pool of a held swap is built (it serves no port), members join and are drained, other ports and other Services converge.
//
// What is never held: a plan that creates its load balancer (nothing serves yet; this includes
// a load balancer recreated because the one the Service records is gone: its port is down
// already, holding would only prolong the outage), `delete` plans (the Service is deleted or
// no longer of type LoadBalancer: Kubernetes already took its node ports away), and the actions
// of `outsideBudget`: what takes away a port number the Service no longer has — a removed port
// (Kubernetes released its node port and may give it to another Service, so a listener kept
// would forward to that Service) and a port moved to another number (holding it would leave the
// Service's new number unserved to keep serving the old one, which no client of the Service
// expects) — and the listener of a port that has none (it serves nothing already; holding would
// only prolong the outage).
//
// All held actions of a Service form one change with one id (`changeId`), stable while the
// pending change is the same: a hash of the Service UID, of what the triggers change (kind,
// object, field, from, to) and of the existing objects the change removes or alters (members,
// listeners, monitors, pools, by UUID); never of objects the pass creates or of times.
import { createHash } from 'node:crypto';
import type { PlannedAction } from '../lb/actions.js';
import { LB_ANNOTATIONS } from '../lb/annotations.js';
import type { Downtime, ImpactClass } from '../lb/impact.js';
import type { HeldChange, ServicePlan } from '../lb/service-plan.js';

/** The budget of one pass for one Service. */
export interface BudgetInput {
  /** The largest predicted interruption applied without approval, in seconds. */
  readonly seconds: number;
  /** The change id the Service's approval annotation carries, if any. */
  readonly approval?: string | null;
}

/**
 * How long an action interrupts a serving port, for the budget: its predicted worst case
 * (`Infinity` when unbounded). Changes of class `minimal` count as 0: no interruption is
 * expected (a member joins, a listener setting or a monitor setting changes in place; at worst
 * some new connections are affected for a few seconds), and holding them would hold every node
 * that joins the cluster.
 */
export function interruptionSeconds(downtime: Downtime): number {
  if (downtime.class === 'none' || downtime.class === 'minimal') return 0;
  return downtime.maxSeconds ?? Number.POSITIVE_INFINITY;
}

/**
 * The plan whose `actions` are what runs now and whose `held` lists what waits for approval.
 * A plan with nothing over the budget, or whose held change the approval names, is returned as
 * it is (without `held`).
 */
export function applyBudget(plan: ServicePlan, budget: BudgetInput): ServicePlan {
  const full = restoreHeld(plan);
  const change = heldChange(full, budget.seconds);
  if (change === null || approves(budget.approval ?? null, change)) return full;
  const held = new Set(change.positions);
  const { held: _previous, ...rest } = full;
  return { ...rest, actions: full.actions.filter((_, index) => !held.has(index)), held: [change] };
}

/** The full plan: the held actions back at their places among the others, no `held`. */
export function restoreHeld(plan: ServicePlan): ServicePlan {
  if (plan.held === undefined) return plan;
  const { held, ...rest } = plan;
  const total = plan.actions.length + held.reduce((n, change) => n + change.actions.length, 0);
  const slots: (PlannedAction | undefined)[] = new Array<PlannedAction | undefined>(total);
  for (const change of held) change.actions.forEach((action, i) => (slots[change.positions[i]!] = action));
  const running = plan.actions[Symbol.iterator]();
  const actions = Array.from(slots, (slot) => slot ?? running.next().value!);
  return { ...rest, actions };
}

/** The held change of a full plan under the budget, or `null` when everything may run. */
export function heldChange(plan: ServicePlan, budgetSeconds: number): HeldChange | null {
  if (plan.mode !== 'ensure' || plan.actions.some((a) => a.kind === 'create-lb')) return null;
  const triggers = new Set<number>();
  plan.actions.forEach((action, index) => {
    if (action.verb !== 'refuse' && !outsideBudget(action) && interruptionSeconds(action.downtime) > budgetSeconds) triggers.add(index);
  });
  if (triggers.size === 0) return null;

  const positions: number[] = [];
  const heldRefs = new Set<string>();
  plan.actions.forEach((action, index) => {
    const held =
      !outsideBudget(action) &&
      (triggers.has(index) || referencedRefs(action).some((ref) => heldRefs.has(ref)) || positions.some((p) => sameStory(plan.actions[p]!, action)));
    if (!held) return;
    positions.push(index);
    if ('ref' in action && typeof action.ref === 'string') heldRefs.add(action.ref);
  });

  // A wait guards only the steps after it: with those held it would wait for nothing (and run
  // every pass), so it waits with them.
  plan.actions.forEach((action, index) => {
    if (action.verb === 'wait' && !positions.includes(index) && positions.some((p) => p > index && sameStory(plan.actions[p]!, action))) {
      positions.push(index);
    }
  });
  positions.sort((a, b) => a - b);
  const actions = positions.map((p) => plan.actions[p]!);
  const worst = actions.reduce((w, a) => (interruptionSeconds(a.downtime) > interruptionSeconds(w.downtime) ? a : w));
  return {
    id: changeId(plan.service.uid, [...triggers].map((p) => plan.actions[p]!), actions),
    actions,
    positions,
    downtime: worst.downtime,
    budgetSeconds,
    // The Service is named wherever the reason is shown (its plan, its held line, its Event).
    reason: `${worst.kind} ${worst.object} is predicted to interrupt traffic (${worst.downtime.text}), more than the budget of ${formatSeconds(budgetSeconds)}`,
  };
}

/** The impact classes never held, whatever the budget (`outsideBudget`). */
const OUTSIDE_BUDGET: ReadonlySet<ImpactClass> = new Set<ImpactClass>(['port-removal', 'port-move', 'listener-missing']);

/**
 * Whether an action is never held, whatever the budget: it takes away a port number the Service
 * no longer has — a removed port (impact `port-removal`: Kubernetes released its node port and
 * may allocate it to another Service, so a listener held back would forward that Service's
 * traffic) or a port moved to another number in place (`port-move`: a held move would keep the
 * Service's new number unserved) — or it gives a listener back to a port that has none
 * (`listener-missing`: the port serves nothing already, holding would prolong the outage).
 */
function outsideBudget(action: PlannedAction): boolean {
  return OUTSIDE_BUDGET.has(action.impact);
}

/** A Warning Event due for a Service, and the token that records it as announced. */
export interface Announcement {
  readonly token: string;
  readonly reason: 'ChangeHeld' | 'ApprovalMismatch';
  readonly message: string;
}

/**
 * The Warning Events a budgeted plan calls for: one per held change, and one when the
 * approval annotation names another change than the pending one (it approves nothing).
 */
export function announcements(plan: ServicePlan, approval: string | null): Announcement[] {
  const { namespace, name } = plan.service;
  return (plan.held ?? []).flatMap((change): Announcement[] => {
    const more = change.actions.length - 1;
    // Named first: the action that interrupts traffic (a held change often begins with a wait).
    const worst = change.actions.find((action) => action.downtime === change.downtime) ?? change.actions[0]!;
    const held: Announcement = {
      token: change.id,
      reason: 'ChangeHeld',
      message:
        `Held back change ${change.id}: ${worst.kind} ${worst.object}${more > 0 ? ` and ${more} more action${more === 1 ? '' : 's'}` : ''}; ` +
        `predicted downtime: ${change.downtime.text}, over the budget of ${formatSeconds(change.budgetSeconds)} (--max-downtime). ` +
        approvalHint(change.id, namespace, name),
    };
    if (approval === null || approves(approval, change)) return [held];
    const mismatch: Announcement = {
      token: `${approval.replace(/[^0-9A-Za-z]/g, '_').slice(0, 40)}!${change.id}`,
      reason: 'ApprovalMismatch',
      message: `The approval ${approval} (annotation ${LB_ANNOTATIONS.approveChange.key}) does not match the pending change ${change.id}: nothing is approved. ${approvalHint(change.id, namespace, name)}`,
    };
    return [held, mismatch];
  });
}

/** The two ways to approve a held change, for Events and the text output. */
/**
 * Whether the approval annotation's value approves `change`: the one comparison of an approval.
 * Blanks around the id do not matter (`approvalOf` in src/core/lb/annotations.ts trims already;
 * a value given otherwise may not be); `null` (unset or malformed) and the id of another change
 * approve nothing.
 */
export function approves(approval: string | null, change: Pick<HeldChange, 'id'>): boolean {
  return approval !== null && approval.trim() === change.id;
}

export function approvalHint(id: string, namespace: string, name: string): string {
  return (
    `To apply it: kubectl annotate service -n ${namespace} ${name} --overwrite ${LB_ANNOTATIONS.approveChange.key}=${id} (applied at the next pass), ` +
    `or cloudscale-ccm plan service/${name} -n ${namespace} --out FILE, then cloudscale-ccm apply FILE.`
  );
}

/**
 * Ten lowercase hex digits of a hash over the Service UID, what the triggers change, and the
 * UUIDs of the members, pools, listeners and monitors the held actions delete or update. Those
 * objects exist before the change and stay until it is applied, so the id is stable while it is
 * pending; the same change coming back later (applied, undone, asked for again) removes other
 * objects (the members of the undo are new members, with new UUIDs, even on the same nodes) and
 * gets another id, so an approval left on the Service does not approve it a second time.
 * Objects the pass creates (a held swap's successor) do not count: the next pass finds them built.
 */
export function changeId(serviceUid: string, triggers: readonly PlannedAction[], held: readonly PlannedAction[] = triggers): string {
  const hash = createHash('sha256').update(serviceUid);
  for (const action of triggers) {
    const { field, from, to } = action.reason;
    hash.update(`\n${action.kind}\t${action.object}\t${field ?? ''}\t${from ?? ''}\t${to ?? ''}`);
  }
  for (const uuid of [...new Set(held.flatMap(replacedUuid))].sort()) hash.update(`\n${uuid}`);
  return hash.digest('hex').slice(0, 10);
}

/** The UUID of the existing member, pool, listener or monitor an action deletes or updates. */
function replacedUuid(action: PlannedAction): string[] {
  switch (action.kind) {
    case 'delete-member':
    case 'update-member':
      return [action.member.uuid];
    case 'delete-pool':
      return [action.pool.uuid];
    case 'delete-listener':
    case 'update-listener':
      return [action.listener.uuid];
    case 'delete-monitor':
    case 'update-monitor':
      return [action.monitor.uuid];
    default:
      return [];
  }
}

/** `0s`, `15s`, `2m`, `1m30s`, `1h`: how budgets are written on the command line and in messages. */
export function formatSeconds(seconds: number): string {
  if (seconds === Number.POSITIVE_INFINITY) return 'unbounded';
  // In whole milliseconds: 60.7 % 60 is 0.7000000000000028 in floating point, 700 ms is exact.
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const parts = [h > 0 ? `${h}h` : '', m > 0 ? `${m}m` : '', s > 0 || ms === 0 ? `${s}s` : ''];
  return parts.join('');
}

/** The `{ref}`s of objects created in the same plan that an action needs. */
function referencedRefs(action: PlannedAction): string[] {
  const refs: string[] = [];
  for (const field of ['pool', 'loadBalancer'] as const) {
    const value = (action as Partial<Record<typeof field, unknown>>)[field];
    if (typeof value === 'object' && value !== null && 'ref' in value && typeof value.ref === 'string') refs.push(value.ref);
  }
  if (action.kind === 'write-annotations') for (const change of action.changes) if ('ref' in change.to) refs.push(change.to.ref);
  if (action.kind === 'write-status' && 'ref' in action.to) refs.push(action.to.ref);
  return refs;
}

/**
 * Whether `later` is a step of the same strategy story as the held `earlier`: strategies derive
 * the reasons of their steps from one reason (same field, from and to; the text extended).
 */
function sameStory(earlier: PlannedAction, later: PlannedAction): boolean {
  const a = earlier.reason;
  const b = later.reason;
  if (a.field !== b.field || a.from !== b.from || a.to !== b.to) return false;
  return a.text === b.text || b.text.startsWith(`${a.text}:`) || a.text.startsWith(`${b.text}:`);
}
