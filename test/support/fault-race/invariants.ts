// The safety invariants checked after every fault-and-race run, each from the simulator's state
// and request log and the kube-apiserver, never from the tool's own account of what it did:
//
//   one load balancer per Service   by name, by service-uid tag, and per live Service
//   foreign LBs untouched           the other cluster's and the hand-made one: same JSON, no write
//   no Node deleted whose server exists
//   converged within two passes     then a pass with zero cloud and zero Kubernetes writes; every
//                                   Service not refused by design has its tagged LB and status
//   no load balancer lost           nothing deleted but the true orphan of this cluster
//   refused Service unharmed        a Service refused by design keeps its LB and Floating IPs
//   one writer at a time            the cloud writes of two writers never interleave (by arrival)
//   no write after the Lease was taken over while paused
//                                   a writer stopped past its renew deadline, whose Lease another
//                                   writer took meanwhile, sends no cloud write after that
//   (runs on the data plane, where pools are swapped:)
//   one pool per port, nothing forgotten
//                                   after the final passes every pool of the cluster's load
//                                   balancers has exactly one listener and one monitor, and
//                                   exactly the Service's members (every Node's address at the
//                                   port's nodePort), all enabled, none tagged as draining
//   no outage beyond the prediction a changed Service's port, still wanted, never went without a
//                                   listener on a pool with an up member for longer than its
//                                   plan predicted (swapBoundMs: the largest downtime.maxSeconds
//                                   of the Service's planned actions, plus PROPAGATION_TOLERANCE_MS)
//
// Requests are told apart by the API token they carry: every writer of a step has its own, and
// the simulator's log names it (the harness's own checkpoints and passes use `default`).
import type { V1Service } from '@kubernetes/client-node';
import type { HealthMonitor, Listener, LoadBalancer, Pool, PoolMember } from '../../../src/core/cloudscale/types.js';
import { MEMBER_DRAINING_TAG } from '../../../src/core/lb/strategies/member-drain.js';
import type { PortServing, RequestLogEntry } from '../../../src/sim/index.js';
import { UNINITIALIZED_TAINT_KEY } from '../kube.js';
import { key, serverName } from '../lb-scenarios.js';
import { TEST_TIME_SCALE } from '../sim-world.js';
import type { CliResult } from './cli.js';
import { outcomeLine } from './cli.js';
import { snapshotDiff, type CloudState, type KubeState } from './observe.js';
import type { Scenario, ServiceSpec } from './scenario.js';

export const INVARIANTS = [
  'one load balancer per Service',
  'foreign load balancers untouched',
  'no Node deleted whose server exists',
  'converged within two passes, then zero writes',
  'no load balancer lost',
  'refused Service unharmed',
  'one writer at a time',
  'no write after the Lease was taken over while paused',
  'one pool per port, nothing forgotten',
  'no outage beyond the prediction',
] as const;

export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  readonly invariant: Invariant;
  readonly evidence: string;
}

export interface Checkpoint {
  readonly cloud: CloudState;
  readonly kube: KubeState;
}

export interface PassRecord {
  readonly label: string;
  readonly run: CliResult;
  readonly cleanup: CliResult;
  /** The state between the pass's `run` and its `cleanup` (checked passes only). */
  readonly afterRun: Checkpoint | undefined;
  readonly runDocument: Record<string, unknown> | undefined;
  /** The cloud writes that arrived while the pass ran (however late they finished). */
  readonly cloudWrites: readonly RequestLogEntry[];
  /** Measured in pass 3 only (empty in the others). */
  readonly kubeWrites: readonly string[];
}

export interface RunFacts {
  readonly clusterId: string;
  readonly prefix: string;
  readonly scenario: Scenario;
  serviceName(spec: Pick<ServiceSpec, 'key'>): string;
  readonly foreign: { readonly otherCluster: string; readonly handMade: string; readonly orphan: string | null };
  readonly foreignBefore: Readonly<Record<'otherCluster' | 'handMade', Record<string, string>>>;
  readonly foreignAfter: Readonly<Record<'otherCluster' | 'handMade', Record<string, string>>>;
  /** After the world was built (and after the schedule's `converge` step, if it has one). */
  readonly start: Checkpoint;
  readonly afterSchedule: Checkpoint;
  readonly final: Checkpoint;
  /** The simulator's log from the start of the schedule to the end of the passes, in arrival order. */
  readonly log: readonly RequestLogEntry[];
  /** Where each step and pass begins, in order: its requests arrived after the `from`-th (their `seq` > from). */
  readonly marks: readonly { readonly label: string; readonly from: number }[];
  readonly passes: readonly PassRecord[];
  readonly serverUuids: ReadonlyMap<number, string>;
  readonly deletedServers: ReadonlySet<number>;
  /** Writers the schedule stopped (SIGSTOP) past their renew deadline and continued. */
  readonly pauses: readonly PauseRecord[];
  /** Runs on the data plane only: what the swap invariants read. */
  readonly swap?: SwapFacts;
}

/** A change the schedule made to a converged Service: the Service, what changed, and when (Date.now()). */
export interface SwapRecord {
  readonly service: string;
  readonly change: string;
  readonly at: number;
  /**
   * What `plan -o json` predicted right after the change, per port of the Service: the largest
   * `actions[].downtime.maxSeconds` of the actions that touch that port (portsTouched; 0: no
   * interruption; null: an open-ended outage, which no bound holds).
   */
  readonly predictedByPort: Readonly<Record<number, number | null>>;
  /**
   * Whether its ports served when it was made. A change made to repair a pool that is down (a
   * load balancer in `error`) is held to serving at the end, not to its prediction: the outage
   * it ends was there before it.
   */
  readonly servedAtChange: boolean;
}

export interface SwapFacts {
  readonly swaps: readonly SwapRecord[];
  /** When the schedule's last step with writers ended, and pass 1's `run` (Date.now()). */
  readonly writersEndedAt: number | undefined;
  readonly firstPassEndedAt: number;
  /**
   * Whether the schedule's writers may leave a port without its listener: a kill, or a run of
   * faults, may. One failed request may not (the failed-request runs): its writer completes the
   * step pair, or never begins one; a port it left without a listener is a violation, whatever
   * the data plane showed until pass 1 created it.
   */
  readonly writersMayStrand?: boolean;
  /** Every port of every swapped Service, once the final passes were done and the data plane settled. */
  readonly ports: readonly {
    readonly service: string;
    /** The change the port's history is read since. */
    readonly swap: SwapRecord;
    readonly lbUuid: string;
    readonly port: number;
    /** Whether the port had a listener on a pool when the schedule ended (its writers done). */
    readonly listenerAfterSchedule: boolean;
    /** The simulator's serving history of the port since the change (undefined: the port is unknown to the data plane). */
    readonly serving: PortServing | undefined;
  }[];
  /** The pools of the load balancers the live Services name, after the final passes. */
  readonly pools: readonly {
    readonly pool: Pool;
    readonly listeners: readonly Listener[];
    readonly monitors: readonly HealthMonitor[];
    readonly members: readonly PoolMember[];
  }[];
  /** The private addresses of the Nodes that should be members (the servers whose Node exists). */
  readonly memberAddresses: readonly string[];
}

/**
 * What the data plane may add to a prediction, at the runs' time scale: a listener created
 * anew serves 30 s (of the real API's) after its create, and a new member is judged up after
 * the fast monitor's two checks 1 s apart (FAST_MONITOR in runner.ts): 32 s × 0.05 = 1.6 s.
 * The prediction itself is not scaled: it is the wall time the plan promises, and the tool's
 * own waits (its polling, its process start) do not run faster in a scaled world.
 */
export const PROPAGATION_TOLERANCE_MS = Math.round((30_000 + 2 * 1_000) * TEST_TIME_SCALE);

/**
 * The ports of a Service an action touches, read from its `object` (src/core/lb names them so):
 * a listener its own port; a pool, its members, its monitor and a health gate on it the port of
 * the Service port the pool is named after (`tcp/http` for the port named http); anything else
 * (the load balancer, a Floating IP, a pool no port names) every port.
 */
export function portsTouched(object: string, ports: readonly { readonly name?: string; readonly port: number; readonly protocol?: string }[]): number[] {
  const every = ports.map((p) => p.port);
  const listener = /^listener (?:tcp|udp)\/(\d+)$/.exec(object);
  if (listener !== null) return [Number(listener[1])];
  const pool = /(?:^|of )pool ((?:tcp|udp)(?:\/\S+?)?)(?: healthy)?$/.exec(object);
  if (pool === null) return every;
  const named = ports.filter((p) => `${(p.protocol ?? 'TCP').toLowerCase()}${p.name ? `/${p.name}` : ''}` === pool[1]);
  return named.length > 0 ? named.map((p) => p.port) : every;
}

/**
 * Each port's prediction from a plan's actions: the largest downtime.maxSeconds of the actions
 * that touch it (null wins: open-ended), 0 for a port none touches.
 */
export function predictionByPort(
  actions: readonly { readonly object: string; readonly downtime?: { readonly maxSeconds: number | null } }[],
  ports: readonly { readonly name?: string; readonly port: number; readonly protocol?: string }[],
): Record<number, number | null> {
  const byPort: Record<number, number | null> = Object.fromEntries(ports.map((p) => [p.port, 0]));
  for (const action of actions) {
    // Not `?? 0`: null (open-ended) must stay null.
    const seconds = action.downtime === undefined ? 0 : action.downtime.maxSeconds;
    for (const port of portsTouched(action.object, ports)) {
      const was = port in byPort ? byPort[port]! : 0;
      byPort[port] = was === null || seconds === null ? null : Math.max(was, seconds);
    }
  }
  return byPort;
}

/** The prediction for `port` in milliseconds; Infinity for an open-ended one (maxSeconds null). */
export function predictedMs(swap: Pick<SwapRecord, 'predictedByPort'>, port: number): number {
  const seconds = predictedSeconds(swap, port);
  return seconds === null ? Number.POSITIVE_INFINITY : seconds * 1000;
}

/** What was predicted for `port`: 0 for a port the plan did not know (null is open-ended, kept). */
function predictedSeconds(swap: Pick<SwapRecord, 'predictedByPort'>, port: number): number | null {
  return port in swap.predictedByPort ? swap.predictedByPort[port]! : 0;
}

/**
 * The longest a changed port may go without an up member: what its plan predicted plus
 * PROPAGATION_TOLERANCE_MS. A writer stopped between the old listener's delete and the new
 * one's create (killed, or failed by a fault) leaves the port without a listener until the next
 * pass creates it; the harness runs that pass (pass 1's `run`) after the schedule. So when the
 * port had no listener once the schedule's writers were done, the time from the end of that
 * writers step to the end of pass 1's `run` is added.
 */
export function swapBoundMs(
  facts: Pick<SwapFacts, 'writersEndedAt' | 'firstPassEndedAt'>,
  swap: Pick<SwapRecord, 'predictedByPort'>,
  port: number,
  listenerAfterSchedule: boolean,
): number {
  const bound = predictedMs(swap, port) + PROPAGATION_TOLERANCE_MS;
  if (listenerAfterSchedule || facts.writersEndedAt === undefined) return bound;
  return bound + Math.max(0, facts.firstPassEndedAt - facts.writersEndedAt);
}

/** A writer process stopped past its Lease's renew deadline, then continued. */
export interface PauseRecord {
  /** The name of its API token: the simulator's log names its requests so. */
  readonly token: string;
  readonly forMs: number;
  /** The simulator's arrival count when it was stopped and when it was continued. */
  readonly stoppedAt: number;
  readonly continuedAt: number;
  /** Who took the writers' Lease while it was stopped, and the arrival count when that was seen. */
  readonly holder?: string;
  readonly atSeq?: number;
  /** How it ended (outcomeLine), and all it printed. */
  readonly outcome: string;
  readonly output: string;
}

/** The LeaseLostError of a writer that finds itself frozen past its renew deadline, in its output. */
export function stoppedByFence(output: string): boolean {
  return /past its renew deadline[^\n]*writes nothing more/.test(output);
}

const CLUSTER_TAG = 'k8s.cloudscale.ch/cluster';
const SERVICE_UID_TAG = 'k8s.cloudscale.ch/service-uid';

export interface Findings {
  readonly violations: Violation[];
  /**
   * Observations that break no invariant: a paused writer's write that arrived after it was
   * continued while nobody had taken its Lease (one that passed the fence before the stop).
   */
  readonly notes: string[];
}

export function checkInvariants(facts: RunFacts): Findings {
  const final = new Set(duplicates(facts.clusterId, facts.final));
  // Not even for a moment: a duplicate between checkpoints (say, after a killed writer's create
  // and a rename) is as much a violation as one at the end.
  const transient = intermediate(facts).flatMap(({ label, checkpoint }) =>
    duplicates(facts.clusterId, checkpoint)
      .filter((d) => !final.has(d))
      .map((d): Violation => ({ invariant: 'one load balancer per Service', evidence: `${label}: ${d}` })),
  );
  const violations = [
    ...duplicates(facts.clusterId, facts.final).map((evidence): Violation => ({ invariant: 'one load balancer per Service', evidence })),
    ...transient,
    ...foreignUntouched(facts),
    ...nodesKept(facts),
    ...converged(facts),
    ...noneLost(facts),
    ...refusedUnharmed(facts),
    ...oneWriterAtATime(facts),
    ...silentAfterTakeover(facts),
    ...(facts.swap === undefined ? [] : [...poolsComplete(facts, facts.swap), ...outagesWithinPrediction(facts.swap)]),
  ];
  return { violations, notes: lateWritesAfterPause(facts) };
}

/** The checkpoints between the start and the end, in order. */
function intermediate(facts: RunFacts): { label: string; checkpoint: Checkpoint }[] {
  return [
    { label: 'after the schedule', checkpoint: facts.afterSchedule },
    ...facts.passes.flatMap((p) => (p.afterRun === undefined ? [] : [{ label: `after ${p.label}'s run`, checkpoint: p.afterRun }])),
  ];
}

// ---- one load balancer per Service -----------------------------------------------------------

/** Each group of load balancers that serve one Service, by its references, by name, or by tag. */
function duplicates(clusterId: string, { cloud, kube }: Checkpoint): string[] {
  const lbs = cloud.loadBalancers;
  const found: string[] = [];
  const reported = new Set<string>();
  const report = (group: readonly LoadBalancer[], what: string) => {
    if (group.length <= 1 || group.every((lb) => reported.has(lb.uuid))) return;
    for (const lb of group) reported.add(lb.uuid);
    found.push(`${what}: ${group.map(describeLb).join('; ')}`);
  };
  for (const service of kube.services.values()) {
    const { name, uid } = identity(service);
    const uuid = service.metadata?.annotations?.[key('loadbalancer-uuid')];
    const lbName = expectedLbName(service);
    const mine = lbs.filter(
      (lb) => lb.uuid === uuid || lb.name === lbName || (lb.tags[CLUSTER_TAG] === clusterId && lb.tags[SERVICE_UID_TAG] === uid),
    );
    report(mine, `Service ${name} has ${mine.length} load balancers (by its loadbalancer-uuid, its name ${lbName}, or its service-uid tag)`);
  }
  for (const [name, group] of groupBy(lbs, (lb) => lb.name)) report(group, `${group.length} load balancers named ${name}`);
  const ours = lbs.filter((lb) => lb.tags[CLUSTER_TAG] === clusterId && lb.tags[SERVICE_UID_TAG] !== undefined);
  for (const [uid, group] of groupBy(ours, (lb) => lb.tags[SERVICE_UID_TAG]!)) {
    report(group, `${group.length} load balancers tagged for Service uid ${uid}`);
  }
  return found;
}

// ---- foreign load balancers ------------------------------------------------------------------

function foreignUntouched(facts: RunFacts): Violation[] {
  const violations: Violation[] = [];
  for (const which of ['otherCluster', 'handMade'] as const) {
    const label = which === 'otherCluster' ? `the other cluster's load balancer ${facts.foreign.otherCluster}` : `the hand-made untagged load balancer ${facts.foreign.handMade}`;
    const diff = snapshotDiff(facts.foreignBefore[which], facts.foreignAfter[which]);
    if (diff.length > 0) violations.push({ invariant: 'foreign load balancers untouched', evidence: `${label} changed: ${diff.join('; ')}` });
    const uuids = new Set(Object.values(facts.foreignBefore[which]).flatMap((json) => json.match(UUID) ?? []));
    const writes = facts.log.filter((e) => e.method !== 'GET' && [...uuids].some((u) => e.path.includes(u)));
    if (writes.length > 0) {
      violations.push({
        invariant: 'foreign load balancers untouched',
        evidence: `write requests to ${label} or its pools: ${writes.map((e) => logLine(facts, e)).join('; ')}`,
      });
    }
  }
  return violations;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

// ---- Nodes -----------------------------------------------------------------------------------

function nodesKept(facts: RunFacts): Violation[] {
  const violations: Violation[] = [];
  for (let i = 1; i <= facts.scenario.world.servers; i++) {
    const node = serverName(facts.prefix, i);
    const uuid = facts.serverUuids.get(i)!;
    const server = facts.final.cloud.servers.find((s) => s.uuid === uuid);
    if (facts.final.kube.nodes.has(node) || server === undefined) continue;
    const short = facts.log.filter((e) => e.route === '/v1/servers' && e.fault === 'shortList');
    violations.push({
      invariant: 'no Node deleted whose server exists',
      evidence:
        `Node ${node} was deleted, but its server ${uuid} exists (status ${server.status})` +
        (short.length > 0 ? `; server lists answered short: ${short.map((e) => logLine(facts, e)).join('; ')}` : ''),
    });
  }
  return violations;
}

// ---- convergence -----------------------------------------------------------------------------

function converged(facts: RunFacts): Violation[] {
  const violations: Violation[] = [];
  const add = (evidence: string) => violations.push({ invariant: 'converged within two passes, then zero writes', evidence });
  const third = facts.passes[2]!;
  if (third.cloudWrites.length > 0) {
    add(`pass 3 wrote to the cloud: ${third.cloudWrites.slice(0, 8).map((e) => logLine(facts, e)).join('; ')}`);
  }
  if (third.kubeWrites.length > 0) add(`pass 3 wrote to Kubernetes: ${third.kubeWrites.slice(0, 8).join('; ')}`);
  const refusing = refusingNames(facts);
  if (third.runDocument === undefined) {
    add(`pass 3 \`run\` printed no result: ${outcomeLine(third.run)}`);
  } else {
    for (const failure of failuresOf(third.runDocument)) {
      const service = /^service\/[^/]+\/(.+)$/.exec(failure.object)?.[1];
      if (service !== undefined && refusing.has(service)) continue;
      add(`pass 3 still fails for ${failure.object}: ${failure.message}`);
    }
  }
  if (third.cleanup.code !== 0) add(`pass 3 \`cleanup\` failed: ${outcomeLine(third.cleanup)}`);

  const { cloud, kube } = facts.final;
  for (const service of kube.services.values()) {
    const { name, uid } = identity(service);
    if (refusing.has(name) || service.spec?.type !== 'LoadBalancer') continue;
    const uuid = service.metadata?.annotations?.[key('loadbalancer-uuid')];
    const lb = cloud.loadBalancers.find((l) => l.uuid === uuid);
    if (uuid === undefined || lb === undefined) {
      add(`Service ${name} has no load balancer after two passes (loadbalancer-uuid ${uuid ?? 'absent'}${uuid === undefined ? '' : ', which does not exist'})`);
      continue;
    }
    if (lb.tags[CLUSTER_TAG] !== facts.clusterId || lb.tags[SERVICE_UID_TAG] !== uid) {
      add(`the load balancer of Service ${name} (uid ${uid}) is not tagged as its own: ${describeLb(lb)}`);
    }
    if ((service.status?.loadBalancer?.ingress ?? []).length === 0) add(`Service ${name} has no status.loadBalancer.ingress`);
    const spec = specOf(facts, name);
    if (spec?.floatingIp !== undefined && !cloud.floatingIps.some((f) => f.network === spec.floatingIp && f.load_balancer?.uuid === lb.uuid)) {
      add(`the Floating IP ${spec.floatingIp} of Service ${name} is not assigned to its load balancer ${lb.uuid}`);
    }
  }
  for (let i = 1; i <= facts.scenario.world.servers; i++) {
    const node = kube.nodes.get(serverName(facts.prefix, i));
    if (node === undefined) continue;
    const providerId = node.spec?.providerID ?? '';
    if (facts.deletedServers.has(i)) {
      if (providerId !== '') add(`Node ${node.metadata!.name!} (NotReady, providerID ${providerId}) still exists though its server was deleted`);
    } else if (providerId === '' || (node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY)) {
      add(`Node ${node.metadata!.name!} is not initialised after two passes (providerID "${providerId}")`);
    }
  }
  const orphan = facts.foreign.orphan;
  const left = orphan === null ? undefined : cloud.loadBalancers.find((lb) => lb.uuid === orphan);
  if (left !== undefined) add(`cleanup left the true orphan ${describeLb(left)} after two passes`);
  return violations;
}

function failuresOf(document: Record<string, unknown>): { object: string; message: string }[] {
  const failures = document.failures;
  if (!Array.isArray(failures)) return [];
  return failures.map((f: { object?: unknown; message?: unknown }) => ({ object: String(f.object), message: String(f.message) }));
}

// ---- lost load balancers ---------------------------------------------------------------------

/**
 * A load balancer is lost when a Service that still wants it ends up without it: deleted while
 * a live Service's `loadbalancer-uuid` named it at some checkpoint, or replaced (the Service's
 * `loadbalancer-uuid` changed from one load balancer to another). Deleting the true orphan, or a
 * stray no Service ever recorded (what a killed create leaves), loses nothing.
 */
function noneLost(facts: RunFacts): Violation[] {
  const violations: Violation[] = [];
  const checkpoints = [{ label: 'at the start', checkpoint: facts.start }, ...intermediate(facts)];
  const live = facts.final.kube.services;
  const recorded = (uuid: string) =>
    checkpoints.flatMap(({ label, checkpoint }) =>
      [...checkpoint.kube.services.values()]
        .filter((s) => s.metadata?.annotations?.[key('loadbalancer-uuid')] === uuid)
        .map((s) => ({ label, service: s.metadata!.name! })),
    );
  const seen = new Set<string>();
  for (const entry of facts.log) {
    if (entry.method !== 'DELETE' || entry.route !== '/v1/load-balancers/{uuid}' || (entry.status >= 400 && entry.status < 500)) continue;
    const uuid = entry.path.split('?')[0]!.split('/').pop()!;
    if (uuid === facts.foreign.orphan || seen.has(uuid) || facts.final.cloud.loadBalancers.some((lb) => lb.uuid === uuid)) continue;
    seen.add(uuid);
    const users = recorded(uuid).filter((r) => live.get(r.service)?.spec?.type === 'LoadBalancer');
    if (users.length === 0) continue;
    violations.push({
      invariant: 'no load balancer lost',
      evidence: `${logLine(facts, entry)} deleted ${whoseLb(facts, uuid)}; Service ${users[0]!.service} recorded it ${users[0]!.label} and still exists`,
    });
  }
  for (const [name, service] of live) {
    const now = service.metadata?.annotations?.[key('loadbalancer-uuid')];
    for (const { label, checkpoint } of checkpoints) {
      const then = checkpoint.kube.services.get(name)?.metadata?.annotations?.[key('loadbalancer-uuid')];
      if (then === undefined || now === undefined || then === now) continue;
      violations.push({
        invariant: 'no load balancer lost',
        evidence: `Service ${name} had load balancer ${then} ${label}, and ${now} at the end (${whoseLb(facts, then)})`,
      });
      break;
    }
  }
  return violations;
}

/** What the checkpoints knew about a load balancer: its name, tags and the Service it served. */
function whoseLb(facts: RunFacts, uuid: string): string {
  for (const { label, checkpoint } of [{ label: 'at the start', checkpoint: facts.start }, ...intermediate(facts)]) {
    const lb = checkpoint.cloud.loadBalancers.find((l) => l.uuid === uuid);
    if (lb === undefined) continue;
    const users = [...checkpoint.kube.services.values()]
      .filter((s) => s.metadata?.annotations?.[key('loadbalancer-uuid')] === uuid || s.metadata?.uid === lb.tags[SERVICE_UID_TAG])
      .map((s) => `${s.metadata!.name!} (uid ${s.metadata!.uid!})`);
    return `${describeLb(lb)}, ${label} the load balancer of ${users.length === 0 ? 'no Service' : users.join(', ')}`;
  }
  return `load balancer ${uuid} (no checkpoint saw it)`;
}

// ---- refused Services ------------------------------------------------------------------------

function refusedUnharmed(facts: RunFacts): Violation[] {
  const violations: Violation[] = [];
  for (const name of refusingNames(facts)) {
    const before = facts.start.kube.services.get(name);
    const after = facts.final.kube.services.get(name);
    const uuid = before?.metadata?.annotations?.[key('loadbalancer-uuid')];
    if (before === undefined || after === undefined || uuid === undefined) continue;
    const lb = facts.start.cloud.loadBalancers.find((l) => l.uuid === uuid);
    if (lb === undefined || lb.tags[CLUSTER_TAG] !== facts.clusterId) continue;
    const add = (evidence: string) => violations.push({ invariant: 'refused Service unharmed', evidence: `Service ${name}: ${evidence}` });
    const now = after.metadata?.annotations?.[key('loadbalancer-uuid')];
    if (now !== uuid) add(`loadbalancer-uuid changed from ${uuid} to ${now ?? '(absent)'}`);
    if (!facts.final.cloud.loadBalancers.some((l) => l.uuid === uuid)) add(`its load balancer ${describeLb(lb)} is gone`);
    for (const fip of facts.start.cloud.floatingIps.filter((f) => f.load_balancer?.uuid === uuid)) {
      const later = facts.final.cloud.floatingIps.find((f) => f.network === fip.network);
      if (later?.load_balancer?.uuid !== uuid) {
        add(`Floating IP ${fip.network} moved from its load balancer ${uuid} to ${later?.load_balancer?.uuid ?? later?.server?.uuid ?? 'nothing'}`);
      }
    }
  }
  return violations;
}

// ---- the Lease -------------------------------------------------------------------------------

/**
 * Two writers never write at once: for every two writer tokens, their cloud writes do not
 * interleave by arrival (one writer's last write arrived before the other's first). The
 * harness's own token (`default`: converging steps, the three passes) runs alone anyway.
 */
function oneWriterAtATime(facts: RunFacts): Violation[] {
  const spans = new Map<string, { first: RequestLogEntry; last: RequestLogEntry }>();
  for (const entry of facts.log) {
    if (entry.method === 'GET' || entry.token === undefined || entry.token === 'default') continue;
    const span = spans.get(entry.token);
    if (span === undefined) spans.set(entry.token, { first: entry, last: entry });
    else span.last = entry;
  }
  const violations: Violation[] = [];
  const tokens = [...spans.keys()];
  for (const [i, a] of tokens.entries()) {
    for (const b of tokens.slice(i + 1)) {
      const [x, y] = [spans.get(a)!, spans.get(b)!];
      if (x.last.seq < y.first.seq || y.last.seq < x.first.seq) continue;
      const [early, late] = x.first.seq < y.first.seq ? [[a, x], [b, y]] as const : [[b, y], [a, x]] as const;
      violations.push({
        invariant: 'one writer at a time',
        evidence:
          `writer ${late[0]} wrote ${logLine(facts, late[1].first)} while writer ${early[0]} was still writing ` +
          `(its last write ${logLine(facts, early[1].last)})`,
      });
    }
  }
  return violations;
}

/**
 * A writer whose Lease another took while it was stopped sends no cloud write after that: the
 * new holder writes now. Writes that arrived after it was continued, with nobody holding its
 * Lease meanwhile, are notes (lateWritesAfterPause), not violations: a write can pass the fence
 * just before the stop and leave just after it, and the Lease leaves half its duration for that.
 */
function silentAfterTakeover(facts: RunFacts): Violation[] {
  return facts.pauses.flatMap((pause): Violation[] => {
    if (pause.atSeq === undefined) return [];
    const late = writesOf(facts, pause.token, pause.atSeq);
    if (late.length === 0) return [];
    return [
      {
        invariant: 'no write after the Lease was taken over while paused',
        evidence:
          `writer ${pause.token}, stopped ${pause.forMs} ms, during which ${pause.holder} took the Lease (by arrival ` +
          `${pause.atSeq}), sent ${late.length} cloud write(s) after that: ` +
          `${late.slice(0, 4).map((e) => logLine(facts, e)).join('; ')}; it ended: ${pause.outcome}`,
      },
    ];
  });
}

function lateWritesAfterPause(facts: RunFacts): string[] {
  return facts.pauses
    .filter((pause) => pause.atSeq === undefined)
    .flatMap((pause) => {
      const late = writesOf(facts, pause.token, pause.continuedAt);
      return late.length === 0
        ? []
        : [
            `writer ${pause.token}, stopped ${pause.forMs} ms (nobody took its Lease meanwhile), sent ${late.length} cloud ` +
              `write(s) once continued (passed the fence before the stop?): ${late.map((e) => logLine(facts, e)).join('; ')}`,
          ];
    });
}

function writesOf(facts: RunFacts, token: string, afterSeq: number): RequestLogEntry[] {
  return facts.log.filter((e) => e.token === token && e.method !== 'GET' && e.seq > afterSeq);
}

// ---- pool swaps ------------------------------------------------------------------------------

/**
 * After the final passes, every pool of a live Service's load balancer serves exactly one port
 * (one listener), is checked by one monitor and holds exactly the Service's members for that
 * port, enabled and not draining: no successor pool left beside the old one, no old pool left
 * beside the successor, no member left disabled.
 */
function poolsComplete(facts: RunFacts, swap: SwapFacts): Violation[] {
  const violations: Violation[] = [];
  const add = (evidence: string) => violations.push({ invariant: 'one pool per port, nothing forgotten', evidence });
  const services = [...facts.final.kube.services.values()].filter((s) => !refusingNames(facts).has(s.metadata!.name!));
  for (const { pool, listeners, monitors, members } of swap.pools) {
    const where = `pool ${pool.name} (${pool.uuid}) of load balancer ${pool.load_balancer.uuid}`;
    if (listeners.length !== 1) {
      add(`${where} has ${listeners.length} listeners (${listeners.map((l) => `${l.protocol_port}`).join(', ') || 'none: a successor or old pool left over'})`);
      continue;
    }
    if (monitors.length !== 1) add(`${where} has ${monitors.length} health monitors`);
    const service = services.find((s) => s.metadata?.annotations?.[key('loadbalancer-uuid')] === pool.load_balancer.uuid);
    const nodePort = service?.spec?.ports?.find((p) => p.port === listeners[0]!.protocol_port)?.nodePort;
    if (service === undefined || nodePort === undefined) continue;
    const want = swap.memberAddresses.map((a) => `${a}:${nodePort}`).sort();
    const have = members.map((m) => `${m.address}:${m.protocol_port}`).sort();
    if (want.join() !== have.join()) add(`${where} has members ${have.join(', ') || 'none'}; Service ${service.metadata!.name!} wants ${want.join(', ')}`);
    for (const m of members.filter((m) => !m.enabled || m.tags[MEMBER_DRAINING_TAG] !== undefined)) {
      add(`${where}: member ${m.name} left ${m.enabled ? '' : 'disabled'}${m.tags[MEMBER_DRAINING_TAG] === undefined ? '' : `, draining since ${m.tags[MEMBER_DRAINING_TAG]}`}`);
    }
  }
  const ports = new Map<string, string[]>();
  for (const { pool, listeners } of swap.pools) {
    for (const l of listeners) ports.set(`${pool.load_balancer.uuid} port ${l.protocol_port}`, [...(ports.get(`${pool.load_balancer.uuid} port ${l.protocol_port}`) ?? []), pool.name]);
  }
  for (const [port, pools] of ports) if (pools.length > 1) add(`load balancer ${port} is served by ${pools.length} pools: ${pools.join(', ')}`);
  return violations;
}

/**
 * From the simulator's data plane (a port serves while a listener points at a pool with an
 * enabled member its monitor judges up): since its change, each port of a changed Service went
 * without serving for at most swapBoundMs, and it serves again at the end.
 */
export function outagesWithinPrediction(swap: Pick<SwapFacts, 'ports' | 'writersEndedAt' | 'firstPassEndedAt' | 'writersMayStrand'>): Violation[] {
  const mayStrand = swap.writersMayStrand ?? true;
  return swap.ports.flatMap(({ service, swap: change, lbUuid, port, listenerAfterSchedule, serving }): Violation[] => {
    const where = `Service ${service}, load balancer ${lbUuid} port ${port}`;
    if (serving === undefined) return [{ invariant: 'no outage beyond the prediction', evidence: `${where}: the data plane knows no such port` }];
    const bound = mayStrand ? swapBoundMs(swap, change, port, listenerAfterSchedule) : predictedMs(change, port) + PROPAGATION_TOLERANCE_MS;
    const last = serving.intervals.at(-1);
    const found: Violation[] = [];
    const history = serving.intervals.map((i) => `${i.serving ? 'up' : 'down'} ${i.from}–${i.to ?? 'now'}`).join(', ');
    if (!mayStrand && !listenerAfterSchedule && change.servedAtChange) {
      found.push({ invariant: 'no outage beyond the prediction', evidence: `${where}: left without a listener by a writer that met one failed request; ${history}` });
    }
    if (change.servedAtChange && serving.longestOutageMs > bound) {
      const predicted = `predicted ${predictedSeconds(change, port)} s for this port + ${PROPAGATION_TOLERANCE_MS} ms propagation`;
      const extra = bound - predictedMs(change, port) - PROPAGATION_TOLERANCE_MS;
      const why = extra === 0 ? predicted : `${predicted} + ${extra} ms until pass 1 had run (no listener after the schedule)`;
      found.push({ invariant: 'no outage beyond the prediction', evidence: `${where}: down for ${serving.longestOutageMs} ms, more than ${bound} ms (${why}); ${history}` });
    }
    if (last?.serving !== true) found.push({ invariant: 'no outage beyond the prediction', evidence: `${where}: not serving after the final passes; ${history}` });
    return found;
  });
}

// ---- helpers ---------------------------------------------------------------------------------

function refusingNames(facts: RunFacts): Set<string> {
  return new Set(facts.scenario.world.services.filter((s) => s.refusal !== null).map((s) => facts.serviceName(s)));
}

function specOf(facts: RunFacts, name: string): ServiceSpec | undefined {
  return facts.scenario.world.services.find((s) => facts.serviceName(s) === name);
}

function identity(service: V1Service): { name: string; uid: string } {
  return { name: service.metadata!.name!, uid: service.metadata!.uid! };
}

function expectedLbName(service: V1Service): string {
  return service.metadata?.annotations?.[key('loadbalancer-name')] || `k8s-service-${service.metadata!.uid!}`;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

function describeLb(lb: LoadBalancer): string {
  const tags = Object.entries(lb.tags)
    .map(([k, v]) => `${k.replace('k8s.cloudscale.ch/', '')}=${v}`)
    .join(',');
  return `load balancer ${lb.name} (${lb.uuid}, ${lb.status}, tags {${tags}})`;
}

/** A request as evidence: what, the answer, the fault, and in which step or pass it arrived. */
function logLine(facts: RunFacts, entry: RequestLogEntry): string {
  const during = [...facts.marks].reverse().find((m) => m.from < entry.seq)?.label ?? 'setup';
  const fault = entry.fault === undefined ? '' : ` [${entry.fault}]`;
  const by = entry.token === undefined ? '' : ` by ${entry.token}`;
  return `${entry.method} ${entry.path} → ${entry.status}${fault}${by} (arrival ${entry.seq}, during ${during})`;
}
