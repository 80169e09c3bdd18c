// Reading the state one node pass plans from: the Nodes (all, selected by label, or named) and
// what the cloud says about their servers, in as few cloudscale requests as the pass allows.
import type { CloudscaleClient } from '../cloudscale/client.js';
import type { Server } from '../cloudscale/types.js';
import { CloudscaleApiError, CloudscaleUnavailableError } from '../errors.js';
import type { KubeConnection } from '../kube/connection.js';
import { getNode, listNodes } from '../kube/nodes.js';
import type { CloudView, ServerLookup } from '../nodes/match.js';
import { parseProviderId } from '../nodes/provider-id.js';
import type { NodeSnapshot } from '../nodes/types.js';

/** The Nodes a pass works on: named ones, or every one matching the label selector (if any). */
export type NodeSelection = { readonly names: readonly string[] } | { readonly selector?: string };

export interface NodePassSnapshot {
  readonly nodes: readonly NodeSnapshot[];
  /** Named in the selection but not in the cluster. */
  readonly missingNodes: readonly string[];
  readonly cloud: CloudView;
}

/**
 * Reads the Nodes, then the cloud: one server list, whatever the number of nodes; for a single
 * named node with a cloudscale providerID one GET of its server instead (plus the list if that
 * GET answered 404, for the wrong-project check). Named nodes with foreign providerIDs cost
 * nothing.
 */
export async function readNodePassSnapshot(
  selection: NodeSelection,
  deps: { readonly kube: KubeConnection; readonly cloudscale: CloudscaleClient },
): Promise<NodePassSnapshot> {
  const missingNodes: string[] = [];
  let nodes: NodeSnapshot[];
  if ('names' in selection && selection.names.length > 0) {
    nodes = [];
    for (const name of new Set(selection.names)) {
      const node = await getNode(deps.kube, name);
      if (node === undefined) missingNodes.push(name);
      else nodes.push(node);
    }
  } else {
    const selector = 'selector' in selection ? selection.selector : undefined;
    nodes = await listNodes(deps.kube, selector === undefined ? {} : { labelSelector: selector });
  }

  const uuids = nodes.flatMap((n) => {
    const id = parseProviderId(n.providerID);
    return id.kind === 'cloudscale' ? [id.uuid] : [];
  });
  const everyNodeHasUuid = nodes.every((n) => parseProviderId(n.providerID).kind !== 'empty');
  const named = 'names' in selection && selection.names.length > 0;
  // One GET is cheaper than a list only for a single server.
  if (!named || !everyNodeHasUuid || new Set(uuids).size > 1) {
    return { nodes, missingNodes, cloud: { servers: await deps.cloudscale.servers.list() } };
  }
  const lookups = await lookupServers(deps.cloudscale, uuids);
  const anyGone = [...lookups.values()].some((l) => l.state === 'not-found');
  const cloud: CloudView = anyGone ? { lookups, servers: await deps.cloudscale.servers.list() } : { lookups };
  return { nodes, missingNodes, cloud };
}

/**
 * `GET /v1/servers/{uuid}` for each UUID, one after the other. 404 is `not-found`; any other
 * error answer (5xx, 401, …) or no answer at all (timeout, after the client's retries) is `error`:
 * no evidence either way, so the node's line reports it and nothing is decided.
 */
export async function lookupServers(
  client: CloudscaleClient,
  uuids: readonly string[],
): Promise<Map<string, ServerLookup>> {
  const lookups = new Map<string, ServerLookup>();
  for (const uuid of new Set(uuids)) {
    let server: Server;
    try {
      server = await client.servers.get(uuid);
    } catch (error) {
      if (error instanceof CloudscaleApiError && error.isNotFound) {
        lookups.set(uuid, { state: 'not-found' });
      } else if (error instanceof CloudscaleApiError || error instanceof CloudscaleUnavailableError) {
        lookups.set(uuid, { state: 'error', message: error.message });
      } else {
        throw error;
      }
      continue;
    }
    lookups.set(uuid, { state: 'found', server });
  }
  return lookups;
}
