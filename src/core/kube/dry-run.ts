import type { V1Service } from '@kubernetes/client-node';
import { kubeCall, type KubeConnection } from './connection.js';
import { getService } from './services.js';

/** The UID of a proposed Service that does not exist yet: the API server assigns it on create. */
export const UID_ASSIGNED_ON_CREATE = '<uid>';

/**
 * What the API server would make of a proposed Service manifest, without storing anything
 * (`dryRun=All`): validated, defaulted, with nodePorts — kept by port name for an existing
 * Service (the API server's own rule for updates), freshly allocated for a new one (shown, not
 * reserved; its UID is UID_ASSIGNED_ON_CREATE).
 *
 * The manifest replaces the live Service as `kubectl apply` would leave it: its spec, labels
 * and annotations win, except that the live finalizers and the annotations named in
 * `keepAnnotations` (those the tool writes itself) are carried over.
 */
export async function dryRunService(
  conn: KubeConnection,
  manifest: V1Service,
  keepAnnotations: readonly string[],
): Promise<V1Service> {
  const namespace = manifest.metadata?.namespace ?? 'default';
  const name = manifest.metadata?.name ?? '';
  const live = await getService(conn, namespace, name);
  if (live === undefined) {
    const created = await kubeCall(`dry-run create of service ${namespace}/${name}`, () =>
      conn.core.createNamespacedService({ namespace, body: manifest, dryRun: 'All' }),
    );
    // The dry run's UID is random and never the one the Service will get: a load balancer name
    // or tag built from it would name something that will never exist.
    return { ...created, metadata: { ...created.metadata, uid: UID_ASSIGNED_ON_CREATE } };
  }
  const kept = Object.fromEntries(
    keepAnnotations.flatMap((key) => {
      const value = live.metadata?.annotations?.[key];
      return value === undefined ? [] : [[key, value]];
    }),
  );
  const body: V1Service = {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      namespace,
      name,
      resourceVersion: live.metadata?.resourceVersion,
      ...(live.metadata?.finalizers === undefined ? {} : { finalizers: live.metadata.finalizers }),
      annotations: { ...kept, ...manifest.metadata?.annotations },
    },
  };
  return kubeCall(`dry-run update of service ${namespace}/${name}`, () =>
    conn.core.replaceNamespacedService({ namespace, name, body, dryRun: 'All' }),
  );
}
