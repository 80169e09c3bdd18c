// The step pairs of a plan: spans of steps that a signal does not split (src/core/stop.ts). A
// pair begins with a step that takes serving capacity away in order to put it back, and ends
// with the step that puts it back:
//
// - a listener deleted for a pool swap or a listener re-creation, and the create of its
//   replacement: between the two the port has no listener;
// - a member deleted to make room for its replacement at the same address and port (same name,
//   same pool), and that replacement's create: between the two the pool lacks that member.
//
// A listener deleted because its port is no longer wanted, or one that serves nothing (its pool
// is gone), begins no pair: nothing it serves comes back. Spans that overlap are merged.
import { isPlannedRef, type ObjectRef, type PlannedAction } from '../lb/actions.js';
import type { ImpactClass } from '../lb/impact.js';

/** The first and last index (inclusive) of a span of steps a signal must not split. */
export interface StepSpan {
  readonly first: number;
  readonly last: number;
}

/** A listener deleted with one of these impacts is re-created by a later step of the same impact. */
const LISTENER_MOVES: ReadonlySet<ImpactClass> = new Set(['pool-swap', 'listener-recreation']);

export function stepPairs(actions: readonly PlannedAction[]): StepSpan[] {
  return merged(pairsOf(actions));
}

/**
 * The steps that give back what a pair took away, and the creates of a listener for a port an
 * earlier pass left without one (its pair began in that pass): each is completed despite
 * transient failures (pair-completion.ts).
 */
export function completingSteps(actions: readonly PlannedAction[]): ReadonlySet<number> {
  const closing = new Set(pairsOf(actions).map((pair) => pair.last));
  for (const [index, action] of actions.entries()) {
    if (action.kind === 'create-listener' && action.impact === 'listener-missing') closing.add(index);
  }
  return closing;
}

function pairsOf(actions: readonly PlannedAction[]): StepSpan[] {
  const spans: StepSpan[] = [];
  for (const [first, action] of actions.entries()) {
    const closes = closingStep(action);
    if (closes === undefined) continue;
    const last = actions.findIndex((later, index) => index > first && closes(later));
    if (last !== -1) spans.push({ first, last });
  }
  return spans;
}

/** What the step that puts back what `action` takes away looks like; undefined if it begins no pair. */
function closingStep(action: PlannedAction): ((later: PlannedAction) => boolean) | undefined {
  if (action.kind === 'delete-listener' && LISTENER_MOVES.has(action.impact)) {
    return (later) => later.kind === 'create-listener' && later.impact === action.impact;
  }
  if (action.kind === 'delete-member') {
    const pool = action.pool.uuid;
    return (later) => later.kind === 'create-member' && later.body.name === action.member.name && sameExistingPool(later.pool, pool);
  }
  return undefined;
}

function sameExistingPool(ref: ObjectRef, uuid: string): boolean {
  return !isPlannedRef(ref) && ref.uuid === uuid;
}

function merged(spans: readonly StepSpan[]): StepSpan[] {
  const out: StepSpan[] = [];
  for (const span of [...spans].sort((a, b) => a.first - b.first)) {
    const previous = out.at(-1);
    if (previous !== undefined && span.first <= previous.last) out[out.length - 1] = { first: previous.first, last: Math.max(previous.last, span.last) };
    else out.push(span);
  }
  return out;
}
