// What the invariants look at: the cloud as the simulator holds it (read through a separate
// client while no fault is in force), the whole JSON of the foreign load balancers, and the
// Services, Nodes and Events of the run in the kube-apiserver (resourceVersions show writes).
import type { CoreV1Event, V1Node, V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../../../src/core/cloudscale/client.js';
import type { FloatingIp, LoadBalancer, Server } from '../../../src/core/cloudscale/types.js';
import { CloudscaleApiError } from '../../../src/core/errors.js';
import { testConnection } from '../kube.js';

export interface CloudState {
  readonly loadBalancers: readonly LoadBalancer[];
  readonly floatingIps: readonly FloatingIp[];
  readonly servers: readonly Server[];
}

export async function readCloud(cloud: CloudscaleClient): Promise<CloudState> {
  const [loadBalancers, floatingIps, servers] = await Promise.all([
    cloud.loadBalancers.list(),
    cloud.floatingIps.list(),
    cloud.servers.list(),
  ]);
  return { loadBalancers, floatingIps, servers };
}

/**
 * A load balancer with everything on it, as one stable JSON text per part (null once it is
 * gone): compared before and after a run, any change to a foreign load balancer shows.
 */
export async function foreignSnapshot(cloud: CloudscaleClient, uuid: string): Promise<Record<string, string>> {
  const lb = await ignoreCloudNotFound(cloud.loadBalancers.get(uuid));
  if (lb === undefined) return { loadBalancer: 'null' };
  const [pools, listeners, monitors, floatingIps] = await Promise.all([
    cloud.pools.list(),
    cloud.listeners.list(),
    cloud.healthMonitors.list(),
    cloud.floatingIps.list(),
  ]);
  const own = pools.filter((p) => p.load_balancer.uuid === uuid);
  const parts: Record<string, string> = { loadBalancer: stableJson(lb) };
  for (const pool of own) {
    parts[`pool ${pool.name}`] = stableJson(pool);
    // Without monitor_status: on the data plane a member's health checks change it, no client does.
    parts[`members of pool ${pool.name}`] = stableJson((await cloud.poolMembers.list(pool.uuid)).map(({ monitor_status: _, ...member }) => member));
    parts[`listeners of pool ${pool.name}`] = stableJson(listeners.filter((l) => l.pool?.uuid === pool.uuid));
    parts[`monitors of pool ${pool.name}`] = stableJson(monitors.filter((m) => m.pool.uuid === pool.uuid));
  }
  parts['floating IPs'] = stableJson(floatingIps.filter((f) => f.load_balancer?.uuid === uuid));
  return parts;
}

/** The parts that differ, each as `part: before → after` (shortened). */
export function snapshotDiff(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((key) => before[key] !== after[key])
    .map((key) => `${key}: ${shorten(before[key] ?? '(absent)')} → ${shorten(after[key] ?? '(absent)')}`);
}

function shorten(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

async function ignoreCloudNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof CloudscaleApiError && error.status === 404) return undefined;
    throw error;
  }
}

// ---- Kubernetes ------------------------------------------------------------------------------

export interface KubeState {
  readonly services: ReadonlyMap<string, V1Service>;
  readonly nodes: ReadonlyMap<string, V1Node>;
  /** Events about the run's Services and Nodes, by UID. */
  readonly events: ReadonlyMap<string, CoreV1Event>;
}

export async function readKube(namespace: string, nodePrefix: string): Promise<KubeState> {
  const conn = testConnection();
  const [services, nodes, namespaced, clusterScoped] = await Promise.all([
    conn.core.listNamespacedService({ namespace }),
    conn.core.listNode(),
    conn.core.listNamespacedEvent({ namespace }),
    conn.core.listNamespacedEvent({ namespace: 'default' }),
  ]);
  const ours = nodes.items.filter((n) => n.metadata!.name!.startsWith(`${nodePrefix}-`));
  const names = new Set([...services.items, ...ours].map((o) => o.metadata!.name!));
  const events = [...namespaced.items, ...clusterScoped.items].filter((e) => names.has(e.involvedObject.name ?? ''));
  return {
    services: new Map(services.items.map((s) => [s.metadata!.name!, s])),
    nodes: new Map(ours.map((n) => [n.metadata!.name!, n])),
    events: new Map(events.map((e) => [e.metadata!.uid!, e])),
  };
}

/**
 * Every write between two states: objects added, removed or with a new resourceVersion. Events
 * about `excused` objects (Services refused by design warn on every pass) are left out.
 */
export function kubeWrites(before: KubeState, after: KubeState, excused: ReadonlySet<string>): string[] {
  const writes: string[] = [];
  const compare = <T extends { metadata?: { resourceVersion?: string } }>(
    kind: string,
    a: ReadonlyMap<string, T>,
    b: ReadonlyMap<string, T>,
    label: (key: string, object: T) => string,
    skip: (object: T) => boolean = () => false,
  ): void => {
    for (const [key, object] of b) {
      if (skip(object)) continue;
      const old = a.get(key);
      if (old === undefined) writes.push(`${kind} ${label(key, object)} created`);
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) writes.push(`${kind} ${label(key, object)} changed`);
    }
    for (const [key, object] of a) if (!b.has(key) && !skip(object)) writes.push(`${kind} ${label(key, object)} deleted`);
  };
  compare('Service', before.services, after.services, (key) => key);
  compare('Node', before.nodes, after.nodes, (key) => key);
  compare(
    'Event',
    before.events,
    after.events,
    (_, e) => `${e.reason ?? ''} about ${e.involvedObject.name ?? ''} ("${e.message ?? ''}", count ${e.count ?? 1})`,
    (e) => excused.has(e.involvedObject.name ?? ''),
  );
  return writes;
}
