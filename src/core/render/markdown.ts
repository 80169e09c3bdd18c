// `plan -o markdown`: the plan as Markdown for a pull-request comment: a summary, then one table
// per Service (and one for the nodes) with each change's impact and expected downtime. Built
// from the PlanDocument, as the JSON is. Pure.
//
// Names and reasons come from the cluster and the API: untrusted. Control characters are
// escaped, and every character Markdown gives a meaning to (emphasis, links, HTML, table pipes)
// is escaped too, so a name can neither break the table nor become a link, a tag or a mention.
import { restoreHeld } from '../plan/budget.js';
import { counted } from '../text/wording.js';
import type { ServicePlan } from '../lb/service-plan.js';
import { problemSummary } from '../lb/problems.js';
import type { PlannedAction } from '../lb/actions.js';
import { addressChangeText, describeNodeReason, describeReason, fieldChangeText, groupActions, lostLoadBalancerOf, pendingGroups, pendingSummary, reasonsOf } from './plan.js';
import type { PlanDocument } from '../plan/document.js';
import { escapeUnprintable } from '../text/untrusted.js';

/**
 * Markdown-escaped text for a table cell or a heading: one line, no markup, no pipe, and nothing
 * GitHub turns into a link, a mention or math (`neutraliseAutolinks`).
 */
export function markdownText(text: string): string {
  const escaped = escapeUnprintable(text)
    .replace(/&/g, '&amp;')
    .replace(/[\\`*_{}[\]<>()#+!|~$]/g, (c) => `\\${c}`)
    .replace(/@/g, '&#64;');
  return neutraliseAutolinks(escaped);
}

/** U+2060 WORD JOINER: invisible, and no letter or digit: a pattern that needs its two neighbours side by side no longer matches. */
export const JOINER = '\u2060';

/**
 * GitHub links parts of plain text after the Markdown is parsed, in the rendered text, where a
 * backslash escape is gone already: bare URLs (`https://…`, `www.…`, GFM's extended autolinks),
 * issue references (`#123`, `GH-123`, `owner/repo#123`), mentions and `user@sha`, and commit
 * hashes (a word of 7 to 40 hex digits); and it renders `$…$` as math. Each pattern is broken
 * with JOINER where it needs two characters side by side (after the colon of `https://`, after
 * `www`, `GH`, `#` and `@`, and every 6 digits of a hash), and a dollar sign, already escaped, is wrapped
 * in `<span>`, as GitHub's documentation advises for a dollar that is no math. Applied to text
 * that markdownText has escaped (`\\#`, `&#64;`, `\\$`).
 */
export function neutraliseAutolinks(escaped: string): string {
  return escaped
    .replace(/([a-z][a-z0-9+.-]*:)(?=\/\/)/gi, `$1${JOINER}`)
    .replace(/(www)(?=\.)/gi, `$1${JOINER}`)
    .replace(/(gh)(?=-\d)/gi, `$1${JOINER}`)
    .replace(/\\#(?=\d)/g, `\\#${JOINER}`)
    .replace(/&#64;/g, `&#64;${JOINER}`)
    .replace(/(?<![0-9a-z])[0-9a-f]{7,}(?![0-9a-z])/gi, (hex) => hex.match(/.{1,6}/g)!.join(JOINER))
    .replace(/\\\$/g, () => '<span>$</span>');
}

/**
 * The Markdown view. A Service's table lists all its actions in plan order, those the downtime
 * budget holds back (`plan --max-downtime`, ServicePlan.held) marked, with why they are held.
 */
export function renderPlanMarkdown(document: PlanDocument): string {
  const lines: string[] = ['### cloudscale-ccm plan', '', summaryLine(document), ''];
  const shown = document.services.filter((s) => restoreHeld(s).actions.length + s.problems.length + s.warnings.length + (s.pending?.length ?? 0) > 0);
  for (const plan of shown) lines.push(...serviceSection(plan), '');
  const nodes = document.nodes;
  if (nodes !== null && (nodes.actions.length > 0 || nodes.deletionRefusal !== null)) lines.push(...nodesSection(nodes), '');
  const unchanged = document.services.filter((s) => !shown.includes(s)).map((s) => `${s.service.namespace}/${s.service.name}`);
  if (unchanged.length > 0) lines.push(`Unchanged: ${unchanged.map(markdownText).join(', ')}.`, '');
  return `${lines.join('\n').trimEnd()}\n`;
}

function summaryLine(document: PlanDocument): string {
  const s = document.summary;
  // Held changes are counted as the text, the JSON (summary.held) and sync-lb count them: changes, not actions.
  const heldActions = document.services.reduce((n, plan) => n + (plan.held ?? []).reduce((m, change) => m + change.actions.length, 0), 0);
  if (!s.changes && s.refuse === 0 && s.problems === 0 && s.held === 0) return '**No changes.** The cloud and the cluster match the desired state.';
  const parts = [`${s.create} to create`, `${s.update} to update`, `${s.delete} to delete`];
  if (s.held > 0) parts.push(`**${counted(s.held, 'change')} held back** (${counted(heldActions, 'action')} over the downtime budget)`);
  if (s.pending > 0) parts.push(`**${pendingSummary(s.pending)}**`);
  if (s.kube > 0) parts.push(`${s.kube} Service write${s.kube === 1 ? '' : 's'}`);
  if (s.nodeChanges > 0) parts.push(`${s.nodeChanges} node change${s.nodeChanges === 1 ? '' : 's'}`);
  if (s.refuse > 0) parts.push(`${s.refuse} refused`);
  if (s.problems > 0) parts.push(`${s.problems} problem${s.problems === 1 ? '' : 's'}`);
  const worst = s.worstDowntime;
  const downtime =
    worst === null
      ? 'Expected downtime: none.'
      : `Worst expected downtime: ${markdownText(worst.service)}, ${markdownText(worst.object)} (${worst.impact}): ${markdownText(worst.text)}.`;
  return `**Plan:** ${parts.join(', ')}. ${downtime}`;
}

function serviceSection(plan: ServicePlan): string[] {
  const lb = plan.loadBalancer;
  const what =
    lb === null
      ? 'no load balancer'
      : plan.mode === 'delete'
        ? `load balancer ${markdownText(lb.name)} (no longer wanted)`
        : `load balancer ${markdownText(lb.name)}${lb.uuid === null ? (lostLoadBalancerOf(plan) === null ? ' (new)' : ' (new: the recorded one is gone)') : ''}`;
  const lines = [`#### Service ${markdownText(`${plan.service.namespace}/${plan.service.name}`)} — ${what}`, ''];
  const actions = restoreHeld(plan).actions;
  const held = new Set(plan.held?.flatMap((change) => change.actions));
  if (actions.length > 0) {
    lines.push('| Change | Object | Why | Impact | Downtime | Held back |', '|---|---|---|---|---|---|');
    const replaced = new Set(actions.flatMap((action) => (action.verb === 'delete' ? [action.object] : [])));
    // A run of actions with one reason and impact (a pool swap's steps) is one row, as in the text view.
    for (const group of groupActions(actions).flatMap((run) => splitBy(run, (action) => held.has(action)))) {
      const first = group[0]!;
      const downtime = first.verb === 'kube' || first.verb === 'refuse' ? '—' : markdownText(first.downtime.text);
      const impact = first.verb === 'kube' || first.verb === 'refuse' ? '—' : first.impact;
      const isHeld = held.has(first) ? '**yes**' : 'no';
      const objects = group.map((action) => markdownText(action.object)).join('<br>');
      // A create that replaces a deleted object of the same name lists every field that differs, as the text view does.
      const fields = group.flatMap((action) => (action.verb === 'create' && 'changes' in action && replaced.has(action.object) ? action.changes.map(fieldChangeText) : []));
      const why = [...reasonsOf(first).map(describeReason), ...fields].join('; ');
      lines.push(row([kindsOf(group), objects, markdownText(why), impact, downtime, isHeld]));
    }
  }
  const refused = new Set(plan.actions.flatMap((a) => (a.kind === 'refuse' ? [a.problem] : [])));
  const lost = lostLoadBalancerOf(plan);
  const notes = [
    ...(lost === null ? [] : [`- **${markdownText(addressChangeText(lost))}**`]),
    ...(plan.held ?? []).map((change) => `- **held back** (change ${changeIdText(change.id)}): ${markdownText(change.reason)}`),
    ...pendingGroups(plan).map((group) => `- **later:** ${markdownText(`${group.text}: ${group.actions.map((a) => a.object).join(', ')}`)}`),
    ...plan.problems.filter((p) => !refused.has(p)).map((p) => `- **error:** ${markdownText(problemSummary(p))} (how to fix: ${markdownText(p.hint)})`),
    ...plan.warnings.map((w) => `- **warning** ${markdownText(w.reason)}: ${markdownText(w.message)}`),
  ];
  if (notes.length > 0) lines.push(...(actions.length > 0 ? [''] : []), ...notes);
  return lines;
}

function nodesSection(nodes: NonNullable<PlanDocument['nodes']>): string[] {
  const lines = ['#### Nodes', ''];
  if (nodes.actions.length > 0) {
    lines.push('| Change | Object | Why | Impact |', '|---|---|---|---|');
    for (const action of nodes.actions) {
      lines.push(row([`\`${action.kind}\``, markdownText(action.object), markdownText(describeNodeReason(action)), action.verb === 'refuse' ? 'refused' : action.impact]));
    }
  }
  const carried = nodes.actions.some((a) => a.kind === 'delete-node' && a.verb === 'refuse');
  if (nodes.deletionRefusal !== null && !carried) {
    lines.push(...(nodes.actions.length > 0 ? [''] : []), `- no node is deleted: ${markdownText(nodes.deletionRefusal)}`);
  }
  return lines;
}

/**
 * A held change's id as code: people copy it into the approval annotation, so it must reach them
 * whole (markdownText would break it up as a commit hash); GitHub links nothing in a code span.
 * An id of another shape (not one changeId makes) is escaped as any text.
 */
function changeIdText(id: string): string {
  return /^[0-9a-f]{1,64}$/.test(id) ? `\`${id}\`` : markdownText(id);
}

/** Consecutive runs of `items` with the same `key`. */
function splitBy<T>(items: readonly T[], key: (item: T) => unknown): T[][] {
  const runs: T[][] = [];
  for (const item of items) {
    const last = runs.at(-1);
    if (last !== undefined && key(last[0]!) === key(item)) last.push(item);
    else runs.push([item]);
  }
  return runs;
}

/** The kinds of a group in order, each once, with how many: `create-pool`, `create-member` ×2. */
function kindsOf(group: readonly PlannedAction[]): string {
  const counts = new Map<string, number>();
  for (const action of group) counts.set(action.kind, (counts.get(action.kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `\`${kind}\`${n > 1 ? ` ×${n}` : ''}`).join(', ');
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}
