// Node reads and writes on the Kubernetes API. Every write is guarded by the resourceVersion
// it was computed from, so a concurrent writer (kubelet, another controller) makes it fail
// with 409 instead of being overwritten; the caller re-reads and re-plans.
import { PatchStrategy, setHeaderOptions, type V1Node, type V1Taint } from '@kubernetes/client-node';
import { KubeApiError } from '../errors.js';
import type { NodeAddress, NodeReadiness, NodeSnapshot, NodeWrite, Taint } from '../nodes/types.js';
import type { NodeApi } from '../nodes/types.js';
import { taintsAfter } from '../nodes/plan.js';
import { kubeCall, kubeWrite, type KubeConnection } from './connection.js';

/** Shown in managedFields, so `kubectl get node -o yaml --show-managed-fields` names us. */
export const FIELD_MANAGER = 'cloudscale-ccm';

const LIST_PAGE_SIZE = 500;

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Every Node (or those matching `labelSelector`), read page by page. */
export async function listNodes(
  conn: KubeConnection,
  options: { labelSelector?: string } = {},
): Promise<NodeSnapshot[]> {
  return (await listNodeObjects(conn, options)).map(toNodeSnapshot);
}

/** Every Node as the API returns it (or those matching `labelSelector`), read page by page. */
export async function listNodeObjects(
  conn: KubeConnection,
  options: { labelSelector?: string } = {},
): Promise<V1Node[]> {
  const nodes: V1Node[] = [];
  let continueToken: string | undefined;
  do {
    const page = await kubeCall('list nodes', () =>
      conn.core.listNode({
        limit: LIST_PAGE_SIZE,
        ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
        ...(continueToken === undefined ? {} : { _continue: continueToken }),
      }),
    );
    nodes.push(...page.items);
    continueToken = page.metadata?._continue || undefined;
  } while (continueToken !== undefined);
  return nodes;
}

/** The Node, or undefined if it does not exist. */
export async function getNode(conn: KubeConnection, name: string): Promise<NodeSnapshot | undefined> {
  try {
    return toNodeSnapshot(await kubeCall(`read node ${name}`, () => conn.core.readNode({ name })));
  } catch (error) {
    if (isKubeNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Writes the spec and metadata part of `write` (providerID, labels, taints) in one merge patch
 * guarded by `node.resourceVersion`. The taint list is rewritten from `node.taints`, keeping
 * every other taint as it was read. Throws KubeApiError (`isConflict` when the Node changed
 * since `node` was read). Returns the Node as written.
 */
export async function patchNode(
  conn: KubeConnection,
  node: NodeSnapshot,
  write: NodeWrite,
): Promise<NodeSnapshot> {
  const spec: Record<string, unknown> = {};
  if (write.providerID !== undefined) spec.providerID = write.providerID;
  if (write.removeTaints !== undefined || write.addTaints !== undefined) {
    spec.taints = taintsAfter(node.taints, write).map(toWireTaint);
  }
  const body = {
    metadata: {
      resourceVersion: node.resourceVersion,
      ...(write.labels === undefined ? {} : { labels: write.labels }),
    },
    ...(Object.keys(spec).length === 0 ? {} : { spec }),
  };
  const written = await kubeWrite(conn, `patch node ${node.name}`, () =>
    conn.core.patchNode({ name: node.name, body, fieldManager: FIELD_MANAGER }, mergePatch()),
  );
  return toNodeSnapshot(written);
}

/**
 * Replaces `status.addresses` as a whole (a merge patch replaces lists) through the status
 * subresource, guarded by `node.resourceVersion`. Returns the Node as written.
 */
export async function patchNodeStatusAddresses(
  conn: KubeConnection,
  node: NodeSnapshot,
  addresses: readonly NodeAddress[],
): Promise<NodeSnapshot> {
  const body = {
    metadata: { resourceVersion: node.resourceVersion },
    status: { addresses: addresses.map(({ type, address }) => ({ type, address })) },
  };
  const written = await kubeWrite(conn, `patch status of node ${node.name}`, () =>
    conn.core.patchNodeStatus(
      { name: node.name, body, fieldManager: FIELD_MANAGER },
      mergePatch(),
    ),
  );
  return toNodeSnapshot(written);
}

/**
 * Deletes the Node only if it is still the object that was planned (same uid and
 * resourceVersion); otherwise KubeApiError with `isConflict`. A Node already gone is not an
 * error: resolves to false.
 */
export async function deleteNode(
  conn: KubeConnection,
  name: string,
  preconditions: { uid: string; resourceVersion: string },
): Promise<boolean> {
  try {
    await kubeWrite(conn, `delete node ${name}`, () =>
      conn.core.deleteNode({ name, body: { preconditions } }),
    );
    return true;
  } catch (error) {
    if (isKubeNotFound(error)) return false;
    throw error;
  }
}

export function toNodeSnapshot(node: V1Node): NodeSnapshot {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    name: node.metadata?.name ?? '',
    uid: node.metadata?.uid ?? '',
    resourceVersion: node.metadata?.resourceVersion ?? '',
    providerID: node.spec?.providerID ?? '',
    labels: { ...node.metadata?.labels },
    annotations: { ...node.metadata?.annotations },
    taints: (node.spec?.taints ?? []).map(fromWireTaint),
    addresses: (node.status?.addresses ?? []).map(({ type, address }) => ({ type, address })),
    readiness: readinessOf(ready?.status),
    deleting: node.metadata?.deletionTimestamp !== undefined,
    ...(node.metadata?.creationTimestamp === undefined ? {} : { createdAt: new Date(node.metadata.creationTimestamp).toISOString() }),
  };
}

function readinessOf(status: string | undefined): NodeReadiness {
  return status === 'True' || status === 'False' || status === 'Unknown' ? status : 'missing';
}

function fromWireTaint(taint: V1Taint): Taint {
  return {
    key: taint.key,
    effect: taint.effect,
    ...(taint.value === undefined ? {} : { value: taint.value }),
    ...(taint.timeAdded === undefined ? {} : { timeAdded: toRfc3339(taint.timeAdded) }),
  };
}

/** Plain JSON for the patch body; timeAdded is written back as it was read. */
function toWireTaint(taint: Taint): Record<string, string> {
  return {
    key: taint.key,
    effect: taint.effect,
    ...(taint.value === undefined ? {} : { value: taint.value }),
    ...(taint.timeAdded === undefined ? {} : { timeAdded: taint.timeAdded }),
  };
}

/** Seconds precision, as metav1.Time stores it. */
function toRfc3339(time: Date | string): string {
  const date = typeof time === 'string' ? new Date(time) : time;
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function isKubeNotFound(error: unknown): boolean {
  return error instanceof KubeApiError && error.isNotFound;
}

/** The operations the node executor (src/core/apply/node-writes.ts) needs, on this connection. */
export function kubeNodeApi(conn: KubeConnection): NodeApi {
  return {
    get: (name) => getNode(conn, name),
    patchNode: (node, write) => patchNode(conn, node, write),
    patchAddresses: (node, addresses) => patchNodeStatusAddresses(conn, node, addresses),
    delete: (name, preconditions) => deleteNode(conn, name, preconditions),
  };
}
