// Which nodes back a Service's load balancer, and which server each one is.
// Eligibility follows the service controller's stable node set (docs/kubernetes-controllers.md):
// readiness is deliberately not a filter.
import type { V1Node } from '@kubernetes/client-node';
import type { Server } from '../cloudscale/types.js';
import { InternalError } from '../errors.js';
import { nodeMatcher } from '../nodes/match.js';
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
 * Maps every node to its server with the matcher init-nodes uses (src/core/nodes/match.ts): by
 * providerID (`cloudscale://<uuid>`, any case, with or without hyphens), else by exact and
 * unique server name. As in the Go CCM, one node that does not map fails the whole Service; all
 * such nodes are reported.
 */
export function mapNodesToServers(
  nodes: readonly V1Node[],
  servers: readonly Server[],
): NodeMappingResult {
  const match = nodeMatcher({ servers });
  const mapped: NodeServer[] = [];
  const problems: Problem[] = [];
  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    const providerID = node.spec?.providerID;
    const fail = (message: string, hint: string) =>
      problems.push({ kind: 'node-mapping', subject: `node ${name}`, message, hint });
    const matched = match({ name, providerID });
    switch (matched.kind) {
      case 'matched':
        mapped.push({ node: name, server: matched.server });
        break;
      case 'server-missing':
        fail(
          `node ${name} has providerID ${providerID}, but no server ${matched.uuid} exists`,
          'Delete the Node if its server is gone, or exclude it with the label node.kubernetes.io/exclude-from-external-load-balancers=true.',
        );
        break;
      case 'foreign':
      case 'invalid':
        fail(
          `node ${name} has providerID ${JSON.stringify(providerID)}, which is not a cloudscale server (cloudscale://<uuid>)`,
          'Exclude the node with the label node.kubernetes.io/exclude-from-external-load-balancers=true, or with the node-selector annotation.',
        );
        break;
      case 'no-match':
        fail(
          `node ${name} has no providerID and no server is named ${name}`,
          'Initialise the node (cloudscale-ccm init-nodes) or give its server the node\'s name.',
        );
        break;
      case 'ambiguous':
        fail(
          `node ${name} has no providerID and ${matched.servers.length} servers are named ${name} (${matched.servers.map((s) => s.uuid).join(', ')})`,
          `Set spec.providerID of the node to cloudscale://<uuid of its server>, or rename the other servers.`,
        );
        break;
      case 'error':
        // Only a lookup or a missing server list is an error; this cloud has the list and no lookups.
        throw new InternalError(`matching node ${name} against a server list failed: ${matched.text} (this would indicate a programming error)`);
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, mapped };
}
