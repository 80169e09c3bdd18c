// The Event that says what a pass changed on a Service's load balancer: one per Service and pass
// (not per request), with what changed, the strategy that made the change, and the time it took
// as measured. Pure: it reads the executed actions, as `plan` printed them.
import { isCloudAction, type PlannedAction, type Reason } from '../lb/actions.js';
import type { ImpactClass } from '../lb/impact.js';
import { counted } from '../text/wording.js';
import type { ExecutedAction } from './lb-executor.js';

/** At most this many objects are named per change, and this many changes per Event; the others are counted. */
const OBJECTS_NAMED = 3;
const CHANGES_NAMED = 8;

const RECREATION: ReadonlySet<ImpactClass> = new Set(['listener-recreation', 'monitor-recreation', 'member-recreation', 'pool-recreation']);

/**
 * The changes of one execution, its steps and time first (an Event's message is cut at 1 KiB,
 * and the list may be long): `11 steps in 4.2 s: pool swap of pool tcp/http
 * (k8s.cloudscale.ch/loadbalancer-pool-algorithm round_robin → least_connections)`. Actions that
 * share a reason are one change (a pool swap's build, wait, listener move and retirement); the
 * Service's own writes (finalizer, annotations, status) are named only when nothing on the load
 * balancer changed. Empty when nothing was executed.
 */
export function describeChanges(executed: readonly ExecutedAction[], elapsedMs: number): string {
  const actions = executed.map((e) => e.action).filter((a) => a.verb !== 'refuse');
  const onCloud = actions.filter((a) => a.verb !== 'kube');
  const described = onCloud.length > 0 ? onCloud : actions;
  if (described.length === 0) return '';
  // Everything on a load balancer this pass created is part of its creation.
  const created = described.find((a) => a.kind === 'create-lb');
  const groups = created === undefined ? groupByReason(described) : [[created]];
  const more = groups.length - CHANGES_NAMED;
  const changes = [...groups.slice(0, CHANGES_NAMED).map(describeGroup), ...(more > 0 ? [`and ${counted(more, 'more change')}`] : [])];
  return `${counted(described.length, 'step')} in ${elapsed(elapsedMs)}: ${changes.join('; ')}`;
}

function groupByReason(actions: readonly PlannedAction[]): PlannedAction[][] {
  const groups = new Map<string, PlannedAction[]>();
  for (const action of actions) {
    const key = reasonKey(action.reason);
    groups.set(key, [...(groups.get(key) ?? []), action]);
  }
  return [...groups.values()];
}

/** A strategy's steps share the field that changed (their texts differ: "built beside it", "serves no port any more"). */
function reasonKey(reason: Reason): string {
  return reason.field === undefined ? `text:${reason.text}` : JSON.stringify([reason.field, reason.from, reason.to]);
}

function describeGroup(group: readonly PlannedAction[]): string {
  const strategy = strategyOf(group);
  const objects = strategy === 'pool swap' ? group.filter((a) => a.kind === 'create-pool' || a.kind === 'delete-pool') : group;
  return `${strategy} of ${subjectOf(objects.length > 0 ? objects : group)} (${whatOf(group)})`;
}

/** The strategy, from what the actions do to traffic (src/core/lb/strategies.ts names them). */
export function strategyOf(group: readonly PlannedAction[]): string {
  const has = (test: (a: PlannedAction) => boolean) => group.some(test);
  if (has((a) => a.kind === 'create-lb')) return 'creation';
  if (has((a) => a.kind === 'delete-lb')) return 'deletion';
  // A pool created because a field changed is a swap's successor (a new port's pool has no field).
  if (has((a) => a.impact === 'pool-swap' || (a.kind === 'create-pool' && a.reason.field !== undefined))) return 'pool swap';
  if (has((a) => a.impact === 'member-rotation')) return 'member rotation';
  if (has((a) => a.impact === 'member-drain')) return 'drain';
  if (has((a) => RECREATION.has(a.impact))) return 're-creation';
  if (has((a) => a.impact === 'port-removal')) return 'port removal';
  const verbs = new Set(group.filter((a) => a.verb !== 'wait').map((a) => a.verb));
  if (verbs.size === 1 && verbs.has('update')) return 'in-place update';
  if (verbs.size === 1 && verbs.has('create')) return 'addition';
  if (verbs.size === 1 && verbs.has('delete')) return 'removal';
  if (verbs.size === 1 && verbs.has('kube')) return 'Service update';
  return 'replacement';
}

/** The objects, members counted per pool: `pool tcp/http`, `2 members of pool tcp/http`. */
function subjectOf(group: readonly PlannedAction[]): string {
  // In order of first appearance; the members of a pool are one entry, apart from the pool itself.
  const entries = new Map<string, { readonly name: string; readonly members?: Set<string> }>();
  for (const action of group) {
    if (action.verb === 'wait') continue;
    const member = /^member (.+) of (pool .+)$/.exec(action.object);
    if (member === null) {
      if (!entries.has(action.object)) entries.set(action.object, { name: action.object });
      continue;
    }
    const key = `members of ${member[2]!}`;
    const entry = entries.get(key) ?? { name: member[2]!, members: new Set<string>() };
    entry.members!.add(member[1]!);
    entries.set(key, entry);
  }
  const named = [...entries.values()].map(({ name, members }) => {
    if (members === undefined) return name;
    return members.size === 1 ? `member ${[...members][0]!} of ${name}` : `${members.size} members of ${name}`;
  });
  const more = named.length - OBJECTS_NAMED;
  return more > 0 ? `${named.slice(0, OBJECTS_NAMED).join(', ')} and ${more} more` : named.join(', ');
}

/**
 * What changed: the reason's field old → new (else its words), and each further field an update
 * changes or a re-created object changes with it (a timeout riding on a pool swap's listener).
 */
function whatOf(group: readonly PlannedAction[]): string {
  const said: string[] = [];
  // A field named once: the annotation, not again as the object's field it sets (same old → new).
  const values = new Set<string>();
  for (const action of group) {
    // write-annotations lists annotation keys: its reason says them already.
    const changes: readonly Reason[] = action.kind === 'write-annotations' || !('changes' in action) ? [] : action.changes;
    // An update's reason sums its changes up; the changes say it field by field.
    const reasons = action.verb === 'update' && changes.length > 0 ? changes : [action.reason, ...changes];
    for (const reason of reasons) {
      const fieldChange = reason.field !== undefined && (reason.from !== undefined || reason.to !== undefined);
      const value = `${reason.from ?? '(none)'} → ${reason.to ?? '(none)'}`;
      if (fieldChange && values.has(value)) continue;
      const text = fieldChange ? `${reason.field} ${value}` : reason.text;
      if (fieldChange) values.add(value);
      if (!said.includes(text)) said.push(text);
    }
  }
  return said.join(', ');
}

/** `40 ms` under a second (a tenth would round it to `0.0 s`), else `4.2 s`. */
function elapsed(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Whether an execution wrote to the load balancer (not only to the Service, nor only waited). */
export function changedTheLoadBalancer(executed: readonly ExecutedAction[]): boolean {
  return executed.some((e) => isCloudAction(e.action));
}
