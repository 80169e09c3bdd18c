// Which nodes back a Service's load balancer, and which server each one is.
// Eligibility follows the service controller's stable node set (docs/kubernetes-controllers.md):
// readiness is deliberately not a filter.
import type { V1Node } from '@kubernetes/client-node';
import type { Server } from '../cloudscale/types.js';
import { parseProviderId } from '../nodes/provider-id.js';
import type { Problem } from './problems.js';
import { selectorMatches, type LabelSelector } from './selector.js';

export const EXCLUDE_FROM_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';

export type NodeExclusion = 'deleting' | 'exclude-label' | 'autoscaler-taint';

/** Go's strconv.ParseBool, which the service controller applies to the exclusion label. */
function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/**
 * Why a node may not back any load balancer, or `null` when it may. The exclusion label
 * excludes unless its value parses as false (an empty or unparsable value excludes).
 */
export function lbNodeExclusion(node: V1Node): NodeExclusion | null {
  if (node.metadata?.deletionTimestamp != null) return 'deleting';
  const label = node.metadata?.labels?.[EXCLUDE_FROM_LB_LABEL];
  if (label !== undefined && parseGoBool(label) !== false) return 'exclude-label';
  if (node.spec?.taints?.some((t) => t.key === TO_BE_DELETED_TAINT)) return 'autoscaler-taint';
  return null;
}

export interface NodeSelection {
  /** Nodes passing the stable predicates, in input order. */
  readonly eligible: readonly V1Node[];
  /** Eligible nodes that also match the Service's node selector (all of them without one). */
  readonly selected: readonly V1Node[];
}

export function selectLbNodes(
  nodes: readonly V1Node[],
  selector: LabelSelector | null,
): NodeSelection {
  const eligible = nodes.filter((node) => lbNodeExclusion(node) === null);
  const selected =
    selector === null
      ? eligible
      : eligible.filter((node) => selectorMatches(selector, node.metadata?.labels));
  return { eligible, selected };
}

/** A selected node and its server. */
export interface NodeServer {
  readonly node: string;
  readonly server: Server;
}

export type NodeMappingResult =
  | { readonly ok: true; readonly mapped: readonly NodeServer[] }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/**
 * Maps every node to its server: by providerID (`cloudscale://<uuid>`, any case, with or
 * without hyphens), else by exact and unique server name. As in the Go CCM, one node that does
 * not map fails the whole Service; all such nodes are reported.
 */
/** Servers by lower-case UUID and by name: a pass maps hundreds of nodes for every Service. */
function serverIndex(servers: readonly Server[]): {
  readonly byUuid: ReadonlyMap<string, Server>;
  readonly byName: ReadonlyMap<string, readonly Server[]>;
} {
  const byUuid = new Map<string, Server>();
  const byName = new Map<string, Server[]>();
  for (const server of servers) {
    byUuid.set(server.uuid.toLowerCase(), server);
    const named = byName.get(server.name);
    if (named === undefined) byName.set(server.name, [server]);
    else named.push(server);
  }
  return { byUuid, byName };
}

export function mapNodesToServers(
  nodes: readonly V1Node[],
  servers: readonly Server[],
): NodeMappingResult {
  const index = serverIndex(servers);
  const mapped: NodeServer[] = [];
  const problems: Problem[] = [];
  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    const fail = (message: string, hint: string) =>
      problems.push({ kind: 'node-mapping', subject: `node ${name}`, message, hint });
    const providerId = parseProviderId(node.spec?.providerID);
    switch (providerId.kind) {
      case 'cloudscale': {
        const server = index.byUuid.get(providerId.uuid);
        if (server === undefined) {
          fail(
            `node ${name} has providerID ${node.spec?.providerID}, but no server ${providerId.uuid} exists`,
            'Delete the Node if its server is gone, or exclude it with the label node.kubernetes.io/exclude-from-external-load-balancers=true.',
          );
        } else {
          mapped.push({ node: name, server });
        }
        break;
      }
      case 'foreign':
      case 'invalid':
        fail(
          `node ${name} has providerID ${JSON.stringify(node.spec?.providerID)}, which is not a cloudscale server (cloudscale://<uuid>)`,
          'Exclude the node with the label node.kubernetes.io/exclude-from-external-load-balancers=true, or with the node-selector annotation.',
        );
        break;
      case 'empty': {
        const matches = index.byName.get(name) ?? [];
        if (matches.length === 1) {
          mapped.push({ node: name, server: matches[0]! });
        } else if (matches.length === 0) {
          fail(
            `node ${name} has no providerID and no server is named ${name}`,
            'Initialise the node (cloudscale-ccm init-nodes) or give its server the node\'s name.',
          );
        } else {
          fail(
            `node ${name} has no providerID and ${matches.length} servers are named ${name} (${matches.map((s) => s.uuid).join(', ')})`,
            `Set spec.providerID of the node to cloudscale://<uuid of its server>, or rename the other servers.`,
          );
        }
        break;
      }
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, mapped };
}
