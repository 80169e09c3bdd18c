// The node planner: a pure function of (nodes, what the cloud said) that returns typed actions.
// It replicates three generic pieces in one pass (docs/kubernetes-controllers.md): initialisation
// of tainted nodes, metadata refresh of initialised ones, and the node lifecycle (shutdown taint,
// deletion of Nodes whose server is gone), with guard rails against deleting many Nodes at once.
import type { Server } from '../cloudscale/types.js';
import { assertNever } from '../errors.js';
import { nodeMatcher, type CloudView, type NodeIdentity, type NodeMatch, type ServerLookup } from './match.js';
import {
  applyProvidedNodeIp,
  cloudAddresses,
  describeAddresses,
  desiredLabels,
  sameAddresses,
} from './metadata.js';
import { formatProviderId, parseProviderId } from './provider-id.js';
import type {
  DeleteNodeAction,
  NodeAction,
  NodeFieldChange,
  NodeProblem,
  NodeSnapshot,
  NodeWrite,
  ServerRef,
  SkipNodeAction,
  Taint,
} from './types.js';
import { counted } from '../text/wording.js';
import {
  PROVIDED_NODE_IP_ANNOTATION,
  SHUTDOWN_TAINT_EFFECT,
  SHUTDOWN_TAINT_KEY,
  UNINITIALIZED_TAINT_KEY,
} from './well-known.js';

export interface NodePlanOptions {
  /**
   * At most this many Nodes are deleted in one pass; if more would be, none is (a mass
   * disappearance means a wrong token or a broken list far more often than a real loss, and a
   * CronJob would otherwise empty the cluster a few nodes per minute). Default:
   * `defaultMaxNodeDeletions(nodes)`. 0 turns deletion off: the Nodes are kept and the plan
   * says so once (`deletions.disabled`), which is not a failure.
   */
  maxNodeDeletions?: number;
}

export interface PlanNodesInput {
  nodes: readonly NodeSnapshot[];
  /** One successful full server list; required for name matching and the wrong-project check. */
  servers?: readonly Server[];
  /**
   * Single GETs by canonical UUID: for passes over one named node, and to confirm deletions.
   * A Node is deleted only when the GET of its server answered 404.
   */
  serverLookups?: ReadonlyMap<string, ServerLookup>;
  options?: NodePlanOptions;
}

/** A node the pass leaves alone on purpose (not a failure). */
export interface UntouchedNode {
  node: string;
  /** `deletion-off`: its server seems gone and it is NotReady, but --max-node-deletions is 0. */
  why: 'in-sync' | 'unmanaged' | 'deleting' | 'deletion-off';
  text: string;
}

export interface NodePlan {
  /** Changes and refusals, grouped by node in input order; per node: metadata, taints, delete. */
  actions: NodeAction[];
  untouched: UntouchedNode[];
  deletions: {
    limit: number;
    /** NotReady Nodes whose server is absent from the list or answered 404. */
    candidates: number;
    /** Set when a guard rail refused every deletion of this pass; says why and what to do. */
    refusal: string | null;
    /**
     * Server UUIDs only absent from the list: their Nodes are deleted once `GET /v1/servers/{uuid}`
     * answers 404 (plan again with that answer in `serverLookups`); until then refused.
     */
    awaitingConfirmation: string[];
    /** With --max-node-deletions 0 and candidates: one sentence naming the Nodes kept. */
    disabled: string | null;
  };
}

export function defaultMaxNodeDeletions(nodes: readonly NodeSnapshot[]): number {
  const ours = nodes.filter((n) => parseProviderId(n.providerID).kind === 'cloudscale').length;
  return Math.max(1, Math.floor(ours / 10));
}

export function planNodes(input: PlanNodesInput): NodePlan {
  const cloud: CloudView = {
    ...(input.servers === undefined ? {} : { servers: input.servers }),
    ...(input.serverLookups === undefined ? {} : { lookups: input.serverLookups }),
  };
  const limit = input.options?.maxNodeDeletions ?? defaultMaxNodeDeletions(input.nodes);
  const match = nodeMatcher(cloud);
  let perNode = input.nodes.map((node) => planNode(node, cloud, match));
  const candidates = perNode.flatMap((p) => (p.deletion === undefined ? [] : [p.deletion]));

  const refusal = deletionRefusal(input, candidates.length, limit);
  const awaitingConfirmation: string[] = [];
  let disabled: string | null = null;
  if (refusal !== null) {
    for (const { action } of candidates) refuseDeletion(action, refusal.problem, refusal.text);
  } else if (limit === 0 && candidates.length > 0) {
    perNode = perNode.map((p) => (p.deletion === undefined ? p : keptWithDeletionOff(p.deletion.action)));
    disabled =
      `node deletion is off (--max-node-deletions 0): ${counted(candidates.length, 'NotReady node')} ` +
      `whose server seems gone ${candidates.length === 1 ? 'is' : 'are'} kept: ` +
      candidates.map((c) => c.action.object).join(', ');
  } else {
    for (const { action, confirmed } of candidates) {
      if (confirmed) continue;
      refuseDeletion(
        action,
        'unconfirmed-deletion',
        `absence from a list is no evidence; GET /v1/servers/${action.serverUuid} must answer 404 first`,
      );
      awaitingConfirmation.push(action.serverUuid);
    }
  }
  return {
    actions: perNode.flatMap((p) => p.actions),
    untouched: perNode.flatMap((p) => (p.untouched === undefined ? [] : [p.untouched])),
    deletions: { limit, candidates: candidates.length, refusal: refusal?.text ?? null, awaitingConfirmation, disabled },
  };
}

function keptWithDeletionOff(action: DeleteNodeAction): NodeDecision {
  return {
    actions: [],
    untouched: {
      node: action.node,
      why: 'deletion-off',
      text: `kept: ${action.reason.text}, but --max-node-deletions 0 turns node deletion off`,
    },
  };
}

function deletionRefusal(
  input: PlanNodesInput,
  candidates: number,
  limit: number,
): { problem: 'wrong-project' | 'deletion-bound'; text: string } | null {
  const ours = input.nodes.filter((n) => parseProviderId(n.providerID).kind === 'cloudscale');
  if (input.servers !== undefined && input.servers.length === 0 && ours.length > 0) {
    return {
      problem: 'wrong-project',
      text:
        `the cloudscale project lists no servers at all, but ${counted(ours.length, 'node')} ` +
        `${ours.length === 1 ? 'carries' : 'carry'} a cloudscale providerID: is the API token for ` +
        'the right project? No node is deleted',
    };
  }
  // 0 is not a bound but deletion turned off: planNodes keeps those Nodes without a failure.
  if (limit > 0 && candidates > limit) {
    return {
      problem: 'deletion-bound',
      text:
        `${counted(candidates, 'node')} would be deleted, more than --max-node-deletions ${limit}: none is ` +
        'deleted. Check that their servers are really gone, then raise the bound for one run',
    };
  }
  return null;
}

function refuseDeletion(
  action: DeleteNodeAction,
  problem: NonNullable<DeleteNodeAction['problem']>,
  why: string,
): void {
  action.verb = 'refuse';
  action.problem = problem;
  action.reason = { ...action.reason, text: `${action.reason.text}; refused: ${why}` };
}

export interface NodeDecision {
  actions: NodeAction[];
  untouched?: UntouchedNode;
  /** The deletion among `actions`, and whether a 404 to its server's GET confirmed it. */
  deletion?: { action: DeleteNodeAction; confirmed: boolean };
}

/**
 * The actions for one node, before the pass-wide deletion guards (the bound, the wrong-project
 * check, the confirmation by GET). Also used to re-plan a node after a conflict: a deletion it
 * returns is only carried out if the pass had approved one.
 */
export function planNode(
  node: NodeSnapshot,
  cloud: CloudView,
  matcher: (node: NodeIdentity) => NodeMatch = nodeMatcher(cloud),
): NodeDecision {
  if (node.deleting) {
    return untouched(node, 'deleting', 'being deleted (deletionTimestamp set)');
  }
  const tainted = hasTaint(node, UNINITIALIZED_TAINT_KEY);
  if (!tainted && parseProviderId(node.providerID).kind === 'empty') {
    return untouched(
      node,
      'unmanaged',
      `not managed: no providerID and no ${UNINITIALIZED_TAINT_KEY} taint`,
    );
  }
  const match = matcher(node);
  switch (match.kind) {
    case 'foreign':
      return { actions: [skip(node, 'foreign-provider-id', match.text)] };
    case 'invalid':
      return { actions: [skip(node, 'invalid-provider-id', match.text)] };
    case 'no-match':
      return { actions: [skip(node, 'no-match', match.text)] };
    case 'ambiguous':
      return { actions: [skip(node, 'ambiguous', match.text)] };
    case 'error':
      return { actions: [skip(node, 'api-error', match.text)] };
    case 'server-missing':
      return missingServerDecision(node, match.uuid, match.confirmed);
    case 'matched': {
      const actions = [metadataAction(node, match.server, tainted, match.by)];
      if (match.by === 'provider-id') actions.push(shutdownTaintAction(node, match.server));
      const present = actions.filter((a): a is NodeAction => a !== undefined);
      return present.length > 0
        ? { actions: present }
        : untouched(node, 'in-sync', `in sync with server ${match.server.name} (${match.server.uuid})`);
    }
    default:
      return assertNever(match, 'node match');
  }
}

function missingServerDecision(node: NodeSnapshot, uuid: string, confirmed: boolean): NodeDecision {
  const how = confirmed ? 'answered 404 (gone)' : 'is not in the server list';
  if (isReady(node)) {
    return {
      actions: [
        skip(node, 'server-missing', `server ${uuid} of providerID ${how}, but the node is Ready: it is not deleted`),
      ],
    };
  }
  const action: DeleteNodeAction = {
    kind: 'delete-node',
    node: node.name,
    object: `node/${node.name}`,
    verb: 'delete',
    reason: {
      field: 'spec.providerID',
      from: node.providerID,
      to: null,
      text: `server ${uuid} ${how} and the node is NotReady (Ready ${node.readiness})`,
    },
    changes: [],
    impact: 'minimal',
    uid: node.uid,
    resourceVersion: node.resourceVersion,
    serverUuid: uuid,
  };
  return { actions: [action], deletion: { action, confirmed } };
}

function metadataAction(
  node: NodeSnapshot,
  server: Server,
  tainted: boolean,
  matchedBy: 'provider-id' | 'name',
): NodeAction | undefined {
  const addresses = applyProvidedNodeIp(
    cloudAddresses(server),
    node.annotations[PROVIDED_NODE_IP_ANNOTATION],
  );
  if (!addresses.ok) {
    const consequence = tainted ? 'the node stays uninitialised' : 'addresses are not refreshed';
    return skip(node, 'provided-node-ip', `${addresses.error}: ${consequence}`);
  }

  const write: NodeWrite = {};
  const changes: NodeFieldChange[] = [];
  if (node.providerID === '') {
    write.providerID = formatProviderId(server.uuid);
    changes.push({ field: 'spec.providerID', from: null, to: write.providerID });
  }
  for (const [key, value] of Object.entries(desiredLabels(server))) {
    const current = node.labels[key];
    if (current === value) continue;
    write.labels = { ...write.labels, [key]: value };
    changes.push({ field: `metadata.labels[${key}]`, from: current ?? null, to: value });
  }
  if (!sameAddresses(node.addresses, addresses.addresses)) {
    write.addresses = addresses.addresses;
    changes.push({
      field: 'status.addresses',
      from: describeAddresses(node.addresses),
      to: describeAddresses(addresses.addresses),
    });
  }
  const serverText = `server ${server.name} (${server.uuid}), matched by ${matchedBy === 'name' ? 'name' : 'providerID'}`;

  if (tainted) {
    const taint = node.taints.find((t) => t.key === UNINITIALIZED_TAINT_KEY);
    write.removeTaints = [UNINITIALIZED_TAINT_KEY];
    changes.push({
      field: `spec.taints[${UNINITIALIZED_TAINT_KEY}]`,
      from: taint?.effect ?? null,
      to: null,
    });
    return {
      kind: 'initialize',
      node: node.name,
      object: `node/${node.name}`,
      verb: 'update',
      reason: {
        field: `spec.taints[${UNINITIALIZED_TAINT_KEY}]`,
        from: taint?.effect ?? null,
        to: null,
        text: `uninitialised node; ${serverText}`,
      },
      changes,
      impact: 'none',
      server: serverRef(server),
      write,
    };
  }
  const first = changes[0];
  if (first === undefined) return undefined;
  return {
    kind: 'refresh',
    node: node.name,
    object: `node/${node.name}`,
    verb: 'update',
    reason: { ...first, text: `${describeDrift(changes)} differ from ${serverText}` },
    changes,
    impact: 'none',
    server: serverRef(server),
    write,
  };
}

/**
 * The lifecycle controller's shutdown taint (docs/kubernetes-controllers.md): added while the node is NotReady and
 * its server `stopped`; removed once the node is Ready again or the server is no longer stopped.
 */
function shutdownTaintAction(node: NodeSnapshot, server: Server): NodeAction | undefined {
  const tainted = hasTaint(node, SHUTDOWN_TAINT_KEY);
  const shouldTaint = !isReady(node) && server.status === 'stopped';
  const field = `spec.taints[${SHUTDOWN_TAINT_KEY}]`;
  if (shouldTaint && !tainted) {
    const taint: Taint = { key: SHUTDOWN_TAINT_KEY, effect: SHUTDOWN_TAINT_EFFECT };
    return {
      kind: 'add-shutdown-taint',
      node: node.name,
      object: `node/${node.name}`,
      verb: 'update',
      reason: {
        field,
        from: null,
        to: SHUTDOWN_TAINT_EFFECT,
        text: `server ${server.name} is stopped and the node is NotReady (Ready ${node.readiness})`,
      },
      changes: [{ field, from: null, to: SHUTDOWN_TAINT_EFFECT }],
      impact: 'minimal',
      write: { addTaints: [taint] },
    };
  }
  if (!shouldTaint && tainted) {
    const effect = node.taints.find((t) => t.key === SHUTDOWN_TAINT_KEY)?.effect ?? null;
    return {
      kind: 'remove-shutdown-taint',
      node: node.name,
      object: `node/${node.name}`,
      verb: 'update',
      reason: {
        field,
        from: effect,
        to: null,
        text: isReady(node)
          ? 'the node is Ready again'
          : `server ${server.name} is ${server.status}, no longer stopped`,
      },
      changes: [{ field, from: effect, to: null }],
      impact: 'none',
      write: { removeTaints: [SHUTDOWN_TAINT_KEY] },
    };
  }
  return undefined;
}

function describeDrift(changes: readonly NodeFieldChange[]): string {
  const parts: string[] = [];
  if (changes.some((c) => c.field.startsWith('metadata.labels'))) parts.push('labels');
  if (changes.some((c) => c.field === 'status.addresses')) parts.push('addresses');
  if (changes.some((c) => c.field === 'spec.providerID')) parts.push('providerID');
  return parts.join(' and ');
}

function skip(node: NodeSnapshot, problem: NodeProblem, text: string): SkipNodeAction {
  return {
    kind: 'skip',
    node: node.name,
    object: `node/${node.name}`,
    verb: 'refuse',
    reason: { field: problemField(problem), from: node.providerID || null, to: null, text },
    changes: [],
    impact: 'none',
    problem,
  };
}

function problemField(problem: NodeProblem): string {
  return problem === 'provided-node-ip'
    ? `metadata.annotations[${PROVIDED_NODE_IP_ANNOTATION}]`
    : 'spec.providerID';
}

function untouched(node: NodeSnapshot, why: UntouchedNode['why'], text: string): NodeDecision {
  return { actions: [], untouched: { node: node.name, why, text } };
}

function serverRef(server: Server): ServerRef {
  return {
    uuid: server.uuid,
    name: server.name,
    zone: server.zone.slug,
    flavor: server.flavor.slug,
    status: server.status,
  };
}

export function hasTaint(node: NodeSnapshot, key: string): boolean {
  return node.taints.some((t) => t.key === key);
}

/** Only a Ready condition with status True counts; False, Unknown and none are NotReady. */
export function isReady(node: NodeSnapshot): boolean {
  return node.readiness === 'True';
}

/**
 * The node's taint list after `write`: removed keys dropped (every effect), added taints
 * appended unless one with the same key and effect exists. Other taints keep their order and
 * fields, so a concurrent writer's taints survive as long as the write is guarded by
 * resourceVersion.
 */
export function taintsAfter(current: readonly Taint[], write: NodeWrite): Taint[] {
  const removed = new Set(write.removeTaints ?? []);
  const next = current.filter((t) => !removed.has(t.key));
  for (const taint of write.addTaints ?? []) {
    if (!next.some((t) => t.key === taint.key && t.effect === taint.effect)) next.push(taint);
  }
  return next;
}

const WRITING_KINDS = new Set<NodeAction['kind']>([
  'initialize',
  'refresh',
  'add-shutdown-taint',
  'remove-shutdown-taint',
  'delete-node',
]);

/** The actions of a plan that write (skips and refused deletions do not). */
export function writingActions(actions: readonly NodeAction[]): NodeAction[] {
  return actions.filter((a) => WRITING_KINDS.has(a.kind) && a.verb !== 'refuse');
}

/** Several actions' writes for one node as one: later labels win, taint edits accumulate. */
export function mergeWrites(writes: readonly NodeWrite[]): NodeWrite {
  const merged: NodeWrite = {};
  for (const write of writes) {
    if (write.providerID !== undefined) merged.providerID = write.providerID;
    if (write.labels !== undefined) merged.labels = { ...merged.labels, ...write.labels };
    if (write.removeTaints !== undefined) {
      merged.removeTaints = [...(merged.removeTaints ?? []), ...write.removeTaints];
    }
    if (write.addTaints !== undefined) {
      merged.addTaints = [...(merged.addTaints ?? []), ...write.addTaints];
    }
    if (write.addresses !== undefined) merged.addresses = write.addresses;
  }
  return merged;
}
