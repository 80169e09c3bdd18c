// What the benchmark sets up around the command under test: the simulated cloud and the Nodes
// and Services in the control plane.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { connectKube } from '../dist/core/kube/connection.js';
import { startSimulator } from '../dist/sim/index.js';

export const BENCH_TOKEN = 'bench-token-0123456789abcdef';
export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
export const TIMEOUT_ANNOTATION = 'k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms';

/** Server name of node `i` (1-based); Nodes carry the same name, as kubelets register them. */
export const nodeName = (i) => `node-${String(i).padStart(2, '0')}`;

/**
 * A cloud of `count` servers, each with a public and a private interface; UUIDs are derived from
 * the names, so every simulator started with this seed has the same servers. Addresses run in
 * blocks of 200 per third octet (the first 200 servers keep 10.20.0.10… and 5.102.146.10…).
 */
export function seedOf(count) {
  if (count > 2000) throw new Error(`at most 2000 servers fit the seed's address plan, asked for ${count}`);
  const third = (index) => Math.floor(index / 200);
  const fourth = (index) => (index % 200) + 10;
  return {
    networks: [{ name: 'k8s-private', zone: 'rma1', subnets: [{ cidr: '10.20.0.0/16' }] }],
    servers: Array.from({ length: count }, (_, index) => ({
      name: nodeName(index + 1),
      flavor: 'flex-4-2',
      zone: 'rma1',
      interfaces: [
        { type: 'public', addresses: [`5.102.${146 + third(index)}.${fourth(index)}`] },
        { type: 'private', network: 'k8s-private', addresses: [`10.20.${third(index)}.${fourth(index)}`] },
      ],
    })),
  };
}

/**
 * A simulator on 127.0.0.1 with the given per-request latency and provisioning delay. The
 * forgiving world: these groups measure the tool's own work (requests, CPU, memory) against a
 * fixed API latency, and their README figures were taken so; the data plane's real-API timings
 * are the downtime group's subject (bench/downtime.js asks for the strict world).
 */
export async function startCloud({ servers, latencyMs, lbProvisionMs }) {
  const sim = await startSimulator({ seed: seedOf(servers), lbProvisionMs, token: BENCH_TOKEN, world: 'forgiving' });
  sim.admin.setFaults({ latencyMs });
  return sim;
}

/** The Kubernetes side of the fixtures. */
export function kubeFixtures(kubeconfig) {
  const conn = connectKube({ kubeconfig });
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  return {
    /** Registers Nodes as kubelets with `--cloud-provider=external` do: tainted, Ready. */
    async createUninitializedNodes(numbers) {
      await inBatches(numbers, 8, async (i) => {
        const name = nodeName(i);
        await conn.core.createNode({
          body: {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name },
            spec: { taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] },
          },
        });
        const now = new Date().toISOString();
        await conn.core.patchNodeStatus(
          {
            name,
            body: {
              status: {
                conditions: [
                  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'registered by the benchmark', lastHeartbeatTime: now, lastTransitionTime: now },
                ],
              },
            },
          },
          mergePatch,
        );
      });
    },

    async deleteNodes(numbers) {
      await inBatches(numbers, 8, (i) => conn.core.deleteNode({ name: nodeName(i) }));
    },

    async createNamespace(name) {
      await conn.core.createNamespace({ body: { metadata: { name } } });
    },

    /**
     * Services `svc-001`… (from number `first`) of type LoadBalancer; every second one has a
     * second port, so pools per Service vary, unless `ports` fixes their number. Returns the
     * number of ports of each.
     */
    async createServices(namespace, count, { first = 1, ports } = {}) {
      const shapes = Array.from({ length: count }, (_, i) => ({
        name: `svc-${String(first + i).padStart(3, '0')}`,
        ports: ports ?? ((first + i) % 2 === 0 ? 2 : 1),
      }));
      await inBatches(shapes, 8, ({ name, ports }) =>
        conn.core.createNamespacedService({
          namespace,
          body: {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name, namespace },
            spec: {
              type: 'LoadBalancer',
              selector: { app: name },
              ports: [
                { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
                { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
              ].slice(0, ports),
            },
          },
        }),
      );
      return shapes;
    },

    async annotateServices(namespace, names, annotations) {
      await inBatches(names, 8, (name) =>
        conn.core.patchNamespacedService({ namespace, name, body: { metadata: { annotations } } }, mergePatch),
      );
    },

    /** Drops the finalizer first: the next scenario's cloud is a new, empty simulator. */
    async deleteServices(namespace, names) {
      await inBatches(names, 8, async (name) => {
        await conn.core.patchNamespacedService({ namespace, name, body: { metadata: { finalizers: null } } }, mergePatch);
        await conn.core.deleteNamespacedService({ namespace, name });
      });
    },
  };
}

async function inBatches(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** `/api/v1/namespaces/ns/services/web/status` → `services/{name}/status`; lists stay `services`. */
export function kubeRoute(url) {
  const segments = new URL(url).pathname.split('/').filter(Boolean);
  const rest = segments[0] === 'api' ? segments.slice(2) : segments[0] === 'apis' ? segments.slice(3) : segments;
  const scoped = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [resource = '/', name, ...sub] = scoped;
  return [resource, ...(name === undefined ? [] : ['{name}']), ...sub].join('/');
}
