// Delete mode: a Service being deleted, or no longer of type LoadBalancer, lets its load balancer go.
import { buildAction, type PlannedAction } from './actions.js';
import { serviceIdentity } from './desired.js';
import type { PlanWarning, Problem } from './problems.js';
import { adoptionRefusal, ownershipRefusal, unconfirmedAbsence } from './guards.js';
import {
  LB_FINALIZER,
  type PlanServiceInput,
  type ServicePlan,
  serviceName,
  SERVICE_FINALIZER_OBJECT,
  SERVICE_STATUS_OBJECT,
  refuse,
  lookupProblem,
} from './service-plan.js';

/**
 * The plan of a Service that no longer wants a load balancer but still holds the finalizer:
 * its load balancer deleted (when it is this cluster's and this Service's), status cleared,
 * the finalizer removed.
 */
export function planDelete(input: PlanServiceInput): ServicePlan {
  const { service } = input;
  const identity = serviceIdentity(service);
  const svc = serviceName(identity);
  const actions: PlannedAction[] = [];
  const problems: Problem[] = [];
  const deleting = service.metadata?.deletionTimestamp != null;
  const why = deleting
    ? 'the Service is being deleted'
    : `the Service is no longer of type LoadBalancer (now ${service.spec?.type ?? 'ClusterIP'})`;

  const { location } = input;
  let lb = location.kind === 'found' ? location.actual.lb : undefined;
  if (location.kind === 'ambiguous') problems.push(lookupProblem(svc, location.error));
  const warnings: PlanWarning[] = [];
  const done = (): ServicePlan => ({
    service: identity,
    mode: 'delete',
    loadBalancer: lb === undefined ? null : { name: lb.name, uuid: lb.uuid },
    actions,
    problems,
    warnings,
  });
  if (problems.length > 0) return done();
  if (lb === undefined) {
    const unconfirmed = unconfirmedAbsence(service, input);
    if (unconfirmed !== null) {
      problems.push(unconfirmed);
      return done();
    }
  }
  if (lb !== undefined && adoptionRefusal(lb, service) !== null) {
    warnings.push({
      reason: 'UnownedLoadBalancer',
      message: `load balancer ${lb.name} (${lb.uuid}) matches only the name annotation and was never adopted: it is left alone`,
    });
    lb = undefined;
  }

  if (lb !== undefined) {
    const refusal = ownershipRefusal(lb, identity, input);
    if (refusal !== null) {
      problems.push(refusal);
      actions.push(refuse(refusal, `load balancer ${lb.name}`, { text: refusal.message }));
      return done();
    }
    actions.push(
      buildAction({
        kind: 'delete-lb',
        object: `load balancer ${lb.name}`,
        reason: { text: `${why}; the load balancer and everything on it are deleted` },
        impact: 'lb-deletion',
        loadBalancer: { uuid: lb.uuid, href: lb.href, name: lb.name },
      }),
    );
  }
  const ingress = service.status?.loadBalancer?.ingress ?? [];
  if (!deleting && ingress.length > 0) {
    actions.push(
      buildAction({
        kind: 'write-status',
        object: SERVICE_STATUS_OBJECT,
        reason: { text: `${why}: clear status.loadBalancer`, field: 'status.loadBalancer.ingress' },
        impact: 'none',
        from: ingress,
        to: { ingress: [] },
      }),
    );
  }
  actions.push(
    buildAction({
      kind: 'remove-finalizer',
      object: SERVICE_FINALIZER_OBJECT,
      reason: { text: `${why}; its load balancer is gone`, field: 'metadata.finalizers', from: LB_FINALIZER },
      impact: 'none',
    }),
  );
  return done();
}
