// The node model of the planner: plain, JSON-serialisable data. src/core/kube/nodes.ts converts
// client-node's V1Node into NodeSnapshot; nothing here knows about HTTP.

export type NodeAddressType = 'Hostname' | 'ExternalIP' | 'InternalIP' | (string & {});

export interface NodeAddress {
  type: NodeAddressType;
  address: string;
}

export interface Taint {
  key: string;
  effect: string;
  value?: string;
  /** RFC 3339, kept as read so that rewriting the taint list does not alter other taints. */
  timeAdded?: string;
}

/** The Ready condition's status; `missing` when kubelet never reported one. */
export type NodeReadiness = 'True' | 'False' | 'Unknown' | 'missing';

/** What the planner reads of a Node. */
export interface NodeSnapshot {
  name: string;
  uid: string;
  resourceVersion: string;
  /** '' when unset. */
  providerID: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: Taint[];
  addresses: NodeAddress[];
  readiness: NodeReadiness;
  /** `metadata.deletionTimestamp` is set: the node is on its way out and left alone. */
  deleting: boolean;
  /** `metadata.creationTimestamp` (ISO 8601): the start of the taint-removal delay metric. */
  createdAt?: string;
}

/**
 * One field the planner wants to change, for display (`plan`, output lines, events). `null`
 * means absent. Not used to apply anything: the patch data in the action is authoritative.
 */
export interface NodeFieldChange {
  field: string;
  from: string | null;
  to: string | null;
}

/** Why an action exists: the first (or only) differing field, and a sentence for people. */
export interface NodeReason extends NodeFieldChange {
  text: string;
}

/**
 * Everything an action writes to one Node. The spec part goes out as one patch guarded by the
 * resourceVersion it was planned from; `addresses` replaces `status.addresses` as a whole.
 */
export interface NodeWrite {
  providerID?: string;
  /** Labels to set (only those that differ). */
  labels?: Record<string, string>;
  /** Taint keys to remove (every effect), other taints are kept. */
  removeTaints?: string[];
  addTaints?: Taint[];
  addresses?: NodeAddress[];
}

/**
 * The Node operations the node executor needs (src/core/apply/node-writes.ts), implemented on
 * client-node by src/core/kube/nodes.ts: declared here so that both sides depend on the
 * domain, not on each other.
 */
export interface NodeApi {
  get(name: string): Promise<NodeSnapshot | undefined>;
  /** Guarded by `node.resourceVersion`; the taint list is rewritten from `node.taints`. */
  patchNode(node: NodeSnapshot, write: NodeWrite): Promise<NodeSnapshot>;
  /** Guarded by `node.resourceVersion`; replaces the whole list. */
  patchAddresses(node: NodeSnapshot, addresses: readonly NodeAddress[]): Promise<NodeSnapshot>;
  /** False when the Node was already gone. */
  delete(name: string, preconditions: { uid: string; resourceVersion: string }): Promise<boolean>;
}

export type NodeActionKind =
  | 'initialize'
  | 'refresh'
  | 'add-shutdown-taint'
  | 'remove-shutdown-taint'
  | 'delete-node'
  | 'skip';

export type NodeVerb = 'create' | 'update' | 'delete' | 'refuse';

/**
 * Impact on workloads, in the plan's vocabulary. Metadata changes have none; a shutdown taint
 * only keeps new pods off a node that is down anyway; deleting a Node whose server is gone makes
 * its pods be rescheduled elsewhere.
 */
export type NodeImpact = 'none' | 'minimal';

/** Why a node is left unchanged. Every one of these is a failure of the pass (exit non-zero). */
export type NodeProblem =
  | 'no-match'
  | 'ambiguous'
  | 'foreign-provider-id'
  | 'invalid-provider-id'
  | 'api-error'
  | 'server-missing'
  | 'provided-node-ip'
  | 'deletion-bound'
  | 'wrong-project'
  | 'unconfirmed-deletion';

interface NodeActionBase {
  node: string;
  object: `node/${string}`;
  verb: NodeVerb;
  reason: NodeReason;
  /** Every differing field (empty for skips and deletions). */
  changes: NodeFieldChange[];
  impact: NodeImpact;
}

export interface InitializeNodeAction extends NodeActionBase {
  kind: 'initialize';
  verb: 'update';
  server: ServerRef;
  write: NodeWrite;
}

export interface RefreshNodeAction extends NodeActionBase {
  kind: 'refresh';
  verb: 'update';
  server: ServerRef;
  write: NodeWrite;
}

export interface ShutdownTaintAction extends NodeActionBase {
  kind: 'add-shutdown-taint' | 'remove-shutdown-taint';
  verb: 'update';
  write: NodeWrite;
}

export interface DeleteNodeAction extends NodeActionBase {
  kind: 'delete-node';
  /** 'refuse' when a guard rail stopped the deletion; `problem` then says which. */
  verb: 'delete' | 'refuse';
  problem?: 'deletion-bound' | 'wrong-project' | 'unconfirmed-deletion';
  /** Preconditions for the DELETE: the Node that was planned, not a newer one of the same name. */
  uid: string;
  resourceVersion: string;
  serverUuid: string;
}

export interface SkipNodeAction extends NodeActionBase {
  kind: 'skip';
  verb: 'refuse';
  problem: NodeProblem;
}

export type NodeAction =
  | InitializeNodeAction
  | RefreshNodeAction
  | ShutdownTaintAction
  | DeleteNodeAction
  | SkipNodeAction;

export interface ServerRef {
  uuid: string;
  name: string;
  zone: string;
  flavor: string;
  status: string;
}
