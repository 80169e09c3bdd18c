// Ensure mode: one Service that wants a load balancer, planned whole: refusals first (guards.ts),
// then the finalizer, the cloud actions of its load balancer (cloud-plan.ts), its Floating IPs,
// the annotations that record it and the addresses its status publishes.
import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import type { LoadBalancer } from '../cloudscale/types.js';
import { LB_REF, buildAction, type ObjectRef, type PlannedAction, type Reason, type WriteAnnotationsAction } from './actions.js';
import { loadBalancerReferences, type ActualLoadBalancer } from './actual.js';
import { LB_ANNOTATIONS, parseLbAnnotations, type LbAnnotationValues } from './annotations.js';
import { parseOwnershipTags } from './ownership.js';
import {
  desiredLoadBalancer,
  ingressEqual,
  ingressFromVips,
  ingressSettings,
  serviceIdentity,
  type DesiredLoadBalancer,
} from './desired.js';
import { errorExplanation } from './health.js';
import { mapNodesToServers, selectLbNodes } from './nodes.js';
import { annotationProblem, type PlanWarning, type Problem } from './problems.js';
import {
  adoptionRefusal,
  annotationOfOther,
  forbiddenChanges,
  lostLoadBalancer,
  ownershipRefusal,
  unconfirmedAbsence,
} from './guards.js';
import { CloudPlan, serverAddresses } from './cloud-plan.js';
import {
  LB_FINALIZER,
  CONFIG_VERSION,
  type PlanServiceInput,
  type ServicePlan,
  type PendingAction,
  serviceName,
  SERVICE_FINALIZER_OBJECT,
  SERVICE_STATUS_OBJECT,
  refuse,
  lookupProblem,
} from './service-plan.js';

/** Ensure mode: the Service wants a load balancer; the guards first, then the cloud actions, the Floating IPs, annotations and status. */
export class EnsurePlanner {
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
        buildAction({
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
    if (actual?.lb.status === 'error') this.warnings.push(errorExplanation(actual, desired.lb.pools, cloud.actions, cloud.nodeOf));
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
        buildAction({
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
      buildAction({
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
        buildAction({
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
      buildAction({
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
