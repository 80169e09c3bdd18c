// Plans built by hand for the tests of their views: typed actions as the planner emits them
// (verb from ACTION_VERB, downtime from the impact model), and a Service plan around them.
import { ACTION_VERB, type ActionKind, type PlannedAction, type Reason } from '../../src/core/lb/actions.js';
import { downtimeOf, type ImpactClass } from '../../src/core/lb/impact.js';
import type { ServicePlan } from '../../src/core/lb/planner.js';

/** An action of `kind`; `extra` adds its kind-specific fields (a patch, a ref). */
export function act(kind: ActionKind, object: string, impact: ImpactClass, reason: Reason = { text: 'wanted' }, extra: object = {}): PlannedAction {
  return { kind, verb: ACTION_VERB[kind], object, reason, impact, downtime: downtimeOf(impact), ...extra } as unknown as PlannedAction;
}

/** The plan of Service shop/`name` with an existing load balancer. */
export function servicePlan(name: string, actions: PlannedAction[], more: Partial<ServicePlan> = {}): ServicePlan {
  return {
    service: { namespace: 'shop', name, uid: `uid-${name}` },
    mode: 'ensure',
    loadBalancer: { name: `k8s-service-uid-${name}`, uuid: `lb-${name}` },
    actions,
    problems: [],
    warnings: [],
    ...more,
  };
}
