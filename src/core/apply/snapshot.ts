// Reading the state one load-balancer pass plans from, with a constant number of list calls:
// Services and Nodes from Kubernetes; servers, load balancers, pools, listeners, monitors,
// Floating IPs and subnets from cloudscale; then one member list per pool of the load balancers in play.
import type { V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../cloudscale/client.js';
import type { LoadBalancer, MemberState } from '../cloudscale/types.js';
import { CcmError, CloudscaleApiError } from '../errors.js';
import { serverVersion } from '../kube/cluster.js';
import type { KubeConnection } from '../kube/connection.js';
import { listNodeObjects } from '../kube/nodes.js';
import { listServices } from '../kube/services.js';
import { locateLoadBalancers, locatedUuids, loadBalancerReferences, memberCompactor, serviceKey, type UuidLookup } from '../lb/actual.js';
import { servicesInPlay, type CloudLists, type LbPassSnapshot, type ServiceSelection } from '../plan/snapshot.js';
import { mapConcurrent } from './concurrency.js';

export async function readCloudLists(cloud: CloudscaleClient): Promise<CloudLists> {
  const [servers, loadBalancers, pools, listeners, monitors, floatingIps, subnets] = await Promise.all([
    cloud.servers.list(),
    cloud.loadBalancers.list(),
    cloud.pools.list(),
    cloud.listeners.list(),
    cloud.healthMonitors.list(),
    cloud.floatingIps.list(),
    cloud.subnets.list(),
  ]);
  return { servers, loadBalancers, pools, listeners, monitors, floatingIps, subnets };
}

export async function readLbPassSnapshot(input: {
  readonly conn: KubeConnection;
  readonly cloud: CloudscaleClient;
  readonly clusterId: string;
  readonly kubeSystemUid: string;
  /** Proposed Services (plan -f) planned as if they existed; they replace live ones of the same name. */
  readonly proposed?: readonly V1Service[];
  readonly selection: ServiceSelection;
}): Promise<LbPassSnapshot> {
  const [liveServices, nodes, version, lists] = await Promise.all([
    listServices(input.conn),
    listNodeObjects(input.conn),
    serverVersion(input.conn),
    readCloudLists(input.cloud),
  ]);
  const services = mergeProposed(liveServices, input.proposed ?? []);
  const inPlay = servicesInPlay(services, input.selection, input.proposed ?? []);
  return {
    ...lists,
    ...(await readLoadBalancersInPlay(input.cloud, lists, inPlay, input.clusterId)),
    services,
    nodes,
    clusterId: input.clusterId,
    kubeSystemUid: input.kubeSystemUid,
    apiServerMinor: version.major === 1 ? version.minor : null,
    ipModeKept: keepsIpMode(liveServices),
  };
}

/** What a pass already knows when it reads back what it wrote (see readBackSnapshot). */
export interface PassKnowledge {
  /** The snapshot the pass started from: servers, subnets, Nodes and the version are reused. */
  readonly previous: LbPassSnapshot;
  /** Pools the pass created, with every member it created in them (all their members). */
  readonly createdPools: ReadonlyMap<string, readonly MemberState[]>;
}

/**
 * The state after a round of writes, for verification: Services, load balancers, pools,
 * listeners, health monitors and Floating IPs are read again, as are the members of pools that
 * existed before. What the writes cannot have changed (servers, subnets, Nodes, the version)
 * and the members of pools the pass created itself (their create answers list them) are not.
 */
export async function readBackSnapshot(
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  selection: ServiceSelection,
  known: PassKnowledge,
): Promise<LbPassSnapshot> {
  const { cloud } = deps;
  const [liveServices, loadBalancers, pools, listeners, monitors, floatingIps] = await Promise.all([
    listServices(deps.conn),
    cloud.loadBalancers.list(),
    cloud.pools.list(),
    cloud.listeners.list(),
    cloud.healthMonitors.list(),
    cloud.floatingIps.list(),
  ]);
  const { previous } = known;
  const lists: CloudLists = { servers: previous.servers, subnets: previous.subnets, loadBalancers, pools, listeners, monitors, floatingIps };
  const inPlay = servicesInPlay(liveServices, selection);
  return {
    ...previous,
    ...lists,
    ...(await readLoadBalancersInPlay(cloud, lists, inPlay, previous.clusterId, known.createdPools)),
    services: liveServices,
    // A status this pass wrote with ipMode and finds without shows the server drops it.
    ipModeKept: previous.ipModeKept && keepsIpMode(liveServices),
  };
}

/** See LbPassSnapshot.ipModeKept. */
function keepsIpMode(services: readonly V1Service[]): boolean {
  return !services.some((s) => (s.status?.loadBalancer?.ingress ?? []).some((e) => e.ip && !e.ipMode));
}

function mergeProposed(live: readonly V1Service[], proposed: readonly V1Service[]): V1Service[] {
  const replaced = new Set(proposed.map(serviceKey));
  return [...live.filter((s) => !replaced.has(serviceKey(s))), ...proposed];
}

/**
 * The load balancers of the Services in play, as far as the lists leave them open: those the
 * UUID annotations name but the list lacks, read by UUID; where each Service's is (located once,
 * here); then the members of their pools (except those `known` from this pass's own creates).
 */
async function readLoadBalancersInPlay(
  cloud: CloudscaleClient,
  lists: CloudLists,
  inPlay: readonly V1Service[],
  clusterId: string,
  known?: ReadonlyMap<string, readonly MemberState[]>,
): Promise<Pick<LbPassSnapshot, 'loadBalancers' | 'uuidLookups' | 'locations' | 'membersByPool' | 'unreadablePools'>> {
  const { loadBalancers, uuidLookups } = await confirmMissingByUuid(cloud, lists.loadBalancers, inPlay);
  const locations = locateLoadBalancers(inPlay, loadBalancers, clusterId);
  const { membersByPool, unreadablePools } = await readMembers(cloud, lists.pools, locatedUuids(locations.values()), known);
  return { loadBalancers, uuidLookups, locations, membersByPool, unreadablePools };
}

const UUID_FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A list is not evidence that a load balancer is gone (it may come back short or empty once):
 * each one a Service in play names by UUID but the list lacks is read by UUID. A value that is
 * no UUID names no load balancer at all.
 */
async function confirmMissingByUuid(
  cloud: CloudscaleClient,
  listed: readonly LoadBalancer[],
  services: readonly V1Service[],
): Promise<{ loadBalancers: readonly LoadBalancer[]; uuidLookups: ReadonlyMap<string, UuidLookup> }> {
  const known = new Set(listed.map((lb) => lb.uuid));
  const missing = [
    ...new Set(services.flatMap((s) => loadBalancerReferences(s).uuid ?? []).filter((uuid) => !known.has(uuid))),
  ];
  const uuidLookups = new Map<string, UuidLookup>();
  const found: LoadBalancer[] = [];
  await mapConcurrent(missing, 8, async (uuid) => {
    if (!UUID_FORMAT.test(uuid)) {
      uuidLookups.set(uuid, { kind: 'gone' });
      return;
    }
    const read = await readOrReason(() => cloud.loadBalancers.get(uuid));
    if (read.ok) found.push(read.value);
    else if (read.error instanceof CloudscaleApiError && read.error.isNotFound) uuidLookups.set(uuid, { kind: 'gone' });
    else uuidLookups.set(uuid, { kind: 'unreadable', error: read.error.message });
  });
  return { loadBalancers: found.length === 0 ? listed : [...listed, ...found], uuidLookups };
}

/** The members of every pool of the load balancers `lbUuids` (an ambiguous lookup located none: the planner reports it). */
async function readMembers(
  cloud: CloudscaleClient,
  allPools: CloudLists['pools'],
  lbUuids: ReadonlySet<string>,
  known: ReadonlyMap<string, readonly MemberState[]> = new Map(),
): Promise<Pick<LbPassSnapshot, 'membersByPool' | 'unreadablePools'>> {
  const pools = allPools.filter((pool) => lbUuids.has(pool.load_balancer.uuid));
  const compact = memberCompactor();
  const membersByPool: Record<string, readonly MemberState[]> = {};
  const unreadablePools = new Map<string, string>();
  await mapConcurrent(pools, 8, async (pool) => {
    const read = await readOrReason(async () => known.get(pool.uuid) ?? (await cloud.poolMembers.list(pool.uuid)).map(compact));
    if (read.ok) membersByPool[pool.uuid] = read.value;
    else unreadablePools.set(pool.uuid, read.error.message);
  });
  return { membersByPool, unreadablePools };
}

/**
 * A read of one object (or one pool's members) that concerns one Service: its failure is that
 * Service's, not the pass's. Only the client's own errors (the API refused or did not answer
 * after the retries) are such; anything else is a bug and stops the pass.
 */
async function readOrReason<T>(read: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: CcmError }> {
  try {
    return { ok: true, value: await read() };
  } catch (error) {
    if (error instanceof CcmError) return { ok: false, error };
    throw error;
  }
}
