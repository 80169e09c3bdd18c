// The serving-aware gates: a step that takes serving capacity away (members deleted or
// disabled, a listener moved) runs only once what replaces it is observed `up` by the health
// monitors, an `await-members` step before it, whichever pass reaches it: the one that built
// the replacement, or a later one finishing what a failed, killed or stopped pass left half
// done. When nothing would replace it, it does not run.
import type { HealthMonitor, MemberState } from '../../cloudscale/types.js';
import type { ExistingRef, ObjectRef, PlannedAction, Reason } from '../actions.js';
import type { DesiredMember, DesiredMonitor, DesiredPool } from '../desired.js';
import { describeDown, mayServe, serving } from '../health.js';
import type { PlanWarning } from '../problems.js';
import type { Steps, Story } from './steps.js';

/**
 * How long configuration changes take to reach the data plane: "within about 15–20 s"
 * (docs/cloudscale-api.md). An await allows its members' checks plus this.
 */
const DATA_PLANE_PROPAGATION_SECONDS = 20;

/** The longest an `await-members` step waits: every new member checked by its monitor, plus propagation. */
export function awaitSeconds(monitor: Pick<DesiredMonitor, 'delay_s' | 'up_threshold' | 'down_threshold'>): number {
  return monitor.delay_s * Math.max(monitor.up_threshold, monitor.down_threshold) + DATA_PLANE_PROPAGATION_SECONDS;
}

/** The gate itself: waits until `members` of `pool` are `up`, while the members it `protects` keep serving. */
export function awaitMembers(
  steps: Steps,
  pool: { ref: ObjectRef; name: string },
  members: readonly string[],
  protects: { pool: ExistingRef; members: readonly string[] },
  monitor: DesiredMonitor,
  story: Story,
): PlannedAction {
  const timeoutSeconds = awaitSeconds(monitor);
  return steps.act({
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

/** The gate before members leave a pool whose port stays, and its warning when it holds them. */
export interface MemberGate {
  readonly step?: PlannedAction;
  readonly warning?: PlanWarning;
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
export function memberGate(
  steps: Steps,
  input: {
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
  },
): MemberGate {
  const protects = input.leaving.filter(mayServe);
  if (protects.length === 0) return {};
  const up = input.staying.some(serving);
  const awaited = up ? input.added : [...input.staying, ...input.created];
  if (awaited.length === 0) return {};
  const step = awaitMembers(
    steps,
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
