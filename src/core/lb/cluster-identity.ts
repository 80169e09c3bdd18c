// Which cluster a load balancer belongs to, beyond the configurable cluster id.
//
// The `k8s.cloudscale.ch/cluster` tag carries `--cluster-id`, a string anyone can configure: two
// clusters given the same one by mistake would each take the other's load balancers for their
// own. So every load balancer this tool creates or adopts also carries the uid of its cluster's
// namespace kube-system (what the cluster id defaults to; it lives as long as the cluster and
// differs between clusters), and `sync-lb` adds the tag to those made before it existed. Cleanup
// deletes nothing without it unless told to (cleanupOwnership).
import type { LoadBalancer, Tags } from '../cloudscale/types.js';
import { parseOwnershipTags } from './ownership.js';

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

export type CleanupOwnership =
  | { readonly kind: 'this-cluster' }
  | { readonly kind: 'not-proven'; readonly why: string };

/** The cleanup flag that lets it delete load balancers without the kube-system uid tag. */
export const INCLUDE_UNTAGGED_FLAG = '--include-untagged';

/**
 * Whether cleanup may take a load balancer tagged with this cluster's id for this cluster's:
 * - its kube-system uid tag equals this cluster's uid (another uid: another cluster's, kept);
 * - without that tag (made by an older version or adopted from the Go CCM and not synced
 *   since) only when the operator says so (`includeUntagged`): nothing else proves it. A second
 *   cluster given the same cluster id may have Nodes for the same servers and Services of the
 *   same names, so neither members nor names tell the clusters apart; and a pass of the cluster
 *   that owns it adds the tag to the load balancers of its live Services.
 */
export function cleanupOwnership(lb: LoadBalancer, identity: ClusterIdentity, includeUntagged: boolean): CleanupOwnership {
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
  if (includeUntagged) return { kind: 'this-cluster' };
  return {
    kind: 'not-proven',
    why:
      `has no ${OWNER_KUBE_SYSTEM_UID_TAG} tag, so nothing proves it is this cluster's: another cluster with the same cluster id ` +
      `may own it (a sync-lb pass of the cluster that owns it adds the tag); once you checked it is unused, ` +
      `run cleanup ${INCLUDE_UNTAGGED_FLAG}`,
  };
}
