// One node pass: read the Nodes and their servers (node-snapshot.ts), plan (src/core/nodes,
// pure), confirm every planned deletion by a GET of its server, and, unless it is a dry run,
// execute (node-executor.ts). `plan` stops after planNodePass, so it shows what init-nodes does.
import type { CloudscaleClient } from '../cloudscale/client.js';
import type { KubeConnection } from '../kube/connection.js';
import type { CloudView } from '../nodes/match.js';
import { planNodes, type NodePlan, type NodePlanOptions } from '../nodes/plan.js';
import { parseProviderId } from '../nodes/provider-id.js';
import type { NodeSnapshot } from '../nodes/types.js';
import { executeNodePlan, type ExecuteNodesOptions, type NodeFailure } from './node-executor.js';
import type { NodeResult } from './node-report.js';
import { lookupServers, readNodePassSnapshot, type NodeSelection } from './node-snapshot.js';

export type { NodeOutcome, NodeResult } from './node-report.js';
export type { NodeFailure } from './node-executor.js';

/** What one pass read and decided; `plan` renders it without applying anything. */
export interface NodePass {
  plan: NodePlan;
  nodes: readonly NodeSnapshot[];
  cloud: CloudView;
  /** Named on the command line but not in the cluster. */
  missingNodes: readonly string[];
  /** Said once per pass, not failures: deletion turned off, a server the list left out. */
  warnings: string[];
}

export interface NodePassOptions extends NodePlanOptions {
  /** Only nodes with these labels (kubectl syntax), when no node is named. */
  selector?: string;
}

/**
 * Reads the cluster and the cloud and plans, writing nothing. A NotReady Node whose server is
 * absent from the list is deleted only after `GET /v1/servers/{uuid}` answered 404: the plan
 * asks that GET for each such server (within the deletion bound, so at most that many) and
 * plans again with the answers. 200 keeps the Node (the list left its server out); an error
 * answer or none keeps it too and reports the node.
 */
export async function planNodePass(
  nodeNames: readonly string[],
  options: NodePassOptions,
  deps: { kube: KubeConnection; cloudscale: CloudscaleClient },
): Promise<NodePass> {
  const selection: NodeSelection =
    nodeNames.length > 0 ? { names: nodeNames } : options.selector === undefined ? {} : { selector: options.selector };
  const { nodes, missingNodes, cloud: read } = await readNodePassSnapshot(selection, deps);
  const planOptions: NodePlanOptions =
    options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions };
  const planWith = (cloud: CloudView): NodePlan =>
    planNodes({
      nodes,
      ...(cloud.servers === undefined ? {} : { servers: cloud.servers }),
      ...(cloud.lookups === undefined ? {} : { serverLookups: cloud.lookups }),
      options: planOptions,
    });

  let cloud = read;
  let plan = planWith(cloud);
  const warnings: string[] = [];
  const unconfirmed = plan.deletions.awaitingConfirmation;
  if (unconfirmed.length > 0) {
    const answers = await lookupServers(deps.cloudscale, unconfirmed);
    cloud = { ...cloud, lookups: new Map([...(cloud.lookups ?? []), ...answers]) };
    plan = planWith(cloud);
    for (const [uuid, answer] of answers) {
      if (answer.state !== 'found') continue;
      const owners = nodes.filter((n) => serverUuidOf(n) === uuid).map((n) => `node/${n.name}`);
      warnings.push(
        `the server list left out server ${uuid} (${owners.join(', ')}), but GET /v1/servers/${uuid} ` +
          'finds it: the Node is kept',
      );
    }
  }
  if (plan.deletions.disabled !== null) warnings.push(plan.deletions.disabled);
  return { plan, nodes, cloud, missingNodes, warnings };
}

function serverUuidOf(node: NodeSnapshot): string | undefined {
  const id = parseProviderId(node.providerID);
  return id.kind === 'cloudscale' ? id.uuid : undefined;
}

export interface InitNodesResult {
  dryRun: boolean;
  nodes: NodeResult[];
  deletions: NodePlan['deletions'];
  /** Notes of the pass that are not failures (see NodePass.warnings). */
  warnings: string[];
  failures: number;
}

export interface InitNodesOutcome {
  result: InitNodesResult;
  failures: NodeFailure[];
  /** The signal stopped the pass: nodes after the last result were not processed. */
  interrupted: boolean;
}

/** One pass of `init-nodes`: planNodePass, then executeNodePlan (or its dry run). */
export async function initNodes(
  nodeNames: readonly string[],
  options: NodePassOptions & ExecuteNodesOptions,
  deps: { kube: KubeConnection; cloudscale: CloudscaleClient },
): Promise<InitNodesOutcome> {
  const pass = await planNodePass(nodeNames, options, deps);
  const { results, failures, interrupted } = await executeNodePlan(pass, deps.kube, options);
  return {
    result: {
      dryRun: options.dryRun,
      nodes: results,
      deletions: pass.plan.deletions,
      warnings: pass.warnings,
      failures: failures.length,
    },
    failures,
    interrupted,
  };
}
