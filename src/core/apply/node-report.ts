// What a node pass reports per node, as data: an outcome, the planned actions (--dry-run) or the
// ones carried out, and what else its line needs. The words of the line (`node/<name> <text>`)
// are src/core/render/node-report.ts's alone.
import type {
  NodeAction,
  NodeActionKind,
  NodeProblem,
  NodeSnapshot,
} from '../nodes/types.js';
import type { UntouchedNode } from '../nodes/plan.js';

export type NodeOutcome =
  | 'initialized'
  | 'refreshed'
  | 'tainted'
  | 'untainted'
  | 'deleted'
  | 'in-sync'
  | 'unmanaged'
  | 'deleting'
  | 'deletion-off'
  | 'skipped'
  | 'refused'
  | 'failed'
  | 'vanished'
  | 'not-found';

export interface NodeResult {
  node: string;
  object: `node/${string}`;
  outcome: NodeOutcome;
  /** As planned with --dry-run (`planned`), as carried out otherwise. */
  actions: NodeAction[];
  /** The actions are planned (--dry-run), not carried out. */
  planned?: true;
  /** Why the plan leaves the node alone (UntouchedNode.text), when it is not simply in sync. */
  untouched?: string;
  /** The Node disappeared during the pass (outcome `vanished`, or `deleted` by someone else meanwhile). */
  vanished?: true;
  error?: { message: string; hint?: string };
  /**
   * For a Node this pass initialised: from its creationTimestamp to the moment the write that
   * removed the uninitialized taint succeeded (the generic CCM's taint-removal delay).
   */
  taintRemovalDelayMs?: number;
}

/** A node the plan leaves alone on purpose; not a failure. */
export function untouchedResult(name: string, untouched: UntouchedNode | undefined): NodeResult {
  return {
    node: name,
    object: `node/${name}`,
    outcome: untouched?.why ?? 'in-sync',
    actions: [],
    ...(untouched === undefined || untouched.why === 'in-sync' ? {} : { untouched: untouched.text }),
  };
}

export function notFoundResult(name: string): NodeResult {
  return {
    node: name,
    object: `node/${name}`,
    outcome: 'not-found',
    actions: [],
    error: { message: `node ${name} does not exist`, hint: 'check the name with kubectl get nodes' },
  };
}

/** The result of a node's actions: planned (`dryRun`) or carried out, refused or skipped. */
export function summarise(node: NodeSnapshot, actions: NodeAction[], dryRun: boolean): NodeResult {
  const refusal = actions.find((a) => a.verb === 'refuse');
  const base = { node: node.name, object: `node/${node.name}` as const, actions, ...(dryRun ? { planned: true as const } : {}) };
  const first = actions[0];
  if (first === undefined) return { ...base, outcome: 'in-sync' };
  if (refusal !== undefined) {
    const problem = 'problem' in refusal ? refusal.problem : undefined;
    return {
      ...base,
      outcome: refusal.kind === 'skip' ? 'skipped' : 'refused',
      error: { message: refusal.reason.text, ...(problem === undefined ? {} : { hint: problemHints[problem] }) },
    };
  }
  return { ...base, outcome: outcomeOf[first.kind] };
}

const outcomeOf: { [K in NodeActionKind]: NodeOutcome } = {
  initialize: 'initialized',
  refresh: 'refreshed',
  'add-shutdown-taint': 'tainted',
  'remove-shutdown-taint': 'untainted',
  'delete-node': 'deleted',
  skip: 'skipped',
};

/** `delete node`, `initialize`: the kind of a failed write, for its message. */
export function describeKind(kind: NodeActionKind | undefined): string {
  return kind === undefined ? 'update' : kind.replaceAll('-', ' ');
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
  'unconfirmed-deletion':
    'init-nodes and plan ask GET /v1/servers/<uuid> themselves; only a 404 there lets the Node be deleted',
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

/** The Event reason of a refused action, by its problem. */
export function eventReasonFor(action: NodeAction): string {
  const problem = 'problem' in action ? action.problem : undefined;
  return problem === undefined ? 'NodeSyncFailed' : eventReasons[problem];
}
