// Helpers for test files that talk to this worker's Kubernetes control plane
// (test/support/worker-cluster.ts starts one per vitest worker; test/global-setup.ts stops them).
//
// The control plane is kube-apiserver + etcd only: no kube-controller-manager (namespace deletion
// and garbage collection never finish), no kubelet (Nodes stay exactly as tests write them).
// So every test file creates uniquely named objects (uniqueName) and deletes what it created
// (deleteCreatedObjects, or the per-object helpers).
import {
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1NodeAddress,
  type V1Service,
  type V1ServicePort,
  type V1ServiceSpec,
  type V1Taint,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { connectKube, type KubeConnection } from '../../src/core/kube/connection.js';
import { TEST_CLUSTER_ENV } from './worker-cluster-paths.js';

export const UNINITIALIZED_TAINT_KEY = 'node.cloudprovider.kubernetes.io/uninitialized';
/** The taint the kubelet gives a Node of an external cloud provider until it is initialised. */
export const UNINITIALIZED_TAINT: V1Taint = { key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' };
/** Added to every new Node by the apiserver's TaintNodesByCondition admission plugin. */
export const NOT_READY_TAINT_KEY = 'node.kubernetes.io/not-ready';

/**
 * Path of the admin kubeconfig of this worker's test cluster. Spawned processes inherit it as
 * CCM_TEST_KUBECONFIG.
 */
export function testKubeconfig(): string {
  const path = process.env[TEST_CLUSTER_ENV.kubeconfig];
  if (path === undefined || path === '') {
    throw new Error(
      `no test cluster: run the file through a vitest project with test/support/worker-cluster.ts ` +
        `(\`integration\`, \`fault-race\`), or set ${TEST_CLUSTER_ENV.kubeconfig}`,
    );
  }
  return path;
}

/**
 * Path of a kubeconfig whose user is authenticated but has no RBAC rights, or undefined when
 * the cluster came from TEST_KUBECONFIG without TEST_KUBECONFIG_NOACCESS.
 */
export function testNoAccessKubeconfig(): string | undefined {
  const path = process.env[TEST_CLUSTER_ENV.kubeconfigNoAccess];
  return path === undefined || path === '' ? undefined : path;
}

/**
 * The helpers/test-cluster directory of this worker's cluster (what `helpers/test-cluster
 * start-controllers` needs), or undefined for a cluster from TEST_KUBECONFIG.
 */
export function testClusterDir(): string | undefined {
  const dir = process.env[TEST_CLUSTER_ENV.clusterDir];
  return dir === undefined || dir === '' ? undefined : dir;
}

let sharedConnection: KubeConnection | undefined;

/** The admin connection of the test cluster (one per test file). */
export function testConnection(): KubeConnection {
  sharedConnection ??= connectKube({ kubeconfig: testKubeconfig() });
  return sharedConnection;
}

const runTag = randomBytes(4).readUInt32BE().toString(36).padStart(6, '0').slice(-6);
let nameCounter = 0;

/**
 * A DNS-1035 label (valid for Nodes, Services, Namespaces, Leases) unique per test file and run:
 * `<prefix>-<6 random chars><counter>`, at most 63 characters.
 */
export function uniqueName(prefix: string): string {
  const cleaned = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  nameCounter += 1;
  return `${cleaned || 't'}-${runTag}${nameCounter.toString(36)}`;
}

// ---- created-object bookkeeping -------------------------------------------------------------

type CreatedObject = { kind: 'Node'; name: string } | { kind: 'Service'; namespace: string; name: string };
const created: CreatedObject[] = [];

/** Deletes every Node and Service created through this module (newest first), finalizers and all. */
export async function deleteCreatedObjects(): Promise<void> {
  const failures: string[] = [];
  for (const object of created.splice(0).reverse()) {
    try {
      if (object.kind === 'Node') await deleteNodeForced(object.name);
      else await deleteServiceForced(object.namespace, object.name);
    } catch (error) {
      failures.push(`${object.kind} ${object.name}: ${String(error)}`);
    }
  }
  if (failures.length > 0) throw new Error(`cleanup failed:\n${failures.join('\n')}`);
}

// ---- Nodes ----------------------------------------------------------------------------------

export interface TestNodeOptions {
  taints?: V1Taint[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  providerID?: string;
  /** Written through the status subresource (a Node cannot be created with a status). */
  addresses?: V1NodeAddress[];
  /** Writes a Ready condition (True/False) through the status subresource; no kubelet does. */
  ready?: boolean;
}

/** Creates a Node (registered for deleteCreatedObjects) and returns it as stored. */
export async function createNode(name: string, options: TestNodeOptions = {}): Promise<V1Node> {
  const conn = testConnection();
  const node = await conn.core.createNode({
    body: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        ...(options.labels === undefined ? {} : { labels: options.labels }),
        ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
      },
      spec: {
        ...(options.taints === undefined ? {} : { taints: options.taints }),
        ...(options.providerID === undefined ? {} : { providerID: options.providerID }),
      },
    },
  });
  created.push({ kind: 'Node', name });
  if (options.addresses === undefined && options.ready === undefined) return node;
  const now = new Date();
  const status: Record<string, unknown> = {};
  if (options.addresses !== undefined) status.addresses = options.addresses;
  if (options.ready !== undefined) {
    status.conditions = [
      {
        type: 'Ready',
        status: options.ready ? 'True' : 'False',
        reason: options.ready ? 'KubeletReady' : 'KubeletNotReady',
        message: 'written by the test suite',
        lastHeartbeatTime: now.toISOString(),
        lastTransitionTime: now.toISOString(),
      },
    ];
  }
  return conn.core.patchNodeStatus(
    { name, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Removes the Node's finalizers, deletes it and waits until it is gone; absent is fine. */
export async function deleteNodeForced(name: string): Promise<void> {
  const conn = testConnection();
  await ignoreNotFound(
    conn.core.patchNode(
      { name, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );
  await ignoreNotFound(conn.core.deleteNode({ name }));
  await waitUntil(`node ${name} deleted`, async () => (await ignoreNotFound(conn.core.readNode({ name }))) === undefined);
}

// ---- Namespaces and Services ----------------------------------------------------------------

/** Creates the namespace if it does not exist. Namespaces are never deleted (no controller would finish it). */
export async function ensureNamespace(name: string): Promise<void> {
  const conn = testConnection();
  try {
    await conn.core.createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
  }
}

export interface TestServiceOptions {
  ports?: V1ServicePort[];
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
  externalTrafficPolicy?: 'Cluster' | 'Local';
  loadBalancerClass?: string;
  /** Any further spec fields; they override the defaults above. */
  spec?: Partial<V1ServiceSpec>;
}

/** Creates a Service of type LoadBalancer (registered for deleteCreatedObjects). */
export async function createLoadBalancerService(
  namespace: string,
  name: string,
  options: TestServiceOptions = {},
): Promise<V1Service> {
  const conn = testConnection();
  const service = await conn.core.createNamespacedService({
    namespace,
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name,
        namespace,
        ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
        ...(options.labels === undefined ? {} : { labels: options.labels }),
        ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers }),
      },
      spec: {
        type: 'LoadBalancer',
        selector: { app: name },
        ports: options.ports ?? [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
        ...(options.externalTrafficPolicy === undefined
          ? {}
          : { externalTrafficPolicy: options.externalTrafficPolicy }),
        ...(options.loadBalancerClass === undefined ? {} : { loadBalancerClass: options.loadBalancerClass }),
        ...options.spec,
      },
    },
  });
  created.push({ kind: 'Service', namespace, name });
  return service;
}

/** Removes the Service's finalizers, deletes it and waits until it is gone; absent is fine. */
export async function deleteServiceForced(namespace: string, name: string): Promise<void> {
  const conn = testConnection();
  await ignoreNotFound(
    conn.core.patchNamespacedService(
      { namespace, name, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );
  await ignoreNotFound(conn.core.deleteNamespacedService({ namespace, name }));
  await waitUntil(
    `service ${namespace}/${name} deleted`,
    async () => (await ignoreNotFound(conn.core.readNamespacedService({ namespace, name }))) === undefined,
  );
}

// ---- small utilities ------------------------------------------------------------------------

/** The HTTP status of a client-node ApiException or a KubeApiError; undefined for other errors. */
export function statusOf(error: unknown): number | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const record = error as { code?: unknown; status?: unknown };
  if (typeof record.code === 'number') return record.code;
  if (typeof record.status === 'number') return record.status;
  return undefined;
}

/** The call's result, or undefined if it answered 404. */
export async function ignoreNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/** Polls `condition` every 100 ms until it holds; fails after `timeoutMs` naming `what`. */
export async function waitUntil(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
