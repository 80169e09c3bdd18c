// The planner's guards: what refuses a Service's plan before any action is planned (a load
// balancer of another owner, one not proven this Service's, an absence not confirmed by UUID,
// a change no load balancer can take), and what a Service that lost its load balancer records.
import type { V1Service } from '@kubernetes/client-node';
import type { LoadBalancer } from '../cloudscale/types.js';
import { AnnotationError } from '../errors.js';
import type { LostLoadBalancer, Reason } from './actions.js';
import { loadBalancerReferences } from './actual.js';
import { LB_ANNOTATIONS, readLbAnnotation, type LbAnnotationValues } from './annotations.js';
import { parseOwnershipTags } from './ownership.js';
import { taggedKubeSystemUid } from './cluster-identity.js';
import { defaultLbName, serviceIdentity, type DesiredLoadBalancer } from './desired.js';
import type { Problem } from './problems.js';
import { type PlanServiceInput, serviceName } from './service-plan.js';

/**
 * The load balancer a Service without one records, or `null` for a Service that never had one:
 * the UUID its annotation names (the planner gets here only once a 404 confirmed it gone), and
 * the addresses its status publishes. Whatever the new load balancer gets, the addresses change,
 * except those the Service pins: its Floating IPs, fixed VIP addresses and a forced hostname.
 */
export function lostLoadBalancer(service: V1Service, desired: DesiredLoadBalancer, forceHostname: string | null): LostLoadBalancer | null {
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
export function lostReason(lost: LostLoadBalancer): Reason {
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
export function unconfirmedAbsence(service: V1Service, input: Pick<PlanServiceInput, 'uuidLookups'>): Problem | null {
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
export function adoptionRefusal(lb: LoadBalancer, service: V1Service): Problem | null {
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
export function ownershipRefusal(
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

/** Flavor, zone and VIP addresses cannot change on an existing load balancer (as in the Go CCM). */
export function forbiddenChanges(desired: DesiredLoadBalancer, lb: LoadBalancer): { problem: Problem; reason: Reason }[] {
  const wanted = desired.vipAddresses;
  const vipsDiffer =
    wanted.length > 0 &&
    (wanted.length !== lb.vip_addresses.length ||
      wanted.some((w, i) => {
        const have = lb.vip_addresses[i]!;
        return w.subnet !== have.subnet.uuid || (w.address !== undefined && w.address !== have.address);
      }));
  // `advice`: the zone may never have been annotated (the default zone was taken), so its hint
  // says "set to", not "set back to".
  const fixed: { what: string; isAre: 'is' | 'are'; key: string; from: string; to: string; differs: boolean; advice: 'back to' | 'to' }[] = [
    {
      what: 'flavor',
      isAre: 'is',
      key: LB_ANNOTATIONS.flavor.key,
      from: lb.flavor.slug,
      to: desired.flavor,
      differs: desired.flavor !== lb.flavor.slug,
      advice: 'back to',
    },
    {
      what: 'zone',
      isAre: 'is',
      key: LB_ANNOTATIONS.zone.key,
      from: lb.zone.slug,
      to: desired.zone ?? lb.zone.slug,
      differs: desired.zone !== null && desired.zone !== lb.zone.slug,
      advice: 'to',
    },
    {
      what: 'VIP addresses',
      isAre: 'are',
      key: LB_ANNOTATIONS.vipAddresses.key,
      from: JSON.stringify(lb.vip_addresses.map((v) => ({ subnet: v.subnet.uuid, address: v.address }))),
      to: JSON.stringify(wanted),
      differs: vipsDiffer,
      advice: 'back to',
    },
  ];
  const recreate =
    'To really change it, delete and re-create the Service: it gets a new load balancer and loses its IP addresses (Floating IPs excepted).';
  return fixed
    .filter((attribute) => attribute.differs)
    .map(({ what, isAre, key, from, to, advice }) => ({
      problem: {
        kind: 'forbidden-change',
        subject: key,
        message: `the ${what} of load balancer ${lb.name} cannot change (${from} → ${to}); nothing was changed`,
        hint: `Set ${key} ${advice} ${from}. ${recreate}`,
      },
      reason: { text: `the ${what} of a load balancer ${isAre} fixed`, field: key, from, to },
    }));
}

/**
 * Another Service's annotation, or `undefined` when it is malformed: that Service's own plan
 * reports it, and here it claims nothing.
 */
export function annotationOfOther<K extends 'name' | 'floatingIps'>(other: V1Service, name: K): LbAnnotationValues[K] | undefined {
  try {
    return readLbAnnotation(other.metadata?.annotations, name);
  } catch (error) {
    if (!(error instanceof AnnotationError)) throw error;
    return undefined;
  }
}
