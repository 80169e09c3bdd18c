// The load-balancer planner: one Service's whole change as one ordered list of typed actions,
// pure (docs/go-ccm-compatibility.md for the keys and the order of the Go CCM, which this
// plans in one go instead of phase by phase: children of objects created in the same plan refer
// to them symbolically). `plan` prints the list; `sync-lb` executes exactly it.
import type { V1LoadBalancerIngress, V1Node, V1Service } from '@kubernetes/client-node';
import type {
  FloatingIp,
  HealthMonitor,
  Listener,
  LoadBalancer,
  MemberState,
  Server,
  Subnet,
} from '../cloudscale/types.js';
import { AnnotationError, InternalError, RefusedError } from '../errors.js';
import {
  LB_REF,
  buildAction,
  isChildCreate,
  mergeObjectUpdates,
  type ActionDraft,
  poolRef,
  type ExistingRef,
  type LostLoadBalancer,
  type ObjectRef,
  type PlannedAction,
  type Reason,
  type WriteAnnotationsAction,
} from './actions.js';
import {
  loadBalancerReferences,
  type ActualLoadBalancer,
  type ActualPool,
  type AssembledLocation,
  type UuidLookup,
} from './actual.js';
import {
  LB_ANNOTATIONS,
  parseLbAnnotations,
  readLbAnnotation,
  type LbAnnotationValues,
} from './annotations.js';
import { parseOwnershipTags } from './ownership.js';
import type { HeldChange } from './budget.js';
import { OWNER_KUBE_SYSTEM_UID_TAG, taggedKubeSystemUid } from './cluster-identity.js';
import {
  desiredLoadBalancer,
  ingressEqual,
  ingressFromVips,
  ingressSettings,
  defaultLbName,
  serviceIdentity,
  type DesiredListener,
  type DesiredLoadBalancer,
  type DesiredMember,
  type DesiredMonitor,
  type DesiredPool,
} from './desired.js';
import { errorExplanation } from './health.js';
import { downtimeOf, impactRank, type Downtime, type ImpactClass, type MonitorTiming } from './impact.js';
import { mapNodesToServers, selectLbNodes } from './nodes.js';
import { annotationProblem, type PlanWarning, type Problem } from './problems.js';
import { actualMemberKey, desiredMemberKey, diffBy, listenerKey, monitorKey } from './identity.js';
import { describePort, memberChangeReason, memberGoneReason, monitorRecreationReason } from './reasons.js';
import { MEMBER_DRAINING_TAG, Strategies, matchPools, type Story } from './strategies.js';

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
   * What the downtime budget holds back (src/core/lb/budget.ts): these actions are not in
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

// ---- helpers ---------------------------------------------------------------------------------

type Draft = ActionDraft;
const build = buildAction;

function serviceName(identity: { namespace: string; name: string }): string {
  return `${identity.namespace}/${identity.name}`;
}

// The Service's own objects, named without the Service: every line that shows them (a plan
// block, a progress line) already says which Service it is.
const SERVICE_FINALIZER_OBJECT = `finalizer ${LB_FINALIZER}`;
const SERVICE_STATUS_OBJECT = 'status.loadBalancer';

function refuse(problem: Problem, object: string, reason: Reason): PlannedAction {
  return build({ kind: 'refuse', object, reason, impact: 'refused', problem });
}

/** Several load balancers match the Service (LoadBalancerLocation `ambiguous`): nothing is guessed. */
function lookupProblem(svc: string, error: RefusedError): Problem {
  return { kind: 'lookup', subject: `service ${svc}`, message: error.message, hint: error.hint ?? '' };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

// ---- delete mode -----------------------------------------------------------------------------

function planDelete(input: PlanServiceInput): ServicePlan {
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
      build({
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
      build({
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
    build({
      kind: 'remove-finalizer',
      object: SERVICE_FINALIZER_OBJECT,
      reason: { text: `${why}; its load balancer is gone`, field: 'metadata.finalizers', from: LB_FINALIZER },
      impact: 'none',
    }),
  );
  return done();
}

/**
 * The load balancer a Service without one records, or `null` for a Service that never had one:
 * the UUID its annotation names (the planner gets here only once a 404 confirmed it gone), and
 * the addresses its status publishes. Whatever the new load balancer gets, the addresses change,
 * except those the Service pins: its Floating IPs, fixed VIP addresses and a forced hostname.
 */
function lostLoadBalancer(service: V1Service, desired: DesiredLoadBalancer, forceHostname: string | null): LostLoadBalancer | null {
  const { uuid } = loadBalancerReferences(service);
  const addresses = (service.status?.loadBalancer?.ingress ?? []).flatMap((entry) => entry.ip ?? entry.hostname ?? []);
  if (uuid === null && addresses.length === 0) return null;
  const pinned = new Set([
    ...desired.floatingIps.map((cidr) => cidr.slice(0, cidr.indexOf('/') === -1 ? undefined : cidr.indexOf('/'))),
    ...desired.vipAddresses.flatMap((vip) => vip.address ?? []),
    ...(forceHostname === null ? [] : [forceHostname]),
  ]);
  return { uuid, addresses, kept: addresses.filter((address) => pinned.has(address)) };
}

/** Why a lost load balancer is replaced, with the addresses that change spelled out. */
function lostReason(lost: LostLoadBalancer): Reason {
  const which = lost.uuid === null ? 'the load balancer whose addresses the Service publishes' : `load balancer ${lost.uuid}, which the Service records,`;
  const changing = lost.addresses.filter((address) => !lost.kept.includes(address));
  return {
    text: `${which} is gone from the cloud: a new one is created, and the Service's addresses change`,
    field: 'status.loadBalancer.ingress',
    from: changing.length === 0 ? '(none published)' : changing.join(', '),
    to: 'new addresses, known once the load balancer exists',
  };
}

/**
 * When a Service's UUID annotation names a load balancer the list did not show, only a 404 by
 * UUID lets the pass go on as if it were gone (create a new one, or let the Service go).
 */
function unconfirmedAbsence(service: V1Service, input: Pick<PlanServiceInput, 'uuidLookups'>): Problem | null {
  const { uuid } = loadBalancerReferences(service);
  if (uuid === null) return null;
  const lookup = input.uuidLookups?.get(uuid);
  if (lookup?.kind === 'gone') return null;
  const svc = serviceName(serviceIdentity(service));
  return {
    kind: 'lookup',
    subject: `service ${svc}`,
    message:
      lookup === undefined
        ? `load balancer ${uuid} (annotation ${LB_ANNOTATIONS.uuid.key}) is missing from the list of load balancers and was not read by UUID; nothing is created or deleted until its absence is certain`
        : `load balancer ${uuid} (annotation ${LB_ANNOTATIONS.uuid.key}) is missing from the list of load balancers and could not be read by UUID (${lookup.error}); nothing is created or deleted until its absence is certain`,
    hint: 'The next pass reads it again. If it persists, check the load balancer in the cloudscale control panel; if it was deleted on purpose, remove the annotation to let the Service get a new one.',
  };
}

/**
 * An untagged load balancer is adopted only with proof that it is this Service's: the UUID
 * annotation names it, or it has the default name `k8s-service-<uid>` (as the Go CCM creates).
 * A custom `loadbalancer-name` alone could name anybody's load balancer.
 */
function adoptionRefusal(lb: LoadBalancer, service: V1Service): Problem | null {
  if (parseOwnershipTags(lb.tags).kind !== 'untagged') return null;
  const identity = serviceIdentity(service);
  if (loadBalancerReferences(service).uuid === lb.uuid || lb.name === defaultLbName(identity.uid)) return null;
  return {
    kind: 'ownership',
    subject: `load balancer ${lb.name}`,
    message: `load balancer ${lb.name} (${lb.uuid}) has no ownership tags and is found only by the name annotation ${LB_ANNOTATIONS.name.key}: nothing proves it is the load balancer of ${serviceName(identity)}, so it is not adopted (adopting would rebuild its listeners and pools, and delete it with the Service)`,
    hint: `To adopt it on purpose, set ${LB_ANNOTATIONS.uuid.key}: ${lb.uuid} on the Service. Otherwise choose another ${LB_ANNOTATIONS.name.key}.`,
  };
}

/**
 * A load balancer this cluster must not touch: tagged for another cluster, or tagged for another
 * existing Service of this cluster. Untagged ones are adopted only with proof (adoptionRefusal).
 */
function ownershipRefusal(
  lb: LoadBalancer,
  identity: { namespace: string; name: string; uid: string },
  input: Pick<PlanServiceInput, 'clusterId' | 'kubeSystemUid' | 'otherServices'>,
): Problem | null {
  const owner = parseOwnershipTags(lb.tags);
  if (owner.kind === 'untagged') return null;
  const subject = `load balancer ${lb.name}`;
  if (owner.clusterId !== input.clusterId) {
    return {
      kind: 'ownership',
      subject,
      message: `load balancer ${lb.name} (${lb.uuid}) belongs to another cluster (tag k8s.cloudscale.ch/cluster=${owner.clusterId}, this cluster is ${input.clusterId}); it is never modified or deleted`,
      hint: `If the Service was copied from another cluster, remove its annotation ${LB_ANNOTATIONS.uuid.key} (and give it its own ${LB_ANNOTATIONS.name.key}) so that it gets its own load balancer.`,
    };
  }
  const uid = taggedKubeSystemUid(lb);
  if (input.kubeSystemUid !== undefined && uid !== null && uid !== input.kubeSystemUid) {
    return {
      kind: 'ownership',
      subject,
      message: `load balancer ${lb.name} (${lb.uuid}) belongs to another cluster that shares the cluster id ${owner.clusterId} (its kube-system UID ${uid}, this cluster's ${input.kubeSystemUid}); it is never modified or deleted`,
      hint: `Give each cluster its own --cluster-id, and this Service its own load balancer (remove its annotation ${LB_ANNOTATIONS.uuid.key}, give it its own ${LB_ANNOTATIONS.name.key}).`,
    };
  }
  if (owner.serviceUid !== null && owner.serviceUid !== identity.uid) {
    const other = input.otherServices.find((s) => s.metadata?.uid === owner.serviceUid);
    if (other !== undefined) {
      const otherName = serviceName(serviceIdentity(other));
      return {
        kind: 'ownership',
        subject,
        message: `load balancer ${lb.name} (${lb.uuid}) belongs to Service ${otherName}, not to ${serviceName(identity)}`,
        hint: `Two Services claim one load balancer: give ${serviceName(identity)} its own ${LB_ANNOTATIONS.name.key} and remove its ${LB_ANNOTATIONS.uuid.key} annotation.`,
      };
    }
  }
  return null;
}

// ---- ensure mode -----------------------------------------------------------------------------

class EnsurePlanner {
  private readonly identity;
  private readonly svc: string;
  private readonly problems: Problem[] = [];
  private readonly warnings: PlanWarning[] = [];
  private readonly actions: PlannedAction[] = [];
  private readonly pending: PendingAction[] = [];
  private lbSummary: ServicePlan['loadBalancer'] = null;

  constructor(private readonly input: PlanServiceInput) {
    this.identity = serviceIdentity(input.service);
    this.svc = serviceName(this.identity);
  }

  private result(): ServicePlan {
    return {
      service: this.identity,
      mode: 'ensure',
      loadBalancer: this.lbSummary,
      actions: this.actions,
      problems: this.problems,
      warnings: this.warnings,
      ...(this.pending.length === 0 ? {} : { pending: this.pending }),
    };
  }

  private refuseWith(problems: readonly Problem[], object: string, reasons: readonly Reason[]): ServicePlan {
    problems.forEach((problem, i) => {
      this.problems.push(problem);
      this.actions.push(refuse(problem, object, reasons[i] ?? { text: problem.message }));
    });
    return this.result();
  }

  plan(): ServicePlan {
    const { input } = this;
    const parsed = parseLbAnnotations(input.service.metadata?.annotations);
    for (const w of parsed.warnings) {
      this.warnings.push({ reason: 'AnnotationWarning', message: `${w.annotation}: ${w.message}` });
    }
    if (!parsed.ok) {
      this.problems.push(...parsed.errors.map(annotationProblem));
      return this.result();
    }
    const a = parsed.values;

    const { location } = input;
    if (location.kind === 'ambiguous') {
      this.problems.push(lookupProblem(this.svc, location.error));
      return this.result();
    }
    const actual = location.kind === 'found' ? location.actual : null;
    if (actual === null) {
      const unconfirmed = unconfirmedAbsence(input.service, input);
      if (unconfirmed !== null) {
        this.problems.push(unconfirmed);
        return this.result();
      }
    } else {
      this.lbSummary = { name: actual.lb.name, uuid: actual.lb.uuid };
      const refusal = ownershipRefusal(actual.lb, this.identity, input) ?? adoptionRefusal(actual.lb, input.service);
      if (refusal !== null) {
        return this.refuseWith([refusal], `load balancer ${actual.lb.name}`, [{ text: refusal.message }]);
      }
    }
    const nameConflict = this.nameConflict(a, actual);
    if (nameConflict !== null) {
      return this.refuseWith([nameConflict], `service ${this.svc}`, [
        { text: nameConflict.message, field: LB_ANNOTATIONS.name.key },
      ]);
    }
    const conflict = this.floatingIpConflict(a, actual);
    if (conflict !== null) {
      return this.refuseWith([conflict], `service ${this.svc}`, [
        { text: conflict.message, field: LB_ANNOTATIONS.floatingIps.key },
      ]);
    }

    const selection = selectLbNodes(input.nodes, a.nodeSelector);
    if (selection.eligible.length === 0) {
      this.warnings.push({ reason: 'UnAvailableLoadBalancer', message: 'There are no available nodes for LoadBalancer' });
    } else if (selection.selected.length === 0) {
      this.warnings.push({
        reason: 'NoValidNodes',
        message: `No valid nodes for service found, double-check node-selector annotation: ${LB_ANNOTATIONS.nodeSelector.key}: ${a.nodeSelector?.source ?? ''}`,
      });
    }
    const mapping = mapNodesToServers(selection.selected, input.servers);
    if (!mapping.ok) {
      this.problems.push(...mapping.problems);
      return this.result();
    }
    const desired = desiredLoadBalancer({
      service: input.service,
      annotations: a,
      nodes: mapping.mapped,
      subnets: input.subnets,
      clusterId: input.clusterId,
      kubeSystemUid: input.kubeSystemUid,
      ...(actual === null ? {} : { existingZone: actual.lb.zone.slug }),
    });
    if (!desired.ok) {
      this.problems.push(...desired.problems);
      return this.result();
    }
    this.warnings.push(...desired.warnings);
    this.lbSummary ??= { name: desired.lb.name, uuid: null };

    if (actual !== null) {
      const forbidden = forbiddenChanges(desired.lb, actual.lb);
      if (forbidden.length > 0) {
        return this.refuseWith(
          forbidden.map((f) => f.problem),
          `load balancer ${actual.lb.name}`,
          forbidden.map((f) => f.reason),
        );
      }
    }

    if (!(input.service.metadata?.finalizers ?? []).includes(LB_FINALIZER)) {
      this.actions.push(
        build({
          kind: 'add-finalizer',
          object: SERVICE_FINALIZER_OBJECT,
          reason: {
            text: 'protect the load balancer from being left behind when the Service is deleted',
            field: 'metadata.finalizers',
            to: LB_FINALIZER,
          },
          impact: 'none',
        }),
      );
    }
    const timing = desired.lb.pools[0]?.monitor;
    const cloud = new CloudPlan(desired.lb, timing, { drain: input.drain, serverAddresses: serverAddresses(input.servers) });
    if (actual === null) cloud.create(lostLoadBalancer(input.service, desired.lb, a.forceHostname));
    else cloud.update(actual);
    this.actions.push(...cloud.actions);
    // `error` is a state to repair, not to refuse: the API takes changes in it, and only
    // `changing` is waited for (the executor). The plan says why, and whether it repairs it.
    if (actual?.lb.status === 'error') this.warnings.push(errorExplanation(actual, cloud.actions, cloud.nodeOf));
    this.warnings.push(...cloud.warnings);
    this.pending.push(...cloud.pending);
    this.planFloatingIps(desired.lb, actual);
    this.planAnnotations(actual);
    this.planStatus(a, actual);
    return this.result();
  }

  /** The other Services of type LoadBalancer, whose claims this Service's may conflict with. */
  private otherLoadBalancerServices(): V1Service[] {
    return this.input.otherServices.filter(
      (other) => other.metadata?.uid !== this.identity.uid && other.spec?.type === 'LoadBalancer',
    );
  }

  /** This Service's own load balancer: tagged for it, or named by its UUID annotation. */
  private owns(lb: LoadBalancer): boolean {
    const owner = parseOwnershipTags(lb.tags);
    const tagged = owner.kind === 'tagged' && owner.clusterId === this.input.clusterId && owner.serviceUid === this.identity.uid;
    return tagged || loadBalancerReferences(this.input.service).uuid === lb.uuid;
  }

  /**
   * Two Services naming one load balancer (`loadbalancer-name`) would fight over it: unless this
   * one already owns it, it is refused (each of them is, when none owns it), so nothing is created.
   */
  private nameConflict(a: LbAnnotationValues, actual: ActualLoadBalancer | null): Problem | null {
    if (a.name === null || (actual !== null && this.owns(actual.lb))) return null;
    const rivals = this.otherLoadBalancerServices().filter((other) => {
      if (other.spec?.loadBalancerClass || other.metadata?.deletionTimestamp != null) return false;
      return annotationOfOther(other, 'name') === a.name;
    });
    if (rivals.length === 0) return null;
    const names = rivals.map((other) => serviceName(serviceIdentity(other))).join(', ');
    return {
      kind: 'name-conflict',
      subject: LB_ANNOTATIONS.name.key,
      message: `the load balancer name "${a.name}" is also set on Service ${names}; two Services cannot share a load balancer and none of them owns one of that name, so nothing is created or changed for ${this.svc}`,
      hint: `Give each Service its own ${LB_ANNOTATIONS.name.key} (or remove it: the default is k8s-service-<uid>). To hand an existing load balancer to one of them, set ${LB_ANNOTATIONS.uuid.key} to its UUID on that Service only.`,
    };
  }

  /**
   * Floating IPs this Service claims that another Service claims too. One this Service's load
   * balancer already holds is not refused here (the holder keeps being reconciled); the other
   * claimant is refused.
   */
  private floatingIpConflict(a: LbAnnotationValues, actual: ActualLoadBalancer | null): Problem | null {
    if (a.floatingIps.length === 0) return null;
    const held = new Set((actual?.floatingIps ?? []).map((f) => f.network));
    const claims: string[] = [];
    for (const other of this.otherLoadBalancerServices()) {
      const theirs = annotationOfOther(other, 'floatingIps') ?? [];
      for (const ip of a.floatingIps) {
        if (theirs.includes(ip) && !held.has(ip)) claims.push(`${ip}->${serviceName(serviceIdentity(other))}`);
      }
    }
    if (claims.length === 0) return null;
    return {
      kind: 'floating-ip-conflict',
      subject: LB_ANNOTATIONS.floatingIps.key,
      message: `at least one Floating IP assigned to service ${this.svc} is also assigned to another service. Refusing to continue to avoid flapping: ${claims.join(', ')}`,
      hint: `Remove the Floating IP from the ${LB_ANNOTATIONS.floatingIps.key} annotation of all but one Service.`,
    };
  }

  private planFloatingIps(desired: DesiredLoadBalancer, actual: ActualLoadBalancer | null): void {
    const assigned = new Set((actual?.floatingIps ?? []).map((f) => f.network));
    const target: ObjectRef = actual === null ? { ref: LB_REF } : { uuid: actual.lb.uuid };
    for (const network of desired.floatingIps) {
      if (assigned.has(network)) continue;
      const fip = this.input.floatingIps.find((f) => f.network === network);
      if (fip === undefined) {
        this.problems.push({
          kind: 'floating-ip-missing',
          subject: `floating IP ${network}`,
          message: `Floating IP ${network} of annotation ${LB_ANNOTATIONS.floatingIps.key} does not exist in this cloudscale project`,
          hint: 'Create the Floating IP in this project (its network exactly as written, e.g. 192.0.2.1/32), or remove it from the annotation.',
        });
        continue;
      }
      const holder = fip.load_balancer
        ? `load balancer ${fip.load_balancer.name} (${fip.load_balancer.uuid})`
        : fip.server
          ? `server ${fip.server.name} (${fip.server.uuid})`
          : null;
      const from = holder ?? 'unassigned';
      if (holder !== null) {
        // Taken as the Go CCM does (the annotation wins), but never silently: someone moved it there
        // by hand, or another load balancer holds it, and its traffic there stops.
        this.warnings.push({
          reason: 'FloatingIPReassigned',
          message: `Floating IP ${network} is assigned to ${holder}, but the annotation ${LB_ANNOTATIONS.floatingIps.key} of this Service lists it: it is moved to load balancer ${desired.name} (the annotation wins), and ${holder} no longer receives its traffic. To leave it there, remove it from the annotation.`,
        });
      }
      this.actions.push(
        build({
          kind: 'assign-floating-ip',
          object: `floating IP ${network}`,
          reason: {
            text:
              holder === null
                ? 'listed in the annotation; traffic arrives within ~20 s'
                : `listed in the annotation but assigned to ${holder}: taken from there (Warning FloatingIPReassigned), its traffic there stops`,
            field: LB_ANNOTATIONS.floatingIps.key,
            from,
            to: `load balancer ${desired.name}`,
          },
          impact: 'minimal',
          floatingIp: { network, ip: network.slice(0, network.indexOf('/')) },
          loadBalancer: target,
        }),
      );
    }
  }

  private planAnnotations(actual: ActualLoadBalancer | null): void {
    const current = this.input.service.metadata?.annotations ?? {};
    const wanted: [string, WriteAnnotationsAction['changes'][number]['to']][] =
      actual === null
        ? [
            [LB_ANNOTATIONS.uuid.key, { ref: LB_REF, attribute: 'uuid' }],
            [LB_ANNOTATIONS.configVersion.key, { value: CONFIG_VERSION }],
            [LB_ANNOTATIONS.zone.key, { ref: LB_REF, attribute: 'zone' }],
          ]
        : [
            [LB_ANNOTATIONS.uuid.key, { value: actual.lb.uuid }],
            [LB_ANNOTATIONS.configVersion.key, { value: CONFIG_VERSION }],
            [LB_ANNOTATIONS.zone.key, { value: actual.lb.zone.slug }],
          ];
    const changes = wanted
      .filter(([key, to]) => !('value' in to) || current[key] !== to.value)
      .map(([key, to]) => ({ key, from: current[key] ?? null, to }));
    if (changes.length === 0) return;
    this.actions.push(
      build({
        kind: 'write-annotations',
        object: 'annotations',
        reason: {
          text: `record the load balancer on the Service: ${changes.map((c) => c.key.slice(c.key.indexOf('/') + 1)).join(', ')}`,
        },
        impact: 'none',
        changes,
      }),
    );
  }

  private planStatus(a: LbAnnotationValues, actual: ActualLoadBalancer | null): void {
    const current: V1LoadBalancerIngress[] = this.input.service.status?.loadBalancer?.ingress ?? [];
    const settings = ingressSettings(a, this.input.apiServerMinor);
    const object = SERVICE_STATUS_OBJECT;
    if (actual === null && !('hostname' in settings)) {
      this.actions.push(
        build({
          kind: 'write-status',
          object,
          reason: { text: "publish the new load balancer's VIP addresses", field: 'status.loadBalancer.ingress' },
          impact: 'none',
          from: current,
          to: { ref: LB_REF, settings },
        }),
      );
      return;
    }
    const ingress = ingressFromVips(actual?.lb.vip_addresses ?? [], settings);
    if (ingressEqual(current, ingress)) return;
    this.actions.push(
      build({
        kind: 'write-status',
        object,
        reason: {
          text: 'publish the load balancer addresses',
          field: 'status.loadBalancer.ingress',
          from: describeIngress(current),
          to: describeIngress(ingress),
        },
        impact: 'none',
        from: current,
        to: { ingress },
      }),
    );
  }
}

function describeIngress(ingress: readonly V1LoadBalancerIngress[]): string {
  if (ingress.length === 0) return '(none)';
  return ingress
    .map((e) => (e.hostname !== undefined ? e.hostname : `${e.ip ?? ''}${e.ipMode ? ` (${e.ipMode})` : ''}`))
    .join(', ');
}

/** Flavor, zone and VIP addresses cannot change on an existing load balancer (as in the Go CCM). */
function forbiddenChanges(
  desired: DesiredLoadBalancer,
  lb: LoadBalancer,
): { problem: Problem; reason: Reason }[] {
  const out: { problem: Problem; reason: Reason }[] = [];
  const recreate =
    'To really change it, delete and re-create the Service: it gets a new load balancer and loses its IP addresses (Floating IPs excepted).';
  if (desired.flavor !== lb.flavor.slug) {
    const key = LB_ANNOTATIONS.flavor.key;
    out.push({
      problem: {
        kind: 'forbidden-change',
        subject: key,
        message: `the flavor of load balancer ${lb.name} cannot change (${lb.flavor.slug} → ${desired.flavor}); nothing was changed`,
        hint: `Set ${key} back to ${lb.flavor.slug}. ${recreate}`,
      },
      reason: { text: 'the flavor of a load balancer is fixed', field: key, from: lb.flavor.slug, to: desired.flavor },
    });
  }
  if (desired.zone !== null && desired.zone !== lb.zone.slug) {
    const key = LB_ANNOTATIONS.zone.key;
    out.push({
      problem: {
        kind: 'forbidden-change',
        subject: key,
        message: `the zone of load balancer ${lb.name} cannot change (${lb.zone.slug} → ${desired.zone}); nothing was changed`,
        hint: `Set ${key} to ${lb.zone.slug}. ${recreate}`,
      },
      reason: { text: 'the zone of a load balancer is fixed', field: key, from: lb.zone.slug, to: desired.zone },
    });
  }
  const wanted = desired.vipAddresses;
  const vipsDiffer =
    wanted.length > 0 &&
    (wanted.length !== lb.vip_addresses.length ||
      wanted.some((w, i) => {
        const have = lb.vip_addresses[i]!;
        return w.subnet !== have.subnet.uuid || (w.address !== undefined && w.address !== have.address);
      }));
  if (vipsDiffer) {
    const key = LB_ANNOTATIONS.vipAddresses.key;
    const from = JSON.stringify(lb.vip_addresses.map((v) => ({ subnet: v.subnet.uuid, address: v.address })));
    const to = JSON.stringify(wanted);
    out.push({
      problem: {
        kind: 'forbidden-change',
        subject: key,
        message: `the VIP addresses of load balancer ${lb.name} cannot change (${from} → ${to}); nothing was changed`,
        hint: `Set ${key} back to ${from}. ${recreate}`,
      },
      reason: { text: 'the VIP addresses of a load balancer are fixed', field: key, from, to },
    });
  }
  return out;
}

/**
 * Another Service's annotation, or `undefined` when it is malformed: that Service's own plan
 * reports it, and here it claims nothing.
 */
function annotationOfOther<K extends 'name' | 'floatingIps'>(other: V1Service, name: K): LbAnnotationValues[K] | undefined {
  try {
    return readLbAnnotation(other.metadata?.annotations, name);
  } catch (error) {
    if (!(error instanceof AnnotationError)) throw error;
    return undefined;
  }
}

// ---- the cloud actions of one load balancer ---------------------------------------------------

/** Where a desired pool's objects come from: a kept pool, or one created in this plan. */
interface PoolTarget {
  readonly desired: DesiredPool;
  readonly ref: ObjectRef;
  /** The impact class of everything created in a new pool (its port's story). */
  readonly newPool?: { impact: ImpactClass; reason: Reason };
  readonly actual?: ActualPool;
  /**
   * A successor pool built by an earlier pass that stopped midway through a swap: its members
   * and monitor are completed here, its listener comes with the rest of the swap.
   */
  readonly successor?: boolean;
}

/** How members leave a pool: drained (disabled, deleted after `seconds`) or deleted at once. */
export interface DrainPolicy {
  /** 0: members leave at once, as the Go CCM does. */
  readonly seconds: number;
  /** When the pass read the state (ms since the epoch): what `draining-since` tags are compared with. */
  readonly nowMs: number;
}

class CloudPlan {
  // Categories in execution order; `actions` concatenates them.
  private readonly poolDeletes: PlannedAction[] = [];
  private readonly poolCreates: PlannedAction[] = [];
  // Members: those that must make room first (same address and port), then the new ones, the
  // wait until they are healthy, and only then those that leave (drained or deleted).
  private readonly memberDeletesFirst: PlannedAction[] = [];
  private readonly memberCreates: PlannedAction[] = [];
  private readonly memberAwaits: PlannedAction[] = [];
  private readonly memberLeaves: PlannedAction[] = [];
  // Every listener delete comes before every create: a port may move between pools (two named
  // ports swapping numbers), and the API allows one listener per port and protocol.
  private readonly listenerDeletes: PlannedAction[] = [];
  private readonly listenerCreates: PlannedAction[] = [];
  private readonly monitorChanges: PlannedAction[] = [];
  private readonly updates: PlannedAction[] = [];
  // Pool swaps run last: each is an ordered strategy (src/core/lb/strategies.ts).
  private readonly swaps: PlannedAction[] = [];
  private readonly lbChanges: PlannedAction[] = [];
  private readonly head: PlannedAction[] = [];
  private readonly strategies: Strategies;
  /** The existing pools, members, listeners and monitors by display name, for what a create replaces. */
  private existing: ReadonlyMap<string, object> = new Map();
  /** Every listener of the load balancer, for the port-in-use check of an in-place port move. */
  private actualListeners: readonly Listener[] = [];
  /** Warnings for the Service (members kept because nothing else would serve). */
  readonly warnings: PlanWarning[] = [];
  /** Deletions of drained members that a later pass makes once their drain period has passed. */
  readonly pending: PendingAction[] = [];
  /** The selected Node whose server has an address, to name it beside a member. */
  readonly nodeOf: (address: string) => string | undefined;

  constructor(
    private readonly desired: DesiredLoadBalancer,
    private readonly timing: MonitorTiming | undefined,
    private readonly context: { readonly drain: DrainPolicy | undefined; readonly serverAddresses: ReadonlySet<string> },
  ) {
    this.strategies = new Strategies(timing);
    const nodes = new Map(desired.pools.flatMap((p) => p.members.map((m) => [m.address, m.node] as const)));
    this.nodeOf = (address) => nodes.get(address);
  }

  /** In execution order; the updates of one object that follow each other are one (one PATCH). */
  get actions(): PlannedAction[] {
    return withReplacedFields(mergeObjectUpdates([
      ...this.head,
      ...this.poolDeletes,
      ...this.poolCreates,
      ...this.memberDeletesFirst,
      ...this.memberCreates,
      ...this.memberAwaits,
      ...this.memberLeaves,
      ...this.listenerDeletes,
      // A new port's monitor comes before its listener: the port serves only checked members.
      ...this.monitorChanges,
      ...this.listenerCreates,
      ...this.updates,
      ...this.swaps,
      ...this.lbChanges,
    ]), this.existing);
  }

  private act<D extends Draft>(draft: D): Extract<PlannedAction, { kind: D['kind'] }> {
    return build(draft, this.timing);
  }

  /** A new load balancer; `lost`: the one the Service records is gone, and this one replaces it. */
  create(lost: LostLoadBalancer | null): void {
    const d = this.desired;
    this.head.push(
      this.act({
        kind: 'create-lb',
        object: `load balancer ${d.name}`,
        reason: lost === null ? { text: 'the Service has no load balancer yet' } : lostReason(lost),
        impact: lost === null ? 'none' : 'lb-lost',
        lost,
        ref: LB_REF,
        body: {
          name: d.name,
          flavor: d.flavor,
          ...(d.zone === null ? {} : { zone: d.zone }),
          vip_addresses: d.vipAddresses.map((v) => ({ ...v })),
          tags: { ...d.tags },
        },
      }),
    );
    const reason = { text: 'part of the new load balancer' };
    this.createPools(
      d.pools.map((pool) => ({ desired: pool, ref: { ref: poolRef(pool.name) }, newPool: { impact: 'none', reason } })),
      { ref: LB_REF },
    );
  }

  update(actual: ActualLoadBalancer): void {
    const d = this.desired;
    this.existing = existingByObject(actual);
    this.actualListeners = [...actual.pools.flatMap((p) => p.listeners), ...actual.freeListeners];
    const { matched, swaps, retired } = matchPools(d.pools, actual.pools);
    for (const old of retired) {
      this.poolDeletes.push(
        ...this.strategies.retirePool(
          old,
          old.listeners.length > 0
            ? {
                impact: 'port-removal',
                reason: {
                  text: `no Service port maps to this pool any more: port ${old.listeners.map((l) => `${l.protocol}/${l.protocol_port}`).join(', ')} stops serving`,
                },
              }
            : { impact: 'none', reason: { text: 'no Service port maps to this pool any more (it serves no port)' } },
        ),
      );
    }

    const targets: PoolTarget[] = [];
    for (const pool of d.pools) {
      const swap = swaps.find((s) => s.desired === pool);
      const kept = matched.find(([dp]) => dp === pool);
      if (swap?.successor !== undefined) {
        targets.push({ desired: pool, ref: { uuid: swap.successor.pool.uuid }, actual: swap.successor, successor: true });
      } else if (swap !== undefined) {
        continue; // built whole by the swap
      } else if (kept !== undefined) {
        targets.push({ desired: pool, ref: { uuid: kept[1].pool.uuid }, actual: kept[1] });
      } else {
        targets.push({
          desired: pool,
          ref: { ref: poolRef(pool.name) },
          newPool: { impact: 'none', reason: { text: `new Service port ${describePort(pool)}` } },
        });
      }
    }
    this.createPools(targets, { uuid: actual.lb.uuid });
    this.deleteBlockingFreeListeners(actual);
    for (const swap of swaps) {
      const { steps, warning } = this.strategies.swapPool({ ...swap, loadBalancer: { uuid: actual.lb.uuid }, nodeOf: this.nodeOf });
      this.swaps.push(...steps);
      if (warning !== undefined) this.warnings.push(warning);
    }

    if (d.name !== actual.lb.name) {
      this.lbChanges.push(
        this.act({
          kind: 'rename-lb',
          object: `load balancer ${actual.lb.name}`,
          reason: { text: 'renamed in place', field: LB_ANNOTATIONS.name.key, from: actual.lb.name, to: d.name },
          impact: 'none',
          loadBalancer: { uuid: actual.lb.uuid },
          patch: { name: d.name },
        }),
      );
    }
    const tags = { ...actual.lb.tags, ...d.tags };
    const sameTags = (a: LoadBalancer['tags'], b: LoadBalancer['tags']) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
    if (!sameTags(tags, actual.lb.tags)) {
      const adopted = parseOwnershipTags(actual.lb.tags).kind === 'untagged';
      // Only the kube-system uid tag missing: a load balancer made before the tag existed.
      const { [OWNER_KUBE_SYSTEM_UID_TAG]: _uid, ...others } = tags;
      const uidOnly = taggedKubeSystemUid(actual.lb) === null && sameTags(others, actual.lb.tags);
      this.lbChanges.push(
        this.act({
          kind: 'tag-lb',
          object: `load balancer ${d.name}`,
          reason: {
            text: adopted
              ? 'adopt the load balancer (created without ownership tags, e.g. by the Go CCM): tag it as owned by this cluster and Service'
              : uidOnly
                ? "add this cluster's kube-system-uid tag (made before the tag existed): cleanup deletes no load balancer without it"
                : 'ownership tags differ',
            field: 'tags',
            from: JSON.stringify(actual.lb.tags),
            to: JSON.stringify(tags),
          },
          impact: 'none',
          loadBalancer: { uuid: actual.lb.uuid },
          patch: { tags },
        }),
      );
    }
  }

  /**
   * Listeners without a pool are never touched (as the Go CCM), except one on a port and
   * protocol a desired listener needs: it is what is left when a pool was deleted outside this
   * tool, serves nothing, and would make the API refuse the new listener on every pass.
   */
  private deleteBlockingFreeListeners(actual: ActualLoadBalancer): void {
    for (const listener of actual.freeListeners) {
      const needed = this.desired.pools.find(
        (p) => p.listener.protocol === listener.protocol && p.listener.protocol_port === listener.protocol_port,
      );
      if (needed === undefined) continue;
      this.listenerDeletes.push(
        this.strategies.deleteListener(listener, {
          impact: 'none',
          reason: {
            text: `left without a pool (its pool was deleted), it blocks port ${describePort(needed)} of pool ${needed.name}`,
          },
        }),
      );
    }
  }

  /** Creates pools as needed and plans the children of every target pool. */
  private createPools(targets: readonly PoolTarget[], lb: ObjectRef): void {
    for (const target of targets) {
      const { desired: pool, newPool } = target;
      if (newPool !== undefined) {
        this.poolCreates.push(
          this.act({
            kind: 'create-pool',
            object: `pool ${pool.name}`,
            reason: newPool.reason,
            impact: newPool.impact,
            ref: poolRef(pool.name),
            loadBalancer: lb,
            body: { name: pool.name, algorithm: pool.algorithm, protocol: pool.protocol },
          }),
        );
      }
    }
    for (const target of targets) this.planMembers(target);
    for (const target of targets) this.planMonitors(target);
    for (const target of targets) if (target.successor !== true) this.planListeners(target);
  }

  private planMembers(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const strategies = this.strategies;
    const into = { ref: target.ref, name: pool.name };
    if (actual === undefined) {
      for (const member of pool.members) this.memberCreates.push(strategies.createMember(into, member, target.newPool!));
      return;
    }
    const poolRefOf = { uuid: actual.pool.uuid };
    const { create, remove, matched } = diffBy(pool.members, actual.members, desiredMemberKey, actualMemberKey);
    for (const [, have] of matched) {
      const restore = strategies.restoreMember(have, poolRefOf, pool.name, {
        text: have.tags?.[MEMBER_DRAINING_TAG] === undefined ? 'the member is disabled, but its node is selected' : 'its node is selected again: the drain stops',
        field: 'enabled',
        from: String(have.enabled),
        to: 'true',
      });
      this.memberCreates.push(...restore);
    }
    if (create.length === 0 && remove.length === 0) return;

    const slot = (m: { address: string; protocol_port: number }) => `${m.address}|${m.protocol_port}`;
    const removedSlots = new Set(remove.map(slot));
    const inPlace = create.filter((m) => removedSlots.has(slot(m)));
    const inPlaceSlots = new Set(inPlace.map(slot));
    const added = create.filter((m) => !inPlaceSlots.has(slot(m)));
    const replacedInPlace = remove.filter((m) => inPlaceSlots.has(slot(m)));
    const leaving = remove.filter((m) => !inPlaceSlots.has(slot(m)));
    const successorOf = (member: MemberState) => create.find((c) => c.name === member.name) ?? create.find((c) => c.address === member.address);
    const predecessorOf = (member: DesiredMember) => remove.find((r) => r.name === member.name) ?? remove.find((r) => r.address === member.address);

    // A successor pool serves no port yet: nothing to protect, nothing to drain.
    if (target.successor === true) {
      const story = (reason: Reason): Story => ({ impact: 'none', reason: { ...reason, text: `${reason.text} (in the successor pool, which serves no port yet)` } });
      for (const member of remove) this.memberDeletesFirst.push(strategies.deleteMember(member, poolRefOf, pool.name, story(memberGoneReason(member, pool))));
      for (const member of create) this.memberCreates.push(strategies.createMember(into, member, story({ text: `node ${member.node} is selected` })));
      return;
    }

    // Same address and port: the old member makes room first; the others serve meanwhile.
    for (const member of replacedInPlace) {
      const reason = memberChangeReason(member, successorOf(member)!, pool);
      this.memberDeletesFirst.push(strategies.deleteMember(member, poolRefOf, pool.name, { impact: 'minimal', reason }));
    }
    for (const member of inPlace) {
      this.memberCreates.push(strategies.createMember(into, member, { impact: 'minimal', reason: memberChangeReason(predecessorOf(member)!, member, pool) }));
    }

    const reasonFor = (member: MemberState): Reason => {
      const successor = successorOf(member);
      return successor === undefined ? memberGoneReason(member, pool) : memberChangeReason(member, successor, pool);
    };
    const gate = strategies.memberGate({
      pool: { ref: poolRefOf, name: pool.name },
      desired: pool,
      staying: matched.map(([, have]) => have),
      created: create,
      added,
      leaving,
      reason: reasonFor,
      monitor: actual.monitors[0],
      nodeOf: this.nodeOf,
    });
    const rotation = gate.step !== undefined;
    for (const member of added) {
      const predecessor = predecessorOf(member);
      const reason =
        predecessor === undefined
          ? { text: `node ${member.node} is selected: its address ${member.address} joins the pool` }
          : memberChangeReason(predecessor, member, pool);
      this.memberCreates.push(strategies.createMember(into, member, { impact: rotation ? 'member-rotation' : 'minimal', reason }));
    }
    if (gate.step !== undefined) this.memberAwaits.push(gate.step);
    if (gate.warning !== undefined) this.warnings.push(gate.warning);

    let kept = 0;
    for (const member of leaving) {
      const left = strategies.leaveMember(member, {
        pool: poolRefOf,
        poolName: pool.name,
        reason: reasonFor(member),
        othersServe: matched.length + create.length > 0,
        gated: rotation,
        drain: this.context.drain,
        serverExists: this.context.serverAddresses.has(member.address),
      });
      this.memberLeaves.push(...left.steps);
      if (left.pending !== undefined) this.pending.push(left.pending);
      if (left.kept) kept += 1;
    }
    if (kept > 0) {
      this.warnings.push({
        reason: 'MembersKept',
        message: `pool ${pool.name}: no selected node remains, so the ${kept} member(s) of the nodes leaving it keep serving until a replacement is up or their servers are gone`,
      });
    }
  }

  private planListeners(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const wanted = pool.listener;
    if (actual === undefined) {
      this.listenerCreates.push(this.strategies.createListener(target, target.newPool!));
      return;
    }
    const { create, remove, matched } = diffBy([wanted], actual.listeners, listenerKey, listenerKey);
    const old = remove[0];
    // A new port number for the same pool and protocol moves the listener in place, unless
    // another listener holds that port now (two ports swapping numbers: deleted, then created).
    // It frees its old port before listeners are created (one may need that port: a listener
    // re-creation a pass left half done, or a new port that takes the old number).
    if (create.length === 1 && remove.length === 1 && old!.protocol === wanted.protocol && !this.portTaken(old!, wanted)) {
      const field = `spec.ports[${pool.port.name || 0}].port`;
      this.listenerDeletes.push(
        this.act({
          kind: 'update-listener',
          object: `listener ${old!.name}`,
          reason: { text: `the Service port changed: the listener of pool ${pool.name} moves to the new port in place`, field, from: String(old!.protocol_port), to: String(wanted.protocol_port) },
          impact: 'port-move',
          listener: { uuid: old!.uuid },
          patch: { protocol_port: wanted.protocol_port },
        }),
      );
      if (old!.name !== wanted.name) {
        this.listenerDeletes.push(
          this.act({
            kind: 'update-listener',
            object: `listener ${old!.name}`,
            reason: { text: 'the listener is named after its port', field: 'name', from: old!.name, to: wanted.name },
            impact: 'none',
            listener: { uuid: old!.uuid },
            patch: { name: wanted.name },
          }),
        );
      }
      this.updateListener({ ...old!, name: wanted.name }, wanted, this.listenerDeletes);
      return;
    }
    const recreated = create.length > 0 && remove.length > 0;
    const recreation: Reason | undefined =
      old === undefined
        ? undefined
        : old.protocol_port !== wanted.protocol_port
          ? {
              text: `the Service port changed, the pool ${pool.name} is kept`,
              field: `spec.ports[${pool.port.name || 0}].port`,
              from: String(old.protocol_port),
              to: String(wanted.protocol_port),
            }
          : { text: 'the listener protocol changed', field: LB_ANNOTATIONS.listenerProtocol.key, from: old.protocol, to: wanted.protocol };
    for (const listener of remove) {
      this.listenerDeletes.push(
        this.strategies.deleteListener(listener, {
          reason: recreated
            ? recreation!
            : { text: `not a port of the Service (pool ${pool.name}): port ${listener.protocol}/${listener.protocol_port} stops serving` },
          impact: recreated ? 'listener-recreation' : 'port-removal',
        }),
      );
    }
    if (create.length > 0) {
      this.listenerCreates.push(
        this.strategies.createListener(
          target,
          recreated
            ? { impact: 'listener-recreation', reason: recreation! }
            : { impact: 'listener-missing', reason: { text: `the listener of port ${describePort(pool)} is missing` } },
        ),
      );
    }
    for (const [, have] of matched) this.updateListener(have, wanted);
  }

  /** Whether a listener other than `own` holds the port and protocol `wanted` asks for. */
  private portTaken(own: Listener, wanted: DesiredListener): boolean {
    return this.actualListeners.some(
      (l) => l.uuid !== own.uuid && l.protocol === wanted.protocol && l.protocol_port === wanted.protocol_port,
    );
  }

  /** Plans the in-place updates of a listener's other fields, into `into` (beside its other updates: one PATCH). */
  private updateListener(have: { uuid: string; name: string } & DesiredListener, want: DesiredListener, into: PlannedAction[] = this.updates): void {
    const update = (
      patch: Extract<PlannedAction, { kind: 'update-listener' }>['patch'],
      field: string,
      from: string,
      to: string,
      impact: ImpactClass,
    ) =>
      into.push(
        this.act({
          kind: 'update-listener',
          object: `listener ${have.name}`,
          reason: { text: `${Object.keys(patch)[0]} changes in place`, field, from, to },
          impact,
          listener: { uuid: have.uuid },
          patch,
        }),
      );
    if (!sameList(have.allowed_cidrs, want.allowed_cidrs)) {
      update(
        { allowed_cidrs: [...want.allowed_cidrs] },
        this.desired.allowedCidrsSource,
        JSON.stringify(have.allowed_cidrs),
        JSON.stringify(want.allowed_cidrs),
        'minimal',
      );
    }
    const timeouts = [
      ['timeout_client_data_ms', LB_ANNOTATIONS.timeoutClientDataMs.key],
      ['timeout_member_connect_ms', LB_ANNOTATIONS.timeoutMemberConnectMs.key],
      ['timeout_member_data_ms', LB_ANNOTATIONS.timeoutMemberDataMs.key],
    ] as const;
    for (const [attribute, key] of timeouts) {
      if (have[attribute] !== want[attribute]) {
        update({ [attribute]: want[attribute] } as Extract<PlannedAction, { kind: 'update-listener' }>['patch'], key, String(have[attribute]), String(want[attribute]), 'none');
      }
    }
  }

  private planMonitors(target: PoolTarget): void {
    const { desired: pool, actual } = target;
    const wanted = pool.monitor;
    const into = { ref: target.ref, name: pool.name };
    if (actual === undefined) {
      this.monitorChanges.push(this.strategies.createMonitor(into, wanted, target.newPool!));
      return;
    }
    const { create, remove, matched } = diffBy([wanted], actual.monitors, monitorKey, monitorKey);
    // A serving pool whose monitor's type or version changes is swapped (swapInPlaceReason);
    // here that happens only to a pool that serves no port, or one with extra monitors.
    const recreated = create.length > 0 && remove.length > 0;
    const old = remove[0];
    const recreation = old === undefined ? undefined : monitorRecreationReason(old, wanted);
    const story = (impact: ImpactClass): ImpactClass => (target.successor === true ? 'none' : impact);
    for (const monitor of remove) {
      this.monitorChanges.push(
        this.strategies.deleteMonitor(monitor, pool.name, {
          impact: story(recreated ? 'monitor-recreation' : 'minimal'),
          reason: recreated ? recreation! : { text: `pool ${pool.name} has more than one health monitor` },
        }),
      );
    }
    if (create.length > 0) {
      this.monitorChanges.push(
        this.strategies.createMonitor(
          into,
          wanted,
          recreated
            ? { impact: story('monitor-recreation'), reason: recreation! }
            : { impact: story('minimal'), reason: { text: `pool ${pool.name} has no health monitor` } },
        ),
      );
    }
    for (const [, have] of matched) this.updateMonitor(have, wanted, pool.name);
  }

  private updateMonitor(have: HealthMonitor, want: DesiredMonitor, poolName: string): void {
    const object = `health monitor of pool ${poolName}`;
    const update = (patch: Extract<PlannedAction, { kind: 'update-monitor' }>['patch'], attribute: string, field: string, from: string, to: string) =>
      this.updates.push(
        this.act({
          kind: 'update-monitor',
          object,
          reason: { text: `${attribute} changes in place`, field, from, to },
          impact: 'minimal',
          monitor: { uuid: have.uuid },
          patch,
        }),
      );
    if (have.http !== null && want.http !== null) {
      const httpKey = LB_ANNOTATIONS.healthMonitorHttp.key;
      const hostHave = have.http.host || null;
      const hostWant = want.http.host || null;
      if (hostHave !== hostWant) update({ http: { host: hostWant } }, 'http.host', httpKey, String(hostHave), String(hostWant));
      if (have.http.url_path !== want.http.url_path) {
        update({ http: { url_path: want.http.url_path } }, 'http.url_path', httpKey, have.http.url_path, want.http.url_path);
      }
      if (have.http.method !== want.http.method) {
        update({ http: { method: want.http.method } }, 'http.method', httpKey, have.http.method, want.http.method);
      }
      if (!sameList(have.http.expected_codes, want.http.expected_codes)) {
        update(
          { http: { expected_codes: [...want.http.expected_codes] } },
          'http.expected_codes',
          httpKey,
          JSON.stringify(have.http.expected_codes),
          JSON.stringify(want.http.expected_codes),
        );
      }
    }
    const numbers = [
      ['delay_s', LB_ANNOTATIONS.healthMonitorDelayS.key],
      ['timeout_s', LB_ANNOTATIONS.healthMonitorTimeoutS.key],
      ['up_threshold', LB_ANNOTATIONS.healthMonitorUpThreshold.key],
      ['down_threshold', LB_ANNOTATIONS.healthMonitorDownThreshold.key],
    ] as const;
    for (const [attribute, key] of numbers) {
      if (have[attribute] !== want[attribute]) {
        update(
          { [attribute]: want[attribute] } as Extract<PlannedAction, { kind: 'update-monitor' }>['patch'],
          attribute,
          key,
          String(have[attribute]),
          String(want[attribute]),
        );
      }
    }
  }
}

/** The objects of a load balancer by the display name actions give them (`pool tcp/http`, …). */
function existingByObject(actual: ActualLoadBalancer): Map<string, object> {
  const existing = new Map<string, object>();
  for (const { pool, members, listeners, monitors } of actual.pools) {
    existing.set(`pool ${pool.name}`, pool);
    for (const member of members) existing.set(`member ${member.name} of pool ${pool.name}`, member);
    for (const listener of listeners) existing.set(`listener ${listener.name}`, listener);
    for (const monitor of monitors) existing.set(`health monitor of pool ${pool.name}`, monitor);
  }
  return existing;
}

/**
 * Each create that replaces an object of the same name, which the plan deletes, lists every
 * field in which the new one differs from it: a listener moved to a successor pool with new
 * allowed CIDRs says so, not only why the pool was swapped.
 */
function withReplacedFields(actions: PlannedAction[], existing: ReadonlyMap<string, object>): PlannedAction[] {
  const deleted = new Set(actions.filter((a) => a.verb === 'delete').map((a) => a.object));
  return actions.map((action) => {
    if (!isChildCreate(action) || !deleted.has(action.object)) return action;
    const old = existing.get(action.object);
    if (old === undefined) return action;
    const changes = fieldDifferences(old as Record<string, unknown>, action.body as Record<string, unknown>);
    return changes.length === 0 ? action : { ...action, changes };
  });
}

/** Fields of a create body that differ from the object it replaces; references and names are not compared. */
function fieldDifferences(old: Record<string, unknown>, body: Record<string, unknown>): Reason[] {
  const flat = (value: Record<string, unknown>) => {
    const entries: [string, unknown][] = [];
    for (const [key, field] of Object.entries(value)) {
      if (['name', 'tags', 'pool', 'load_balancer', 'subnet'].includes(key)) continue;
      if (key === 'http' && typeof field === 'object' && field !== null) {
        for (const [sub, inner] of Object.entries(field)) entries.push([`http.${sub}`, inner]);
      } else {
        entries.push([key, field]);
      }
    }
    return new Map(entries);
  };
  const before = flat(old);
  const show = (value: unknown) => (value === undefined || value === null ? '(none)' : typeof value === 'string' ? value : JSON.stringify(value));
  const changes: Reason[] = [];
  for (const [field, value] of flat(body)) {
    const was = before.get(field);
    if (show(was) === show(value)) continue;
    changes.push({ text: `${field} changes`, field, from: show(was), to: show(value) });
  }
  return changes;
}

/** Every address of every server: a member whose address no server has any more serves nothing. */
function serverAddresses(servers: readonly Server[]): ReadonlySet<string> {
  const addresses = new Set<string>();
  for (const server of servers) for (const iface of server.interfaces) for (const a of iface.addresses) addresses.add(a.address);
  return addresses;
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
