// One load-balancer pass: plan every Service in play from one snapshot (pure; `plan` stops
// here), then execute the plans concurrently, each Service isolated from the others' failures,
// with the Kubernetes events the generic service controller and the Go CCM emit.
import type { V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../cloudscale/client.js';
import { CcmError, RefusedError, errorMessage } from '../errors.js';
import type { KubeConnection } from '../kube/connection.js';
import { recordEvent } from '../kube/events.js';
import { patchServiceMetadata, patchServiceStatus } from '../kube/services.js';
import { assembleActualLoadBalancer, findLoadBalancer } from '../lb/actual.js';
import { planService, type ServicePlan } from '../lb/planner.js';
import { problemSummary, type Problem } from '../lb/problems.js';
import { mapConcurrent } from './concurrency.js';
import {
  executeServicePlan,
  type ExecuteOptions,
  type ExecutionResult,
  type ExecutorEvent,
  type ServiceWriter,
} from './lb-executor.js';
import { servicesInPlay, type LbPassSnapshot, type ServiceSelection } from './snapshot.js';

export interface PlannedService {
  readonly plan: ServicePlan;
  readonly service: V1Service;
}

/** Plans every Service in play. Pure: the same snapshot always gives the same plans. */
export function planLbPass(
  snapshot: LbPassSnapshot,
  selection: ServiceSelection,
  proposed: readonly V1Service[] = [],
): PlannedService[] {
  const lbServices = snapshot.services.filter((s) => s.spec?.type === 'LoadBalancer');
  return servicesInPlay(snapshot.services, selection, proposed).map((service) => {
    let actual = null;
    try {
      const lb = findLoadBalancer(service, snapshot.loadBalancers);
      if (lb !== undefined) {
        actual = assembleActualLoadBalancer(lb, {
          pools: snapshot.pools,
          membersByPool: snapshot.membersByPool,
          listeners: snapshot.listeners,
          monitors: snapshot.monitors,
          floatingIps: snapshot.floatingIps,
        });
      }
    } catch (error) {
      // The planner runs the same lookup and reports the ambiguity as this Service's problem.
      if (!(error instanceof RefusedError)) throw error;
      actual = null;
    }
    const plan = planService({
      service,
      nodes: snapshot.nodes,
      servers: snapshot.servers,
      loadBalancers: snapshot.loadBalancers,
      actual,
      floatingIps: snapshot.floatingIps,
      otherServices: lbServices.filter((s) => s.metadata?.uid !== service.metadata?.uid),
      clusterId: snapshot.clusterId,
      apiServerMinor: snapshot.apiServerMinor,
    });
    return { plan, service };
  });
}

export type ServiceOutcome =
  | { readonly status: 'unchanged' | 'changed'; readonly planned: PlannedService; readonly execution: ExecutionResult }
  | { readonly status: 'failed'; readonly planned: PlannedService; readonly execution: ExecutionResult; readonly errors: readonly Error[] };

export interface SyncPassOptions extends Omit<ExecuteOptions, 'actualLoadBalancer' | 'onProgress'> {
  readonly concurrency: number;
  readonly onProgress?: (service: string, event: ExecutorEvent) => void;
  /** Called once per Service when its plan is done (or failed), in completion order. */
  readonly onServiceDone?: (outcome: ServiceOutcome) => void;
  /** Event failures are reported here (events are best effort, but never silently lost). */
  readonly onEventError?: (error: Error) => void;
}

/** Executes the plans; one Service's failure never stops the others. */
export async function executeLbPass(
  planned: readonly PlannedService[],
  snapshot: LbPassSnapshot,
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  options: SyncPassOptions,
): Promise<ServiceOutcome[]> {
  const active = planned.filter((p) => p.plan.mode !== 'ignore');
  return mapConcurrent(active, options.concurrency, async (item) => {
    const outcome = await executeOne(item, snapshot, deps, options);
    options.onServiceDone?.(outcome);
    return outcome;
  });
}

async function executeOne(
  planned: PlannedService,
  snapshot: LbPassSnapshot,
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  options: SyncPassOptions,
): Promise<ServiceOutcome> {
  const { plan, service } = planned;
  const name = `service/${plan.service.namespace}/${plan.service.name}`;
  const event = async (type: 'Normal' | 'Warning', reason: string, message: string) => {
    const { error } = await recordEvent(
      deps.conn,
      {
        kind: 'Service',
        apiVersion: 'v1',
        namespace: plan.service.namespace,
        name: plan.service.name,
        uid: plan.service.uid,
      },
      { type, reason, message, component: 'service-controller' },
    );
    if (error) options.onEventError?.(error);
  };

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

  const errors: Error[] = [
    ...plan.problems.map((p) => new ServiceProblemError(p)),
    ...(execution.failed ? [execution.failed.error] : []),
  ];
  if (errors.length > 0) {
    for (const error of errors) {
      await event('Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: ${errorMessage(error)}`);
    }
    return { status: 'failed', planned, execution, errors };
  }
  if (changes.length === 0) return { status: 'unchanged', planned, execution };
  if (deleting) {
    await event('Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
  } else {
    const onlyMembers = changes.every((a) => a.kind === 'create-member' || a.kind === 'delete-member');
    await event(
      'Normal',
      onlyMembers ? 'UpdatedLoadBalancer' : 'EnsuredLoadBalancer',
      onlyMembers ? 'Updated load balancer with new hosts' : 'Ensured load balancer',
    );
  }
  return { status: 'changed', planned, execution };
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
