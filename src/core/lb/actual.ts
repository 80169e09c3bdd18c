// The actual load balancer of a Service: finding it (docs/go-ccm-compatibility.md) and
// assembling it with its children from the API's flat lists, as the Go CCM reads them.
import type { V1Service } from '@kubernetes/client-node';
import type {
  FloatingIp,
  HealthMonitor,
  Listener,
  LoadBalancer,
  Pool,
  MemberState,
  PoolMember,
} from '../cloudscale/types.js';
import { AnnotationError, InternalError, RefusedError } from '../errors.js';
import { LB_ANNOTATIONS, readLbAnnotation } from './annotations.js';
import { parseOwnershipTags } from './ownership.js';
import { defaultLbName, serviceIdentity } from './desired.js';

export interface ActualPool {
  readonly pool: Pool;
  readonly members: readonly MemberState[];
  readonly listeners: readonly Listener[];
  readonly monitors: readonly HealthMonitor[];
}

export interface ActualLoadBalancer {
  readonly lb: LoadBalancer;
  /** The pools whose `load_balancer.uuid` is this load balancer, in API order. */
  readonly pools: readonly ActualPool[];
  /** Listeners of this load balancer without a pool: never touched (as the Go CCM). */
  readonly freeListeners: readonly Listener[];
  /** Floating IPs assigned to this load balancer. */
  readonly floatingIps: readonly FloatingIp[];
}

export interface LoadBalancerChildren {
  /** All pools of the project (or just this load balancer's). */
  readonly pools: readonly Pool[];
  /** Members by pool UUID; must hold an entry for every pool of this load balancer. */
  readonly membersByPool: Readonly<Record<string, readonly MemberState[]>>;
  readonly listeners: readonly Listener[];
  readonly monitors: readonly HealthMonitor[];
  readonly floatingIps: readonly FloatingIp[];
}

/**
 * Keeps what a pass needs of members (MemberState), sharing one subnet stub per subnet among
 * all the members it compacts: one compactor per pass.
 */
export function memberCompactor(): (member: PoolMember) => MemberState {
  const subnets = new Map<string, MemberState['subnet']>();
  return (member) => {
    let subnet = subnets.get(member.subnet.uuid);
    if (subnet === undefined || subnet.href !== member.subnet.href || subnet.cidr !== member.subnet.cidr) {
      subnet = { href: member.subnet.href, uuid: member.subnet.uuid, cidr: member.subnet.cidr };
      subnets.set(subnet.uuid, subnet);
    }
    return {
      href: member.href,
      uuid: member.uuid,
      name: member.name,
      enabled: member.enabled,
      protocol_port: member.protocol_port,
      monitor_port: member.monitor_port,
      address: member.address,
      subnet,
      monitor_status: member.monitor_status,
      // Tags matter for draining members only; an empty map is not kept per member.
      ...(member.tags !== undefined && Object.keys(member.tags).length > 0 ? { tags: member.tags } : {}),
    };
  };
}

/** What a read by UUID answered for a load balancer that a list did not show. */
export type UuidLookup = { readonly kind: 'gone' } | { readonly kind: 'unreadable'; readonly error: string };

/**
 * How a Service refers to its load balancer: the UUID annotation, and the name (the name
 * annotation, else `k8s-service-<uid>`). An invalid name annotation refers to nothing (the
 * annotation itself is reported by `parseLbAnnotations`).
 */
export function loadBalancerReferences(service: V1Service): { readonly uuid: string | null; readonly name: string | null } {
  const annotations = service.metadata?.annotations;
  const uuid = readLbAnnotation(annotations, 'uuid');
  try {
    return { uuid, name: readLbAnnotation(annotations, 'name') ?? defaultLbName(serviceIdentity(service).uid) };
  } catch (error) {
    if (!(error instanceof AnnotationError)) throw error;
    return { uuid, name: null };
  }
}

/** Where a Service's load balancer is: found, absent, or ambiguous (several match; none is guessed). */
export type LoadBalancerLocation =
  | { readonly kind: 'found'; readonly lb: LoadBalancer }
  | { readonly kind: 'absent' }
  | { readonly kind: 'ambiguous'; readonly error: RefusedError };

/**
 * The load balancer of a Service, found by the UUID annotation and by exact name (the name
 * annotation, else `k8s-service-<uid>`), de-duplicated: `absent` when neither matches,
 * `ambiguous` when they give more than one load balancer (the UUID and the name point to
 * different ones, or several share the name): the Go CCM refuses too, since guessing could
 * modify or delete the wrong one; its error names them and how to settle it. An empty name
 * annotation disables the name lookup (the annotation itself is reported by `parseLbAnnotations`).
 *
 * With `clusterId`, a Service that records no load balancer (no UUID annotation) and matches
 * none by name is also matched by the ownership tags (cluster and Service uid): only a tool
 * writes those tags, so it is the Service's own, made by a pass that stopped before recording it (the
 * name may have changed since). Several such are refused like several of one name.
 *
 * The one lookup of a Service's load balancer, called by locateLoadBalancers only: a pass
 * locates each Service once, with its snapshot, and hands the location to the planner
 * (PlanServiceInput.location).
 */
export function locateLoadBalancer(
  service: V1Service,
  loadBalancers: readonly LoadBalancer[],
  clusterId?: string,
): LoadBalancerLocation {
  const { uuid, name } = loadBalancerReferences(service);
  const found = new Map<string, LoadBalancer>();
  for (const lb of loadBalancers) {
    if ((uuid !== null && lb.uuid === uuid) || (name !== null && lb.name === name)) {
      found.set(lb.uuid, lb);
    }
  }
  if (found.size === 0 && uuid === null && clusterId !== undefined) {
    const uid = serviceIdentity(service).uid;
    for (const lb of loadBalancers) {
      const owner = parseOwnershipTags(lb.tags);
      if (owner.kind === 'tagged' && owner.clusterId === clusterId && owner.serviceUid === uid) found.set(lb.uuid, lb);
    }
  }
  const [first] = found.values();
  if (first === undefined) return { kind: 'absent' };
  if (found.size === 1) return { kind: 'found', lb: first };
  const { namespace, name: serviceName } = serviceIdentity(service);
  const list = [...found.values()].map((lb) => `${lb.name} (${lb.uuid})`).join(', ');
  const error = new RefusedError(
    `service ${namespace}/${serviceName}: found more than one load balancer: ${list}`,
    {
      hint:
        uuid !== null
          ? `The annotation ${LB_ANNOTATIONS.uuid.key} and the name point to different load balancers. Set ${LB_ANNOTATIONS.uuid.key} to the right one and rename or delete the other.`
          : 'Several load balancers have this name. Rename or delete all but the one that belongs to this Service, or set the annotation ' +
            `${LB_ANNOTATIONS.uuid.key} to its UUID.`,
    },
  );
  return { kind: 'ambiguous', error };
}

/** `namespace/name` of a Service: what its location is kept under, the order of a pass, and what a proposed Service replaces. */
export function serviceKey(service: V1Service): string {
  return `${service.metadata?.namespace ?? ''}/${service.metadata?.name ?? ''}`;
}

/** Where the load balancers of Services are, by serviceKey. */
export type LoadBalancerLocations = ReadonlyMap<string, LoadBalancerLocation>;

/**
 * Locates the load balancer of each of `services` (locateLoadBalancer): the one place a pass
 * does, for its snapshot (LbPassSnapshot.locations), which its member reads, its planner and the
 * saved plan's fingerprint then read; `status` locates its one Service here too.
 */
export function locateLoadBalancers(services: readonly V1Service[], loadBalancers: readonly LoadBalancer[], clusterId: string): Map<string, LoadBalancerLocation> {
  return new Map(services.map((service) => [serviceKey(service), locateLoadBalancer(service, loadBalancers, clusterId)] as const));
}

/** The location of `service` in `locations`; an InternalError when it was not located (a Service the snapshot did not have in play). */
export function locationOf(locations: LoadBalancerLocations, service: V1Service): LoadBalancerLocation {
  const location = locations.get(serviceKey(service));
  if (location === undefined) throw new InternalError(`service ${serviceKey(service)}: its load balancer was not located with the snapshot`);
  return location;
}

/** The UUIDs of the load balancers found in `locations` (absent and ambiguous ones add none). */
export function locatedUuids(locations: Iterable<LoadBalancerLocation>): Set<string> {
  const uuids = new Set<string>();
  for (const location of locations) if (location.kind === 'found') uuids.add(location.lb.uuid);
  return uuids;
}

/** A location with the load balancer found assembled with its children: what the planner is given. */
export type AssembledLocation =
  | { readonly kind: 'found'; readonly actual: ActualLoadBalancer }
  | Exclude<LoadBalancerLocation, { readonly kind: 'found' }>;

/** `location` with the load balancer found assembled from `children` (assembleActualLoadBalancer). */
export function assembleLocation(location: LoadBalancerLocation, children: LoadBalancerChildren): AssembledLocation {
  return location.kind === 'found' ? { kind: 'found', actual: assembleActualLoadBalancer(location.lb, children) } : location;
}

/**
 * Attaches children to a load balancer: pools by `load_balancer.uuid`, members by pool,
 * listeners and monitors by `pool.uuid`, Floating IPs by `load_balancer.uuid`. Throws
 * `InternalError` when `membersByPool` lacks one of its pools (the caller did not read them).
 */
export function assembleActualLoadBalancer(
  lb: LoadBalancer,
  children: LoadBalancerChildren,
): ActualLoadBalancer {
  const pools = children.pools
    .filter((pool) => pool.load_balancer.uuid === lb.uuid)
    .map((pool): ActualPool => {
      const members = children.membersByPool[pool.uuid];
      if (members === undefined) {
        throw new InternalError(`the members of pool ${pool.name} (${pool.uuid}) were not read`);
      }
      return {
        pool,
        members,
        listeners: children.listeners.filter((l) => l.pool?.uuid === pool.uuid),
        monitors: children.monitors.filter((m) => m.pool.uuid === pool.uuid),
      };
    });
  return {
    lb,
    pools,
    freeListeners: children.listeners.filter(
      (l) => l.pool === null && l.load_balancer.uuid === lb.uuid,
    ),
    floatingIps: children.floatingIps.filter((f) => f.load_balancer?.uuid === lb.uuid),
  };
}
