// Populates the sandbox cluster the way a real one looks before its CCM first runs: one Node per
// simulated server, tainted `node.cloudprovider.kubernetes.io/uninitialized` as kubelets with
// `--cloud-provider=external` register, and Ready (no kubelet runs here to report it); then the
// example Service. Idempotent: existing objects are left as they are.
//
//   node helpers/lib/sandbox.js KUBECONFIG CLOUDSCALE_API_URL SERVICE_MANIFEST
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const [kubeconfig, apiUrl, manifest] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);

const response = await fetch(`${apiUrl}/v1/servers`, { headers: { Authorization: `Bearer ${process.env.CLOUDSCALE_API_TOKEN}` } });
if (!response.ok) throw new Error(`GET ${apiUrl}/v1/servers answered ${response.status}`);
const servers = await response.json();

const existing = new Set((await core.listNode()).items.map((n) => n.metadata.name));
for (const server of servers) {
  if (existing.has(server.name)) continue;
  await core.createNode({
    body: {
      metadata: { name: server.name, labels: { 'kubernetes.io/hostname': server.name } },
      spec: { taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] },
    },
  });
  const now = new Date().toISOString();
  await core.patchNodeStatus(
    {
      name: server.name,
      body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'sandbox node', lastHeartbeatTime: now, lastTransitionTime: now }] } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  process.stdout.write(`registered node ${server.name} (tainted uninitialized)\n`);
}

const service = parse(readFileSync(manifest, 'utf8'));
const namespace = service.metadata.namespace ?? 'default';
try {
  await core.readNamespacedService({ name: service.metadata.name, namespace });
} catch {
  await core.createNamespacedService({ namespace, body: service });
  process.stdout.write(`created service ${namespace}/${service.metadata.name}\n`);
}
