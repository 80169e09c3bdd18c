// The words of a node pass's report: the line of each node (`node/<name> <text>`) and the node
// results as documents show them (with that line as `text`). The pass (src/core/apply/
// node-report.ts) builds the results as data; this is the one place that words them.
import type { NodeResult } from '../apply/node-report.js';
import type { NodeAction, NodeActionKind } from '../nodes/types.js';
import { formatProviderId } from '../nodes/provider-id.js';
import { counted } from '../text/wording.js';

/** A node result as the documents of init-nodes, run and apply show it. */
export interface NodeResultDocument {
  readonly node: string;
  readonly object: `node/${string}`;
  readonly outcome: NodeResult['outcome'];
  /** The line printed after `node/<name> `. */
  readonly text: string;
  readonly actions: readonly NodeAction[];
  readonly error?: { message: string; hint?: string };
  readonly taintRemovalDelayMs?: number;
}

/** The line printed after `node/<name> `, e.g. `initialized: providerID …, zone rma1, 4 addresses`. */
export function nodeText(result: NodeResult): string {
  switch (result.outcome) {
    case 'not-found':
      return 'not found in the cluster';
    case 'failed':
      return `failed: ${result.error?.message ?? 'unknown error'}`;
    case 'vanished':
      return 'the Node disappeared during the pass: nothing left to do';
    default:
      if (result.vanished === true) return 'deleted (by someone else meanwhile)';
      if (result.untouched !== undefined) return result.untouched;
      if (result.actions.length === 0) return 'in sync';
      return result.actions.map((action) => describeAction(action, result.planned === true)).join('; ');
  }
}

/** `result` as a document shows it: its line as `text`, beside the data. */
export function nodeResultDocument(result: NodeResult): NodeResultDocument {
  const { node, object, outcome, actions, error, taintRemovalDelayMs } = result;
  return {
    node,
    object,
    outcome,
    text: nodeText(result),
    actions,
    ...(error === undefined ? {} : { error }),
    ...(taintRemovalDelayMs === undefined ? {} : { taintRemovalDelayMs }),
  };
}

/** A report with node results, as its document shows it: each node result with its line. */
export function withNodeText<T extends { readonly nodes: readonly NodeResult[] }>(report: T): Omit<T, 'nodes'> & { nodes: NodeResultDocument[] } {
  return { ...report, nodes: report.nodes.map(nodeResultDocument) };
}

const pastTense: { [K in NodeActionKind]: [done: string, planned: string] } = {
  initialize: ['initialized', 'would be initialized'],
  refresh: ['refreshed', 'would be refreshed'],
  'add-shutdown-taint': ['shutdown taint added', 'shutdown taint would be added'],
  'remove-shutdown-taint': ['shutdown taint removed', 'shutdown taint would be removed'],
  'delete-node': ['deleted', 'would be deleted'],
  skip: ['skipped', 'skipped'],
};

function describeAction(action: NodeAction, dryRun: boolean): string {
  const [done, planned] = pastTense[action.kind];
  const verb = dryRun ? planned : done;
  switch (action.kind) {
    case 'initialize': {
      const addresses = action.write.addresses;
      const addressText =
        addresses === undefined ? 'addresses unchanged' : counted(addresses.length, 'address', 'addresses');
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
