// Planning one load-balancer pass: every Service in play planned from one snapshot, with the
// pass's drain and downtime budget. Pure; `plan` stops here, the other commands execute the
// plans (src/core/apply/lb-pass.ts). The options' defaults are defined here once.
import type { V1Service } from '@kubernetes/client-node';
import type { LoadBalancer } from '../cloudscale/types.js';
import { assembleLocation, locationOf } from '../lb/actual.js';
import { approvalOf as approvalIn } from '../lb/annotations.js';
import { planService } from '../lb/planner.js';
import type { Problem } from '../lb/problems.js';
import type { DrainPolicy, ServicePlan } from '../lb/service-plan.js';
import { DEFAULT_DRAIN_SECONDS } from '../lb/strategies/member-drain.js';
import { applyBudget } from './budget.js';
import { budgetPolicy, budgetSecondsAt, type BudgetOptions } from './budget-window.js';
import { servicesInPlay, type LbPassSnapshot, type ServiceSelection } from './snapshot.js';

export interface PlannedService {
  readonly plan: ServicePlan;
  readonly service: V1Service;
}

/** What a pass plans for, beside its snapshot. */
export interface PassPolicy {
  /** The Services in play: the named ones, or every one that wants or had a load balancer. */
  readonly selection: ServiceSelection;
  /** Proposed Services (plan -f), planned as if they existed. */
  readonly proposed?: readonly V1Service[];
  /** How members leave their pools; without it they are deleted at once (as the Go CCM does). */
  readonly drain?: DrainPolicy;
  /** The downtime budget of this pass (src/core/plan/budget.ts); without it nothing is held. */
  readonly budget?: PassBudget;
}

/**
 * Plans every Service in play: the one planner of `plan`, `sync-lb`, `run`, `apply` and the
 * verification rounds of a pass. Each Service's load balancer, located once with the snapshot
 * (LbPassSnapshot.locations), is handed to the per-Service planner. Pure: the same snapshot and policy always give the same plans.
 */
export function planPass(snapshot: LbPassSnapshot, policy: PassPolicy): PlannedService[] {
  const { selection, proposed = [], drain, budget } = policy;
  const lbServices = snapshot.services.filter((s) => s.spec?.type === 'LoadBalancer');
  // A pool whose members could not be read is assembled as empty; its Service's actions are dropped below.
  const membersByPool =
    snapshot.unreadablePools.size === 0
      ? snapshot.membersByPool
      : { ...Object.fromEntries([...snapshot.unreadablePools.keys()].map((pool) => [pool, []])), ...snapshot.membersByPool };
  return servicesInPlay(snapshot.services, selection, proposed).map((service) => {
    const location = assembleLocation(locationOf(snapshot.locations, service), {
      pools: snapshot.pools,
      membersByPool,
      listeners: snapshot.listeners,
      monitors: snapshot.monitors,
      floatingIps: snapshot.floatingIps,
    });
    const plan = planService({
      service,
      nodes: snapshot.nodes,
      servers: snapshot.servers,
      location,
      floatingIps: snapshot.floatingIps,
      subnets: snapshot.subnets,
      otherServices: lbServices.filter((s) => s.metadata?.uid !== service.metadata?.uid),
      clusterId: snapshot.clusterId,
      kubeSystemUid: snapshot.kubeSystemUid,
      // A server that drops ipMode is planned for as one whose version is unknown: no ipMode written.
      apiServerMinor: snapshot.ipModeKept ? snapshot.apiServerMinor : null,
      uuidLookups: snapshot.uuidLookups,
      ...(drain === undefined ? {} : { drain }),
    });
    const readable = location.kind === 'found' ? withoutUnreadMembers(plan, location.actual.lb, snapshot) : plan;
    return { plan: budget === undefined ? readable : applyBudget(readable, { seconds: budget.seconds, approval: serviceApproval(service) }), service };
  });
}

/** The downtime budget of one pass, in seconds (the window already resolved for the pass's time). */
export interface PassBudget {
  readonly seconds: number;
}

/** The change id the Service's approval annotation carries (a well-formed wrong one is reported, not refused). */
export function serviceApproval(service: V1Service): string | null {
  return approvalIn(service.metadata?.annotations);
}

/**
 * A Service whose load balancer has a pool whose members could not be read is not planned: which
 * members to create or delete would be a guess. It fails with what the read answered; the other
 * Services of the pass go on, and the next pass reads the members again.
 */
function withoutUnreadMembers(plan: ServicePlan, lb: LoadBalancer, snapshot: LbPassSnapshot): ServicePlan {
  if (plan.mode !== 'ensure' || snapshot.unreadablePools.size === 0) return plan;
  const unread = snapshot.pools.flatMap((pool) => {
    const error = pool.load_balancer.uuid === lb.uuid ? snapshot.unreadablePools.get(pool.uuid) : undefined;
    return error === undefined ? [] : [{ pool, error }];
  });
  if (unread.length === 0) return plan;
  const problem: Problem = {
    kind: 'lookup',
    subject: `load balancer ${lb.name}`,
    message: `load balancer ${lb.name} (${lb.uuid}): the members of pool ${unread.map(({ pool }) => pool.name).join(', ')} could not be read (${unread[0]!.error}); nothing is changed until they are known`,
    hint: 'The next pass reads them again. If it persists, check the API status and the load balancer in the cloudscale control panel.',
  };
  return { ...plan, actions: [], problems: [...plan.problems, problem] };
}

/** How members leave their pools in a pass read at `nowMs`: drained for `drainSeconds` (default DEFAULT_DRAIN_SECONDS). */
export function drainPolicy(drainSeconds: number | undefined, nowMs: number): DrainPolicy {
  return { seconds: drainSeconds ?? DEFAULT_DRAIN_SECONDS, nowMs };
}

/** The budget of a pass at `nowMs` (--max-downtime, --window), or undefined when none is set. */
export function passBudget(options: BudgetOptions, nowMs: number): PassBudget | undefined {
  const policy = budgetPolicy(options);
  return policy === undefined ? undefined : { seconds: budgetSecondsAt(policy, nowMs) };
}
