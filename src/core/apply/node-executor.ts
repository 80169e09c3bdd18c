// The executor of a node plan: applies each node's actions (node-writes.ts), one node
// after the other, each isolated from the others' failures, and records the Events the generic
// node controllers record. It decides nothing: what `plan` printed is what runs here.
import { LeaseLostError, RefusedError, UsageError } from '../errors.js';
import type { KubeConnection } from '../kube/connection.js';
import { recordEvent } from '../kube/events.js';
import { kubeNodeApi } from '../kube/nodes.js';
import { applyNodeActions, type ApplyNodeOptions } from './node-writes.js';
import type { CloudView } from '../nodes/match.js';
import { writingActions, type NodePlan } from '../nodes/plan.js';
import type { NodeAction, NodeSnapshot } from '../nodes/types.js';
import {
  describeKind,
  eventReasonFor,
  notFoundResult,
  summarise,
  untouchedResult,
  type NodeResult,
} from './node-report.js';

export interface NodeFailure {
  object: string;
  error: Error;
}

export interface NodeExecution {
  /** One per node: missing named nodes first, then the nodes in the order they were read. */
  results: NodeResult[];
  failures: NodeFailure[];
  /** The signal stopped the pass: nodes after the last result were not processed. */
  interrupted: boolean;
}

export interface ExecuteNodesOptions {
  /** Report what would be done, write nothing (no Events either). */
  dryRun: boolean;
  signal?: AbortSignal;
  /** Test seam, see ApplyNodeOptions.beforeWrite; production code passes nothing. */
  beforeNodeWrite?: ApplyNodeOptions['beforeWrite'];
  /** An Event could not be recorded; the node's outcome does not change. */
  onEventError?: (error: Error, node: string, reason: string) => void;
}

/** Carries out `plan` on `nodes`; never throws for one node's failure, its result carries it. */
export async function executeNodePlan(
  pass: {
    readonly plan: NodePlan;
    readonly nodes: readonly NodeSnapshot[];
    readonly missingNodes: readonly string[];
    readonly cloud: CloudView;
  },
  kube: KubeConnection,
  options: ExecuteNodesOptions,
): Promise<NodeExecution> {
  const results = pass.missingNodes.map(notFoundResult);
  const failures: NodeFailure[] = pass.missingNodes.map((name) => ({
    object: `node/${name}`,
    error: new UsageError(`node ${name} does not exist`),
  }));
  const emit = eventRecorder(kube, options);
  for (const node of pass.nodes) {
    if (options.signal?.aborted) return { results, failures, interrupted: true };
    const actions = pass.plan.actions.filter((a) => a.node === node.name);
    if (actions.length === 0) {
      results.push(untouchedResult(node.name, pass.plan.untouched.find((u) => u.node === node.name)));
      continue;
    }
    const { result, error } = options.dryRun
      ? withFailure(summarise(node, actions, true))
      : await applyOne(node, actions, pass.cloud, kube, emit, options);
    results.push(result);
    if (error !== undefined) failures.push({ object: result.object, error });
  }
  return { results, failures, interrupted: false };
}

type Emit = (node: NodeSnapshot, type: 'Normal' | 'Warning', reason: string, message: string) => Promise<void>;

async function applyOne(
  node: NodeSnapshot,
  planned: NodeAction[],
  cloud: CloudView,
  kube: KubeConnection,
  emit: Emit,
  options: ExecuteNodesOptions,
): Promise<{ result: NodeResult; error?: Error }> {
  const refusals = planned.filter((a) => a.verb === 'refuse');
  // The lifecycle controller announces a deletion before it deletes.
  const deletion = planned.find((a) => a.kind === 'delete-node' && a.verb === 'delete');
  if (deletion !== undefined) {
    await emit(node, 'Normal', 'DeletingNode', `Deleting node ${node.name} because it does not exist in the cloud provider (${deletion.reason.text})`);
  }
  const outcome = await applyNodeActions(kubeNodeApi(kube), node, planned, {
    cloud,
    ...(options.beforeNodeWrite === undefined ? {} : { beforeWrite: options.beforeNodeWrite }),
  });
  const writtenAt = Date.now();

  for (const refusal of refusals) {
    await emit(node, 'Warning', eventReasonFor(refusal), refusal.reason.text);
  }
  if (outcome.error !== undefined) {
    const failedKind = writingActions(planned)[0]?.kind;
    const reason = failedKind === 'delete-node' ? 'DeletingNodeFailed' : 'NodeSyncFailed';
    const message = `${describeKind(failedKind)} failed: ${outcome.error.message}`;
    await emit(node, 'Warning', reason, `${message}; the node is unchanged where the write did not happen`);
    return {
      result: {
        node: node.name,
        object: `node/${node.name}`,
        outcome: 'failed',
        actions: outcome.applied,
        error: { message, ...hintOf(outcome.error) },
      },
      error: outcome.error,
    };
  }
  const initialized = outcome.applied.find((a) => a.kind === 'initialize');
  if (initialized !== undefined && initialized.kind === 'initialize') {
    await emit(node, 'Normal', 'Synced', `Node synced successfully with server ${initialized.server.name} (${initialized.server.uuid})`);
  }
  if (outcome.vanished) {
    const deleted = outcome.applied.some((a) => a.kind === 'delete-node');
    return withFailure({
      node: node.name,
      object: `node/${node.name}`,
      outcome: deleted ? 'deleted' : 'vanished',
      actions: outcome.applied,
      vanished: true,
    });
  }
  const result = summarise(node, [...outcome.applied, ...refusals], false);
  const created = node.createdAt === undefined ? NaN : Date.parse(node.createdAt);
  if (initialized !== undefined && Number.isFinite(created)) result.taintRemovalDelayMs = Math.max(0, writtenAt - created);
  return withFailure(result);
}

/** A refused or skipped node's error for the pass's failures; its line already explains it. */
function withFailure(result: NodeResult): { result: NodeResult; error?: Error } {
  if (result.error === undefined) return { result };
  const hint = result.error.hint;
  return { result, error: new RefusedError(result.error.message, hint === undefined ? {} : { hint }) };
}

function hintOf(error: Error): { hint?: string } {
  const hint = (error as { hint?: unknown }).hint;
  return typeof hint === 'string' ? { hint } : {};
}

/**
 * Records Events on Nodes. A failure to record goes to `onEventError` and does not change the
 * node's outcome: the Event is a courtesy, the result line is the record.
 */
function eventRecorder(kube: KubeConnection, options: ExecuteNodesOptions): Emit {
  return async (node, type, reason, message) => {
    const { error } = await recordEvent(
      kube,
      { kind: 'Node', apiVersion: 'v1', name: node.name },
      { type, reason, message },
    );
    // A Lease lost is reported once, by the pass whose signal it aborted, not per Event.
    if (error !== undefined && !(error instanceof LeaseLostError)) options.onEventError?.(error, node.name, reason);
  };
}
