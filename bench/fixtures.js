// What the benchmark sets up around the command under test: the simulated cloud, Nodes and
// Services in the control plane, and a CommandContext built by the CLI's own composition root,
// one per pass (as one CLI invocation gets), so each pass starts with a fresh request counter.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Readable, Writable } from 'node:stream';
import { createCommandContext } from '../dist/composition.js';
import { connectKube } from '../dist/core/kube/connection.js';
import { startSimulator } from '../dist/sim/index.js';

export const BENCH_TOKEN = 'bench-token-0123456789abcdef';
export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
export const TIMEOUT_ANNOTATION = 'k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms';

/** Server name of node `i` (1-based); Nodes carry the same name, as kubelets register them. */
export const nodeName = (i) => `node-${String(i).padStart(2, '0')}`;

/**
 * A cloud of `count` servers, each with a public and a private interface; UUIDs are derived from
 * the names, so every simulator started with this seed has the same servers.
 */
export function seedOf(count) {
  if (count > 200) throw new Error(`at most 200 servers fit the seed's address plan, asked for ${count}`);
  return {
    networks: [{ name: 'k8s-private', zone: 'rma1', subnets: [{ cidr: '10.20.0.0/24' }] }],
    servers: Array.from({ length: count }, (_, index) => ({
      name: nodeName(index + 1),
      flavor: 'flex-4-2',
      zone: 'rma1',
      interfaces: [
        { type: 'public', addresses: [`5.102.146.${index + 10}`] },
        { type: 'private', network: 'k8s-private', addresses: [`10.20.0.${index + 10}`] },
      ],
    })),
  };
}

/** A simulator on 127.0.0.1 with the given per-request latency and provisioning delay. */
export async function startCloud({ servers, latencyMs, lbProvisionMs }) {
  const sim = await startSimulator({ seed: seedOf(servers), lbProvisionMs, token: BENCH_TOKEN });
  sim.admin.setFaults({ latencyMs });
  return sim;
}

/** The CLI's CommandContext for one pass; its output is kept for error messages only. */
export async function passContext({ kubeconfig, apiUrl, signal }) {
  let output = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      output += chunk.toString();
      done();
    },
  });
  const ctx = await createCommandContext(
    { kubeconfig, output: 'text', color: false, verbose: false },
    {
      stdin: Readable.from([]),
      stdout: sink,
      stderr: sink,
      env: { KUBECONFIG: kubeconfig, CLOUDSCALE_API_URL: apiUrl, CLOUDSCALE_API_TOKEN: BENCH_TOKEN },
      signal,
    },
  );
  return { ctx, output: () => output };
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
     * Services `svc-001`… of type LoadBalancer; every second one has a second port, so pools
     * per Service vary. Returns the number of ports of each.
     */
    async createServices(namespace, count) {
      const shapes = Array.from({ length: count }, (_, index) => ({
        name: `svc-${String(index + 1).padStart(3, '0')}`,
        ports: index % 2 === 1 ? 2 : 1,
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

/**
 * Counts the Kubernetes API requests sent through a connection, by wrapping the HTTP library of
 * each of its API clients (a benchmark-only reach into client-node's generated classes; it
 * fails loudly if their shape changes). Call before the command's first request.
 */
export function countKubeRequests(conn) {
  const records = [];
  for (const client of [conn.core, conn.coordination, conn.events, conn.version]) {
    const http = client?.api?.configuration?.httpApi;
    if (typeof http?.send !== 'function') {
      throw new Error('cannot count Kubernetes requests: client-node API objects no longer expose api.configuration.httpApi');
    }
    const send = http.send.bind(http);
    http.send = (request) => {
      records.push(`${request.getHttpMethod()} ${kubeRoute(request.getUrl())}`);
      return send(request);
    };
  }
  return {
    summary() {
      const reads = records.filter((r) => r.startsWith('GET ')).length;
      const byRoute = {};
      for (const route of [...records].sort()) byRoute[route] = (byRoute[route] ?? 0) + 1;
      return { total: records.length, reads, writes: records.length - reads, byRoute };
    },
  };
}

/** `/api/v1/namespaces/ns/services/web/status` → `services/{name}/status`; lists stay `services`. */
function kubeRoute(url) {
  const segments = new URL(url).pathname.split('/').filter(Boolean);
  const rest = segments[0] === 'api' ? segments.slice(2) : segments[0] === 'apis' ? segments.slice(3) : segments;
  const scoped = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [resource = '/', name, ...sub] = scoped;
  return [resource, ...(name === undefined ? [] : ['{name}']), ...sub].join('/');
}
