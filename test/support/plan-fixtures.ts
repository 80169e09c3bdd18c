// Plans built by hand for the tests of their views: typed actions as the planner emits them
// (verb from ACTION_VERB, downtime from the impact model), and a Service plan around them.
import { ACTION_VERB, type ActionKind, type PlannedAction, type Reason } from '../../src/core/lb/actions.js';
import { downtimeOf, type ImpactClass } from '../../src/core/lb/impact.js';
import type { ServicePlan } from '../../src/core/lb/service-plan.js';
import { SAVED_PLAN_FORMAT, SAVED_PLAN_VERSION, type SavedPlanContent } from '../../src/core/plan/saved-plan.js';
import { planDocument } from '../../src/core/plan/document.js';

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

/** A saved plan's content as `plan --out` writes it: Service shop/web's pool to create, against cluster c1. */
export function savedPlanContent(overrides: Partial<SavedPlanContent> = {}): SavedPlanContent {
  return {
    format: SAVED_PLAN_FORMAT,
    version: SAVED_PLAN_VERSION,
    cluster: { clusterId: 'c1', kubeSystemUid: 'uid-1', server: 'https://k8s.example:6443' },
    api: { url: 'https://api.cloudscale.ch' },
    createdAt: '2026-11-25T10:00:00.000Z',
    selection: { all: true },
    options: { drainSeconds: 60, maxNodeDeletions: null },
    fingerprint: { 'service shop/web': 'resourceVersion 7' },
    plan: planDocument({ nodes: null, services: [servicePlan('web', [act('create-pool', 'pool tcp/http', 'none')])] }),
    ...overrides,
  };
}
