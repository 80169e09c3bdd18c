// Whether the test cluster's API server keeps status.loadBalancer.ingress[].ipMode. One of the
// control planes test/run-tests.sh runs against (Kubernetes 1.30 with the LoadBalancerIPMode
// feature gate off) drops the field on every write although its version says it has it. Tests
// that read a stored status back ask here what the server stores.
import { uniqueName, deleteServiceForced, testConnection } from './kube.js';
import { PatchStrategy, setHeaderOptions, type V1LoadBalancerIngress } from '@kubernetes/client-node';

let keepsIpMode: Promise<boolean> | undefined;

/** True when the API server stores ipMode as written (probed once per test file). */
export function serverKeepsIpMode(): Promise<boolean> {
  keepsIpMode ??= probe();
  return keepsIpMode;
}

/** The ingress entries as this API server stores them: without ipMode where it drops the field. */
export async function asStored(entries: readonly V1LoadBalancerIngress[]): Promise<V1LoadBalancerIngress[]> {
  if (await serverKeepsIpMode()) return entries.map((entry) => ({ ...entry }));
  return entries.map(({ ipMode: _dropped, ...rest }) => rest);
}

async function probe(): Promise<boolean> {
  const core = testConnection().core;
  const namespace = 'default';
  const name = uniqueName('ipmode-probe');
  await core.createNamespacedService({
    namespace,
    body: { metadata: { name }, spec: { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80 }] } },
  });
  try {
    const written = await core.patchNamespacedServiceStatus(
      { namespace, name, body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1', ipMode: 'Proxy' }] } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    return written.status?.loadBalancer?.ingress?.[0]?.ipMode === 'Proxy';
  } finally {
    await deleteServiceForced(namespace, name);
  }
}
