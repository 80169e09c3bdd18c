// Shared ground for the sync-lb integration files: a seed builder whose servers become the
// file's Nodes, one pass of `sync-lb` with what it wrote (client counter and simulator log),
// the whole cloud-side state of a load balancer, and Service/Event helpers.
//
// Every pass of sync-lb considers every Node of the cluster, and a Node that maps to no server
// fails the Service: each file names its servers (and so its Nodes) with its own prefix and
// deletes its Nodes and Services afterwards (deleteCreatedObjects).
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type V1Service,
} from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { syncLbCommand, type SyncLbOptions, type SyncLbReport } from '../../src/commands/sync-lb.js';
import type {
  FloatingIp,
  HealthMonitor,
  Listener,
  LoadBalancer,
  Pool,
  PoolMember,
} from '../../src/core/cloudscale/types.js';
import { PartialFailureError } from '../../src/core/errors.js';
import type { DataPlaneChanges, RequestLogEntry, SimBehaviour, SimSeed } from '../../src/sim/index.js';
import { TEST_TOKEN, startHarness, type BinaryResult, type Harness, type TestContext } from './ccm.js';
import { tcpListener, tcpMonitor } from './go-ccm-bodies.js';
import { createNode, deleteCreatedObjects, ensureNamespace, testConnection, testKubeconfig, type TestNodeOptions } from './kube.js';

// ---- the seed --------------------------------------------------------------------------------

/** Two private subnets of one network in rma1; odd servers sit in A, even ones in B. */
export const SUBNET_A = { uuid: '0a0a0a0a-0000-4000-8000-00000000000a', cidr: '10.20.0.0/24', prefix: '10.20.0' };
export const SUBNET_B = { uuid: '0b0b0b0b-0000-4000-8000-00000000000b', cidr: '10.30.0.0/24', prefix: '10.30.0' };
export const PRIVATE_NETWORK_UUID = '0c0c0c0c-0000-4000-8000-00000000000c';

/** Floating IPs every seed holds, unassigned: `FLOATING_IPS[0]` … (IPv4 /32 and IPv6 /128). */
export const FLOATING_IPS = ['5.102.150.11/32', '5.102.150.12/32', '5.102.150.13/32', '2a06:c01:1::11/128'] as const;

/** The private address of server `i` (1-based): `10.20.0.i` for odd i, `10.30.0.i` for even i. */
export function privateAddress(i: number): string {
  return `${(i % 2 === 1 ? SUBNET_A : SUBNET_B).prefix}.${i}`;
}

/** A cloud with `servers` servers `<prefix>-1 … <prefix>-n` in rma1, each with a public and a private interface. */
export function lbSeed(prefix: string, servers: number): SimSeed {
  return {
    networks: [
      {
        name: 'private',
        zone: 'rma1',
        uuid: PRIVATE_NETWORK_UUID,
        subnets: [
          { cidr: SUBNET_A.cidr, uuid: SUBNET_A.uuid },
          { cidr: SUBNET_B.cidr, uuid: SUBNET_B.uuid },
        ],
      },
    ],
    servers: Array.from({ length: servers }, (_, index) => {
      const i = index + 1;
      return {
        name: serverName(prefix, i),
        flavor: 'flex-4-2',
        zone: 'rma1',
        interfaces: [
          { type: 'public' as const, addresses: [`5.102.146.${i}`] },
          { type: 'private' as const, network: 'private', addresses: [privateAddress(i)] },
        ],
      };
    }),
    floating_ips: FLOATING_IPS.map((network) => ({ network, type: 'regional' as const, region: 'rma' })),
  };
}

export function serverName(prefix: string, i: number): string {
  return `${prefix}-${i}`;
}

/** Creates the Nodes `<prefix>-1 … <prefix>-count` (Ready, no providerID: mapped by name). */
export async function createNodes(
  prefix: string,
  count: number,
  options: (i: number) => TestNodeOptions = () => ({}),
): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const name = serverName(prefix, i);
    await createNode(name, { ready: true, ...options(i) });
    names.push(name);
  }
  return names;
}

/** What a file's world holds besides its simulator (useLbWorld). */
export interface LbWorldOptions {
  /** Names the servers of the default seed and the Nodes: `<prefix>-1` … (a uniqueName). */
  readonly prefix: string;
  /** The namespace of the file's Services (a uniqueName), created; unset: none is. */
  readonly namespace?: string;
  /** The simulator's seed; by default lbSeed(prefix, servers). */
  readonly seed?: SimSeed | string;
  /** Servers of the default seed; default 2. */
  readonly servers?: number;
  /** Ready Nodes `<prefix>-1 … <prefix>-nodes`, mapped to the servers by name; default `servers`. */
  readonly nodes?: number;
  /** More of Node i (1-based): labels, taints, another Ready. */
  readonly node?: (i: number) => TestNodeOptions;
  readonly lbProvisionMs?: number;
  /** Simulator behaviour and data plane switched before the Nodes are made. */
  readonly behaviour?: Partial<SimBehaviour>;
  readonly dataPlane?: DataPlaneChanges;
}

export interface LbWorld {
  /**
   * The simulator `beforeAll` starts. It can be handed around while the file is collected; it
   * works in the tests and in hooks registered after useLbWorld, and throws when used earlier.
   */
  readonly harness: Harness;
  /** The Nodes' names, once made. */
  readonly nodes: readonly string[];
}

/**
 * The ground a sync-lb test file stands on, registered as its beforeAll/afterAll: a simulator,
 * the namespace and the Nodes before the first test; every object the file created (Nodes,
 * Services, namespace) deleted and the simulator stopped after the last. A file's own afterAll
 * runs before this one's (vitest runs after-hooks last registered first), with the harness up.
 */
export function useLbWorld(options: LbWorldOptions): LbWorld {
  let started: Harness | undefined;
  const current = (): Harness => {
    if (started === undefined) {
      throw new Error(`the simulator of the world ${options.prefix} is not running yet: use its harness in a test, or in a hook registered after useLbWorld`);
    }
    return started;
  };
  const harness: Harness = {
    get sim() {
      return current().sim;
    },
    get clusterId() {
      return current().clusterId;
    },
    get cloud() {
      return current().cloud;
    },
    context: (globals) => current().context(globals),
    stop: () => current().stop(),
  };
  const nodes: string[] = [];
  beforeAll(async () => {
    const servers = options.servers ?? 2;
    started = await startHarness({
      seed: options.seed ?? lbSeed(options.prefix, servers),
      ...(options.lbProvisionMs === undefined ? {} : { lbProvisionMs: options.lbProvisionMs }),
    });
    if (options.behaviour !== undefined) started.sim.admin.setBehaviour(options.behaviour);
    if (options.dataPlane !== undefined) started.sim.admin.setDataPlane(options.dataPlane);
    if (options.namespace !== undefined) await ensureNamespace(options.namespace);
    nodes.push(...(await createNodes(options.prefix, options.nodes ?? servers, options.node)));
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await started?.stop();
  });
  return { harness, nodes };
}

// ---- one pass --------------------------------------------------------------------------------

/**
 * The pace of every pass a test runs, whatever the command (sync-lb, run, apply share these
 * options): no settle pause between a delete and its re-creation, a changing load balancer read
 * every 50 ms and waited for 30 s at most, two Services at a time.
 */
export const FAST_PASS = { concurrency: 2, waitTimeout: 30, settleSeconds: 0, pollSeconds: 0.05 } as const;

/**
 * Pass options for tests: FAST_PASS with four Services at a time, and waiting for the writers'
 * Lease (a binary a test killed holds it until it expires).
 */
export const TEST_PASS: SyncLbOptions = {
  ...FAST_PASS,
  namespace: 'default',
  concurrency: 4,
  // Members leave at once, as under the Go CCM: these scenarios check what the pool holds after
  // one pass. Draining (the default, 60 s) has its own tests in sync-lb-strategies.test.ts.
  drainSeconds: 0,
  dryRun: false,
  wait: true,
};

export interface PassResult {
  /** The report; for a failed pass the one the PartialFailureError carries, if any. */
  readonly report: SyncLbReport | undefined;
  /** The PartialFailureError (or any other error) the pass threw. */
  readonly error: unknown;
  readonly ctx: TestContext;
  /** What the simulator received during the pass, oldest first. */
  readonly simRequests: readonly RequestLogEntry[];
  /** The non-GET requests among them. */
  readonly simWrites: readonly RequestLogEntry[];
}

/** Runs one sync-lb pass over `service/NAME` arguments; never throws (see `error`). */
export async function runPass(
  harness: Harness,
  names: readonly string[],
  options: Partial<SyncLbOptions> & { readonly abort?: AbortSignal } = {},
): Promise<PassResult> {
  const { abort, ...passOptions } = options;
  const ctx = harness.context(abort === undefined ? {} : { abort });
  const before = harness.sim.admin.requests().length;
  let report: SyncLbReport | undefined;
  let error: unknown;
  try {
    report = await syncLbCommand(
      names.map((name) => `service/${name}`),
      { ...TEST_PASS, ...passOptions },
      ctx,
    );
  } catch (caught) {
    error = caught;
    if (caught instanceof PartialFailureError) report = caught.result as SyncLbReport | undefined;
  }
  const simRequests = harness.sim.admin.requests().slice(before);
  return { report, error, ctx, simRequests, simWrites: simRequests.filter((r) => r.method !== 'GET') };
}

/** A pass that must succeed; returns its report. */
export async function passOk(
  harness: Harness,
  names: readonly string[],
  options: Partial<SyncLbOptions> = {},
): Promise<PassResult & { report: SyncLbReport }> {
  const result = await runPass(harness, names, options);
  if (result.error !== undefined) {
    throw new Error(`the pass failed: ${describeError(result.error)}\n${result.ctx.out()}${result.ctx.err()}`);
  }
  return result as PassResult & { report: SyncLbReport };
}

/** A pass that must fail with a PartialFailureError; returns it with the pass. */
export async function passFails(
  harness: Harness,
  names: readonly string[],
  options: Partial<SyncLbOptions> & { readonly abort?: AbortSignal } = {},
): Promise<PassResult & { error: PartialFailureError }> {
  const result = await runPass(harness, names, options);
  expect(result.error, `the pass should fail; it printed:\n${result.ctx.out()}`).toBeInstanceOf(PartialFailureError);
  return result as PassResult & { error: PartialFailureError };
}

/** The pass after convergence: every named Service in sync, and not one write request. */
export async function expectConverged(
  harness: Harness,
  names: readonly string[],
  options: Partial<SyncLbOptions> = {},
): Promise<SyncLbReport> {
  const { report, simWrites } = await passOk(harness, names, options);
  expect(report.services.map((s) => [s.service, s.status])).toEqual(
    report.services.map((s) => [s.service, 'unchanged']),
  );
  expect(report.requests.writes).toBe(0);
  expect(simWrites).toEqual([]);
  return report;
}

function describeError(error: unknown): string {
  if (error instanceof PartialFailureError) {
    return `${error.message}: ${error.failures.map((f) => `${f.object}: ${f.error.message}`).join('; ')}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The error messages of one Service in a PartialFailureError (`namespace/name`). */
export function failuresOf(error: PartialFailureError, namespace: string, name: string): string[] {
  return error.failures.filter((f) => f.object === `service/${namespace}/${name}`).map((f) => f.error.message);
}

// ---- the cloud side --------------------------------------------------------------------------

export interface PoolState {
  readonly pool: Pool;
  readonly members: PoolMember[];
  readonly listeners: Listener[];
  readonly monitors: HealthMonitor[];
}

export interface LbState {
  readonly lb: LoadBalancer;
  /** By pool name. */
  readonly pools: Record<string, PoolState>;
  readonly floatingIps: FloatingIp[];
  /** Listeners of the load balancer whose pool was deleted. */
  readonly freeListeners: Listener[];
}

/** Every load balancer of the project whose name is `name`. */
export async function lbsNamed(harness: Harness, name: string): Promise<LoadBalancer[]> {
  return (await harness.cloud.loadBalancers.list()).filter((lb) => lb.name === name);
}

/** The whole state of one load balancer (by UUID), read through the assertion client. */
export async function lbState(harness: Harness, uuid: string): Promise<LbState> {
  const { cloud } = harness;
  const [lb, pools, listeners, monitors, floatingIps] = await Promise.all([
    cloud.loadBalancers.get(uuid),
    cloud.pools.list(),
    cloud.listeners.list(),
    cloud.healthMonitors.list(),
    cloud.floatingIps.list(),
  ]);
  const own = pools.filter((p) => p.load_balancer.uuid === uuid);
  const states: Record<string, PoolState> = {};
  for (const pool of own) {
    expect(states[pool.name], `two pools named ${pool.name} on ${lb.name}`).toBeUndefined();
    states[pool.name] = {
      pool,
      members: await cloud.poolMembers.list(pool.uuid),
      listeners: listeners.filter((l) => l.pool?.uuid === pool.uuid),
      monitors: monitors.filter((m) => m.pool.uuid === pool.uuid),
    };
  }
  return {
    lb,
    pools: states,
    floatingIps: floatingIps.filter((f) => f.load_balancer?.uuid === uuid),
    freeListeners: listeners.filter((l) => l.pool === null && l.load_balancer.uuid === uuid),
  };
}

/** The state of the one load balancer named after the Service (or `name`); fails if not exactly one. */
export async function theLb(harness: Harness, service: V1Service | string): Promise<LbState> {
  const name = typeof service === 'string' ? service : `k8s-service-${service.metadata!.uid!}`;
  const lbs = await lbsNamed(harness, name);
  expect(lbs.map((lb) => lb.name), `load balancers named ${name}`).toHaveLength(1);
  return lbState(harness, lbs[0]!.uuid);
}

/** One pool of a state, failing clearly when it is missing. */
export function poolOf(state: LbState, name: string): PoolState {
  const pool = state.pools[name];
  if (pool === undefined) {
    throw new Error(`no pool ${name} on ${state.lb.name}; pools: ${Object.keys(state.pools).join(', ') || '(none)'}`);
  }
  return pool;
}

/** Member names of a pool, sorted. */
export function memberNames(pool: PoolState): string[] {
  return pool.members.map((m) => m.name).sort();
}

/** A checked invariant of every pool: exactly one listener and one monitor. */
export function expectWellFormed(state: LbState): void {
  for (const [name, pool] of Object.entries(state.pools)) {
    expect(pool.listeners, `listeners of pool ${name}`).toHaveLength(1);
    expect(pool.monitors, `monitors of pool ${name}`).toHaveLength(1);
  }
  expect(state.freeListeners, 'listeners without a pool').toEqual([]);
}

/** Simulator requests of a pass as `METHOD route`, for "what exactly was written" assertions. */
export function routes(entries: readonly RequestLogEntry[]): string[] {
  return entries.map((e) => `${e.method} ${e.route}`);
}

// ---- the Kubernetes side ---------------------------------------------------------------------

export async function readService(namespace: string, name: string): Promise<V1Service> {
  return testConnection().core.readNamespacedService({ namespace, name });
}

/** JSON merge patch of a Service (null removes a key). */
export async function patchService(namespace: string, name: string, body: object): Promise<V1Service> {
  return testConnection().core.patchNamespacedService(
    { namespace, name, body },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Sets (string) or removes (null) annotations of a Service. */
export async function annotate(
  namespace: string,
  name: string,
  annotations: Record<string, string | null>,
): Promise<V1Service> {
  return patchService(namespace, name, { metadata: { annotations } });
}

/** `k8s.cloudscale.ch/<suffix>` */
export function key(suffix: string): string {
  return `k8s.cloudscale.ch/${suffix}`;
}

export type EventSummary = Pick<CoreV1Event, 'type' | 'reason' | 'message'>;

/** The Events about a Service (by name and UID), oldest first. */
export async function eventsOf(service: V1Service): Promise<EventSummary[]> {
  const namespace = service.metadata!.namespace!;
  const { items } = await testConnection().core.listNamespacedEvent({ namespace });
  return items
    .filter((e) => e.involvedObject.name === service.metadata!.name && e.involvedObject.uid === service.metadata!.uid)
    .sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)))
    .map((e) => ({ type: e.type, reason: e.reason, message: e.message }));
}

/** Warning Events about a Service. */
export async function warningsOf(service: V1Service): Promise<EventSummary[]> {
  return (await eventsOf(service)).filter((e) => e.type === 'Warning');
}

// ---- load balancers made by others -----------------------------------------------------------

/**
 * Builds, through the API, the load balancer cloudscale's Go CCM builds for `service` (one TCP
 * port per pool, default annotations, the given nodes' private addresses): name
 * `k8s-service-<uid>`, no tags unless given, pools/members/listeners/monitors with the bodies
 * of docs/go-ccm-compatibility.md (members without `enabled`, `http: {}` for tcp monitors).
 * Returns the load balancer's UUID.
 */
export async function buildGoCcmLoadBalancer(
  harness: Harness,
  service: V1Service,
  servers: readonly number[],
  options: { readonly tags?: Record<string, string>; readonly name?: string } = {},
): Promise<string> {
  const { cloud } = harness;
  const lb = await cloud.loadBalancers.create({
    name: options.name ?? `k8s-service-${service.metadata!.uid!}`,
    flavor: 'lb-standard',
    zone: 'rma1',
    vip_addresses: [],
    ...(options.tags === undefined ? {} : { tags: options.tags }),
  });
  for (const port of service.spec!.ports!) {
    const pool = await cloud.pools.create({
      name: port.name ? `tcp/${port.name}` : 'tcp',
      load_balancer: lb.uuid,
      algorithm: 'round_robin',
      protocol: 'tcp',
    });
    for (const i of servers) {
      const address = privateAddress(i);
      await cloud.poolMembers.create(pool.uuid, {
        name: `${address}:${port.nodePort!}`,
        protocol_port: port.nodePort!,
        monitor_port: port.nodePort!,
        address,
        subnet: (i % 2 === 1 ? SUBNET_A : SUBNET_B).uuid,
      });
    }
    await cloud.listeners.create(tcpListener(pool.uuid, port.port));
    await cloud.healthMonitors.create(tcpMonitor(pool.uuid));
  }
  return lb.uuid;
}

/**
 * Leaves the Service as the Go CCM and the generic service controller leave it after a sync:
 * finalizer, the uuid/config-version/zone annotations, and the status (VIPs with ipMode Proxy).
 */
export async function markAsGoCcmManaged(harness: Harness, service: V1Service, lbUuid: string): Promise<V1Service> {
  const namespace = service.metadata!.namespace!;
  const name = service.metadata!.name!;
  const lb = await harness.cloud.loadBalancers.get(lbUuid);
  await patchService(namespace, name, {
    metadata: {
      finalizers: ['service.kubernetes.io/load-balancer-cleanup'],
      annotations: {
        [key('loadbalancer-uuid')]: lbUuid,
        [key('loadbalancer-config-version')]: '1',
        [key('loadbalancer-zone')]: lb.zone.slug,
      },
    },
  });
  await testConnection().core.patchNamespacedServiceStatus(
    {
      namespace,
      name,
      body: { status: { loadBalancer: { ingress: lb.vip_addresses.map((v) => ({ ip: v.address, ipMode: 'Proxy' })) } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return readService(namespace, name);
}

// ---- the real binary, as a process the test can signal -----------------------------------------

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Fails clearly when dist/ is missing: the binary runs the built code (`npm run build`). */
export function requireBuiltBinary(): void {
  if (!existsSync(`${repoRoot}dist/cli.js`)) {
    throw new Error('dist/cli.js is missing: run `npm run build` before this test (npm test does)');
  }
}

/**
 * Starts `bin/cloudscale-ccm.js` against the test cluster and `apiUrl`, and hands back the
 * process (to signal it) and its result once it exited. Unlike `runBinary`, it does not wait.
 */
export function spawnBinary(
  args: readonly string[],
  options: { apiUrl: string },
): { child: ChildProcess; done: Promise<BinaryResult & { signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [`${repoRoot}bin/cloudscale-ccm.js`, ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: testKubeconfig(),
      CLOUDSCALE_API_TOKEN: TEST_TOKEN,
      CLOUDSCALE_API_URL: options.apiUrl,
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<BinaryResult & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/**
 * Watches the simulator's request log from now on: `until` resolves once it holds `count`
 * requests matching `METHOD route` that arrived after the watcher was made (polled every 2 ms).
 */
export function watchRequests(harness: Harness): {
  until(methodAndRoute: string, count?: number, timeoutMs?: number): Promise<void>;
} {
  const since = harness.sim.admin.requests().length;
  return {
    async until(methodAndRoute, count = 1, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const seen = harness.sim.admin
          .requests()
          .slice(since)
          .filter((r) => `${r.method} ${r.route}` === methodAndRoute).length;
        if (seen >= count) return;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} × ${methodAndRoute} in the simulator log`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    },
  };
}
