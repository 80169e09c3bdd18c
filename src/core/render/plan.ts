// The plan for people and for machines. `planDocument` is the versioned JSON document of
// `plan -o json` (schema in docs/plan-json.md); `renderPlanText` is the text view, grouped per
// Service, ending with a summary line. Both are pure.
import { Chalk } from 'chalk';
import type { PlannedAction, Verb } from '../lb/actions.js';
import { IMPACT_DOC, impactRank, type ImpactClass } from '../lb/impact.js';
import type { PlanWarning, Problem } from '../lb/problems.js';
import type { ServicePlan } from '../lb/planner.js';
import type { NodeAction } from '../nodes/types.js';

/** Bumped on any incompatible change of the JSON document. */
export const PLAN_DOCUMENT_VERSION = 1;

export interface PlanDocument {
  readonly apiVersion: 'cloudscale-ccm/v1';
  readonly kind: 'Plan';
  readonly version: typeof PLAN_DOCUMENT_VERSION;
  /** `null` when nodes were not planned (a plan for named Services or a manifest). */
  readonly nodes: {
    readonly actions: readonly NodeAction[];
    readonly unchanged: number;
    readonly deletionRefusal: string | null;
  } | null;
  readonly services: readonly ServicePlan[];
  readonly summary: PlanSummary;
}

export interface PlanSummary {
  readonly create: number;
  readonly update: number;
  readonly delete: number;
  readonly refuse: number;
  /** Writes to Service objects (finalizer, annotations, status). */
  readonly kube: number;
  readonly nodeChanges: number;
  readonly problems: number;
  /** Whether applying the plan would write anything. */
  readonly changes: boolean;
  /** The worst expected interruption, or null when nothing interrupts traffic. */
  readonly worstDowntime: {
    readonly service: string;
    readonly object: string;
    readonly impact: ImpactClass;
    readonly text: string;
    readonly minSeconds: number;
    readonly maxSeconds: number | null;
  } | null;
}

export function planDocument(input: {
  nodes: { actions: readonly NodeAction[]; unchanged: number; deletionRefusal: string | null } | null;
  services: readonly ServicePlan[];
}): PlanDocument {
  const services = input.services.filter((s) => s.mode !== 'ignore');
  return {
    apiVersion: 'cloudscale-ccm/v1',
    kind: 'Plan',
    version: PLAN_DOCUMENT_VERSION,
    nodes: input.nodes,
    services,
    summary: summarise(input.nodes?.actions ?? [], services),
  };
}

function summarise(nodeActions: readonly NodeAction[], services: readonly ServicePlan[]): PlanSummary {
  const counts: Record<Verb, number> = { create: 0, update: 0, delete: 0, refuse: 0, kube: 0 };
  let worst: PlanSummary['worstDowntime'] = null;
  for (const plan of services) {
    for (const action of plan.actions) {
      counts[action.verb] += 1;
      if (action.verb === 'refuse' || action.downtime.class === 'none') continue;
      if (worst === null || isWorse(action, worst)) {
        worst = {
          service: `${plan.service.namespace}/${plan.service.name}`,
          object: action.object,
          impact: action.impact,
          text: action.downtime.text,
          minSeconds: action.downtime.minSeconds,
          maxSeconds: action.downtime.maxSeconds,
        };
      }
    }
  }
  const nodeChanges = nodeActions.filter((a) => a.verb !== 'refuse').length;
  const nodeProblems = nodeActions.filter((a) => a.verb === 'refuse').length;
  const problems = services.reduce((n, s) => n + s.problems.length, 0) + nodeProblems;
  return {
    ...counts,
    nodeChanges,
    problems,
    changes: counts.create + counts.update + counts.delete + counts.kube + nodeChanges > 0,
    worstDowntime: worst,
  };
}

function isWorse(action: PlannedAction, than: NonNullable<PlanSummary['worstDowntime']>): boolean {
  const rank = impactRank(action.impact) - impactRank(than.impact);
  if (rank !== 0) return rank > 0;
  return (action.downtime.maxSeconds ?? Infinity) > (than.maxSeconds ?? Infinity);
}

const SYMBOL: { readonly [V in Verb]: string } = {
  create: '+',
  update: '~',
  delete: '-',
  refuse: '!',
  kube: '*',
};

const NODE_SYMBOL: { readonly [V in NodeAction['verb']]: string } = {
  update: '~',
  delete: '-',
  refuse: '!',
};

export function renderPlanText(document: PlanDocument, options: { color: boolean }): string {
  const c = new Chalk({ level: options.color ? 1 : 0 });
  const paint: { readonly [V in Verb]: (s: string) => string } = {
    create: c.green,
    update: c.yellow,
    delete: c.red,
    refuse: c.magenta,
    kube: c.cyan,
  };
  const lines: string[] = [];
  for (const plan of document.services) {
    const name = `${plan.service.namespace}/${plan.service.name}`;
    const lb = plan.loadBalancer
      ? `load balancer ${plan.loadBalancer.name}${plan.loadBalancer.uuid ? '' : ' (new)'}`
      : 'no load balancer';
    const verbWord = plan.mode === 'delete' ? 'being removed' : lb;
    lines.push(c.bold(`Service ${name}`) + c.dim(` — ${verbWord}`));
    if (plan.actions.length === 0 && plan.problems.length === 0) lines.push(c.dim('  no changes'));
    for (const action of plan.actions) {
      const paintVerb = paint[action.verb];
      lines.push(`  ${paintVerb(`${SYMBOL[action.verb]} ${action.kind}`)} ${action.object}`);
      lines.push(c.dim(`      because ${describeReason(action)}`));
      if (action.verb !== 'kube') {
        lines.push(c.dim(`      impact: ${action.impact}; downtime: ${action.downtime.text}`));
      }
      if (action.kind === 'refuse') lines.push(`      ${c.bold('how to proceed:')} ${action.problem.hint}`);
    }
    for (const problem of plan.problems.filter((p) => !plan.actions.some((a) => a.kind === 'refuse' && a.problem === p))) {
      lines.push(...renderProblem(problem, c));
    }
    for (const warning of plan.warnings) lines.push(...renderWarning(warning, c));
    lines.push('');
  }
  if (document.nodes !== null) {
    lines.push(c.bold('Nodes'));
    if (document.nodes.actions.length === 0) lines.push(c.dim(`  no changes (${document.nodes.unchanged} in sync)`));
    for (const action of document.nodes.actions) {
      const paintVerb = action.verb === 'refuse' ? paint.refuse : action.verb === 'delete' ? paint.delete : paint.update;
      lines.push(`  ${paintVerb(`${NODE_SYMBOL[action.verb]} ${action.kind}`)} ${action.object}`);
      lines.push(c.dim(`      because ${action.reason.text}`));
    }
    if (document.nodes.deletionRefusal !== null) lines.push(`  ${c.magenta('!')} ${document.nodes.deletionRefusal}`);
    lines.push('');
  }
  lines.push(summaryLine(document.summary, c));
  return `${lines.join('\n')}\n`;
}

function describeReason(action: PlannedAction): string {
  const { reason } = action;
  if (reason.field !== undefined && (reason.from !== undefined || reason.to !== undefined)) {
    return `${reason.text} (${reason.field}: ${reason.from ?? '(none)'} → ${reason.to ?? '(none)'})`;
  }
  return reason.text;
}

function renderProblem(problem: Problem, c: InstanceType<typeof Chalk>): string[] {
  return [`  ${c.red('error')} ${problem.subject}: ${problem.message}`, c.dim(`      how to fix: ${problem.hint}`)];
}

function renderWarning(warning: PlanWarning, c: InstanceType<typeof Chalk>): string[] {
  return [`  ${c.yellow('warning')} ${warning.reason}: ${warning.message}`];
}

function summaryLine(summary: PlanSummary, c: InstanceType<typeof Chalk>): string {
  if (!summary.changes && summary.refuse === 0 && summary.problems === 0) {
    return c.bold('No changes.') + ' The cloud and the cluster match the desired state.';
  }
  const parts = [
    `${summary.create} to create`,
    `${summary.update} to update`,
    `${summary.delete} to delete`,
    `${summary.kube} Service writes`,
    `${summary.nodeChanges} node changes`,
  ];
  if (summary.refuse > 0) parts.push(`${summary.refuse} refused`);
  if (summary.problems > 0) parts.push(`${summary.problems} problems`);
  const worst = summary.worstDowntime;
  const downtime =
    worst === null
      ? 'Expected downtime: none.'
      : `Worst expected downtime: ${worst.text} (${worst.service}, ${worst.object}: ${IMPACT_DOC[worst.impact].replace(/\.$/, '')}).`;
  return `${c.bold('Plan:')} ${parts.join(', ')}. ${downtime}`;
}
