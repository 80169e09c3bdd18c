// The plan document: what `plan -o json` prints (schema in docs/plan-json.md), what a saved plan
// holds, and what every view of a plan reads (src/core/render/). Pure.
import { DOCUMENT_API_VERSION } from '../document-version.js';
import type { DowntimeClass, ImpactClass } from '../lb/impact.js';
import { countByVerb, worstDowntime, type ServicePlan } from '../lb/service-plan.js';
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
  /** Steps that wait until new members are healthy before the next step of a strategy. */
  readonly wait: number;
  readonly nodeChanges: number;
  readonly problems: number;
  /** Changes the downtime budget (`--max-downtime`) would hold back; not in the counts above. */
  readonly held: number;
  /**
   * Actions a later pass takes when their time comes, with nothing changed meanwhile (a drained
   * member deleted once its drain ends: ServicePlan.pending); not in the counts above.
   */
  readonly pending: number;
  /**
   * Whether the cloud and the cluster differ from the desired state: applying the plan would
   * write something, a change is held back, or an action is pending (`plan --detailed-exitcode`
   * exits 2 while any is, so the exit code does not change on its own when a drain ends).
   */
  readonly changes: boolean;
  /** The worst expected interruption, or null when nothing interrupts traffic. */
  readonly worstDowntime: {
    readonly service: string;
    readonly object: string;
    readonly impact: ImpactClass;
    readonly class: DowntimeClass;
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
    apiVersion: DOCUMENT_API_VERSION,
    kind: 'Plan',
    version: PLAN_DOCUMENT_VERSION,
    nodes: input.nodes,
    services,
    summary: summarise(input.nodes?.actions ?? [], services),
  };
}

function summarise(nodeActions: readonly NodeAction[], services: readonly ServicePlan[]): PlanSummary {
  const counts = countByVerb(services);
  const worst = worstDowntime(services);
  const nodeChanges = nodeActions.filter((a) => a.verb !== 'refuse').length;
  const nodeProblems = nodeActions.filter((a) => a.verb === 'refuse').length;
  const problems = services.reduce((n, s) => n + s.problems.length, 0) + nodeProblems;
  const held = services.reduce((n, s) => n + (s.held?.length ?? 0), 0);
  const pending = services.reduce((n, s) => n + (s.pending?.length ?? 0), 0);
  return {
    ...counts,
    nodeChanges,
    problems,
    held,
    pending,
    // Held changes are pending too: approving them (or applying the saved plan) writes them.
    changes: counts.create + counts.update + counts.delete + counts.kube + nodeChanges + held + pending > 0,
    worstDowntime:
      worst === null
        ? null
        : {
            service: `${worst.service.namespace}/${worst.service.name}`,
            object: worst.action.object,
            impact: worst.action.impact,
            class: worst.downtime.class,
            text: worst.downtime.text,
            minSeconds: worst.downtime.minSeconds,
            maxSeconds: worst.downtime.maxSeconds,
          },
  };
}
