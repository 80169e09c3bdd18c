// The load-balancer planner: one Service's whole change as one ordered list of typed actions,
// pure (docs/go-ccm-compatibility.md for the keys and the order of the Go CCM, which this
// plans in one go instead of phase by phase: children of objects created in the same plan refer
// to them symbolically). `plan` prints the list; `sync-lb` executes exactly it.
import { serviceIdentity } from './desired.js';
import { planDelete } from './plan-delete.js';
import { EnsurePlanner } from './plan-ensure.js';
import { LB_FINALIZER, type PlanServiceInput, type ServicePlan } from './service-plan.js';

export function planService(input: PlanServiceInput): ServicePlan {
  const { service } = input;
  const identity = serviceIdentity(service);
  const base = { service: identity, loadBalancer: null, actions: [], problems: [], warnings: [] };
  if (service.spec?.loadBalancerClass) return { ...base, mode: 'ignore' };
  const wantsLb = service.spec?.type === 'LoadBalancer' && service.metadata?.deletionTimestamp == null;
  if (wantsLb) return new EnsurePlanner(input).plan();
  if (!(service.metadata?.finalizers ?? []).includes(LB_FINALIZER)) return { ...base, mode: 'ignore' };
  return planDelete(input);
}
