// The ownership tags this tool writes on every load balancer it creates or adopts: which cluster,
// which Service by UID, and its name for people. cluster-identity.ts adds the kube-system uid
// beside them.
import type { Tags } from '../cloudscale/types.js';

/** Tag keys this tool writes on every load balancer it creates or adopts. MUST not change. */
export const OWNER_CLUSTER_TAG = 'k8s.cloudscale.ch/cluster';
export const OWNER_SERVICE_UID_TAG = 'k8s.cloudscale.ch/service-uid';
export const OWNER_SERVICE_TAG = 'k8s.cloudscale.ch/service';

export type LbOwnership =
  /** No cluster tag: created by the Go CCM (or by hand); adopted by writing the tags. */
  | { readonly kind: 'untagged' }
  | {
      readonly kind: 'tagged';
      readonly clusterId: string;
      readonly serviceUid: string | null;
      /** `namespace/name` as tagged; informational only (names are reused, UIDs are not). */
      readonly service: string | null;
    };

/** Reads the ownership tags of a load balancer. */
export function parseOwnershipTags(tags: Readonly<Tags> | undefined): LbOwnership {
  const clusterId = tags?.[OWNER_CLUSTER_TAG];
  if (clusterId === undefined || clusterId === '') return { kind: 'untagged' };
  return {
    kind: 'tagged',
    clusterId,
    serviceUid: nonEmpty(tags?.[OWNER_SERVICE_UID_TAG]),
    service: nonEmpty(tags?.[OWNER_SERVICE_TAG]),
  };
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/** The ownership tags for a Service's load balancer in this cluster. */
export function ownershipTags(
  clusterId: string,
  service: { readonly namespace: string; readonly name: string; readonly uid: string },
): Tags {
  return {
    [OWNER_CLUSTER_TAG]: clusterId,
    [OWNER_SERVICE_UID_TAG]: service.uid,
    [OWNER_SERVICE_TAG]: `${service.namespace}/${service.name}`,
  };
}
