// `cloudscale-ccm init-nodes [NODE…]`: one pass of node initialisation, metadata refresh and
// node lifecycle. Reads the Nodes and one server list, plans (src/core/nodes), applies per
// node, reports a line (or a JSON document) per node, and fails the pass if any node did.
import { stringify as toYaml } from 'yaml';
import type { CloudscaleClient } from '../core/cloudscale/client.js';
import type { Server } from '../core/cloudscale/types.js';
import {
  CloudscaleApiError,
  PartialFailureError,
  RefusedError,
  UsageError,
  errorMessage,
} from '../core/errors.js';
import type { KubeConnection } from '../core/kube/connection.js';
import { recordEvent } from '../core/kube/events.js';
import { getNode, kubeNodeApi, listNodes } from '../core/kube/nodes.js';
import {
  applyNodeActions,
  writingActions,
  type ApplyNodeOptions,
  type NodeApplyOutcome,
} from '../core/nodes/apply.js';
import type { CloudView, ServerLookup } from '../core/nodes/match.js';
import { planNodes, type NodePlan } from '../core/nodes/plan.js';
import { formatProviderId, parseProviderId } from '../core/nodes/provider-id.js';
import type {
  NodeAction,
  NodeActionKind,
  NodeProblem,
  NodeSnapshot,
} from '../core/nodes/types.js';
import { parseLabelSelector } from '../core/lb/selector.js';
import { resultDocument } from '../core/render/document.js';
import type { CommandContext } from './context.js';

export interface InitNodesOptions {
  dryRun: boolean;
  /** --max-node-deletions; default: max(1, 10% of the nodes with a cloudscale providerID). */
  maxNodeDeletions?: number;
  /**
   * -l/--selector: only nodes with these labels (kubectl syntax), when no node is named. The
   * deletion bound's share is then taken of the selected nodes.
   */
  selector?: string;
  /** Test seam, see ApplyNodeOptions.beforeWrite; the CLI never sets it. */
  beforeNodeWrite?: ApplyNodeOptions['beforeWrite'];
}

/** What one pass read and decided; `plan` renders it without applying anything. */
export interface NodePass {
  plan: NodePlan;
  nodes: NodeSnapshot[];
  cloud: CloudView;
  /** Named on the command line but not in the cluster. */
  missingNodes: string[];
  /** What the pass asked the cloudscale API (reads only): nothing, one list, one GET, or both. */
  cloudRequests: 'none' | 'list' | 'lookup' | 'lookup+list';
}

export type NodeOutcome =
  | 'initialized'
  | 'refreshed'
  | 'tainted'
  | 'untainted'
  | 'deleted'
  | 'in-sync'
  | 'unmanaged'
  | 'deleting'
  | 'skipped'
  | 'refused'
  | 'failed'
  | 'vanished'
  | 'not-found';

export interface NodeResult {
  node: string;
  object: `node/${string}`;
  outcome: NodeOutcome;
  /** The line printed after `node/<name> `. */
  text: string;
  /** As planned with --dry-run, as carried out otherwise. */
  actions: NodeAction[];
  error?: { message: string; hint?: string };
}

export interface InitNodesResult {
  dryRun: boolean;
  nodes: NodeResult[];
  deletions: NodePlan['deletions'];
  failures: number;
}

/** Version of the `-o json` document; bump on incompatible changes. */
export const INIT_NODES_JSON_VERSION = 1;

export async function initNodesCommand(
  nodeNames: string[],
  options: InitNodesOptions,
  ctx: CommandContext,
): Promise<InitNodesResult> {
  if (
    options.maxNodeDeletions !== undefined &&
    (!Number.isInteger(options.maxNodeDeletions) || options.maxNodeDeletions < 0)
  ) {
    throw new UsageError(`--max-node-deletions takes a whole number ≥ 0, got ${options.maxNodeDeletions}`);
  }
  if (options.selector !== undefined && nodeNames.length > 0) {
    throw new UsageError('name nodes or give --selector, not both');
  }
  if (options.selector !== undefined) {
    try {
      parseLabelSelector(options.selector);
    } catch (error) {
      throw new UsageError(`--selector "${options.selector}": ${errorMessage(error)}`, {
        hint: 'use the kubectl label-selector syntax, e.g. -l node-role.kubernetes.io/worker or -l zone=rma1,env!=test',
      });
    }
  }
  const kube = ctx.kube();
  const cloudscale = await ctx.cloudscale();
  const pass = await planNodePass(
    nodeNames,
    {
      ...(options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions }),
      ...(options.selector === undefined ? {} : { selector: options.selector }),
    },
    { kube, cloudscale },
  );

  const results: NodeResult[] = pass.missingNodes.map((name) => ({
    node: name,
    object: `node/${name}`,
    outcome: 'not-found',
    text: 'not found in the cluster',
    actions: [],
    error: { message: `node ${name} does not exist`, hint: 'check the name with kubectl get nodes' },
  }));
  const failures: { object: string; error: Error }[] = pass.missingNodes.map((name) => ({
    object: `node/${name}`,
    error: new UsageError(`node ${name} does not exist`),
  }));

  const api = kubeNodeApi(kube);
  for (const node of pass.nodes) {
    if (ctx.signal.aborted) break;
    const actions = pass.plan.actions.filter((a) => a.node === node.name);
    const untouched = pass.plan.untouched.find((u) => u.node === node.name);
    if (actions.length === 0) {
      results.push({
        node: node.name,
        object: `node/${node.name}`,
        outcome: untouched?.why ?? 'in-sync',
        text: untouched?.why === 'in-sync' ? 'in sync' : (untouched?.text ?? 'in sync'),
        actions: [],
      });
      continue;
    }
    const { result, error } = options.dryRun
      ? failureOf(summarise(node, actions, true))
      : await applyOne(api, kube, node, actions, pass.cloud, options.beforeNodeWrite, ctx);
    results.push(result);
    if (error !== undefined) failures.push({ object: result.object, error });
  }

  const result: InitNodesResult = {
    dryRun: options.dryRun,
    nodes: results,
    deletions: pass.plan.deletions,
    failures: failures.length,
  };
  print(result, ctx);
  if (ctx.signal.aborted) {
    throw new PartialFailureError('init-nodes interrupted: nodes after the last line were not processed', failures, result);
  }
  if (failures.length > 0) {
    const refusal = pass.plan.deletions.refusal === null ? '' : ` (${pass.plan.deletions.refusal})`;
    throw new PartialFailureError(
      `init-nodes: ${failures.length} of ${results.length} node(s) left unchanged or failed${refusal}`,
      failures,
      result,
    );
  }
  return result;
}

/**
 * Reads the cluster and the cloud and plans, writing nothing. Cloud cost: one server list,
 * whatever the number of nodes; for a single named node with a cloudscale providerID one GET of
 * its server instead (plus the list, if the server turned out to be gone: deletions are only
 * decided on a full list). Named nodes with foreign providerIDs cost nothing.
 */
export async function planNodePass(
  nodeNames: readonly string[],
  options: { maxNodeDeletions?: number; selector?: string },
  deps: { kube: KubeConnection; cloudscale: CloudscaleClient },
): Promise<NodePass> {
  const missingNodes: string[] = [];
  let nodes: NodeSnapshot[];
  if (nodeNames.length === 0) {
    nodes = await listNodes(
      deps.kube,
      options.selector === undefined ? {} : { labelSelector: options.selector },
    );
  } else {
    nodes = [];
    for (const name of new Set(nodeNames)) {
      const node = await getNode(deps.kube, name);
      if (node === undefined) missingNodes.push(name);
      else nodes.push(node);
    }
  }

  const uuids = nodes.flatMap((n) => {
    const id = parseProviderId(n.providerID);
    return id.kind === 'cloudscale' ? [id.uuid] : [];
  });
  const everyNodeHasUuid = nodes.every((n) => parseProviderId(n.providerID).kind !== 'empty');
  let cloud: CloudView;
  let cloudRequests: NodePass['cloudRequests'];
  // One GET is cheaper than a list only for a single server; a deletion still needs the list.
  if (nodeNames.length > 0 && everyNodeHasUuid && new Set(uuids).size <= 1) {
    const lookups = await lookupServers(deps.cloudscale, uuids);
    const anyGone = [...lookups.values()].some((l) => l.state === 'not-found');
    if (anyGone) {
      cloud = { servers: await deps.cloudscale.servers.list() };
      cloudRequests = 'lookup+list';
    } else {
      cloud = { lookups };
      cloudRequests = lookups.size === 0 ? 'none' : 'lookup';
    }
  } else {
    cloud = { servers: await deps.cloudscale.servers.list() };
    cloudRequests = 'list';
  }

  const plan = planNodes({
    nodes,
    ...(cloud.servers === undefined ? {} : { servers: cloud.servers }),
    ...(cloud.lookups === undefined ? {} : { serverLookups: cloud.lookups }),
    options:
      options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions },
  });
  return { plan, nodes, cloud, missingNodes, cloudRequests };
}

async function lookupServers(
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
        continue;
      }
      if (error instanceof CloudscaleApiError) {
        lookups.set(uuid, { state: 'error', message: error.message });
        continue;
      }
      throw error;
    }
    lookups.set(uuid, { state: 'found', server });
  }
  return lookups;
}

async function applyOne(
  api: ReturnType<typeof kubeNodeApi>,
  kube: KubeConnection,
  node: NodeSnapshot,
  planned: NodeAction[],
  cloud: CloudView,
  beforeWrite: ApplyNodeOptions['beforeWrite'],
  ctx: CommandContext,
): Promise<{ result: NodeResult; error?: Error }> {
  const refusals = planned.filter((a) => a.verb === 'refuse');
  // The lifecycle controller announces a deletion before it deletes.
  const deletion = planned.find((a) => a.kind === 'delete-node' && a.verb === 'delete');
  if (deletion !== undefined) {
    await emit(kube, node, 'Normal', 'DeletingNode', `Deleting node ${node.name} because it does not exist in the cloud provider (${deletion.reason.text})`, ctx);
  }
  const outcome: NodeApplyOutcome = await applyNodeActions(api, node, planned, {
    cloud,
    ...(beforeWrite === undefined ? {} : { beforeWrite }),
  });

  for (const refusal of refusals) {
    await emit(kube, node, 'Warning', eventReasonFor(refusal), refusal.reason.text, ctx);
  }
  if (outcome.error !== undefined) {
    const failedKind = writingActions(planned)[0]?.kind;
    const reason = failedKind === 'delete-node' ? 'DeletingNodeFailed' : 'NodeSyncFailed';
    const message = `${describeKind(failedKind)} failed: ${outcome.error.message}`;
    await emit(kube, node, 'Warning', reason, `${message}; the node is unchanged where the write did not happen`, ctx);
    return {
      result: {
        node: node.name,
        object: `node/${node.name}`,
        outcome: 'failed',
        text: `failed: ${message}`,
        actions: outcome.applied,
        error: { message, ...hintOf(outcome.error) },
      },
      error: outcome.error,
    };
  }
  const initialized = outcome.applied.find((a) => a.kind === 'initialize');
  if (initialized !== undefined && initialized.kind === 'initialize') {
    await emit(kube, node, 'Normal', 'Synced', `Node synced successfully with server ${initialized.server.name} (${initialized.server.uuid})`, ctx);
  }
  if (outcome.vanished) {
    const deleted = outcome.applied.some((a) => a.kind === 'delete-node');
    return failureOf({
      node: node.name,
      object: `node/${node.name}`,
      outcome: deleted ? 'deleted' : 'vanished',
      text: deleted
        ? 'deleted (by someone else meanwhile)'
        : 'the Node disappeared during the pass: nothing left to do',
      actions: outcome.applied,
    });
  }
  return failureOf(summarise(node, [...outcome.applied, ...refusals], false));
}

/** A refused or skipped node's error for PartialFailureError; the line already explains it. */
function failureOf(result: NodeResult): { result: NodeResult; error?: Error } {
  if (result.error === undefined) return { result };
  const hint = result.error.hint;
  return { result, error: new RefusedError(result.error.message, hint === undefined ? {} : { hint }) };
}

/** One line for a node's actions, e.g. `initialized: providerID …, zone rma1, 4 addresses`. */
function summarise(node: NodeSnapshot, actions: NodeAction[], dryRun: boolean): NodeResult {
  const refusal = actions.find((a) => a.verb === 'refuse');
  const parts = actions.map((a) => describeAction(a, dryRun));
  const first = actions[0];
  const base = { node: node.name, object: `node/${node.name}` as const, actions };
  if (first === undefined) return { ...base, outcome: 'in-sync', text: 'in sync' };
  if (parts.length === 0) return { ...base, outcome: 'in-sync', text: 'nothing left to do' };
  const text = parts.join('; ');
  if (refusal !== undefined) {
    const problem = 'problem' in refusal ? refusal.problem : undefined;
    return {
      ...base,
      outcome: refusal.kind === 'skip' ? 'skipped' : 'refused',
      text,
      error: { message: refusal.reason.text, ...(problem === undefined ? {} : { hint: problemHints[problem] }) },
    };
  }
  return { ...base, outcome: outcomeOf[first.kind], text };
}

const outcomeOf: { [K in NodeActionKind]: NodeOutcome } = {
  initialize: 'initialized',
  refresh: 'refreshed',
  'add-shutdown-taint': 'tainted',
  'remove-shutdown-taint': 'untainted',
  'delete-node': 'deleted',
  skip: 'skipped',
};

const pastTense: { [K in NodeActionKind]: [done: string, planned: string] } = {
  initialize: ['initialized', 'would be initialized'],
  refresh: ['refreshed', 'would be refreshed'],
  'add-shutdown-taint': ['shutdown taint added', 'shutdown taint would be added'],
  'remove-shutdown-taint': ['shutdown taint removed', 'shutdown taint would be removed'],
  'delete-node': ['deleted', 'would be deleted'],
  skip: ['skipped', 'skipped'],
};

function describeKind(kind: NodeActionKind | undefined): string {
  return kind === undefined ? 'update' : kind.replaceAll('-', ' ');
}

function describeAction(action: NodeAction, dryRun: boolean): string {
  const [done, planned] = pastTense[action.kind];
  const verb = dryRun ? planned : done;
  switch (action.kind) {
    case 'initialize': {
      const addresses = action.write.addresses;
      const addressText =
        addresses === undefined ? 'addresses unchanged' : `${addresses.length} addresses`;
      return `${verb}: providerID ${formatProviderId(action.server.uuid)}, zone ${action.server.zone}, ${addressText}`;
    }
    case 'refresh':
      return `${verb}: ${action.changes.map(describeChange).join(', ')}`;
    case 'add-shutdown-taint':
    case 'remove-shutdown-taint':
      return `${verb}: ${action.reason.text}`;
    case 'delete-node':
      return action.verb === 'refuse'
        ? `deletion refused: ${action.reason.text}`
        : `${verb}: ${action.reason.text}`;
    case 'skip':
      return `skipped: ${action.reason.text}`;
  }
}

function describeChange(change: { field: string; from: string | null; to: string | null }): string {
  if (change.field === 'status.addresses') {
    return `addresses ${change.to ?? '(none)'}`;
  }
  const label = /^metadata\.labels\[(.*)\]$/.exec(change.field)?.[1];
  const name = label ?? change.field;
  return `${name} ${change.from ?? '(none)'} → ${change.to ?? '(none)'}`;
}

const problemHints: { [K in NodeProblem]: string } = {
  'no-match':
    'name the server exactly like the node, or start kubelet with --provider-id=cloudscale://<server uuid>',
  ambiguous:
    'start kubelet with --provider-id=cloudscale://<server uuid> to pick the server, or rename the duplicate',
  'foreign-provider-id': 'this node belongs to another cloud provider; remove it from the pass by naming the nodes to handle',
  'invalid-provider-id':
    'spec.providerID cannot be changed: re-register the node with kubelet --provider-id=cloudscale://<server uuid>',
  'api-error': 'the next pass retries; check the cloudscale API status if it persists',
  'server-missing':
    'check that the API token is for the project of this cluster; if the server is really gone, drain and delete the node',
  'provided-node-ip':
    "kubelet's --node-ip must be one of the server's addresses (see the server's interfaces)",
  'deletion-bound':
    'check that the servers are really gone, then run once with a higher --max-node-deletions',
  'wrong-project': 'check CLOUDSCALE_API_TOKEN / the kube-system/cloudscale Secret: it must be for this project',
  'unconfirmed-deletion': 'run init-nodes without node names so a full server list confirms the deletion',
};

const eventReasons: { [K in NodeProblem]: string } = {
  'no-match': 'ServerNotFound',
  ambiguous: 'AmbiguousServerName',
  'foreign-provider-id': 'ForeignProviderID',
  'invalid-provider-id': 'InvalidProviderID',
  'api-error': 'CloudscaleAPIError',
  'server-missing': 'ServerNotFound',
  'provided-node-ip': 'ProvidedNodeIPMismatch',
  'deletion-bound': 'DeletingNodeRefused',
  'wrong-project': 'DeletingNodeRefused',
  'unconfirmed-deletion': 'DeletingNodeRefused',
};

function eventReasonFor(action: NodeAction): string {
  const problem = 'problem' in action ? action.problem : undefined;
  return problem === undefined ? 'NodeSyncFailed' : eventReasons[problem];
}

function hintOf(error: Error): { hint?: string } {
  const hint = (error as { hint?: unknown }).hint;
  return typeof hint === 'string' ? { hint } : {};
}

/**
 * Records an event on the Node. A failure to record is reported on stderr and does not change
 * the node's outcome: the event is a courtesy, the output line is the record.
 */
async function emit(
  kube: KubeConnection,
  node: NodeSnapshot,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  ctx: CommandContext,
): Promise<void> {
  const { error } = await recordEvent(
    kube,
    { kind: 'Node', apiVersion: 'v1', name: node.name },
    { type, reason, message },
  );
  if (error !== undefined) {
    ctx.stderr.write(`warning: could not record event ${reason} on node/${node.name}: ${error.message}\n`);
  }
}

function print(result: InitNodesResult, ctx: CommandContext): void {
  switch (ctx.globals.output) {
    case 'json':
      ctx.stdout.write(`${JSON.stringify(jsonDocument(result), null, 2)}\n`);
      return;
    case 'yaml':
      ctx.stdout.write(toYaml(jsonDocument(result)));
      return;
    case 'text':
      for (const node of result.nodes) ctx.stdout.write(`${node.object} ${node.text}\n`);
      if (result.deletions.refusal !== null) {
        ctx.stdout.write(`node deletions refused: ${result.deletions.refusal}\n`);
      }
      return;
  }
}

function jsonDocument(result: InitNodesResult): object {
  return resultDocument('InitNodesResult', INIT_NODES_JSON_VERSION, result);
}
