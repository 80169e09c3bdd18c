// One load-balancer pass executed: the plans of every Service in play (planPass,
// src/core/plan/pass.ts) executed concurrently, each Service isolated from the others' failures,
// verified by reading back and planning again, with the Kubernetes events the generic service
// controller and the Go CCM emit. The one execution path of sync-lb, run, its reactions and apply.
import type { V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../cloudscale/client.js';
import type { LoadBalancer, MemberState } from '../cloudscale/types.js';
import { CcmError, InternalError, LeaseLostError, errorMessage } from '../errors.js';
import type { KubeConnection } from '../kube/connection.js';
import { recordEvent } from '../kube/events.js';
import { patchServiceMetadata, patchServiceStatus } from '../kube/services.js';
import type { PlannedAction } from '../lb/actions.js';
import { LB_ANNOTATIONS, readLbAnnotation } from '../lb/annotations.js';
import { announcements } from '../plan/budget.js';
import { type DrainPolicy, type ServicePlan } from '../lb/service-plan.js';
import { problemSummary, type Problem } from '../lb/problems.js';
import { changedTheLoadBalancer, describeChanges } from './change-event.js';
import { Slots, mapConcurrent } from './concurrency.js';
import { DEFAULT_POLL_SECONDS, ReadinessWatch } from './lb-watch.js';
import {
  executeServicePlan,
  type ExecuteOptions,
  type ExecutedAction,
  type ExecutionResult,
  type ExecutorEvent,
  type ServiceWriter,
} from './lb-executor.js';
import { readBackSnapshot } from './snapshot.js';
import { planPass, serviceApproval, type PassBudget, type PlannedService } from '../plan/pass.js';
import type { LbPassSnapshot, ServiceSelection } from '../plan/snapshot.js';

export type ServiceOutcome =
  | { readonly status: 'unchanged' | 'changed'; readonly planned: PlannedService; readonly execution: ExecutionResult }
  | { readonly status: 'failed'; readonly planned: PlannedService; readonly execution: ExecutionResult; readonly errors: readonly Error[] };

export interface SyncPassOptions extends Omit<ExecuteOptions, 'actualLoadBalancer' | 'onProgress' | 'awaitReady'> {
  readonly concurrency: number;
  readonly onProgress?: (service: string, event: ExecutorEvent) => void;
  /** Called once per Service when its plan is done (or failed), in completion order. */
  readonly onServiceDone?: (outcome: ServiceOutcome) => void;
  /** Event failures are reported here (events are best effort, but never silently lost). */
  readonly onEventError?: (error: Error) => void;
  /** How members leave their pools when the state read back is planned again (as in the first plan). */
  readonly drain?: DrainPolicy;
  /** The downtime budget, for the plans of the state read back too (what it held stays held). */
  readonly budget?: PassBudget;
}

/** Seconds between deleting and re-creating similar objects, unless set (the API needs ~5 s). */
export const DEFAULT_SETTLE_SECONDS = 5;

/** How fast a writing pass goes (sync-lb, run and its reactions, apply), in the flags' seconds; unset: the defaults. */
export interface PaceFlags {
  readonly concurrency: number;
  /** Seconds to wait for a load balancer to leave `changing`. */
  readonly waitTimeout: number;
  /** Seconds between deleting and re-creating similar objects; default DEFAULT_SETTLE_SECONDS. */
  readonly settleSeconds?: number;
  /** Seconds between reads of a `changing` load balancer; default DEFAULT_POLL_SECONDS. */
  readonly pollSeconds?: number;
}

/** The executor's pace from the flags: the one place their defaults apply. */
export function paceOptions(flags: PaceFlags): Pick<SyncPassOptions, 'concurrency' | 'waitTimeoutMs' | 'pollIntervalMs' | 'settleMs'> {
  return {
    concurrency: flags.concurrency,
    waitTimeoutMs: flags.waitTimeout * 1000,
    pollIntervalMs: (flags.pollSeconds ?? DEFAULT_POLL_SECONDS) * 1000,
    settleMs: (flags.settleSeconds ?? DEFAULT_SETTLE_SECONDS) * 1000,
  };
}

/** How a round of a longer pass records Events. */
interface RoundOptions {
  /**
   * The caller records each Service's change Event once its rounds are done (recordChangeEvent):
   * one Event per change, however many rounds it took.
   */
  readonly changeEventsLater?: boolean;
}

/**
 * Executes the plans; one Service's failure never stops the others. At most `concurrency`
 * Services work at once, but one waiting for its load balancer to leave `changing` gives its
 * slot up meanwhile: new load balancers are created early and provision side by side (up to
 * about two minutes each on the real API), and each Service builds its pools and listeners as
 * soon as its own is ready. One watch polls all waiting load balancers together.
 */
async function executeLbPass(
  planned: readonly PlannedService[],
  snapshot: LbPassSnapshot,
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  options: SyncPassOptions & RoundOptions,
): Promise<ServiceOutcome[]> {
  const active = planned.filter((p) => p.plan.mode !== 'ignore');
  const slots = new Slots(options.concurrency);
  const watch = new ReadinessWatch(deps.cloud, options);
  const awaitReady = (lb: LoadBalancer) => slots.without(() => watch.ready(lb, options.waitTimeoutMs));
  return Promise.all(
    active.map((item) =>
      slots.with(async () => {
        const outcome = await executeOne(item, snapshot, deps, { ...options, awaitReady });
        options.onServiceDone?.(outcome);
        return outcome;
      }),
    ),
  );
}

async function executeOne(
  planned: PlannedService,
  snapshot: LbPassSnapshot,
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  options: SyncPassOptions & RoundOptions & Pick<ExecuteOptions, 'awaitReady'>,
): Promise<ServiceOutcome> {
  const { plan, service } = planned;
  const name = `service/${plan.service.namespace}/${plan.service.name}`;
  const event = (type: 'Normal' | 'Warning', reason: string, message: string) =>
    serviceEvent(deps.conn, plan.service, { type, reason, message }, options);

  for (const warning of plan.warnings) await event('Warning', warning.reason, warning.message);

  const deleting = plan.mode === 'delete';
  const changes = plan.actions.filter((a) => a.verb !== 'refuse');
  if (changes.length > 0) {
    await event('Normal', deleting ? 'DeletingLoadBalancer' : 'EnsuringLoadBalancer', deleting ? 'Deleting load balancer' : 'Ensuring load balancer');
  }
  const lb = plan.loadBalancer?.uuid
    ? snapshot.loadBalancers.find((l) => l.uuid === plan.loadBalancer?.uuid)
    : undefined;
  const execution = await executeServicePlan(
    plan,
    { cloud: deps.cloud, service: serviceWriter(deps.conn, service) },
    {
      ...options,
      actualLoadBalancer: lb,
      onProgress: (e) => options.onProgress?.(name, e),
    },
  );

  const problems = plan.problems.map((p) => new ServiceProblemError(p));
  for (const error of problems) await event('Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: ${errorMessage(error)}`);
  if (execution.failed) await recordFailureEvent(deps.conn, plan, execution.failed.error, execution, options);
  const errors: Error[] = [...problems, ...(execution.failed ? [execution.failed.error] : [])];
  if (errors.length > 0) return { status: 'failed', planned, execution, errors };
  if (changes.length === 0) return { status: 'unchanged', planned, execution };
  const outcome: ServiceOutcome = { status: 'changed', planned, execution };
  if (!options.changeEventsLater) await recordChangeEvent(deps.conn, outcome, options);
  return outcome;
}

/**
 * The Normal Event of a change, once per Service and pass: `EnsuredLoadBalancer` (or
 * `UpdatedLoadBalancer` when only members came and went, `DeletedLoadBalancer`), saying what
 * changed, by which strategy, and the time it took (describeChanges). Each is an Event of its
 * own, never folded into an earlier one with the same words: a change made again is news.
 */
export async function recordChangeEvent(
  conn: KubeConnection,
  outcome: ServiceOutcome,
  options: Pick<SyncPassOptions, 'onEventError'>,
): Promise<void> {
  const { plan } = outcome.planned;
  const { executed, elapsedMs } = outcome.execution;
  const done = executed.filter((e) => e.action.verb !== 'refuse').map((e) => e.action);
  const onlyMembers = done.every((a) => a.kind === 'create-member' || a.kind === 'delete-member');
  const [reason, words] =
    plan.mode === 'delete'
      ? ['DeletedLoadBalancer', 'Deleted load balancer']
      : onlyMembers
        ? ['UpdatedLoadBalancer', 'Updated load balancer with new hosts']
        : ['EnsuredLoadBalancer', 'Ensured load balancer'];
  const message = `${words}, ${describeChanges(executed, elapsedMs)}`;
  await serviceEvent(conn, plan.service, { type: 'Normal', reason, message }, options, { aggregate: false });
}

/**
 * The Warning of a Service whose execution failed (or whose changes could not be verified),
 * saying what was changed before, if anything was: a change that stopped midway is still a
 * change. One that wrote nothing keeps the same words each time, so its repeats are aggregated.
 */
async function recordFailureEvent(
  conn: KubeConnection,
  plan: ServicePlan,
  error: Error,
  execution: Pick<ExecutionResult, 'executed' | 'elapsedMs'>,
  options: Pick<SyncPassOptions, 'onEventError'>,
): Promise<void> {
  const before = changedTheLoadBalancer(execution.executed) ? `; changed before, ${describeChanges(execution.executed, execution.elapsedMs)}` : '';
  await serviceEvent(conn, plan.service, { type: 'Warning', reason: 'SyncLoadBalancerFailed', message: `Error syncing load balancer: ${errorMessage(error)}${before}` }, options);
}

/** An Event on the Service, as the service controller records it; a failure goes to `onEventError` (and answers false). */
async function serviceEvent(
  conn: KubeConnection,
  service: ServicePlan['service'],
  content: { readonly type: 'Normal' | 'Warning'; readonly reason: string; readonly message: string },
  options: Pick<SyncPassOptions, 'onEventError'>,
  recording: { readonly aggregate?: boolean } = {},
): Promise<boolean> {
  const { error } = await recordEvent(
    conn,
    { kind: 'Service', apiVersion: 'v1', namespace: service.namespace, name: service.name, uid: service.uid },
    { ...content, component: 'service-controller' },
    recording,
  );
  // A Lease lost is reported once, by the pass whose signal it aborted, not per Event.
  if (error && !(error instanceof LeaseLostError)) options.onEventError?.(error);
  return error === undefined;
}

/**
 * Announces each held change (and each approval that matches no pending change) with one
 * Warning Event, once: the announced ones are recorded on the Service in the tool's annotation
 * `cloudscale-ccm/announced-changes` (it survives passes and the Events' TTL), written through
 * the write fence like every Service write. The record is cleared once nothing is pending.
 */
async function announceHeldChanges(
  planned: readonly PlannedService[],
  conn: KubeConnection,
  options: Pick<SyncPassOptions, 'onEventError'>,
): Promise<void> {
  await Promise.all(
    planned.map(async ({ plan, service }) => {
      const recorded = readLbAnnotation(service.metadata?.annotations, 'announcedChanges');
      const due = announcements(plan, serviceApproval(service));
      const fresh = due.filter((a) => !recorded.includes(a.token));
      if (fresh.length === 0 && (due.length > 0 || recorded.length === 0)) return;
      // Only what an Event really told is recorded: a failed Event is tried again next pass.
      const untold = new Set<string>();
      for (const a of fresh) {
        if (!(await serviceEvent(conn, plan.service, { type: 'Warning', reason: a.reason, message: a.message }, options))) untold.add(a.token);
      }
      const told = due.filter((a) => !untold.has(a.token)).map((a) => a.token);
      if (told.length === recorded.length && told.every((token) => recorded.includes(token))) return;
      try {
        await patchServiceMetadata(conn, plan.service.namespace, plan.service.name, {
          annotations: { [LB_ANNOTATIONS.announcedChanges.key]: told.length === 0 ? null : told.join(',') },
        });
      } catch (error) {
        // Not recorded: the next pass announces again. The pass itself goes on (a lost Lease stops it).
        if (error instanceof LeaseLostError || !(error instanceof CcmError)) throw error;
        options.onEventError?.(new CcmError(`could not record the announced changes on service ${plan.service.namespace}/${plan.service.name}: ${error.message}`, { cause: error }));
      }
    }),
  );
}

function serviceWriter(conn: KubeConnection, service: V1Service): ServiceWriter {
  const namespace = service.metadata?.namespace ?? 'default';
  const name = service.metadata?.name ?? '';
  return {
    addFinalizer: (finalizer) => patchServiceMetadata(conn, namespace, name, { addFinalizer: finalizer }).then(() => undefined),
    removeFinalizer: (finalizer) =>
      patchServiceMetadata(conn, namespace, name, { removeFinalizer: finalizer }).then(() => undefined),
    setAnnotations: (annotations) => patchServiceMetadata(conn, namespace, name, { annotations }).then(() => undefined),
    setIngress: (ingress) => patchServiceStatus(conn, namespace, name, { ingress: [...ingress] }).then(() => undefined),
  };
}

/** A planner problem (bad annotation, refusal, conflict) as the error of its Service. */
export class ServiceProblemError extends CcmError {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problemSummary(problem), { hint: problem.hint });
    this.problem = problem;
  }
}

/** Rounds of a pass: the planned one, then re-plans after structural changes. */
export const MAX_ROUNDS = 3;

export interface ReconcileOptions extends SyncPassOptions {
  /** A Service gets another round: the state read back still differs. */
  readonly onRequeued?: (plan: ServicePlan) => void;
  /** Test seam: runs after each round's execution, before the state is read back. */
  readonly afterRound?: (round: number) => Promise<void>;
  /**
   * `apply`: the saved plan is executed exactly, as one round, nothing announced (a saved plan
   * holds nothing back: applying it is its approval); a pass verifies and repairs in rounds.
   */
  readonly exactly?: boolean;
}

/**
 * Executes the first plans, then verifies structural changes (objects created or deleted): the
 * state of those Services is read back and planned again, and a Service whose plan is still not
 * empty gets another round — at most MAX_ROUNDS, then it fails naming what still differs. This
 * repairs within the pass what changed meanwhile; what `plan` printed is the first round.
 */
export async function reconcileLoadBalancers(
  first: { readonly snapshot: LbPassSnapshot; readonly planned: readonly PlannedService[] },
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient; readonly clusterId: string },
  options: ReconcileOptions,
): Promise<ServiceOutcome[]> {
  const results = new Map<string, ServiceOutcome>();
  // Members of the pools this pass created, as their create answers gave them.
  const createdPools = new Map<string, readonly MemberState[]>();
  let { snapshot, planned } = first;
  if (!options.exactly) await announceHeldChanges(planned, deps.conn, options);
  for (let round = 1; ; round += 1) {
    const outcomes = await executeLbPass(planned, snapshot, deps, { ...options, changeEventsLater: true });
    for (const outcome of outcomes) {
      const key = serviceKey(outcome.planned.plan);
      results.set(key, mergeRounds(results.get(key), outcome));
      for (const [pool, members] of outcome.execution.poolsCreated) createdPools.set(pool, members);
      for (const pool of outcome.execution.poolsChanged) createdPools.delete(pool);
    }
    const restructured = outcomes.filter(
      (o) => o.status === 'changed' && o.planned.plan.mode === 'ensure' && o.execution.executed.some((e) => isStructural(e.action)),
    );
    if (restructured.length === 0 || options.exactly || options.signal?.aborted) break;
    await options.afterRound?.(round);
    const again: ServiceSelection = { names: restructured.map((o) => o.planned.plan.service) };
    try {
      snapshot = await readBackSnapshot(deps, again, { previous: first.snapshot, createdPools });
    } catch (error) {
      // The writes stand, unverified: those Services fail with the read's error, the others keep theirs.
      if (!(error instanceof CcmError) || options.signal?.aborted) throw error;
      for (const { planned: item } of restructured) {
        const unverified = new CcmError(`the state could not be read back to verify the changes: ${errorMessage(error)}`, {
          hint: 'the changes were made; the next pass reads the state again and repairs what differs',
          cause: error,
        });
        await failService(results, item.plan, unverified, deps.conn, options);
      }
      break;
    }
    const { drain, budget } = options;
    planned = planPass(snapshot, { selection: again, ...(drain === undefined ? {} : { drain }), ...(budget === undefined ? {} : { budget }) }).filter((p) => p.plan.actions.some((a) => a.verb !== 'refuse'));
    if (planned.length === 0) break;
    if (round === MAX_ROUNDS) {
      for (const { plan } of planned) {
        const error = new InternalError(
          `the state read back after ${MAX_ROUNDS} rounds still differs: ${plan.actions.map((a) => `${a.kind} ${a.object}`).join(', ')}`,
          {
            hint: 'something else changes this load balancer concurrently, or the API does not keep what it was sent; run with -v and check the load balancer in the cloudscale control panel',
          },
        );
        await failService(results, plan, error, deps.conn, options);
      }
      break;
    }
    for (const { plan } of planned) options.onRequeued?.(plan);
  }
  const outcomes = [...results.values()];
  // As many Events in flight as Services worked at once.
  await mapConcurrent(outcomes.filter((o) => o.status === 'changed'), options.concurrency, (o) => recordChangeEvent(deps.conn, o, options));
  return outcomes;
}

/** Ends a Service's outcome over the rounds as failed with `error`, keeping what it executed, and says so in its Warning. */
async function failService(
  results: Map<string, ServiceOutcome>,
  plan: ServicePlan,
  error: Error,
  conn: KubeConnection,
  options: Pick<SyncPassOptions, 'onServiceDone' | 'onEventError'>,
): Promise<void> {
  const previous = results.get(serviceKey(plan))!;
  const failed: ServiceOutcome = { status: 'failed', planned: previous.planned, execution: previous.execution, errors: [error] };
  results.set(serviceKey(plan), failed);
  await recordFailureEvent(conn, plan, error, previous.execution, options);
  options.onServiceDone?.(failed);
}

function serviceKey(plan: ServicePlan): string {
  return `${plan.service.namespace}/${plan.service.name}`;
}

/** A Service's outcome over rounds: the last round decides, the executed actions add up. */
function mergeRounds(previous: ServiceOutcome | undefined, next: ServiceOutcome): ServiceOutcome {
  if (previous === undefined) return next;
  const executed: ExecutedAction[] = [...previous.execution.executed, ...next.execution.executed];
  const status = next.status === 'unchanged' ? previous.status : next.status;
  const execution = {
    ...next.execution,
    executed,
    elapsedMs: previous.execution.elapsedMs + next.execution.elapsedMs,
    loadBalancer: next.execution.loadBalancer ?? previous.execution.loadBalancer,
  };
  return next.status === 'failed'
    ? { status: 'failed', planned: previous.planned, execution, errors: next.errors }
    : { status: status === 'failed' ? 'changed' : status, planned: previous.planned, execution };
}

const STRUCTURAL_KINDS: ReadonlySet<PlannedAction['kind']> = new Set([
  'create-lb',
  'create-pool',
  'delete-pool',
  'create-member',
  'delete-member',
  'create-listener',
  'delete-listener',
  'create-monitor',
  'delete-monitor',
]);

function isStructural(action: PlannedAction): boolean {
  return STRUCTURAL_KINDS.has(action.kind);
}
