// The actions the planner emits: the contract between the planner (pure), the executor
// (src/core/apply) and the renderers. Every action is plain JSON.
//
// Objects created earlier in the same plan are referred to symbolically (`{ref}`), existing
// ones by UUID (`{uuid}`). The executor records the UUID of every object it creates under the
// action's `ref` and resolves later references from that record.
import type { V1LoadBalancerIngress } from '@kubernetes/client-node';
import type {
  HealthMonitorCreate,
  HealthMonitorPatch,
  ListenerCreate,
  ListenerPatch,
  LoadBalancerCreate,
  PoolCreate,
  PoolMemberCreate,
  PoolMemberPatch,
  Tags,
} from '../cloudscale/types.js';
import type { IngressSettings } from './desired.js';
import { downtimeOf, impactRank, type Downtime, type ImpactClass, type MonitorTiming } from './impact.js';
import type { Problem } from './problems.js';

/**
 * `kube`: a write to the Service (finalizer, annotations, status), not to the cloud. `wait`: a
 * step of a strategy (src/core/lb/strategies/gates.ts) that writes nothing and holds the next steps
 * back until its condition holds.
 */
export type Verb = 'create' | 'update' | 'delete' | 'refuse' | 'kube' | 'wait';

/** Why an action is planned. For people only: the executor MUST NOT branch on it. */
export interface Reason {
  readonly text: string;
  /** What differs: an annotation key, a spec field (`spec.ports[http].port`), or an object field. */
  readonly field?: string;
  readonly from?: string;
  readonly to?: string;
}

/** An object that exists, by UUID. */
export interface ExistingRef {
  readonly uuid: string;
}
/** An object created by an earlier action of the same plan (`create-lb`, `create-pool`). */
export interface PlannedRef {
  readonly ref: string;
}
export type ObjectRef = ExistingRef | PlannedRef;

/** The `ref` of the load balancer created by `create-lb`. */
export const LB_REF = 'lb';
/** The `ref` of a pool created by `create-pool`. */
export function poolRef(poolName: string): string {
  return `pool:${poolName}`;
}

export function isPlannedRef(ref: ObjectRef): ref is PlannedRef {
  return 'ref' in ref;
}

/** A stub of an existing object to delete: UUID, href, and name (display). */
export interface DeletionTarget {
  readonly uuid: string;
  readonly href: string;
  readonly name: string;
}

/** An annotation value known at plan time, or an attribute of the load balancer created in this plan. */
export type AnnotationTarget =
  | { readonly value: string }
  | { readonly ref: typeof LB_REF; readonly attribute: 'uuid' | 'zone' };

interface Common<K extends string, V extends Verb> {
  readonly kind: K;
  readonly verb: V;
  /** Display name, e.g. `pool tcp/http`, `member 10.0.0.1:30080 of pool tcp`, `listener tcp/80`. */
  readonly object: string;
  readonly reason: Reason;
  readonly impact: ImpactClass;
  readonly downtime: Downtime;
}

// ---- Kubernetes side -------------------------------------------------------------------------

/** Add `service.kubernetes.io/load-balancer-cleanup`; planned before any cloud create. */
export type AddFinalizerAction = Common<'add-finalizer', 'kube'>;
/** Remove the finalizer; planned last, after the load balancer is gone. */
export type RemoveFinalizerAction = Common<'remove-finalizer', 'kube'>;

export interface WriteAnnotationsAction extends Common<'write-annotations', 'kube'> {
  /** Only keys whose value differs (uuid, config-version, zone). */
  readonly changes: readonly {
    readonly key: string;
    readonly from: string | null;
    readonly to: AnnotationTarget;
  }[];
}

export interface WriteStatusAction extends Common<'write-status', 'kube'> {
  readonly from: readonly V1LoadBalancerIngress[];
  /**
   * The new `status.loadBalancer.ingress`; for a load balancer created in this plan, computed
   * by the executor from its VIPs with `ingressFromVips(vips, settings)`.
   */
  readonly to:
    | { readonly ingress: readonly V1LoadBalancerIngress[] }
    | { readonly ref: typeof LB_REF; readonly settings: IngressSettings };
}

// ---- cloud side ------------------------------------------------------------------------------

export interface CreateLbAction extends Common<'create-lb', 'create'> {
  readonly ref: typeof LB_REF;
  readonly body: LoadBalancerCreate;
  /** The load balancer this one replaces because it is gone (impact `lb-lost`); null for a first one. */
  readonly lost: LostLoadBalancer | null;
}

/**
 * A load balancer the Service records (by its UUID annotation, or by the addresses in its
 * status) that is gone from the cloud. The one created in its place has other addresses.
 */
export interface LostLoadBalancer {
  /** The UUID the Service's annotation names (confirmed gone by a 404); null when only the status named addresses. */
  readonly uuid: string | null;
  /** The Service's addresses so far (`status.loadBalancer.ingress`: IPs or hostnames). */
  readonly addresses: readonly string[];
  /** Those of them the new load balancer keeps: Floating IPs and fixed VIP addresses the Service names, a forced hostname. */
  readonly kept: readonly string[];
}
export interface DeleteLbAction extends Common<'delete-lb', 'delete'> {
  readonly loadBalancer: DeletionTarget;
}
/**
 * The fields of an update that change, each with why: an update carries every changed field of
 * its object in one `patch` (one PATCH request), and its `reason` sums them up.
 */
interface FieldChanges {
  readonly changes: readonly Reason[];
}

/** A new name; when the ownership tags change too, they are in the same `patch`. */
export interface RenameLbAction extends Common<'rename-lb', 'update'>, FieldChanges {
  readonly loadBalancer: ExistingRef;
  readonly patch: { readonly name: string; readonly tags?: Tags };
}
/** Replaces the whole tag map (PATCH semantics): foreign tags are carried over in `patch.tags`. */
export interface TagLbAction extends Common<'tag-lb', 'update'>, FieldChanges {
  readonly loadBalancer: ExistingRef;
  readonly patch: { readonly tags: Tags };
}

/**
 * A create that replaces an object of the same name deleted in the same plan (a pool swap's
 * successor, the listener moved to it) lists every field that differs from the one it replaces,
 * old → new: not only the one that forced the replacement. Empty for an object that is new.
 */
interface ReplacedFields {
  readonly changes: readonly Reason[];
}

export interface CreatePoolAction extends Common<'create-pool', 'create'>, ReplacedFields {
  readonly ref: string;
  readonly loadBalancer: ObjectRef;
  readonly body: Omit<PoolCreate, 'load_balancer'>;
}
export interface DeletePoolAction extends Common<'delete-pool', 'delete'> {
  readonly pool: DeletionTarget;
}

export interface CreateMemberAction extends Common<'create-member', 'create'>, ReplacedFields {
  readonly pool: ObjectRef;
  readonly poolName: string;
  readonly body: PoolMemberCreate;
}
export interface DeleteMemberAction extends Common<'delete-member', 'delete'> {
  /** Members live under their pool: `/v1/load-balancers/pools/<pool>/members/<member>`. */
  readonly pool: ExistingRef;
  readonly member: DeletionTarget;
}

/** `enabled` (a drain, or a member enabled again) and/or `tags` (when a drain began). */
export interface UpdateMemberAction extends Common<'update-member', 'update'>, FieldChanges {
  readonly pool: ExistingRef;
  readonly member: { readonly uuid: string; readonly name: string };
  readonly patch: PoolMemberPatch;
}

/**
 * Writes nothing. Holds the steps after it back until the pool's health monitor has checked
 * every member in `members` (none reports `changing`) and at least one of them is `up` (or
 * `no_monitor`), or until none of the members in `protects` is up (then there is no traffic
 * left to protect). After `timeoutSeconds` it fails: the steps after it (those that take the
 * old members or pool out of service) do not run, and the next pass checks again.
 */
export interface AwaitMembersAction extends Common<'await-members', 'wait'> {
  readonly pool: ObjectRef;
  readonly poolName: string;
  /** Names of the awaited members (created earlier in this plan, or by an earlier pass). */
  readonly members: readonly string[];
  /** The serving members the steps after this one take out of service. */
  readonly protects: { readonly pool: ExistingRef; readonly members: readonly string[] };
  readonly timeoutSeconds: number;
}

export interface CreateListenerAction extends Common<'create-listener', 'create'>, ReplacedFields {
  readonly pool: ObjectRef;
  readonly body: Omit<ListenerCreate, 'pool'>;
  /**
   * For the create that ends a listener move (a pool swap, a listener re-created): the listener
   * the move deleted, on the pool that still serves the port. When the create cannot be made
   * within its retries, the executor creates this one instead, so the port serves again as it
   * did, and reports the failure. Absent for other creates.
   */
  readonly putBack?: ListenerPutBack;
}
/** The listener a move deleted, to be put back on its pool when its replacement cannot be created. */
export interface ListenerPutBack {
  readonly pool: ExistingRef;
  readonly poolName: string;
  readonly body: Omit<ListenerCreate, 'pool'>;
}
export interface DeleteListenerAction extends Common<'delete-listener', 'delete'> {
  readonly listener: DeletionTarget;
}
/** Every changed attribute of the listener (the Go CCM sends one PATCH per field). */
export interface UpdateListenerAction extends Common<'update-listener', 'update'>, FieldChanges {
  readonly listener: ExistingRef;
  readonly patch: ListenerPatch;
}

export interface CreateMonitorAction extends Common<'create-monitor', 'create'>, ReplacedFields {
  readonly pool: ObjectRef;
  readonly body: Omit<HealthMonitorCreate, 'pool'>;
}
export interface DeleteMonitorAction extends Common<'delete-monitor', 'delete'> {
  readonly monitor: DeletionTarget;
}
/** Every changed attribute of the monitor; `patch.http` carries only the http fields that change. */
export interface UpdateMonitorAction extends Common<'update-monitor', 'update'>, FieldChanges {
  readonly monitor: ExistingRef;
  readonly patch: HealthMonitorPatch;
}

/** `PATCH /v1/floating-ips/<ip>` with `{load_balancer}`; moves it from wherever it is. */
export interface AssignFloatingIpAction extends Common<'assign-floating-ip', 'update'> {
  /** CIDR as the API's `network`, e.g. `192.0.2.1/32`; `ip` is the path identifier. */
  readonly floatingIp: { readonly network: string; readonly ip: string };
  readonly loadBalancer: ObjectRef;
}

/** A change that is not applied; nothing else is planned for the load balancer. No-op to execute. */
export interface RefuseAction extends Common<'refuse', 'refuse'> {
  readonly problem: Problem;
}

export type PlannedAction =
  | AddFinalizerAction
  | RemoveFinalizerAction
  | WriteAnnotationsAction
  | WriteStatusAction
  | CreateLbAction
  | DeleteLbAction
  | RenameLbAction
  | TagLbAction
  | CreatePoolAction
  | DeletePoolAction
  | CreateMemberAction
  | DeleteMemberAction
  | UpdateMemberAction
  | AwaitMembersAction
  | CreateListenerAction
  | DeleteListenerAction
  | UpdateListenerAction
  | CreateMonitorAction
  | DeleteMonitorAction
  | UpdateMonitorAction
  | AssignFloatingIpAction
  | RefuseAction;

export type ActionKind = PlannedAction['kind'];

/** The verb of every kind: for exhaustive tables in renderers and the executor. */
export const ACTION_VERB: { readonly [K in ActionKind]: Extract<PlannedAction, { kind: K }>['verb'] } = {
  'add-finalizer': 'kube',
  'remove-finalizer': 'kube',
  'write-annotations': 'kube',
  'write-status': 'kube',
  'create-lb': 'create',
  'delete-lb': 'delete',
  'rename-lb': 'update',
  'tag-lb': 'update',
  'create-pool': 'create',
  'delete-pool': 'delete',
  'create-member': 'create',
  'delete-member': 'delete',
  'update-member': 'update',
  'await-members': 'wait',
  'create-listener': 'create',
  'delete-listener': 'delete',
  'update-listener': 'update',
  'create-monitor': 'create',
  'delete-monitor': 'delete',
  'update-monitor': 'update',
  'assign-floating-ip': 'update',
  refuse: 'refuse',
};

/** Whether the action writes to the cloud (as opposed to the Service, or nothing). */
export function isCloudAction(action: PlannedAction): boolean {
  return action.verb !== 'kube' && action.verb !== 'refuse' && action.verb !== 'wait';
}

/**
 * An action without the fields `buildAction` derives (verb from the kind, downtime from the
 * impact, an update's `changes` from its reason).
 */
export type ActionDraft = PlannedAction extends infer A ? (A extends PlannedAction ? Omit<A, 'verb' | 'downtime' | 'changes'> : never) : never;

/** The action of a draft: its verb from its kind, its downtime from its impact and the monitor's timing. */
export function buildAction<D extends ActionDraft>(draft: D, timing?: MonitorTiming): Extract<PlannedAction, { kind: D['kind'] }> {
  return {
    ...draft,
    verb: ACTION_VERB[draft.kind],
    downtime: downtimeOf(draft.impact, timing),
    ...(UPDATE_KINDS.has(draft.kind) ? { changes: [draft.reason] } : CHILD_CREATE_KINDS.has(draft.kind) ? { changes: [] } : {}),
  } as unknown as Extract<PlannedAction, { kind: D['kind'] }>;
}

type ObjectUpdate = RenameLbAction | TagLbAction | UpdateMemberAction | UpdateListenerAction | UpdateMonitorAction;
const UPDATE_KINDS: ReadonlySet<ActionKind> = new Set<ObjectUpdate['kind']>(['rename-lb', 'tag-lb', 'update-member', 'update-listener', 'update-monitor']);

type ChildCreate = CreatePoolAction | CreateMemberAction | CreateListenerAction | CreateMonitorAction;
const CHILD_CREATE_KINDS: ReadonlySet<ActionKind> = new Set<ChildCreate['kind']>(['create-pool', 'create-member', 'create-listener', 'create-monitor']);

/** Whether the action creates a pool or something in one: it may replace an object of the same name. */
export function isChildCreate(action: PlannedAction): action is ChildCreate {
  return CHILD_CREATE_KINDS.has(action.kind);
}

function isObjectUpdate(action: PlannedAction): action is ObjectUpdate {
  return UPDATE_KINDS.has(action.kind);
}

/** The object an update writes to: updates with the same target may share one PATCH. */
function updateTarget(action: ObjectUpdate): string {
  switch (action.kind) {
    case 'rename-lb':
    case 'tag-lb':
      return `load-balancer ${action.loadBalancer.uuid}`;
    case 'update-member':
      return `member ${action.pool.uuid}/${action.member.uuid}`;
    case 'update-listener':
      return `listener ${action.listener.uuid}`;
    case 'update-monitor':
      return `monitor ${action.monitor.uuid}`;
  }
}

/**
 * One update per object and run: consecutive updates of the same object become one action whose
 * `patch` carries all their fields (one PATCH request instead of one per field), whose `changes`
 * list each field with its reason, and whose impact is the worst of theirs. Only neighbours
 * merge: a wait or another write between two updates of an object keeps them apart (the order
 * of a strategy's steps is its contract).
 */
export function mergeObjectUpdates(actions: readonly PlannedAction[]): PlannedAction[] {
  const merged: PlannedAction[] = [];
  for (const action of actions) {
    const last = merged.at(-1);
    if (last !== undefined && isObjectUpdate(last) && isObjectUpdate(action) && updateTarget(last) === updateTarget(action)) {
      merged[merged.length - 1] = mergeUpdate(last, action);
    } else {
      merged.push(action);
    }
  }
  return merged;
}

function mergeUpdate(first: ObjectUpdate, next: ObjectUpdate): ObjectUpdate {
  const changes = [...first.changes];
  for (const change of next.changes) if (!changes.some((c) => sameReason(c, change))) changes.push(change);
  const worse = impactRank(next.impact) > impactRank(first.impact) ? next : first;
  const patch: Record<string, unknown> = { ...first.patch };
  for (const [key, value] of Object.entries(next.patch)) {
    const before = patch[key];
    patch[key] = isPlainObject(before) && isPlainObject(value) && key === 'http' ? { ...before, ...value } : value;
  }
  return {
    ...first,
    // A new name and new tags of a load balancer are one PATCH: a rename that also tags.
    kind: first.kind === 'tag-lb' && next.kind === 'rename-lb' ? 'rename-lb' : first.kind,
    reason: changes.length === 1 ? changes[0]! : { text: changes.map((c) => c.text).join('; ') },
    changes,
    impact: worse.impact,
    downtime: worse.downtime,
    patch,
  } as unknown as ObjectUpdate;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two reasons say the same (text and field change). */
export function sameReason(a: Reason, b: Reason): boolean {
  return a.text === b.text && a.field === b.field && a.from === b.from && a.to === b.to;
}
