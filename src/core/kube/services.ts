// Service reads and writes. Metadata (annotations, finalizers) goes to the main resource, the
// load balancer status to the status subresource, as the cloud-provider service controller does.
import {
  PatchStrategy,
  setHeaderOptions,
  type V1LoadBalancerStatus,
  type V1Service,
} from '@kubernetes/client-node';
import { KubeApiError } from '../errors.js';
import { kubeCall, kubeWrite, type KubeConnection } from './connection.js';

const LIST_PAGE_SIZE = 250;
/** A continue token expires (410) when etcd compacts; the list then starts over, this often. */
const LIST_RESTARTS = 3;
/** Re-reads after a 409 on a finalizer change before giving up. */
const FINALIZER_ATTEMPTS = 5;

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** All Services of all namespaces, read in pages (default LIST_PAGE_SIZE). */
export async function listServices(
  conn: KubeConnection,
  options: { pageSize?: number } = {},
): Promise<V1Service[]> {
  const pageSize = options.pageSize ?? LIST_PAGE_SIZE;
  for (let restart = 0; ; restart += 1) {
    const services: V1Service[] = [];
    let continueToken: string | undefined;
    try {
      do {
        const page = await kubeCall('list services in all namespaces', () =>
          conn.core.listServiceForAllNamespaces({
            limit: pageSize,
            ...(continueToken === undefined ? {} : { _continue: continueToken }),
          }),
        );
        services.push(...page.items);
        continueToken = page.metadata?._continue || undefined;
      } while (continueToken !== undefined);
      return services;
    } catch (error) {
      const expired = error instanceof KubeApiError && error.status === 410;
      if (!expired || restart + 1 >= LIST_RESTARTS) throw error;
    }
  }
}

/** The Service, or undefined if it does not exist. */
export async function getService(conn: KubeConnection, namespace: string, name: string): Promise<V1Service | undefined> {
  try {
    return await kubeCall(`read service ${namespace}/${name}`, () =>
      conn.core.readNamespacedService({ namespace, name }),
    );
  } catch (error) {
    if (error instanceof KubeApiError && error.isNotFound) return undefined;
    throw error;
  }
}

export interface ServiceMetadataChange {
  /** Values to set; null removes the annotation. */
  annotations?: Record<string, string | null>;
  addFinalizer?: string;
  removeFinalizer?: string;
}

/**
 * Changes annotations and/or one finalizer of a Service and returns the stored result.
 *
 * Finalizer changes carry the resourceVersion they were computed from, so a finalizer another
 * writer added or removed in between is never overwritten: the server answers 409 and the change
 * is recomputed from a fresh read (at most FINALIZER_ATTEMPTS times). Annotation-only changes
 * need no such guard: a merge patch touches only the named keys.
 */
export async function patchServiceMetadata(
  conn: KubeConnection,
  namespace: string,
  name: string,
  change: ServiceMetadataChange,
): Promise<V1Service> {
  const what = `patch metadata of service ${namespace}/${name}`;
  const annotations = change.annotations ?? {};
  const hasAnnotations = Object.keys(annotations).length > 0;
  if (change.addFinalizer === undefined && change.removeFinalizer === undefined) {
    if (!hasAnnotations) {
      return kubeCall(`read service ${namespace}/${name}`, () => conn.core.readNamespacedService({ namespace, name }));
    }
    return kubeWrite(conn, what, () =>
      conn.core.patchNamespacedService({ namespace, name, body: { metadata: { annotations } } }, mergePatch()),
    );
  }

  for (let attempt = 1; ; attempt += 1) {
    const current = await kubeCall(`read service ${namespace}/${name}`, () =>
      conn.core.readNamespacedService({ namespace, name }),
    );
    const before = current.metadata?.finalizers ?? [];
    let after = before.filter((f) => f !== change.removeFinalizer);
    if (change.addFinalizer !== undefined && !after.includes(change.addFinalizer)) {
      after = [...after, change.addFinalizer];
    }
    const finalizersChanged = after.length !== before.length || after.some((f, i) => f !== before[i]);
    if (!finalizersChanged && !hasAnnotations) return current;

    const metadata: Record<string, unknown> = { resourceVersion: current.metadata?.resourceVersion };
    if (finalizersChanged) metadata.finalizers = after;
    if (hasAnnotations) metadata.annotations = annotations;
    try {
      return await kubeWrite(conn, what, () =>
        conn.core.patchNamespacedService({ namespace, name, body: { metadata } }, mergePatch()),
      );
    } catch (error) {
      if (!(error instanceof KubeApiError && error.isConflict) || attempt >= FINALIZER_ATTEMPTS) throw error;
    }
  }
}

/**
 * Replaces `status.loadBalancer` through the status subresource and returns the stored Service.
 * An empty `ingress` list clears it. The apiserver defaults `ipMode` to VIP for every ingress
 * entry with an `ip` and no `ipMode`.
 */
export async function patchServiceStatus(
  conn: KubeConnection,
  namespace: string,
  name: string,
  loadBalancer: V1LoadBalancerStatus,
): Promise<V1Service> {
  const ingress = loadBalancer.ingress ?? [];
  return kubeWrite(conn, `patch load balancer status of service ${namespace}/${name}`, () =>
    conn.core.patchNamespacedServiceStatus(
      { namespace, name, body: { status: { loadBalancer: { ingress } } } },
      mergePatch(),
    ),
  );
}
