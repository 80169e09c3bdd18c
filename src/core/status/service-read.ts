// The reads of `status service/NAME`: the Service and the Nodes from Kubernetes, the Service's
// load balancer with its pools, members, listeners and health monitors from cloudscale. Only
// GETs and lists: no Lease, no write (test/integration/status-service.test.ts checks both).
import type { V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../cloudscale/client.js';
import { UsageError } from '../errors.js';
import type { KubeConnection } from '../kube/connection.js';
import { listNodeObjects } from '../kube/nodes.js';
import { getService } from '../kube/services.js';
import { locateLoadBalancers, locationOf } from '../lb/actual.js';
import { mapNodesToServers } from '../lb/nodes.js';
import type { ServiceLbInput } from './service-view.js';

export async function readServiceLb(
  conn: KubeConnection,
  cloud: CloudscaleClient,
  clusterId: string,
  service: { readonly namespace: string; readonly name: string },
): Promise<Omit<ServiceLbInput, 'drainSeconds' | 'nowMs'>> {
  const found = await getService(conn, service.namespace, service.name);
  if (found === undefined) {
    throw new UsageError(`service ${service.namespace}/${service.name} not found`, {
      hint: `check the name and the namespace (-n): kubectl -n ${service.namespace} get services`,
    });
  }
  if (found.spec?.type !== 'LoadBalancer') {
    throw new UsageError(`service ${service.namespace}/${service.name} is of type ${found.spec?.type ?? 'ClusterIP'}, not LoadBalancer: it has no load balancer`, {
      hint: 'name a Service of type LoadBalancer',
    });
  }
  const [nodes, servers, loadBalancers] = await Promise.all([listNodeObjects(conn), cloud.servers.list(), cloud.loadBalancers.list()]);
  // A member's address is an address of its Node's server (mapped as the passes map them), or
  // one the Node reports itself.
  const nodeByAddress = new Map<string, string>();
  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    for (const address of node.status?.addresses ?? []) nodeByAddress.set(address.address, name);
    const mapping = mapNodesToServers([node], servers);
    for (const { server } of mapping.ok ? mapping.mapped : []) {
      for (const address of server.interfaces.flatMap((i) => i.addresses)) nodeByAddress.set(address.address, name);
    }
  }
  const location = locationOf(locateLoadBalancers([found as V1Service], loadBalancers, clusterId), found as V1Service);
  if (location.kind === 'ambiguous') throw location.error;
  const lb = location.kind === 'found' ? location.lb : null;
  if (lb === null) return { service, lb, pools: [], listeners: [], monitors: [], nodeByAddress };
  const [pools, listeners, monitors] = await Promise.all([cloud.pools.list(), cloud.listeners.list(), cloud.healthMonitors.list()]);
  const own = pools.filter((pool) => pool.load_balancer.uuid === lb.uuid);
  return {
    service,
    lb,
    pools: await Promise.all(own.map(async (pool) => ({ pool, members: await cloud.poolMembers.list(pool.uuid) }))),
    listeners: listeners.filter((listener) => listener.load_balancer.uuid === lb.uuid),
    monitors: monitors.filter((monitor) => monitor.load_balancer.uuid === lb.uuid),
    nodeByAddress,
  };
}
