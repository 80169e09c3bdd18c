// Which cluster a load balancer belongs to, beyond the configurable cluster id.
//
// The `k8s.cloudscale.ch/cluster` tag carries `--cluster-id`, a string anyone can configure: two
// clusters given the same one by mistake would each take the other's load balancers for their
// own. So every load balancer this tool creates or adopts also carries the uid of its cluster's
// namespace kube-system (what the cluster id defaults to; it lives as long as the cluster and
// differs between clusters), and `sync-lb` adds the tag to those made before it existed. Cleanup
// deletes nothing without proof from it (cleanupOwnership).
import type { V1Node } from '@kubernetes/client-node';
import type { LoadBalancer, PoolMember, Server, Tags } from '../cloudscale/types.js';
import { parseOwnershipTags } from './annotations.js';
import { mapNodesToServers } from './nodes.js';

/** The tag with the uid of namespace kube-system of the cluster that owns the load balancer. MUST not change. */
export const OWNER_KUBE_SYSTEM_UID_TAG = 'k8s.cloudscale.ch/kube-system-uid';

/** The kube-system uid tag; none when the uid is not known (planner tests of other concerns). */
export function kubeSystemUidTag(kubeSystemUid: string | undefined): Tags {
  return kubeSystemUid === undefined ? {} : { [OWNER_KUBE_SYSTEM_UID_TAG]: kubeSystemUid };
}

/** The kube-system uid a load balancer is tagged with; null when it carries none. */
export function taggedKubeSystemUid(lb: LoadBalancer): string | null {
  const uid = lb.tags?.[OWNER_KUBE_SYSTEM_UID_TAG];
  return uid === undefined || uid === '' ? null : uid;
}

/** This cluster's identity: the configured id and the uid it is told apart by. */
export interface ClusterIdentity {
  readonly clusterId: string;
  readonly kubeSystemUid: string;
}

/** Load balancers tagged with this cluster's id and another cluster's kube-system uid. */
export function sharingClusterId(loadBalancers: readonly LoadBalancer[], identity: ClusterIdentity): LoadBalancer[] {
  return loadBalancers.filter((lb) => {
    const owner = parseOwnershipTags(lb.tags);
    const uid = taggedKubeSystemUid(lb);
    return owner.kind === 'tagged' && owner.clusterId === identity.clusterId && uid !== null && uid !== identity.kubeSystemUid;
  });
}

/** The one-line warning of `sync-lb` about load balancers of another cluster with the same id. */
export function sharedClusterIdWarning(count: number, identity: ClusterIdentity): string {
  return (
    `${count} load balancer(s) tagged with cluster id ${identity.clusterId} belong to another cluster (another kube-system uid than ` +
    `this cluster's ${identity.kubeSystemUid}): two clusters share the cluster id, and cleanup keeps their load balancers apart only ` +
    `by that uid; give each cluster its own --cluster-id`
  );
}

/** What else than the tags speaks for a load balancer without the kube-system uid tag. */
export interface OwnershipEvidence {
  /** Uids of this cluster's live Services (random, so no other cluster has them). */
  readonly liveServiceUids: ReadonlySet<string>;
  /**
   * `<subnet uuid> <address>` of every interface of the project's servers: `node` for the
   * servers this cluster's Nodes map to, `other` for the rest (serverInterfaces).
   */
  readonly serverInterfaces: ReadonlyMap<string, 'node' | 'other'>;
  /** The members of the pools of each load balancer read (by load balancer UUID); one not read has none here. */
  readonly members: ReadonlyMap<string, readonly Pick<PoolMember, 'address' | 'subnet'>[]>;
}

export type CleanupOwnership =
  | { readonly kind: 'this-cluster' }
  | { readonly kind: 'not-proven'; readonly why: string };

/**
 * Whether cleanup may take a load balancer tagged with this cluster's id for this cluster's:
 * - its kube-system uid tag equals this cluster's uid (another uid: another cluster's, kept);
 * - without that tag (made by an older version or adopted from the Go CCM and not synced
 *   since), its service-uid tag names a live Service of this cluster, or a member is on a
 *   server of this cluster's Nodes (same subnet and address) and none is on any other server of
 *   the project (a member whose address no server has any more, a deleted Node's, is neutral);
 * - else nothing proves it, and it is kept.
 */
export function cleanupOwnership(lb: LoadBalancer, identity: ClusterIdentity, evidence: OwnershipEvidence): CleanupOwnership {
  const uid = taggedKubeSystemUid(lb);
  if (uid === identity.kubeSystemUid) return { kind: 'this-cluster' };
  if (uid !== null) {
    return {
      kind: 'not-proven',
      why:
        `belongs to another cluster that shares the cluster id ${identity.clusterId} (its kube-system UID ${uid}, ` +
        `this cluster's ${identity.kubeSystemUid}); give each cluster its own --cluster-id`,
    };
  }
  const owner = parseOwnershipTags(lb.tags);
  if (owner.kind === 'tagged' && owner.serviceUid !== null && evidence.liveServiceUids.has(owner.serviceUid)) {
    return { kind: 'this-cluster' };
  }
  const memberServers = (evidence.members.get(lb.uuid) ?? []).map((m) => evidence.serverInterfaces.get(interfaceKey(m.subnet.uuid, m.address)));
  const onNodes = memberServers.includes('node');
  const onOthers = memberServers.includes('other');
  if (onNodes && !onOthers) return { kind: 'this-cluster' };
  const memberFinding =
    memberServers.length === 0
      ? 'it has no members'
      : onOthers
        ? 'a member is on a server that is no Node of this cluster'
        : "none of its members is on this cluster's Nodes";
  return {
    kind: 'not-proven',
    why:
      `has no ${OWNER_KUBE_SYSTEM_UID_TAG} tag and nothing else proves it is this cluster's (no live Service of this cluster ` +
      `is tagged on it, and ${memberFinding}): another cluster with the same cluster id may own it; check it in the cloudscale ` +
      'control panel and delete it there if it is unused',
  };
}

/** `<subnet uuid> <address>` of a member or a server interface address. */
export function interfaceKey(subnetUuid: string, address: string): string {
  return `${subnetUuid} ${address}`;
}

/** The interfaces (subnet and address) of the project's servers: those of this cluster's Nodes, and the others. */
export function serverInterfaces(nodes: readonly V1Node[], servers: readonly Server[]): Map<string, 'node' | 'other'> {
  const ofNodes = new Set<string>();
  for (const node of nodes) {
    // One Node at a time: a Node whose server is gone proves nothing, and stops nothing either.
    const mapping = mapNodesToServers([node], servers);
    if (mapping.ok) for (const { server } of mapping.mapped) ofNodes.add(server.uuid);
  }
  const interfaces = new Map<string, 'node' | 'other'>();
  for (const server of servers) {
    for (const iface of server.interfaces) {
      for (const address of iface.addresses) {
        interfaces.set(interfaceKey(address.subnet.uuid, address.address), ofNodes.has(server.uuid) ? 'node' : 'other');
      }
    }
  }
  return interfaces;
}
