// Draining: a member leaving a pool whose port stays is taken out of service gently. It is
// tagged with when draining began and disabled (it takes no new connections), and deleted by
// the first pass after the drain period. A member wanted again is enabled and its tag dropped.
//
// Applies to: the members that leave a pool serving a port, and the members that stay but are
// disabled or carry the drain tag. Resumes: the tag records when draining began, so a later
// pass deletes the member once the period has passed (`pending` until then), whichever pass
// tagged it; a tag without the member disabled yet is finished (disabled), keeping its time.
// Gates: a member leaves after the serving-aware gate of its pool (gates.ts), when there is one.
import type { MemberState, Tags } from '../../cloudscale/types.js';
import type { ExistingRef, PlannedAction, Reason } from '../actions.js';
import type { DrainPolicy, PendingAction } from '../service-plan.js';
import type { Steps, Story } from './steps.js';
import type { ChangeStrategy, MembersChange, Taken } from './strategy.js';

/** How long a drained member is kept (disabled) before it is deleted, unless --drain-seconds says otherwise. */
export const DEFAULT_DRAIN_SECONDS = 60;

/** The tag that records, on a disabled member, when this tool began to drain it (ISO-8601). */
export const MEMBER_DRAINING_TAG = 'k8s.cloudscale.ch/draining-since';

export const memberDrain: ChangeStrategy = {
  name: 'drain',
  members(change: MembersChange): Taken | undefined {
    const { steps, pool } = change;
    const restores = change.matched.flatMap(([, have]) =>
      restoreMember(steps, have, pool.ref, pool.name, {
        text: have.tags?.[MEMBER_DRAINING_TAG] === undefined ? 'the member is disabled, but its node is selected' : 'its node is selected again: the drain stops',
        field: 'enabled',
        from: String(have.enabled),
        to: 'true',
      }),
    );
    const leaves: PlannedAction[] = [];
    const pending: PendingAction[] = [];
    let kept = 0;
    // A pool that serves no port yet (a successor) has nothing to drain: the pool swap deletes its members.
    if (change.serving) {
      for (const member of change.leaving) {
        const left = leaveMember(steps, member, {
          pool: pool.ref,
          poolName: pool.name,
          reason: change.reasonFor(member),
          othersServe: change.matched.length + change.created.length > 0,
          gated: change.gate.step !== undefined,
          drain: change.drain,
          serverExists: change.serverAddresses.has(member.address),
        });
        leaves.push(...left.steps);
        if (left.pending !== undefined) pending.push(left.pending);
        if (left.kept) kept += 1;
      }
    }
    if (restores.length === 0 && leaves.length === 0 && pending.length === 0 && kept === 0) return undefined;
    return {
      steps: { memberCreates: restores, memberLeaves: leaves },
      pending,
      warnings:
        kept === 0
          ? []
          : [
              {
                reason: 'MembersKept',
                message: `pool ${pool.name}: no selected node remains, so the ${kept} member(s) of the nodes leaving it keep serving until a replacement is up or their servers are gone`,
              },
            ],
    };
  },
};

/** Takes a member out of service gently: when draining began (a tag), then disabled. */
function drainMember(steps: Steps, member: MemberState, pool: ExistingRef, poolName: string, nowMs: number, reason: Reason): PlannedAction[] {
  const story: Story = { impact: 'member-drain', reason };
  const object = `member ${member.name} of pool ${poolName}`;
  const drained: PlannedAction[] = [];
  if (member.tags?.[MEMBER_DRAINING_TAG] === undefined) {
    drained.push(
      steps.act({
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
    drained.push(steps.act({ kind: 'update-member', object, ...story, pool, member: { uuid: member.uuid, name: member.name }, patch: { enabled: false } }));
  }
  return drained;
}

/**
 * How a member leaves a pool whose port stays, after the gate (`gated`), if any: deleted at
 * once when no server has its address any more (it serves nothing), or when there is no drain
 * period (as the Go CCM does; the pool's last members then as the outage `no-members`, which
 * the plan predicts and the budget judges); else drained: tagged and disabled now, deleted by
 * the first pass after the drain period (`pending` until then). The last members that may
 * serve, with nothing staying, are `kept` (the caller warns).
 */
function leaveMember(
  steps: Steps,
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
  const remove = (story: Story) => steps.deleteMember(member, pool, poolName, story);
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
  const drainSteps = drainMember(steps, member, pool, poolName, drain.nowMs, {
    ...reason,
    text: `${reason.text}: drained (no new connections), deleted after ${drain.seconds} s`,
  });
  return { steps: drainSteps, pending };
}

/** A member wanted again (its node came back, or it was disabled by hand): enabled, its drain tag dropped. */
function restoreMember(steps: Steps, member: MemberState, pool: ExistingRef, poolName: string, reason: Reason): PlannedAction[] {
  const story: Story = { impact: 'none', reason };
  const object = `member ${member.name} of pool ${poolName}`;
  const restored: PlannedAction[] = [];
  if (!member.enabled) {
    restored.push(steps.act({ kind: 'update-member', object, ...story, pool, member: { uuid: member.uuid, name: member.name }, patch: { enabled: true } }));
  }
  if (member.tags?.[MEMBER_DRAINING_TAG] !== undefined) {
    const tags: Tags = { ...member.tags };
    delete tags[MEMBER_DRAINING_TAG];
    restored.push(steps.act({ kind: 'update-member', object, ...story, pool, member: { uuid: member.uuid, name: member.name }, patch: { tags } }));
  }
  return restored;
}
