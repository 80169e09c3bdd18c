// The plan for people: `renderPlanText` is the text view of the plan document
// (src/core/plan/document.ts), grouped per Service, ending with a summary line. Pure.
import { Chalk } from 'chalk';
import type { LostLoadBalancer, PlannedAction, Reason, Verb } from '../lb/actions.js';
import { impactRank, type DowntimeClass } from '../lb/impact.js';
import { problemSummary, type Problem } from '../lb/problems.js';
import { approvalHint, formatSeconds, restoreHeld } from '../plan/budget.js';
import type { PlanDocument, PlanSummary } from '../plan/document.js';
import { escapeStrings } from '../text/untrusted.js';
import type { ServicePlan } from '../lb/service-plan.js';
import type { NodeAction } from '../nodes/types.js';
import { counted } from '../text/wording.js';

const SYMBOL: { readonly [V in Verb]: string } = {
  create: '+',
  update: '~',
  delete: '-',
  refuse: '!',
  kube: '*',
  wait: '…',
};

const LEGEND: { readonly [V in Verb]: string } = {
  create: 'create',
  update: 'update in place',
  delete: 'delete',
  refuse: 'refused',
  kube: 'write to the Service',
  wait: 'wait until healthy before the next step',
};

/** The order symbols appear in the legend. */
const LEGEND_ORDER: readonly Verb[] = ['create', 'update', 'delete', 'wait', 'refuse', 'kube'];

/** Unchanged Services named in the text view before "… and N more". */
const UNCHANGED_NAMES_SHOWN = 8;

type Paint = (text: string) => string;

/**
 * The text view: a legend of the symbols used, one block per Service with something to show
 * (actions, problems, warnings), a block for the nodes, one line naming what is unchanged, and
 * the summary line. A Service's actions are shown per object (objectGroups): every action on it,
 * what its creates set (values, or `field: old → new` when it replaces an object), its reasons and
 * impact once; neighbouring objects with the same reasons share them, so a pool swap reads as one
 * change. Colour only when
 * `color` is set (the caller decides: a TTY without NO_COLOR/--no-color). Every string of the
 * document is shown with its control characters escaped (names read from the API are untrusted).
 */
export function renderPlanText(planDocument: PlanDocument, options: { color: boolean }): string {
  const document = escapeStrings(planDocument);
  const c = new Chalk({ level: options.color ? 1 : 0 });
  const paint: { readonly [V in Verb]: Paint } = {
    create: c.green,
    update: c.yellow,
    delete: c.red,
    refuse: c.magenta,
    kube: c.cyan,
    wait: c.blue,
  };
  const lines: string[] = [];
  const shown = document.services.filter((s) => s.actions.length + s.problems.length + s.warnings.length + (s.held?.length ?? 0) + (s.pending?.length ?? 0) > 0);
  const unchanged = document.services.filter((s) => !shown.includes(s));

  const used = new Set<Verb>([
    ...shown.flatMap((s) => s.actions.map((a) => a.verb)),
    ...(document.nodes?.actions ?? []).map((a) => a.verb),
  ]);
  if (used.size > 0) {
    const legend = LEGEND_ORDER.filter((v) => used.has(v)).map((v) => `${paint[v](SYMBOL[v])} ${LEGEND[v]}`);
    lines.push(c.dim('Symbols: ') + legend.join(c.dim(', ')), '');
  }

  for (const plan of shown) {
    lines.push(serviceHeader(plan, c));
    const lost = lostLoadBalancerOf(plan);
    if (lost !== null) lines.push(`  ${c.red.bold(`! ${addressChangeText(lost)}`)}`);
    // Held actions are listed two columns deeper, under their change: their objects line up with the rest.
    const heldActions = [...(plan.held ?? []).flatMap((change) => change.actions), ...(plan.pending ?? []).map((p) => p.action)];
    const width = Math.max(0, ...plan.actions.map((a) => a.kind.length), ...heldActions.map((a) => a.kind.length + 2));
    const deleted = deletedObjects(plan);
    for (const group of objectGroups(plan.actions)) {
      for (const block of group.blocks) {
        for (const action of block.actions) {
          lines.push(`  ${paint[action.verb](`${SYMBOL[action.verb]} ${action.kind.padEnd(width)}`)}  ${action.object}`);
        }
        for (const field of block.actions.flatMap((action) => createFieldLines(action, deleted))) lines.push(`        ${field}`);
      }
      for (const reason of group.reasons) lines.push(c.dim(`      because ${describeReason(reason)}`));
      const first = group.blocks[0]!.actions[0]!;
      if (first.kind === 'refuse') {
        lines.push(`      ${c.bold('how to proceed:')} ${first.problem.hint}`);
      } else if (group.worst !== null) {
        const impact = `impact: ${group.worst.impact}, ${group.worst.downtime.text}`;
        lines.push(`      ${downtimePaint(group.worst.downtime.class, c)(impact)}`);
      }
    }
    const refused = new Set(plan.actions.flatMap((a) => (a.kind === 'refuse' ? [a.problem] : [])));
    for (const problem of plan.problems) if (!refused.has(problem)) lines.push(...renderProblem(problem, c));
    for (const warning of plan.warnings) lines.push(`  ${c.yellow('warning')} ${warning.reason}: ${warning.message}`);
    for (const change of plan.held ?? []) {
      lines.push(`  ${c.yellow.bold(`held back: change ${change.id}`)} (over the budget of ${formatSeconds(change.budgetSeconds)}: ${change.downtime.text})`);
      // A held create lists what it sets or changes, as the main plan does: a timeout that rides on a held listener move is part of the change.
      for (const action of change.actions) {
        lines.push(c.dim(`    ${SYMBOL[action.verb]} ${action.kind.padEnd(width - 2)}  ${action.object}`));
        for (const field of createFieldLines(action, deleted)) lines.push(c.dim(`          ${field}`));
      }
      lines.push(`      ${approvalHint(change.id, plan.service.namespace, plan.service.name)}`);
    }
    for (const group of pendingGroups(plan)) {
      lines.push(`  ${c.cyan.bold('later:')} ${group.text}`);
      for (const action of group.actions) lines.push(c.dim(`    ${SYMBOL[action.verb]} ${action.kind.padEnd(width - 2)}  ${action.object}`));
    }
    lines.push('');
  }

  const nodes = document.nodes;
  if (nodes !== null && (nodes.actions.length > 0 || nodes.deletionRefusal !== null)) {
    lines.push(c.bold('Nodes'));
    const width = Math.max(0, ...nodes.actions.map((a) => a.kind.length));
    for (const action of nodes.actions) {
      lines.push(`  ${paint[action.verb](`${SYMBOL[action.verb]} ${action.kind.padEnd(width)}`)}  ${action.object}`);
      lines.push(c.dim(`      because ${describeNodeReason(action)}`));
      if (action.verb !== 'refuse') lines.push(c.dim(`      impact: ${action.impact}`));
    }
    // The refusal is part of every refused deletion's reason; alone it explains a pass-wide stop.
    const carried = nodes.actions.some((a) => a.kind === 'delete-node' && a.verb === 'refuse');
    if (nodes.deletionRefusal !== null && !carried) {
      lines.push(`  ${c.magenta('!')} no node is deleted: ${nodes.deletionRefusal}`);
    }
    lines.push('');
  }

  const unchangedParts: string[] = [];
  if (unchanged.length > 0) unchangedParts.push(nameList(unchanged.map((s) => `${s.service.namespace}/${s.service.name}`)));
  if (nodes !== null && nodes.unchanged > 0) unchangedParts.push(`${nodes.unchanged} node${nodes.unchanged === 1 ? '' : 's'}`);
  if (unchangedParts.length > 0) lines.push(c.dim(`Unchanged: ${unchangedParts.join('; ')}.`));

  lines.push(summaryLine(document.summary, c));
  return `${lines.join('\n')}\n`;
}

/** A Service's pending actions due at one time, and one sentence on them. */
export interface PendingGroup {
  readonly after: string;
  readonly actions: readonly PlannedAction[];
  /** `2 members are deleted after their drain ends at 2025-01-01T00:01:00.000Z` */
  readonly text: string;
}

/** A Service's pending actions (ServicePlan.pending) by the time they become due, the earliest first. */
export function pendingGroups(plan: ServicePlan): PendingGroup[] {
  const byTime = new Map<string, PlannedAction[]>();
  for (const { action, after } of plan.pending ?? []) byTime.set(after, [...(byTime.get(after) ?? []), action]);
  return [...byTime]
    .sort(([a], [b]) => Date.parse(a) - Date.parse(b))
    .map(([after, actions]) => {
      const one = actions.length === 1;
      return { after, actions, text: `${counted(actions.length, 'member')} ${one ? 'is' : 'are'} deleted after ${one ? 'its' : 'their'} drain ends at ${after}` };
    });
}

function serviceHeader(plan: ServicePlan, c: InstanceType<typeof Chalk>): string {
  const name = c.bold(`Service ${plan.service.namespace}/${plan.service.name}`);
  const lb = plan.loadBalancer;
  const what =
    lb === null
      ? plan.problems.length > 0
        ? 'load balancer not planned (see the errors)'
        : 'no load balancer'
      : plan.mode === 'delete'
        ? `load balancer ${lb.name} (no longer wanted)`
        : `load balancer ${lb.name}${lb.uuid === null ? (lostLoadBalancerOf(plan) === null ? ' (new)' : ' (new: the recorded one is gone)') : ''}`;
  return `${name}${c.dim(` — ${what}`)}`;
}

/** The load balancer a Service's plan replaces because it is gone (impact `lb-lost`), if any. */
export function lostLoadBalancerOf(plan: ServicePlan): LostLoadBalancer | null {
  for (const action of plan.actions) if (action.kind === 'create-lb') return action.lost;
  return null;
}

/** One sentence on a lost load balancer: which addresses change, and what breaks. */
export function addressChangeText(lost: LostLoadBalancer): string {
  const changing = lost.addresses.filter((address) => !lost.kept.includes(address));
  const from = changing.length === 0 ? 'the addresses it had' : changing.join(', ');
  const kept = lost.kept.length === 0 ? '' : ` (kept: ${lost.kept.join(', ')})`;
  return `the Service's addresses change: ${from} → new ones, known once the load balancer exists${kept}; DNS records, firewalls and allow-lists that name the old ones break until they are updated`;
}

/** The actions on one object (`pool tcp/http`, `listener tcp/80`): created, replaced, updated, deleted. */
interface ObjectBlock {
  readonly object: string;
  readonly actions: PlannedAction[];
}

/** Object blocks that follow each other with the same reasons and impact: shown with them once. */
interface ObjectGroup {
  readonly blocks: ObjectBlock[];
  readonly reasons: readonly Reason[];
  /** The action with the worst impact, for the impact line; null for Service writes. */
  readonly worst: PlannedAction | null;
}

/**
 * The text view's structure of a Service's plan, terraform-like: one block per run of actions on
 * one object (a listener moved: its delete and create), its reasons once, its impact once (the
 * worst of its actions); neighbouring blocks with the same reasons and impact share them. Blocks
 * keep the plan's order, which is the order the actions run in: an object touched at two places
 * (a pool swap creates `pool tcp/http` first and deletes the old one of that name last) gets two
 * blocks, never one at the place of the first. An update's reasons are its changed fields, one each.
 */
export function objectGroups(actions: readonly PlannedAction[]): ObjectGroup[] {
  const blocks: ObjectBlock[] = [];
  for (const action of actions) {
    // A refusal and the Service's own writes stand alone: each says something of its own.
    const last = blocks.at(-1);
    if (!standsAlone(action) && last !== undefined && last.object === action.object && !standsAlone(last.actions[0]!)) last.actions.push(action);
    else blocks.push({ object: action.object, actions: [action] });
  }
  const groups: ObjectGroup[] = [];
  for (const block of blocks) {
    const reasons: Reason[] = [];
    for (const action of block.actions) {
      for (const reason of reasonsOf(action)) if (!reasons.some((r) => sameReason(r, reason))) reasons.push(reason);
    }
    const changing = block.actions.filter((a) => a.verb !== 'kube' && a.verb !== 'refuse');
    const worst = changing.length === 0 ? null : changing.reduce((w, a) => (impactRank(a.impact) > impactRank(w.impact) ? a : w));
    const last = groups.at(-1);
    const joins =
      last !== undefined &&
      !standsAlone(block.actions[0]!) &&
      !standsAlone(last.blocks[0]!.actions[0]!) &&
      last.worst?.impact === worst?.impact &&
      last.reasons.length === reasons.length &&
      last.reasons.every((r, i) => sameReason(r, reasons[i]!));
    if (joins) last.blocks.push(block);
    else groups.push({ blocks: [block], reasons, worst });
  }
  return groups;
}

/** A refusal and a write to the Service: shown alone, never merged with a neighbour. */
function standsAlone(action: PlannedAction): boolean {
  return action.verb === 'refuse' || action.verb === 'kube';
}

/** Why an action is planned: an update's reason per changed field, any other action's one reason. */
export function reasonsOf(action: PlannedAction): readonly Reason[] {
  return action.verb === 'update' && 'changes' in action ? (action.changes as readonly Reason[]) : [action.reason];
}

/**
 * What a create sets: for a new object its attribute values; for one that replaces an object of
 * the same name that the plan deletes (just before it, or, in a pool swap, after it) every field
 * that differs (`field: old → new`), and nothing when none does. `deleted`: the objects the
 * Service's plan deletes, held actions included.
 */
export function createFieldLines(action: PlannedAction, deleted: ReadonlySet<string>): string[] {
  if (action.verb !== 'create' || !('body' in action)) return [];
  if ('changes' in action && action.changes.length > 0) return action.changes.map(fieldChangeText);
  if (deleted.has(action.object)) return [];
  const values = Object.entries(action.body as Record<string, unknown>)
    .filter(([key, value]) => !HIDDEN_BODY_FIELDS.has(key) && !isEmpty(value))
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return values.length > 0 ? [values.join(', ')] : [];
}

/** The objects a Service's plan deletes, the held actions' included. */
export function deletedObjects(plan: ServicePlan): ReadonlySet<string> {
  return new Set(restoreHeld(plan).actions.flatMap((action) => (action.verb === 'delete' ? [action.object] : [])));
}

/** One field a replacing create changes: `field: old → new`. */
export function fieldChangeText(change: Reason): string {
  return `${change.field ?? change.text}: ${change.from ?? '(none)'} → ${change.to ?? '(none)'}`;
}

/** Nothing to show: unset, an empty list (`allowed_cidrs: []` is the default: open to all), no options. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** Body fields the object line already names (`name`) or that say nothing to a person (UUIDs, tags). */
const HIDDEN_BODY_FIELDS: ReadonlySet<string> = new Set(['name', 'tags', 'subnet', 'pool', 'load_balancer']);

/** Runs of consecutive actions that share reason and impact. */
export function groupActions(actions: readonly PlannedAction[]): PlannedAction[][] {
  const groups: PlannedAction[][] = [];
  for (const action of actions) {
    const last = groups.at(-1);
    const head = last?.[0];
    const joins =
      head !== undefined &&
      head.kind !== 'refuse' &&
      action.kind !== 'refuse' &&
      head.impact === action.impact &&
      head.verb !== 'kube' &&
      action.verb !== 'kube' &&
      sameReason(head.reason, action.reason);
    if (joins) last!.push(action);
    else groups.push([action]);
  }
  return groups;
}

function sameReason(a: Reason, b: Reason): boolean {
  return a.text === b.text && a.field === b.field && a.from === b.from && a.to === b.to;
}

export function describeReason(reason: Reason): string {
  if (reason.field !== undefined && (reason.from !== undefined || reason.to !== undefined)) {
    return `${reason.text} (${reason.field}: ${reason.from ?? '(none)'} → ${reason.to ?? '(none)'})`;
  }
  return reason.text;
}

export function describeNodeReason(action: NodeAction): string {
  const { reason } = action;
  if (reason.from === null && reason.to === null) return reason.text;
  return `${reason.text} (${reason.field}: ${reason.from ?? '(none)'} → ${reason.to ?? '(none)'})`;
}

function downtimePaint(cls: DowntimeClass, c: InstanceType<typeof Chalk>): Paint {
  switch (cls) {
    case 'none':
    case 'minimal':
      return c.dim;
    case 'short':
      return c.yellow;
    case 'considerable':
    case 'total':
      return c.red;
  }
}

function renderProblem(problem: Problem, c: InstanceType<typeof Chalk>): string[] {
  return [`  ${c.red('error')} ${problemSummary(problem)}`, `      ${c.bold('how to fix:')} ${problem.hint}`];
}

/** The summary's part on pending actions: `2 members to delete after their drain`. */
export function pendingSummary(pending: number): string {
  return `${counted(pending, 'member')} to delete after ${pending === 1 ? 'its' : 'their'} drain`;
}

function nameList(names: readonly string[]): string {
  if (names.length <= UNCHANGED_NAMES_SHOWN) return names.join(', ');
  return `${names.slice(0, UNCHANGED_NAMES_SHOWN).join(', ')} and ${names.length - UNCHANGED_NAMES_SHOWN} more Services`;
}

function summaryLine(summary: PlanSummary, c: InstanceType<typeof Chalk>): string {
  if (!summary.changes && summary.refuse === 0 && summary.problems === 0) {
    return `${c.bold('No changes.')} The cloud and the cluster match the desired state.`;
  }
  const parts = [`${summary.create} to create`, `${summary.update} to update`, `${summary.delete} to delete`];
  if (summary.wait > 0) parts.push(`${summary.wait} wait${summary.wait === 1 ? '' : 's'} for healthy members`);
  if (summary.kube > 0) parts.push(`${summary.kube} Service write${summary.kube === 1 ? '' : 's'}`);
  if (summary.nodeChanges > 0) parts.push(`${summary.nodeChanges} node change${summary.nodeChanges === 1 ? '' : 's'}`);
  if (summary.refuse > 0) parts.push(c.magenta(`${summary.refuse} refused`));
  if (summary.held > 0) parts.push(c.yellow(`${summary.held} change${summary.held === 1 ? '' : 's'} held back`));
  if (summary.pending > 0) parts.push(c.cyan(pendingSummary(summary.pending)));
  if (summary.problems > 0) parts.push(c.red(`${summary.problems} problem${summary.problems === 1 ? '' : 's'}`));
  const worst = summary.worstDowntime;
  const downtime =
    worst === null
      ? 'Expected downtime: none.'
      : `Worst expected downtime: ${worst.service}, ${worst.object} (${worst.impact}): ${worst.text}.`;
  return `${c.bold('Plan:')} ${parts.join(', ')}. ${downtime}`;
}
