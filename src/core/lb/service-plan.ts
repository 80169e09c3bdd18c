// A Service's plan as data: what the planner is given (PlanServiceInput), what it returns
// (ServicePlan: the ordered actions, problems, warnings, what a budget held and what waits for
// a later pass), the words every part of the planner shares, and the summaries over plans.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import type { FloatingIp, Server, Subnet } from '../cloudscale/types.js';
import type { RefusedError } from '../errors.js';
import { buildAction, type PlannedAction, type Reason } from './actions.js';
import type { AssembledLocation, UuidLookup } from './actual.js';
import { impactRank, type Downtime, type ImpactClass } from './impact.js';
import type { PlanWarning, Problem } from './problems.js';

/** Added before anything is created, removed after the load balancer is gone. MUST not change. */
export const LB_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
/** The value of `loadbalancer-config-version` the Go CCM writes. */
export const CONFIG_VERSION = '1';

export interface PlanServiceInput {
  readonly service: V1Service;
  /** All Nodes of the cluster; the planner applies eligibility and the node selector. */
  readonly nodes: readonly V1Node[];
  /** All servers of the project. */
  readonly servers: readonly Server[];
  /**
   * Where the Service's load balancer is (locateLoadBalancer, the one lookup of a pass), the one
   * found assembled with its children (assembleLocation); ambiguous is this Service's problem.
   */
  readonly location: AssembledLocation;
  /** All Floating IPs of the project. */
  readonly floatingIps: readonly FloatingIp[];
  /** All subnets of the project (the subnets the annotations name must exist). */
  readonly subnets: readonly Subnet[];
  /** The other Services of type LoadBalancer (the Service itself is skipped by UID). */
  readonly otherServices: readonly V1Service[];
  /** This cluster's identity (the ownership tag value). */
  readonly clusterId: string;
  /** The uid of namespace kube-system: tagged, and a load balancer tagged with another is refused. */
  readonly kubeSystemUid?: string;
  /** Minor version of the API server (major 1); `null` when unknown: no `ipMode` is written. */
  readonly apiServerMinor: number | null;
  /**
   * Reads by UUID of the load balancers that UUID annotations name but the list lacks. Without
   * a `gone` (404) answer here, such a Service gets no new load balancer: a list that came back
   * short once is no evidence.
   */
  readonly uuidLookups?: ReadonlyMap<string, UuidLookup>;
  /** How members leave a pool; without it they are deleted at once (as the Go CCM does). */
  readonly drain?: DrainPolicy;
}

export interface ServicePlan {
  readonly service: { readonly namespace: string; readonly name: string; readonly uid: string };
  /** `ignore`: not ours (loadBalancerClass set, or no load balancer wanted and no finalizer). */
  readonly mode: 'ensure' | 'delete' | 'ignore';
  /** The load balancer planned for (`uuid` null: created by this plan, or unknown). */
  readonly loadBalancer: { readonly name: string; readonly uuid: string | null } | null;
  readonly actions: readonly PlannedAction[];
  /** Errors for this Service: each names the thing and how to fix it. Non-empty → non-zero exit. */
  readonly problems: readonly Problem[];
  readonly warnings: readonly PlanWarning[];
  /**
   * What the downtime budget holds back (src/core/plan/budget.ts): these actions are not in
   * `actions`; `restoreHeld` puts them back. Absent when nothing is held.
   */
  readonly held?: readonly HeldChange[];
  /**
   * What a later pass does without anything changing meanwhile, and from when: a drained member
   * is deleted by the first pass after its drain period ends. Not in `actions` (this pass does
   * not run them); absent when nothing waits.
   */
  readonly pending?: readonly PendingAction[];
}

/** An action that waits for a time, not for a change: planned by the first pass at or after `after`. */
export interface PendingAction {
  readonly action: PlannedAction;
  /** When it becomes due (ISO-8601). */
  readonly after: string;
}

/** A part of a Service's change that is not applied in this pass, with why. */
export interface HeldChange {
  /** Short and stable while the pending change is the same; what the approval annotation carries. */
  readonly id: string;
  /** The held actions, in plan order. */
  readonly actions: readonly PlannedAction[];
  /** The index of each held action in the full plan (`restoreHeld` puts them back there). */
  readonly positions: readonly number[];
  /** The worst predicted downtime among the held actions. */
  readonly downtime: Downtime;
  /** The budget the change exceeded, in seconds. */
  readonly budgetSeconds: number;
  /** One sentence for people: what is held and why. */
  readonly reason: string;
}

/** How members leave a pool: drained (disabled, deleted after `seconds`) or deleted at once. */
export interface DrainPolicy {
  /** 0: members leave at once, as the Go CCM does. */
  readonly seconds: number;
  /** When the pass read the state (ms since the epoch): what `draining-since` tags are compared with. */
  readonly nowMs: number;
}

// ---- the vocabulary of every Service plan ------------------------------------------------------

/** `namespace/name`, as messages name a Service. */
export function serviceName(identity: { namespace: string; name: string }): string {
  return `${identity.namespace}/${identity.name}`;
}

// The Service's own objects, named without the Service: every line that shows them (a plan
// block, a progress line) already says which Service it is.
export const SERVICE_FINALIZER_OBJECT = `finalizer ${LB_FINALIZER}`;
export const SERVICE_STATUS_OBJECT = 'status.loadBalancer';

/** The action that stands in a plan for a refusal: nothing is written, the problem is shown in its place. */
export function refuse(problem: Problem, object: string, reason: Reason): PlannedAction {
  return buildAction({ kind: 'refuse', object, reason, impact: 'refused', problem });
}

/** Several load balancers match the Service (LoadBalancerLocation `ambiguous`): nothing is guessed. */
export function lookupProblem(svc: string, error: RefusedError): Problem {
  return { kind: 'lookup', subject: `service ${svc}`, message: error.message, hint: error.hint ?? '' };
}

// ---- summaries -------------------------------------------------------------------------------

const DOWNTIME_ORDER = ['none', 'minimal', 'short', 'considerable', 'total'] as const;

export interface WorstDowntime {
  readonly service: ServicePlan['service'];
  readonly action: PlannedAction;
  readonly downtime: Downtime;
}

/**
 * The action with the worst expected downtime across plans (refusals excluded: they change
 * nothing), or `null` when no action interrupts traffic. Ties: the first in plan order.
 */
export function worstDowntime(plans: readonly ServicePlan[]): WorstDowntime | null {
  let worst: WorstDowntime | null = null;
  const score = (d: Downtime, impact: ImpactClass) =>
    [DOWNTIME_ORDER.indexOf(d.class), d.maxSeconds ?? Number.POSITIVE_INFINITY, d.minSeconds, impactRank(impact)] as const;
  const greater = (a: readonly number[], b: readonly number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
    return false;
  };
  for (const plan of plans) {
    for (const action of plan.actions) {
      if (action.verb === 'refuse' || action.downtime.class === 'none') continue;
      if (worst === null || greater(score(action.downtime, action.impact), score(worst.downtime, worst.action.impact))) {
        worst = { service: plan.service, action, downtime: action.downtime };
      }
    }
  }
  return worst;
}

/** Action counts per verb, for the summary line. */
export function countByVerb(plans: readonly ServicePlan[]): { readonly [V in PlannedAction['verb']]: number } {
  const counts = { create: 0, update: 0, delete: 0, refuse: 0, kube: 0, wait: 0 };
  for (const plan of plans) for (const action of plan.actions) counts[action.verb] += 1;
  return counts;
}
