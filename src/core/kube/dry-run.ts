import { PatchStrategy, setHeaderOptions, type V1Service } from '@kubernetes/client-node';
import { kubeCall, type KubeConnection } from './connection.js';

/**
 * What the API server would make of a proposed Service manifest, without storing anything:
 * a server-side apply with `dryRun=All`. The answer carries what planning needs and a plain
 * manifest lacks: validation by the server, defaults, the uid and allocated nodePorts of an
 * existing Service (kept), and freshly allocated ones for a new Service (shown, not reserved).
 */
export async function dryRunApplyService(conn: KubeConnection, service: V1Service): Promise<V1Service> {
  const namespace = service.metadata?.namespace ?? 'default';
  const name = service.metadata?.name ?? '';
  return kubeCall(`dry-run apply of service ${namespace}/${name}`, () =>
    conn.core.patchNamespacedService(
      { name, namespace, body: service, dryRun: 'All', fieldManager: 'cloudscale-ccm-plan', force: true },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    ),
  );
}
