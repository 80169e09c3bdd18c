// What a load-balancer pass plans from: one snapshot of the cluster and the cloud
// (src/core/apply/snapshot.ts reads it), and which Services of it are in play. Pure.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import type { FloatingIp, HealthMonitor, Listener, LoadBalancer, MemberState, Pool, Server, Subnet } from '../cloudscale/types.js';
import { serviceKey, type LoadBalancerLocations, type UuidLookup } from '../lb/actual.js';
import { LB_FINALIZER } from '../lb/service-plan.js';

export interface CloudLists {
  readonly servers: readonly Server[];
  readonly loadBalancers: readonly LoadBalancer[];
  readonly pools: readonly Pool[];
  readonly listeners: readonly Listener[];
  readonly monitors: readonly HealthMonitor[];
  readonly floatingIps: readonly FloatingIp[];
  readonly subnets: readonly Subnet[];
}

export interface LbPassSnapshot extends CloudLists {
  /** Every Service of the cluster (Floating IP conflicts are checked across all of them). */
  readonly services: readonly V1Service[];
  readonly nodes: readonly V1Node[];
  /** Members of every pool of the load balancers found for the Services in play. */
  readonly membersByPool: Readonly<Record<string, readonly MemberState[]>>;
  /**
   * Pools whose members could not be read (the read failed after its retries), with the error:
   * only the Service of that load balancer is affected, and it is not planned (its members are
   * unknown, so creating or deleting any would be a guess); every other Service goes on.
   */
  readonly unreadablePools: ReadonlyMap<string, string>;
  readonly clusterId: string;
  /** The uid of namespace kube-system, tagged beside the cluster id (src/core/lb/cluster-identity.ts). */
  readonly kubeSystemUid: string;
  readonly apiServerMinor: number | null;
  /**
   * Whether the API server keeps `ipMode` in Service status. One that has the field defaults it
   * to VIP on every ingress entry with an `ip`, so a single stored entry with an `ip` and no
   * `ipMode` proves that this server drops it (older than 1.30, or the LoadBalancerIPMode
   * feature gate off): writing it would only make every pass write the status again.
   */
  readonly ipModeKept: boolean;
  /**
   * What a read by UUID answered for each load balancer that a Service in play names in its
   * `loadbalancer-uuid` annotation but the list did not show: `gone` (404), else the error.
   * One found this way is in `loadBalancers`: the list was wrong, the read is the evidence.
   */
  readonly uuidLookups: ReadonlyMap<string, UuidLookup>;
  /**
   * Where the load balancer of each Service in play is, by serviceKey: located once, when the
   * snapshot is read (locateLoadBalancers), from its `loadBalancers`. The member reads, the
   * planner and the saved plan's fingerprint read it.
   */
  readonly locations: LoadBalancerLocations;
}

/** Services a pass works on: named ones, or every one that wants a load balancer or has our finalizer. */
export type ServiceSelection = { readonly all: true } | { readonly names: readonly { namespace: string; name: string }[] };

/** The Services a pass plans for, in a stable order (namespace, name). */
export function servicesInPlay(
  services: readonly V1Service[],
  selection: ServiceSelection,
  proposed: readonly V1Service[] = [],
): V1Service[] {
  const chosen =
    'all' in selection
      ? services.filter((s) => wantsOrHadLoadBalancer(s) || proposed.includes(s))
      : selection.names.flatMap(({ namespace, name }) =>
          services.filter((s) => s.metadata?.namespace === namespace && s.metadata?.name === name),
        );
  return [...chosen].sort((a, b) => serviceKey(a).localeCompare(serviceKey(b)));
}

function wantsOrHadLoadBalancer(service: V1Service): boolean {
  return (
    service.spec?.type === 'LoadBalancer' ||
    (service.metadata?.finalizers ?? []).includes(LB_FINALIZER)
  );
}
