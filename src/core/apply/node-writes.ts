// Carries out the planned actions of one node, all or nothing, against a NodeApi (implemented
// on client-node by src/core/kube/nodes.ts), re-reading and re-planning the node after a
// conflict. Knows no HTTP: conflicts arrive as KubeApiError. The plan it re-makes is
// src/core/nodes' pure planNode.
import { KubeApiError } from '../errors.js';
import type { CloudView } from '../nodes/match.js';
import { mergeWrites, planNode, writingActions } from '../nodes/plan.js';
import type { NodeAction, NodeApi, NodeSnapshot } from '../nodes/types.js';

export interface ApplyNodeOptions {
  /** The cloud state of the pass, to re-plan the node after a conflict. */
  cloud: CloudView;
  /** Attempts including the first; each conflict costs one. Default 5. */
  maxAttempts?: number;
  /**
   * Runs after each read of the node, just before its writes. Tests use it to play a concurrent
   * writer (the kubelet) deterministically; production code passes nothing.
   */
  beforeWrite?: (node: NodeSnapshot, attempt: number) => Promise<void>;
}

export interface NodeApplyOutcome {
  node: string;
  /** What was carried out; after a conflict, what the re-plan on the fresh Node asked for. */
  applied: NodeAction[];
  attempts: number;
  /** The Node disappeared while the pass worked on it: nothing left to do. */
  vanished: boolean;
  /** Set when the node could not be brought to its planned state; nothing or part written. */
  error?: Error;
}

/**
 * Applies `actions` (all for `snapshot.name`) in this order: `status.addresses`, then one patch
 * of providerID, labels and taints, so the uninitialized taint goes only after everything else
 * was written; or the deletion alone. A 409 re-reads the node, re-plans it against the same
 * cloud state and tries again, at most `maxAttempts` times. A deletion found in a re-plan is
 * only carried out if the pass had approved one for this node (the guard rails stay in force).
 * Never throws for a Kubernetes error: the outcome carries it.
 */
export async function applyNodeActions(
  api: NodeApi,
  snapshot: NodeSnapshot,
  actions: readonly NodeAction[],
  options: ApplyNodeOptions,
): Promise<NodeApplyOutcome> {
  const maxAttempts = options.maxAttempts ?? 5;
  const deletionApproved = writingActions(actions).some((a) => a.kind === 'delete-node');
  let current = snapshot;
  let pending = writingActions(actions);
  for (let attempt = 1; ; attempt++) {
    const outcome = { node: snapshot.name, applied: pending, attempts: attempt, vanished: false };
    if (pending.length === 0) return outcome;
    try {
      await options.beforeWrite?.(current, attempt);
      const vanished = !(await writeOnce(api, current, pending));
      return { ...outcome, vanished };
    } catch (error) {
      if (!(error instanceof KubeApiError && error.isConflict) || attempt >= maxAttempts) {
        return { ...outcome, error: asError(error) };
      }
    }
    let fresh: NodeSnapshot | undefined;
    try {
      fresh = await api.get(snapshot.name);
    } catch (error) {
      return { node: snapshot.name, applied: [], attempts: attempt, vanished: false, error: asError(error) };
    }
    if (fresh === undefined || fresh.uid !== snapshot.uid) {
      return { node: snapshot.name, applied: [], attempts: attempt, vanished: true };
    }
    current = fresh;
    pending = writingActions(planNode(fresh, options.cloud).actions).filter(
      (a) => a.kind !== 'delete-node' || deletionApproved,
    );
  }
}

/** One attempt. Resolves false if the Node turned out to be gone already. */
async function writeOnce(
  api: NodeApi,
  node: NodeSnapshot,
  actions: readonly NodeAction[],
): Promise<boolean> {
  const deletion = actions.find((a) => a.kind === 'delete-node');
  if (deletion !== undefined) {
    return api.delete(node.name, { uid: node.uid, resourceVersion: node.resourceVersion });
  }
  const write = mergeWrites(actions.flatMap((a) => ('write' in a ? [a.write] : [])));
  let current = node;
  if (write.addresses !== undefined) current = await api.patchAddresses(current, write.addresses);
  const { addresses: _written, ...specWrite } = write;
  if (Object.keys(specWrite).length > 0) await api.patchNode(current, specWrite);
  return true;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
