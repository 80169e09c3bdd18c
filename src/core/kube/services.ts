// Service reads and writes. Metadata (annotations, finalizers) goes to the main resource, the
// load balancer status to the status subresource, as the cloud-provider service controller does.
import {
  PatchStrategy,
  setHeaderOptions,
  type V1LoadBalancerStatus,
  type V1Service,
} from '@kubernetes/client-node';
import { KubeApiError } from '../errors.js';
import { abortableSleep } from '../sleep.js';
import { kubeCall, kubeWrite, type KubeConnection } from './connection.js';

const LIST_PAGE_SIZE = 250;
/** A continue token expires (410) when etcd compacts; the list then starts over, this often. */
const LIST_RESTARTS = 3;
/** Attempts of a finalizer change, each from a fresh read, before a run of 409s gives up. */
export const FINALIZER_ATTEMPTS = 5;
/**
 * Pause before the re-read after a 409, doubled after each (10, 20, 40, 80 ms, each ±10 %, as
 * client-go's retry on conflict): a burst of another writer's edits passes instead of taking
 * every attempt within a few milliseconds.
 */
const CONFLICT_PAUSE_MS = 10;

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
 * writer added or removed in between is never overwritten: the server answers 409 (for any change
 * of the Service in between: a label, an annotation, its status) and the change is recomputed
 * from a fresh read after a short pause, at most FINALIZER_ATTEMPTS times in all. Annotation-only
 * changes need no such guard: a merge patch touches only the named keys.
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
      if (!(error instanceof KubeApiError && error.isConflict)) throw error;
      if (attempt >= FINALIZER_ATTEMPTS) {
        throw new KubeApiError(
          `${what}: another writer changed the Service between each of ${FINALIZER_ATTEMPTS} reads and the write that followed it (409 Conflict: ${error.message})`,
          {
            status: error.status,
            ...(error.reason === undefined ? {} : { reason: error.reason }),
            cause: error,
            hint: 'something writes this Service continuously (another controller, a script); the next pass tries again from a fresh read',
          },
        );
      }
      await abortableSleep(CONFLICT_PAUSE_MS * 2 ** (attempt - 1) * (0.9 + Math.random() * 0.2));
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
