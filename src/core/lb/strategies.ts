// The change strategies, how a change is made without downtime: one module each under
// strategies/, registered here by one line. The planner (cloud-plan.ts) asks them in this
// order; within a phase of the plan, their steps run in this order too (a drained member's
// restore before the new members of a rotation).
import { listenerPortMove } from './strategies/listener-port-move.js';
import { listenerRecreation } from './strategies/listener-recreation.js';
import { memberDrain } from './strategies/member-drain.js';
import { memberRotation } from './strategies/member-rotation.js';
import { poolSwap } from './strategies/pool-swap.js';
import type { ChangeStrategy } from './strategies/strategy.js';

export const STRATEGIES: readonly ChangeStrategy[] = [
  memberDrain,
  memberRotation,
  poolSwap,
  // The port move before the re-creation: a listener takes the first that applies.
  listenerPortMove,
  listenerRecreation,
];
