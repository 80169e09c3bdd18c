// What a write on the Kubernetes side would change, for the tests of read-only commands (plan,
// status service/NAME): the Services, Events and Leases of a namespace, the given Nodes and the
// Leases of kube-system, each with its resourceVersion.
import { testConnection } from './kube.js';

export async function kubeState(namespace: string, nodes: readonly string[]) {
  const conn = testConnection();
  const [services, allNodes, events, systemLeases, namespaceLeases] = await Promise.all([
    conn.core.listNamespacedService({ namespace }),
    conn.core.listNode(),
    conn.core.listNamespacedEvent({ namespace }),
    conn.coordination.listNamespacedLease({ namespace: 'kube-system' }),
    conn.coordination.listNamespacedLease({ namespace }),
  ]);
  return {
    services: services.items.map((s) => `${s.metadata!.name}@${s.metadata!.resourceVersion}`).sort(),
    nodes: allNodes.items.filter((n) => nodes.includes(n.metadata!.name!)).map((n) => `${n.metadata!.name}@${n.metadata!.resourceVersion}`).sort(),
    events: events.items.map((e) => e.metadata!.name).sort(),
    // The API server renews its own identity Lease on a timer: compare ours only.
    leases: [...systemLeases.items, ...namespaceLeases.items]
      .filter((l) => !l.metadata!.name!.startsWith('apiserver-') && l.metadata!.name !== 'kube-apiserver')
      .map((l) => `${l.metadata!.namespace}/${l.metadata!.name}@${l.metadata!.resourceVersion}`)
      .sort(),
  };
}
