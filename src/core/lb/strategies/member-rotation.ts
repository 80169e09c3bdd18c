// Member rotation: a member's address, ports and subnet cannot change, but a pool holds several
// members as long as no two share address and port. New members are added beside the old ones,
// awaited healthy (the serving-aware gate, gates.ts), and only then do the old ones leave (the
// drain strategy takes them). A new member at an old one's address and port cannot be added
// beside it: the old one makes room first while the others serve (when none would, the pool
// swap applies instead: swapInPlaceReason in pool-swap.ts).
//
// Applies to: the members created in a pool serving a port. Resumes: a rotation a stopped pass
// left half done has its new members in place and not yet `up`; the gate of the next pass
// awaits them before the old ones leave.
import type { PlannedAction } from '../actions.js';
import { memberChangeReason } from '../reasons.js';
import type { ChangeStrategy, MembersChange, Taken } from './strategy.js';

export const memberRotation: ChangeStrategy = {
  name: 'member rotation',
  members(change: MembersChange): Taken | undefined {
    if (!change.serving || (change.created.length === 0 && change.removed.length === 0)) return undefined;
    const { steps, desired: pool, gate } = change;
    const into = change.pool;
    // Same address and port: the old member makes room first; the others serve meanwhile.
    const makeRoom = change.replacedInPlace.map((member) =>
      steps.deleteMember(member, into.ref, pool.name, { impact: 'minimal', reason: memberChangeReason(member, change.successorOf(member)!, pool) }),
    );
    const creates: PlannedAction[] = change.inPlace.map((member) =>
      steps.createMember(into, member, { impact: 'minimal', reason: memberChangeReason(change.predecessorOf(member)!, member, pool) }),
    );
    const rotation = gate.step !== undefined;
    for (const member of change.added) {
      const predecessor = change.predecessorOf(member);
      const reason =
        predecessor === undefined
          ? { text: `node ${member.node} is selected: its address ${member.address} joins the pool` }
          : memberChangeReason(predecessor, member, pool);
      creates.push(steps.createMember(into, member, { impact: rotation ? 'member-rotation' : 'minimal', reason }));
    }
    return {
      steps: { memberDeletesFirst: makeRoom, memberCreates: creates, memberAwaits: gate.step === undefined ? [] : [gate.step] },
      warnings: gate.warning === undefined ? [] : [gate.warning],
    };
  },
};
