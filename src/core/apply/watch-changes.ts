// Which changes of Nodes and Services call for a reaction pass, and which this tool caused itself.
// Each object is reduced to a fingerprint of what the passes read from it and no pass writes: a
// change that leaves the fingerprint as it was (a status, providerID, address, zone label, our
// annotations or finalizer, a kubelet heartbeat) is ignored, so the passes never chase their own
// writes. A Service that neither is of type LoadBalancer nor carries our finalizer has no
// fingerprint: nothing about it concerns a load balancer.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { LB_ANNOTATIONS } from '../lb/annotations.js';
import { LB_FINALIZER } from '../lb/service-plan.js';
import { NODE_LABELS, SHUTDOWN_TAINT_KEY, UNINITIALIZED_TAINT_KEY } from '../nodes/well-known.js';

/** Labels and taints the node pass writes (from the server's flavor and zone, and its status). */
const NODE_LABELS_WRITTEN: ReadonlySet<string> = new Set(Object.values(NODE_LABELS));
const NODE_TAINTS_WRITTEN: ReadonlySet<string> = new Set([UNINITIALIZED_TAINT_KEY, SHUTDOWN_TAINT_KEY]);
/** Annotations the load-balancer pass records on a Service. */
const SERVICE_ANNOTATIONS_WRITTEN: ReadonlySet<string> = new Set([
  LB_ANNOTATIONS.uuid.key,
  LB_ANNOTATIONS.configVersion.key,
  LB_ANNOTATIONS.zone.key,
  // The budget's record of what it announced: written by a pass that holds a change.
  LB_ANNOTATIONS.announcedChanges.key,
]);

export function nodeFingerprint(node: V1Node): string {
  return JSON.stringify({
    labels: without(node.metadata?.labels, NODE_LABELS_WRITTEN),
    taints: (node.spec?.taints ?? [])
      .filter((t) => !NODE_TAINTS_WRITTEN.has(t.key))
      .map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`)
      .sort(),
    unschedulable: node.spec?.unschedulable === true,
    // Only type and status: heartbeats rewrite the times every few seconds.
    conditions: (node.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort(),
    deleting: node.metadata?.deletionTimestamp !== undefined,
  });
}

export function serviceFingerprint(service: V1Service): string | undefined {
  const finalizers = service.metadata?.finalizers ?? [];
  if (service.spec?.type !== 'LoadBalancer' && !finalizers.includes(LB_FINALIZER)) return undefined;
  return JSON.stringify({
    spec: sortedKeys(service.spec),
    labels: service.metadata?.labels ?? {},
    annotations: without(service.metadata?.annotations, SERVICE_ANNOTATIONS_WRITTEN),
    finalizers: finalizers.filter((f) => f !== LB_FINALIZER).sort(),
    deleting: service.metadata?.deletionTimestamp !== undefined,
  });
}

/**
 * The value with the keys of every object in sorted order: a list (typed by client-node) and a
 * watch event (JSON as the server sent it) order the fields of the same object differently. A
 * field client-node does not know is dropped from the list but kept in a watch event: that costs
 * one pass with nothing to do per such object, no loop.
 */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sortedKeys(v)]),
  );
}

function without(record: Record<string, string> | undefined, keys: ReadonlySet<string>): [string, string][] {
  return Object.entries(record ?? {})
    .filter(([key]) => !keys.has(key))
    .sort(([a], [b]) => a.localeCompare(b));
}

/** A Service named by namespace and name, and whether the watch saw it deleted. */
export interface ChangedService {
  readonly namespace: string;
  readonly name: string;
  readonly gone: boolean;
}

/** What a reaction pass is asked to do: the changed Nodes and Services since the last one. */
export interface ChangeSet {
  /** Names of Nodes added, changed or deleted: the node pass runs, then every load balancer's. */
  readonly nodes: readonly string[];
  readonly services: readonly ChangedService[];
  /** Set when a watch was re-established (the changes in between are included as far as a list shows them). */
  readonly relisted: boolean;
}

/**
 * The last fingerprint of every watched object, and the changes not yet handed to a pass. A
 * watch event or a fresh list is compared with the fingerprint; only a difference is pending.
 */
export class ChangeTracker {
  private readonly nodes = new Map<string, string>();
  private readonly services = new Map<string, string>();
  private pendingNodes = new Set<string>();
  private pendingServices = new Map<string, ChangedService>();
  private pendingRelist = false;

  /** Records objects as they were when the pass started: changes are counted from there. */
  baseline(nodes: readonly V1Node[], services: readonly V1Service[]): void {
    for (const node of nodes) this.nodes.set(nameOf(node), nodeFingerprint(node));
    for (const service of services) {
      const print = serviceFingerprint(service);
      if (print !== undefined) this.services.set(keyOf(service), print);
    }
  }

  nodeChanged(node: V1Node, deleted: boolean): void {
    const name = nameOf(node);
    const before = this.nodes.get(name);
    const after = deleted ? undefined : nodeFingerprint(node);
    if (before === after) return;
    if (after === undefined) this.nodes.delete(name);
    else this.nodes.set(name, after);
    this.pendingNodes.add(name);
  }

  serviceChanged(service: V1Service, deleted: boolean): void {
    const key = keyOf(service);
    const before = this.services.get(key);
    const after = deleted ? undefined : serviceFingerprint(service);
    if (before === after) return;
    if (after === undefined) this.services.delete(key);
    else this.services.set(key, after);
    this.pendingServices.set(key, {
      namespace: service.metadata?.namespace ?? '',
      name: service.metadata?.name ?? '',
      gone: deleted,
    });
  }

  /**
   * A fresh list after a broken watch: objects missing from it were deleted meanwhile, the
   * others are compared as if changed.
   */
  relisted(kind: 'nodes', items: readonly V1Node[]): void;
  relisted(kind: 'services', items: readonly V1Service[]): void;
  relisted(kind: 'nodes' | 'services', items: readonly (V1Node | V1Service)[]): void {
    this.pendingRelist = true;
    if (kind === 'nodes') {
      const seen = new Set(items.map(nameOf));
      for (const name of [...this.nodes.keys()]) {
        if (!seen.has(name)) this.nodeChanged({ metadata: { name } }, true);
      }
      for (const node of items as readonly V1Node[]) this.nodeChanged(node, false);
    } else {
      const seen = new Set(items.map(keyOf));
      for (const key of [...this.services.keys()]) {
        if (seen.has(key)) continue;
        const [namespace, name] = key.split('/') as [string, string];
        this.serviceChanged({ metadata: { namespace, name } }, true);
      }
      for (const service of items as readonly V1Service[]) this.serviceChanged(service, false);
    }
  }

  get hasPending(): boolean {
    return this.pendingNodes.size > 0 || this.pendingServices.size > 0 || this.pendingRelist;
  }

  /** The pending changes, which are cleared: changes seen from now on go to the next pass. */
  take(): ChangeSet {
    const taken: ChangeSet = {
      nodes: [...this.pendingNodes].sort(),
      services: [...this.pendingServices.values()],
      relisted: this.pendingRelist,
    };
    this.pendingNodes = new Set();
    this.pendingServices = new Map();
    this.pendingRelist = false;
    return taken;
  }
}

function nameOf(object: { metadata?: { name?: string } }): string {
  return object.metadata?.name ?? '';
}

function keyOf(object: { metadata?: { namespace?: string; name?: string } }): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

export const NO_CHANGES: ChangeSet = { nodes: [], services: [], relisted: false };

/**
 * The change set split by object, keyed as the passes name their failures (`node/a`,
 * `service/default/web`; a re-established watch as `relist`): a retry is kept per object.
 */
export function changesByObject(changes: ChangeSet): Map<string, ChangeSet> {
  const parts = new Map<string, ChangeSet>();
  for (const name of changes.nodes) parts.set(`node/${name}`, { ...NO_CHANGES, nodes: [name] });
  for (const service of changes.services) parts.set(`service/${service.namespace}/${service.name}`, { ...NO_CHANGES, services: [service] });
  if (changes.relisted) parts.set('relist', { ...NO_CHANGES, relisted: true });
  return parts;
}

/** The union of change sets; of two entries for one Service, the later says whether it is gone. */
export function joinChanges(sets: readonly ChangeSet[]): ChangeSet {
  const nodes = new Set<string>();
  const services = new Map<string, ChangedService>();
  for (const set of sets) {
    for (const name of set.nodes) nodes.add(name);
    for (const service of set.services) services.set(`${service.namespace}/${service.name}`, service);
  }
  return { nodes: [...nodes].sort(), services: [...services.values()], relisted: sets.some((s) => s.relisted) };
}

/**
 * The change that makes a pass over a failed object again, from the object as a pass names its
 * failure (`node/a`, `service/default/web`); undefined for a failure that names neither.
 */
export function changeOfFailedObject(object: string): ChangeSet | undefined {
  const [kind, ...rest] = object.split('/');
  if (kind === 'node' && rest.length === 1 && rest[0] !== '') return { ...NO_CHANGES, nodes: [rest[0]!] };
  if (kind === 'service' && rest.length === 2 && rest.every((part) => part !== '')) {
    return { ...NO_CHANGES, services: [{ namespace: rest[0]!, name: rest[1]!, gone: false }] };
  }
  return undefined;
}

/** What a reaction pass runs for a change set. */
export type ReactionScope =
  | { readonly kind: 'nothing' }
  /** A Node changed (or a watch was re-established): the node pass, then every load balancer. */
  | { readonly kind: 'all' }
  /** A Service was deleted outright: every load balancer, so an orphan is found. */
  | { readonly kind: 'all-load-balancers' }
  | { readonly kind: 'services'; readonly services: readonly { namespace: string; name: string }[] };

export function reactionScope(changes: ChangeSet): ReactionScope {
  if (changes.nodes.length > 0 || changes.relisted) return { kind: 'all' };
  if (changes.services.some((s) => s.gone)) return { kind: 'all-load-balancers' };
  if (changes.services.length === 0) return { kind: 'nothing' };
  return { kind: 'services', services: changes.services.map(({ namespace, name }) => ({ namespace, name })) };
}

/** One line naming what changed, for the log: `node/a, service/default/web deleted`. */
export function describeChanges(changes: ChangeSet): string {
  const parts = [
    ...changes.nodes.map((name) => `node/${name}`),
    ...changes.services.map((s) => `service/${s.namespace}/${s.name}${s.gone ? ' deleted' : ''}`),
  ];
  const shown = parts.length > 5 ? [...parts.slice(0, 5), `${parts.length - 5} more`] : parts;
  if (changes.relisted) shown.push('a watch re-established');
  return shown.join(', ');
}
