// One fault-and-race run: builds the scenario's world (simulator, Nodes, Services, foreign load
// balancers), plays its schedule, clears the faults, runs three passes (`run` + `cleanup --yes`)
// and hands everything the invariants need to ./invariants.ts. Tears down what it made.
import { randomUUID } from 'node:crypto';
import { PatchStrategy, V1MicroTime, setHeaderOptions, type V1Service } from '@kubernetes/client-node';
import { RUN_LEASE } from '../../../src/commands/run.js';
import { createCloudscaleClient } from '../../../src/core/cloudscale/client.js';
import type { FaultConfig, RequestLogEntry } from '../../../src/sim/index.js';
import type { Listener } from '../../../src/core/cloudscale/types.js';
import { startHarness, TEST_TOKEN, type Harness } from '../ccm.js';
import {
  UNINITIALIZED_TAINT_KEY,
  createLoadBalancerService,
  createNode,
  deleteNodeForced,
  deleteServiceForced,
  ignoreNotFound,
  statusOf,
  testConnection,
  testKubeconfig,
  uniqueName,
} from '../kube.js';
import { buildGoCcmLoadBalancer, key, lbSeed, privateAddress, serverName } from '../lb-scenarios.js';
import {
  jsonDocument,
  outcomeLine,
  runInProcess,
  startProcess,
  type PauseOutcome,
  writerArgv,
  type CliResult,
  type Features,
} from './cli.js';
import {
  checkInvariants,
  predictionByPort,
  stoppedByFence,
  type PassRecord,
  type PauseRecord,
  type RunFacts,
  type SwapFacts,
  type SwapRecord,
  type Violation,
} from './invariants.js';
import { foreignSnapshot, kubeWrites, readCloud, readKube, type KubeState } from './observe.js';
import {
  describeStep,
  generateScenario,
  PAUSED_LEASE_SECONDS,
  FAILED_REQUEST_CASE,
  SABOTAGE_OUTAGE_MS,
  runsAsProcess,
  type EditSpec,
  type FaultSpec,
  type Scenario,
  type ServiceSpec,
  type SwapKillPoint,
  type WriterSpec,
} from './scenario.js';

export interface SuiteEnv {
  /** The namespace of every run's Services (names are unique per run). */
  readonly namespace: string;
  readonly features: { readonly inProcess: Features; readonly binary: Features };
}

export interface RunRecord {
  readonly seed: number;
  readonly caseId: number;
  /** The scenario and what each step did. */
  readonly description: string;
  readonly violations: readonly Violation[];
  /** Findings that break no invariant (see Findings). */
  readonly notes: readonly string[];
  readonly kills: number;
  /** Kills the schedule planned that did not land: the process ended first. */
  readonly killsMissed: number;
  readonly processes: number;
  /** Faults injected, by kind; and the faulted requests the simulator logged, by kind. */
  readonly faults: Readonly<Record<string, number>>;
  readonly faultsFired: Readonly<Record<string, number>>;
  /** The commands of every step with two writers at once, e.g. `sync-lb ∥ run`. */
  readonly pairs: readonly string[];
  readonly passes: number;
  /** Leases a killed or paused writer left held, which the harness released instead of waiting. */
  readonly leasesReleased: number;
  /** The adversaries on top of the case (scenario.adversaries). */
  readonly adversaries: readonly string[];
  /** Writers paused past their renew deadline, and pauses planned that did not land (the process ended first). */
  readonly pauses: number;
  readonly pausesMissed: number;
  /** Pauses during which another writer took the Lease over. */
  readonly takeoversWhilePaused: number;
  /** Paused writers that stopped with the LeaseLostError ("past its renew deadline … writes nothing more"). */
  readonly pausedStoppedByFence: number;
  /** Writers run with a skewed clock. */
  readonly skews: number;
  /** Pool-swap runs: the step the kill aimed at, and where it landed by the killed writer's last write (undefined: it missed). */
  readonly swapKill?: { readonly aimed: SwapKillPoint; readonly landed: string | undefined };
  /** Wall time per phase: building the world, the schedule, the three passes, the checks. */
  readonly ms: Readonly<Record<'world' | 'schedule' | 'passes' | 'checks', number>>;
}

export async function executeRun(seed: number, env: SuiteEnv, scenario = generateScenario(seed)): Promise<RunRecord> {
  const prefix = uniqueName('fr');
  // The strict world (the real API's timings, health checks, `error` while a pool is down) at
  // the tests' time scale, whatever the other files' default: the invariants are about serving.
  const harness = await startHarness({
    seed: lbSeed(prefix, scenario.world.servers),
    lbProvisionMs: scenario.world.lbProvisionMs,
    world: 'strict',
  });
  const run = new Run(scenario, harness, prefix, env);
  try {
    return await run.execute();
  } finally {
    await run.teardown();
  }
}

/** No writer runs between runs (nor before the first): a Lease left over is a killed one's. */
export async function deleteWriterLease(): Promise<void> {
  await ignoreNotFound(testConnection().coordination.deleteNamespacedLease({ namespace: RUN_LEASE.namespace, name: RUN_LEASE.name }));
}

const FOREIGN_CLUSTER = 'another-cluster-0000';
/** Lease durations: a killed writer blocks the others for this long (when the tool offers the flag). */
const KILLED_LEASE_SECONDS = 3;
const LEASE_SECONDS = 15;

/** The label each Node carries with its server's number (1-based): what the selector edits select by. */
const SERVER_LABEL = 'fault-race.test/server';
/** Long enough for FAST_MONITOR's two failed checks 1 s apart, scaled, plus the member's propagation (5 s of the API's). */
const MONITOR_DOWN_MS = 1_500;

/** A node port other than `current`, drawn from Kubernetes' default range. */
function freeNodePort(current: number): number {
  for (;;) {
    const port = 30000 + Math.floor(Math.random() * 2768);
    if (port !== current) return port;
  }
}

/** Fast health checks for every Service of a data-plane world: a new member is up 2 × 1 s after it reached the data plane. */
const FAST_MONITOR = {
  [key('loadbalancer-health-monitor-delay-s')]: '1',
  [key('loadbalancer-health-monitor-timeout-s')]: '1',
  [key('loadbalancer-health-monitor-up-threshold')]: '2',
  [key('loadbalancer-health-monitor-down-threshold')]: '2',
};

class Run {
  private readonly phases = { world: 0, schedule: 0, passes: 0, checks: 0 };
  private phaseStart = Date.now();
  private readonly outcomes: string[] = [];
  private readonly faultsInjected: Record<string, number> = {};
  private readonly pairs: string[] = [];
  private kills = 0;
  private killsMissed = 0;
  private processes = 0;
  private passCount = 0;
  private leasesReleased = 0;
  private writerSteps = 0;
  private pausesMissed = 0;
  private skews = 0;
  private readonly pauses: PauseRecord[] = [];
  /** The simulator's accepted tokens by name: the harness's own (`default`) and one per writer of a step. */
  private readonly tokens: Record<string, string> = { default: TEST_TOKEN };
  private readonly oneOff: FaultSpec[] = [];
  private readonly persistent: FaultSpec[] = [];
  private readonly serverUuids = new Map<number, string>();
  /** Service name → UID, from every checkpoint and the edits that create Services. */
  private readonly uids = new Map<string, string>();
  private readonly deletedServers = new Set<number>();
  /** The pool swaps the schedule asked for (edit `swap`), and when. */
  private readonly swaps: SwapRecord[] = [];
  /** What the schedule's edits broke on purpose, undone before the final passes (endpoints healed, a selector removed). */
  private readonly heals: (() => Promise<void>)[] = [];
  /** Services whose every endpoint a pool-down edit made fail. */
  private readonly poolDown = new Set<string>();
  /** When the last step with writers ended (Date.now()). */
  private writersEndedAt: number | undefined;
  /** When pass 1's `run` ended (Date.now()). */
  private firstPassEndedAt = 0;
  private swapKill: RunRecord['swapKill'];
  private foreign: { otherCluster: string; handMade: string; orphan: string | null } = { otherCluster: '', handMade: '', orphan: null };

  constructor(
    private readonly scenario: Scenario,
    private readonly harness: Harness,
    private readonly prefix: string,
    private readonly env: SuiteEnv,
  ) {}

  /** Books the time since the last phase ended to `name`. */
  private phase(name: keyof Run['phases']): void {
    const now = Date.now();
    this.phases[name] += now - this.phaseStart;
    this.phaseStart = now;
  }

  private get sim() {
    return this.harness.sim;
  }

  serviceName(spec: Pick<ServiceSpec, 'key'>): string {
    return `${this.prefix}-${spec.key}`;
  }

  async execute(): Promise<RunRecord> {
    await this.buildWorld();
    this.phase('world');
    const foreignBefore = {
      otherCluster: await foreignSnapshot(this.harness.cloud, this.foreign.otherCluster),
      handMade: await foreignSnapshot(this.harness.cloud, this.foreign.handMade),
    };
    // Requests belong to the window in which they arrived (their `seq`), not the one in which
    // they finished: a write that hung through the end of the schedule is the schedule's.
    const logFrom = this.sim.admin.arrivals();
    let start = await this.checkpoint();

    const marks: { label: string; from: number }[] = [];
    const mark = (label: string) => marks.push({ label, from: this.sim.admin.arrivals() });
    for (const [i, step] of this.scenario.steps.entries()) {
      mark(`step ${i + 1}, ${describeStep(step)}`);
      const outcome = await this.play(step);
      this.outcomes.push(outcome === '' ? describeStep(step) : `${describeStep(step)} → ${outcome}`);
      if (step.kind === 'converge') start = await this.checkpoint();
    }

    // Faults are one-off: whatever the schedule did not use up goes now. A load balancer pinned
    // in `error` stays so (the case is about passes that meet it).
    this.applyFaults(this.persistent);
    // No writer runs now: a Lease still held was left by a killed or paused one.
    await this.releaseLeaseIf(() => true);
    for (const heal of this.heals) await heal();
    const afterSchedule = await this.checkpoint();
    const listenersAfterSchedule = this.scenario.world.dataPlane ? await this.harness.cloud.listeners.list() : [];
    this.phase('schedule');
    const windows: PassWindow[] = [];
    for (const label of ['pass 1', 'pass 2', 'pass 3']) windows.push(await this.pass(label, mark));

    const sabotaged = this.scenario.steps.some((step) => step.kind === 'sabotage');
    const swap = this.scenario.world.dataPlane
      ? await this.swapFacts(listenersAfterSchedule, async () => (sabotaged ? this.sabotageAfterPasses() : undefined))
      : undefined;
    this.phase('passes');
    const log = arrivalOrder(this.sim.admin.requests(), logFrom);
    const passes: PassRecord[] = windows.map(({ from, to, ...pass }) => ({
      ...pass,
      cloudWrites: log.filter((r) => r.seq > from && r.seq <= to && r.method !== 'GET'),
    }));
    const facts: RunFacts = {
      clusterId: this.harness.clusterId,
      prefix: this.prefix,
      scenario: this.scenario,
      serviceName: (spec) => this.serviceName(spec),
      foreign: this.foreign,
      foreignBefore,
      foreignAfter: {
        otherCluster: await foreignSnapshot(this.harness.cloud, this.foreign.otherCluster),
        handMade: await foreignSnapshot(this.harness.cloud, this.foreign.handMade),
      },
      start,
      afterSchedule,
      log,
      marks,
      passes,
      final: await this.checkpoint(),
      serverUuids: this.serverUuids,
      deletedServers: this.deletedServers,
      pauses: this.pauses,
      ...(swap === undefined ? {} : { swap }),
    };
    const { violations, notes } = checkInvariants(facts);
    if (this.swapKill !== undefined) this.swapKill = { ...this.swapKill, landed: this.swapKill.landed === undefined ? undefined : landingOf(facts.log, this.swapKill.landed) };
    this.phase('checks');
    const fired: Record<string, number> = {};
    for (const entry of facts.log) if (entry.fault !== undefined) fired[entry.fault] = (fired[entry.fault] ?? 0) + 1;
    return {
      seed: this.scenario.seed,
      caseId: this.scenario.caseId,
      description: this.outcomes.map((o, i) => `${i + 1}) ${o}`).join('; '),
      violations,
      notes,
      kills: this.kills,
      killsMissed: this.killsMissed,
      processes: this.processes,
      faults: this.faultsInjected,
      faultsFired: fired,
      pairs: this.pairs,
      passes: this.passCount,
      leasesReleased: this.leasesReleased,
      adversaries: this.scenario.adversaries,
      pauses: this.pauses.length,
      pausesMissed: this.pausesMissed,
      takeoversWhilePaused: this.pauses.filter((p) => p.holder !== undefined).length,
      pausedStoppedByFence: this.pauses.filter((p) => stoppedByFence(p.output)).length,
      skews: this.skews,
      ...(this.swapKill === undefined ? {} : { swapKill: this.swapKill }),
      ms: this.phases,
    };
  }

  async teardown(): Promise<void> {
    try {
      // Everything the run made, at once: its Services are all in the namespace, its Nodes all
      // carry the prefix. (kube.ts's bookkeeping of created objects dies with this test file.)
      const kube = await this.kube();
      await Promise.all([
        ...[...kube.services.keys()].map((name) => deleteServiceForced(this.env.namespace, name)),
        ...[...kube.nodes.keys()].map((name) => deleteNodeForced(name)),
      ]);
      await deleteWriterLease();
    } finally {
      await this.harness.stop();
    }
  }

  // ---- the world -----------------------------------------------------------------------------

  private async buildWorld(): Promise<void> {
    const { world } = this.scenario;
    for (const server of await this.harness.cloud.servers.list()) {
      const i = Number(server.name.slice(this.prefix.length + 1));
      this.serverUuids.set(i, server.uuid);
    }
    const servers = Array.from({ length: world.servers }, (_, i) => i + 1);
    const nodes = servers.map((i) =>
      createNode(serverName(this.prefix, i), {
        ready: true,
        labels: { [SERVER_LABEL]: String(i) },
        ...(world.uninitialized.includes(i)
          ? { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] }
          : { providerID: `cloudscale://${this.serverUuids.get(i)!}` }),
      }),
    );
    const madeElsewhere = (name: string | undefined, tags: Record<string, string>) => {
      const uid = tags['k8s.cloudscale.ch/service-uid'] ?? randomUUID();
      return buildGoCcmLoadBalancer(this.harness, fakeService(uid), servers, { tags, ...(name === undefined ? {} : { name }) });
    };
    const orphanUid = randomUUID();
    const [otherCluster, handMade, orphan] = await Promise.all([
      madeElsewhere(`${this.prefix}-other-cluster`, {
        'k8s.cloudscale.ch/cluster': FOREIGN_CLUSTER,
        'k8s.cloudscale.ch/service-uid': randomUUID(),
        'k8s.cloudscale.ch/service': 'default/elsewhere',
      }),
      madeElsewhere(`${this.prefix}-hand-made`, {}),
      world.orphan
        ? madeElsewhere(undefined, {
            'k8s.cloudscale.ch/cluster': this.harness.clusterId,
            'k8s.cloudscale.ch/service-uid': orphanUid,
            'k8s.cloudscale.ch/service': `${this.env.namespace}/${this.prefix}-gone`,
            // Made by this version: without this cluster's uid tag cleanup deletes it only with --include-untagged.
            'k8s.cloudscale.ch/kube-system-uid': await this.harness.context().kubeSystemUid(),
          })
        : null,
      ...nodes,
    ]);
    this.foreign = { otherCluster, handMade, orphan };
    await Promise.all(world.services.filter((spec) => !spec.addedLater).map((spec) => this.createService(spec)));
    // Foreign load balancers are compared as `running`.
    await new Promise((resolve) => setTimeout(resolve, world.lbProvisionMs + 10));
  }

  private async createService(spec: ServiceSpec): Promise<V1Service> {
    const annotations: Record<string, string> = {};
    if (spec.lbName !== undefined) annotations[key('loadbalancer-name')] = `${this.prefix}-${spec.lbName}`;
    if (spec.floatingIp !== undefined) annotations[key('loadbalancer-floating-ips')] = JSON.stringify([spec.floatingIp]);
    if (spec.copiedFromOtherCluster) annotations[key('loadbalancer-uuid')] = this.foreign.otherCluster;
    if (this.scenario.world.dataPlane) Object.assign(annotations, FAST_MONITOR);
    return createLoadBalancerService(this.env.namespace, this.serviceName(spec), {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
        ...(spec.ports === 2 ? [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 }] : []),
      ],
      annotations,
      ...(spec.local ? { externalTrafficPolicy: 'Local' as const } : {}),
    });
  }

  private spec(keyOfService: string): ServiceSpec {
    const spec = this.scenario.world.services.find((s) => s.key === keyOfService);
    if (spec === undefined) throw new Error(`scenario names an unknown Service ${keyOfService}`);
    return spec;
  }

  // ---- steps ---------------------------------------------------------------------------------

  private async play(step: Scenario['steps'][number]): Promise<string> {
    switch (step.kind) {
      case 'converge': {
        // `run` only: an orphan stays for the schedule's cleanup to find.
        const writes: number[] = [];
        for (let i = 0; i < 2; i++) {
          this.passCount += 1;
          const since = this.sim.admin.arrivals();
          await runInProcess(writerArgv('run', this.passArgs()), this.sim.url);
          writes.push(arrivalOrder(this.sim.admin.requests(), since).filter((r) => r.method !== 'GET').length);
          if (writes.at(-1) === 0) break;
        }
        return `cloud writes per pass: ${writes.join(', ')}`;
      }
      case 'fault':
        this.faultsInjected[step.fault.kind] = (this.faultsInjected[step.fault.kind] ?? 0) + 1;
        if (step.fault.kind === 'lb-error') this.persistent.push(step.fault);
        else this.oneOff.push(step.fault);
        this.applyFaults([...this.persistent, ...this.oneOff]);
        return '';
      case 'edit':
        await this.edit(step.edit);
        return '';
      case 'writers':
        return this.writers(step.writers);
      case 'sabotage':
        await this.sabotage();
        return '';
    }
  }

  /** See the `sabotage` step: one breach of every invariant, made through the API like any client. */
  private async sabotage(): Promise<void> {
    const { cloud } = this.harness;
    const [first, refused] = [this.scenario.world.services[0]!, this.scenario.world.services[1]!];
    const annotations = async (spec: ServiceSpec) =>
      (await testConnection().core.readNamespacedService({ namespace: this.env.namespace, name: this.serviceName(spec) })).metadata
        ?.annotations ?? {};
    const lb = await cloud.loadBalancers.get((await annotations(first))[key('loadbalancer-uuid')]!);
    await cloud.deleteByHref(lb.href);
    for (let i = 0; i < 2; i++) await cloud.loadBalancers.create({ name: lb.name, flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] });
    // Two writers at once, the first of them as if continued after a pause: each with a token of
    // its own, renaming the hand-made load balancer in turns.
    const [one, two] = [this.allowToken('sabotage-writer1'), this.allowToken('sabotage-writer2')].map((token) => ({
      token,
      cloud: createCloudscaleClient({ baseUrl: this.sim.url, token: token.value, retry: { baseDelayMs: 5, maxDelayMs: 50 } }),
    })) as [Writer, Writer];
    const now = this.sim.admin.arrivals();
    this.pauses.push({
      token: one.token.name,
      forMs: 0,
      stoppedAt: now,
      continuedAt: now,
      holder: two.token.name,
      atSeq: now,
      outcome: 'a breach made by the harness',
      output: '',
    });
    for (const [writer, name] of [[one, 'by-hand'], [two, 'by-hand-too'], [one, 'renamed-by-hand']] as const) {
      await writer.cloud.loadBalancers.update(this.foreign.handMade, { name: `${this.prefix}-${name}` });
    }
    await deleteNodeForced(serverName(this.prefix, 1));
    await cloud.floatingIps.update(refused.floatingIp!.split('/')[0]!, { server: this.serverUuids.get(2)! });
    if (this.swaps.length > 0) await this.forceOutage(this.swaps[0]!.service);
  }

  /**
   * The swapped Service's endpoints fail their health checks for SABOTAGE_OUTAGE_MS: its port
   * serves nothing for longer than a swap may take, with no kill to excuse it.
   */
  private async forceOutage(name: string): Promise<void> {
    const service = await testConnection().core.readNamespacedService({ namespace: this.env.namespace, name });
    const endpoints = (service.spec?.ports ?? []).flatMap((port) =>
      Array.from({ length: this.scenario.world.servers }, (_, i) => [privateAddress(i + 1), port.nodePort!] as const),
    );
    for (const [address, port] of endpoints) this.sim.admin.setEndpointHealth(address, port, false);
    await new Promise((resolve) => setTimeout(resolve, SABOTAGE_OUTAGE_MS));
    for (const [address, port] of endpoints) this.sim.admin.setEndpointHealth(address, port, true);
  }

  /**
   * After the final passes (which would repair them): a pool without a listener beside the
   * swapped Service's pool, as a forgotten successor, and one of its members disabled.
   */
  private async sabotageAfterPasses(): Promise<void> {
    const { cloud } = this.harness;
    const name = this.swaps[0]?.service;
    const uuid = name === undefined ? undefined : (await this.kube()).services.get(name)?.metadata?.annotations?.[key('loadbalancer-uuid')];
    if (uuid === undefined) return;
    const pool = (await cloud.pools.list()).find((p) => p.load_balancer.uuid === uuid)!;
    await cloud.pools.create({ name: `${pool.name}-forgotten`, load_balancer: uuid, algorithm: 'round_robin', protocol: 'tcp' });
    const member = (await cloud.poolMembers.list(pool.uuid))[0]!;
    await cloud.poolMembers.update(pool.uuid, member.uuid, { enabled: false });
  }

  /** Waits until every port serves on the data plane (its last interval serving), at most 10 s; whether they do. */
  private async untilServing(ports: readonly { uuid: string; port: number }[]): Promise<boolean> {
    const servingNow = () =>
      ports.every(({ uuid, port }) => this.sim.admin.serving(uuid).ports.find((p) => p.port === port)?.intervals.at(-1)?.serving === true);
    for (let waited = 0; waited < 10_000; waited += 100) {
      if (servingNow()) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return servingNow();
  }

  /**
   * What the swap invariants read, once the final passes are done: the serving history of every
   * port of each swapped Service since its change (after the data plane settled), then (after
   * `beforePools`: the self-check's breaches) the pools, listeners and members of the cluster's
   * load balancers.
   */
  private async swapFacts(listenersAfterSchedule: readonly Listener[], beforePools: () => Promise<void>): Promise<SwapFacts> {
    const { cloud } = this.harness;
    const kube = await this.kube();
    const lbOf = (name: string) => kube.services.get(name)?.metadata?.annotations?.[key('loadbalancer-uuid')];
    // The last change reaches the data plane one propagation after the pass, a new member is up
    // after its checks: wait until every swapped port serves again, or 10 s.
    const ports = this.swaps.flatMap((swap) => {
      const uuid = lbOf(swap.service);
      const service = kube.services.get(swap.service);
      return uuid === undefined || service === undefined ? [] : (service.spec?.ports ?? []).map((p) => ({ swap, uuid, port: p.port }));
    });
    await this.untilServing(ports);
    const servingSince = ports.map(({ swap, uuid, port }) => ({
      service: swap.service,
      swap,
      lbUuid: uuid,
      port,
      listenerAfterSchedule: listenersAfterSchedule.some((l) => l.load_balancer.uuid === uuid && l.protocol_port === port && l.pool !== null),
      serving: this.sim.admin.serving(uuid, { since: swap.at }).ports.find((p) => p.port === port),
    }));
    await beforePools();
    const [pools, listeners, monitors] = await Promise.all([cloud.pools.list(), cloud.listeners.list(), cloud.healthMonitors.list()]);
    const ours = new Set([...kube.services.values()].map((s) => s.metadata?.annotations?.[key('loadbalancer-uuid')]).filter((u) => u !== undefined));
    const mine = pools.filter((p) => ours.has(p.load_balancer.uuid));
    return {
      swaps: this.swaps,
      writersEndedAt: this.writersEndedAt,
      firstPassEndedAt: this.firstPassEndedAt,
      writersMayStrand: this.scenario.caseId !== FAILED_REQUEST_CASE,
      ports: servingSince,
      pools: await Promise.all(
        mine.map(async (pool) => ({
          pool,
          listeners: listeners.filter((l) => l.pool?.uuid === pool.uuid),
          monitors: monitors.filter((m) => m.pool.uuid === pool.uuid),
          members: await cloud.poolMembers.list(pool.uuid),
        })),
      ),
      memberAddresses: Array.from({ length: this.scenario.world.servers }, (_, i) => i + 1)
        .filter((i) => !this.deletedServers.has(i) && kube.nodes.has(serverName(this.prefix, i)))
        .map(privateAddress),
    };
  }

  private applyFaults(specs: readonly FaultSpec[]): void {
    if (specs.length === 0) {
      this.sim.admin.clearFaults();
      return;
    }
    const config: FaultConfig & { [K in 'errorRate' | 'connectionReset' | 'hang' | 'shortList']: Rules<K> } = {
      errorRate: [],
      connectionReset: [],
      hang: [],
      shortList: [],
    };
    const one = (method: string, route: string) => ({ pathPattern: route, methods: [method], count: 1 });
    for (const fault of specs) {
      switch (fault.kind) {
        case 'lb-list-empty':
          config.shortList.push({ ...one('GET', '/v1/load-balancers'), empty: true });
          break;
        case 'lb-list-short':
          config.shortList.push({ ...one('GET', '/v1/load-balancers'), dropLast: 1 });
          break;
        case 'server-list-drop':
          config.shortList.push({ ...one('GET', '/v1/servers'), dropUuid: this.serverUuids.get(fault.server)! });
          break;
        case 'create-503-applied':
          config.errorRate.push({ ...one('POST', '/v1/load-balancers'), status: 503, retryAfterSeconds: 1, afterApplying: true });
          break;
        case 'reset':
          config.connectionReset.push({ ...one(fault.method, fault.route), afterApplying: fault.afterApplying });
          break;
        case 'hang':
          config.hang.push({ ...one(fault.method, fault.route), forMs: fault.forMs, afterApplying: fault.afterApplying });
          break;
        case 'error':
          config.errorRate.push({
            ...one(fault.method, fault.route),
            status: fault.status,
            afterApplying: fault.afterApplying,
            ...(fault.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: fault.retryAfterSeconds }),
          });
          break;
        case 'latency':
          config.latencyMs = fault.ms;
          break;
        case 'lb-error':
          config.stuckLoadBalancers = { ...config.stuckLoadBalancers, [this.lbNameOf(fault.service)]: 'error' };
          break;
        case 'storm-429':
          config.errorRate.push({
            pathPattern: '/v1/**',
            status: 429,
            rate: fault.rate,
            count: fault.count,
            retryAfterSeconds: fault.retryAfterSeconds,
          });
          break;
      }
    }
    this.sim.admin.setFaults(config);
  }

  /** The name the Service's load balancer has or will get. */
  private lbNameOf(keyOfService: string): string {
    const spec = this.spec(keyOfService);
    if (spec.lbName !== undefined) return `${this.prefix}-${spec.lbName}`;
    const uid = this.uids.get(this.serviceName(spec));
    if (uid === undefined) throw new Error(`Service ${keyOfService} has no UID yet`);
    return `k8s-service-${uid}`;
  }

  private async edit(edit: EditSpec): Promise<void> {
    const conn = testConnection();
    const { namespace } = this.env;
    switch (edit.kind) {
      case 'not-ready':
      case 'delete-server': {
        await conn.core.patchNodeStatus(
          {
            name: serverName(this.prefix, edit.server),
            body: {
              status: {
                conditions: [
                  {
                    type: 'Ready',
                    status: 'False',
                    reason: 'KubeletNotReady',
                    message: 'written by the fault-and-race suite',
                    lastHeartbeatTime: new Date(),
                    lastTransitionTime: new Date(),
                  },
                ],
              },
            },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        if (edit.kind === 'delete-server') {
          this.sim.admin.deleteServer(this.serverUuids.get(edit.server)!);
          this.deletedServers.add(edit.server);
        }
        return;
      }
      case 'restore': {
        const spec = this.spec(edit.service);
        const name = this.serviceName(spec);
        const old = await conn.core.readNamespacedService({ namespace, name });
        await deleteServiceForced(namespace, name);
        const restored = await createLoadBalancerService(namespace, name, {
          annotations: old.metadata?.annotations ?? {},
          spec: { ports: old.spec?.ports ?? [] },
          ...(spec.local ? { externalTrafficPolicy: 'Local' as const } : {}),
        });
        this.uids.set(name, restored.metadata!.uid!);
        return;
      }
      case 'rename': {
        const name = this.serviceName(this.spec(edit.service));
        await conn.core.patchNamespacedService(
          { namespace, name, body: { metadata: { annotations: { [key('loadbalancer-name')]: `${this.prefix}-${edit.to}` } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return;
      }
      case 'add-service': {
        const created = await this.createService(this.spec(edit.service));
        this.uids.set(created.metadata!.name!, created.metadata!.uid!);
        return;
      }
      case 'swap': {
        const spec = this.spec(edit.service);
        const body =
          edit.change === 'algorithm'
            ? { metadata: { annotations: { [key('loadbalancer-pool-algorithm')]: 'least_connections' } } }
            : { spec: { externalTrafficPolicy: spec.local ? 'Cluster' : 'Local' } };
        await this.change(this.serviceName(spec), edit.change, () => body);
        return;
      }
      case 'node-port': {
        const name = this.serviceName(this.spec(edit.service));
        const changed = await this.change(name, edit.newUp ? 'node port' : 'node port, new members never up', (service) => {
          const [first, ...rest] = service.spec!.ports!;
          return { spec: { ports: [{ ...first!, nodePort: freeNodePort(first!.nodePort!) }, ...rest] } };
        });
        if (edit.newUp) return;
        // The new members fail every check until the final passes: the old ones must keep serving.
        const endpoints = this.endpointsOf([changed.spec!.ports![0]!.nodePort!]);
        this.setEndpoints(endpoints, false);
        this.heals.push(async () => this.setEndpoints(endpoints, true));
        return;
      }
      case 'selector': {
        const name = this.serviceName(this.spec(edit.service));
        const servers = this.scenario.world.servers;
        const selector = { subset: `${SERVER_LABEL}!=${servers}`, nothing: `${SERVER_LABEL}=none`, down: `${SERVER_LABEL}=1` }[edit.match];
        if (edit.match === 'down') {
          const service = await conn.core.readNamespacedService({ namespace, name });
          const endpoints = this.endpointsOf((service.spec?.ports ?? []).map((p) => p.nodePort!), [1]);
          this.setEndpoints(endpoints, false);
          this.heals.push(async () => this.setEndpoints(endpoints, true));
          // Until its monitor judged server 1's member down (and the rest still serve).
          await new Promise((resolve) => setTimeout(resolve, MONITOR_DOWN_MS));
        }
        await this.change(name, `node selector ${edit.match}`, () => ({ metadata: { annotations: { [key('loadbalancer-node-selector')]: selector } } }));
        this.heals.push(async () => {
          const body = { metadata: { annotations: { [key('loadbalancer-node-selector')]: null } } };
          await conn.core.patchNamespacedService({ namespace, name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
        });
        return;
      }
      case 'pool-down': {
        const name = this.serviceName(this.spec(edit.service));
        const service = await conn.core.readNamespacedService({ namespace, name });
        const endpoints = this.endpointsOf((service.spec?.ports ?? []).map((p) => p.nodePort!));
        this.setEndpoints(endpoints, false);
        this.heals.push(async () => this.setEndpoints(endpoints, true));
        this.poolDown.add(name);
        await new Promise((resolve) => setTimeout(resolve, MONITOR_DOWN_MS));
        return;
      }
    }
  }

  /**
   * Changes a converged Service with a merge patch built from it, and records the change with
   * what `plan` predicts for it. A converged world serves: the change must keep a port up that
   * was up (unless a pool-down edit took it down first: then the change is its repair).
   */
  private async change(name: string, what: string, body: (service: V1Service) => object): Promise<V1Service> {
    const conn = testConnection();
    const namespace = this.env.namespace;
    const service = await conn.core.readNamespacedService({ namespace, name });
    const uuid = service.metadata?.annotations?.[key('loadbalancer-uuid')];
    if (uuid === undefined) throw new Error(`Service ${name} has no load balancer to change after converging`);
    const servedAtChange = !this.poolDown.has(name);
    if (servedAtChange && !(await this.untilServing((service.spec?.ports ?? []).map((p) => ({ uuid, port: p.port }))))) {
      throw new Error(`the ports of Service ${name} do not serve 10 s after converging: ${JSON.stringify(this.sim.admin.serving(uuid))}`);
    }
    const at = Date.now();
    const patched = await this.patchRetrying(name, () => body(service));
    this.swaps.push({ service: name, change: what, at, servedAtChange, predictedByPort: await this.predictedByPort(service) });
    return patched;
  }

  /** A merge patch of the Service; a node port another Service took meanwhile is drawn anew (422), up to 5 times. */
  private async patchRetrying(name: string, body: () => object): Promise<V1Service> {
    const conn = testConnection();
    for (let attempt = 1; ; attempt++) {
      try {
        return await conn.core.patchNamespacedService({ namespace: this.env.namespace, name, body: body() }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      } catch (error) {
        if (attempt >= 5 || !/provided port is already allocated|Invalid/.test(String(error))) throw error;
      }
    }
  }

  /** The endpoints (private address, node port) of the given servers (all by default) at `nodePorts`. */
  private endpointsOf(nodePorts: readonly number[], servers?: readonly number[]): (readonly [string, number])[] {
    const which = servers ?? Array.from({ length: this.scenario.world.servers }, (_, i) => i + 1);
    return nodePorts.flatMap((port) => which.map((i) => [privateAddress(i), port] as const));
  }

  private setEndpoints(endpoints: readonly (readonly [string, number])[], healthy: boolean): void {
    for (const [address, port] of endpoints) this.sim.admin.setEndpointHealth(address, port, healthy);
  }

  /**
   * What `plan -o json` predicts for the Service's next pass, per port: the largest
   * actions[].downtime.maxSeconds of the actions that touch it (predictionByPort).
   */
  private async predictedByPort(service: V1Service): Promise<Record<number, number | null>> {
    const name = service.metadata!.name!;
    const argv = ['--kubeconfig', testKubeconfig(), '--cluster-id', this.harness.clusterId, '-o', 'json', 'plan', '-n', this.env.namespace, `service/${name}`];
    const result = await runInProcess(argv, this.sim.url);
    if (result.code !== 0) throw new Error(`plan for Service ${name} after its change: exit ${result.code}: ${result.stderr}`);
    const plan = jsonDocument(result) as { services: { service: { name: string }; actions: { object: string; downtime?: { maxSeconds: number | null } }[] }[] } | undefined;
    if (plan === undefined) throw new Error(`plan for Service ${name} after its change printed no JSON document: ${result.stdout.slice(0, 200)}`);
    const actions = plan.services.filter((s) => s.service.name === name).flatMap((s) => s.actions);
    return predictionByPort(actions, service.spec?.ports ?? []);
  }

  private async writers(specs: readonly WriterSpec[]): Promise<string> {
    if (specs.length === 2) this.pairs.push(specs.map((w) => w.command).join(' ∥ '));
    this.writerSteps += 1;
    const proc = specs.find(runsAsProcess);
    const inProcess = specs.filter((spec) => spec !== proc);
    const tokens = new Map(specs.map((spec, i) => [spec, this.allowToken(`step${this.writerSteps}-${spec === proc ? 'process' : `writer${i + 1}`}`)]));
    const startInProcess = () =>
      inProcess.map((spec) => runInProcess(writerArgv(spec.command, this.args(spec, 'inProcess')), this.sim.url, { token: tokens.get(spec)!.value }));
    const startProc = (spec: WriterSpec) => {
      this.processes += 1;
      const token = tokens.get(spec)!;
      const takeover: { holder?: string; atSeq?: number } = {};
      const started = startProcess(writerArgv(spec.command, this.args(spec, 'binary')), this.sim, {
        token,
        ...(spec.kill === undefined ? {} : { kill: spec.kill }),
        ...(spec.skewSeconds === undefined ? {} : { skewSeconds: spec.skewSeconds }),
        ...(spec.pause === undefined
          ? {}
          : { pause: { ...spec.pause, whilePaused: (over: Promise<void>) => this.watchTakeover(started.pid, over, takeover) } }),
      });
      const done = started.done.then(async (result) => {
        // Time passes for a killed writer's Lease at once: the harness releases it instead of
        // letting the others wait for it (--wait) or be refused until it runs out.
        if (result.killed) await this.releaseLeaseIf((holder) => holder.includes(`/${started.pid}-`));
        if (result.pause !== undefined) {
          this.pauses.push({ token: token.name, ...result.pause, ...takeover, outcome: outcomeLine(result), output: result.stdout + result.stderr });
        }
        return result;
      });
      return { started, done };
    };

    let results: Promise<CliResult & { pause?: PauseOutcome }>[];
    if (proc === undefined) {
      results = startInProcess();
    } else if (proc.startsSecond) {
      // The others first: the process starts once one of them talks to the API (holds the Lease).
      const others = startInProcess();
      const first = new Set(inProcess.map((spec) => tokens.get(spec)!.name));
      let ended = false;
      void Promise.all(others).then(() => (ended = true));
      while (!ended && !this.sim.admin.requests().some((r) => r.token !== undefined && first.has(r.token))) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      results = [startProc(proc).done, ...others];
    } else {
      const { started, done } = startProc(proc);
      // The in-process writers start once the process talks to the API (otherwise the process's
      // start-up, about a second, would put them one after the other instead of at once), or,
      // for a pause, once it is stopped holding the Lease.
      await (proc.pause === undefined ? started.talking : started.paused);
      results = [done, ...startInProcess()];
    }
    const done = await Promise.all(results);
    this.writersEndedAt = Date.now();
    if (proc?.kill !== undefined) {
      if (done[0]!.killed) this.kills += 1;
      else this.killsMissed += 1;
      // The token names the killed writer's requests; where it landed is read from the log later.
      if (proc.swapKill !== undefined) this.swapKill = { aimed: proc.swapKill, landed: done[0]!.killed ? tokens.get(proc)!.name : undefined };
    }
    if (proc?.pause !== undefined && done[0]!.pause === undefined) this.pausesMissed += 1;
    if (proc?.skewSeconds !== undefined) this.skews += 1;
    if (proc !== undefined) await this.releaseLeaseIf(() => true);
    const labels = proc === undefined ? specs : [proc, ...inProcess];
    return labels.map((spec, i) => `${spec.command}: ${i === 0 && done[0]!.pause !== undefined ? pausedLine(this.pauses.at(-1)!) : outcomeLine(done[i]!)}`).join(', ');
  }

  /** A token of its own for one writer, accepted by the simulator from now on with the others. */
  private allowToken(name: string): { name: string; value: string } {
    const value = `fault-race-${name}-${randomUUID()}`;
    this.tokens[name] = value;
    this.sim.admin.setTokens(this.tokens);
    return { name, value };
  }

  /** While a writer is stopped: who else takes the writers' Lease, and at which arrival. */
  private async watchTakeover(pid: number, over: Promise<void>, seen: { holder?: string; atSeq?: number }): Promise<void> {
    let done = false;
    void over.then(() => (done = true));
    const where = { namespace: RUN_LEASE.namespace, name: RUN_LEASE.name };
    while (!done && seen.holder === undefined) {
      const holder = (await ignoreNotFound(testConnection().coordination.readNamespacedLease(where)))?.spec?.holderIdentity ?? '';
      if (holder !== '' && !holder.includes(`/${pid}-`)) {
        seen.holder = holder;
        seen.atSeq = this.sim.admin.arrivals();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private args(spec: WriterSpec, mode: 'inProcess' | 'binary') {
    const leaseSeconds = spec.kill !== undefined ? KILLED_LEASE_SECONDS : spec.pause !== undefined ? PAUSED_LEASE_SECONDS : LEASE_SECONDS;
    return { clusterId: this.harness.clusterId, wait: spec.wait, leaseSeconds, features: this.env.features[mode] };
  }

  /**
   * Releases the writers' Lease (empty holder, as the tool's own release does) when `condition`
   * holds for its holder. Only when no writer that may hold it runs: after a kill, or after a
   * step with a process (a killed or paused one leaves it held). Releasing, not back-dating: the
   * Lease is judged by what a candidate watched, so an edited renewTime would only restart the
   * watch.
   */
  private async releaseLeaseIf(condition: (holder: string) => boolean): Promise<void> {
    const conn = testConnection();
    const where = { namespace: RUN_LEASE.namespace, name: RUN_LEASE.name };
    const lease = await ignoreNotFound(conn.coordination.readNamespacedLease(where));
    const spec = lease?.spec;
    const holder = spec?.holderIdentity ?? '';
    if (lease === undefined || spec === undefined || holder === '' || !condition(holder)) return;
    try {
      await conn.coordination.replaceNamespacedLease({
        ...where,
        body: { ...lease, spec: { ...spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new V1MicroTime(Date.now()) } },
      });
      this.leasesReleased += 1;
    } catch (error) {
      // 409: a writer took the Lease over meanwhile; it is theirs now.
      if (statusOf(error) !== 409) throw error;
    }
  }

  // ---- passes and checkpoints ------------------------------------------------------------------

  /** One pass as the CronJob would make it, then `cleanup --yes`; both wait for a held Lease. */
  private async pass(label: string, mark: (label: string) => void): Promise<PassWindow> {
    this.passCount += 1;
    const from = this.sim.admin.arrivals();
    // Kubernetes writes count in the last pass only (the one that must write nothing).
    const kubeBefore = label === 'pass 3' ? await this.kube() : undefined;
    const base = this.passArgs();
    mark(`${label}, run`);
    const run = await runInProcess(writerArgv('run', base), this.sim.url);
    if (label === 'pass 1') this.firstPassEndedAt = Date.now();
    // Between run and cleanup, for what cleanup removes again (passes 1 and 2 only).
    const afterRun = label === 'pass 1' || label === 'pass 2' ? await this.checkpoint() : undefined;
    mark(`${label}, cleanup`);
    const cleanup = await runInProcess(writerArgv('cleanup', base), this.sim.url);
    const to = this.sim.admin.arrivals();
    const kubeAfter = kubeBefore === undefined ? undefined : await this.kube();
    return {
      label,
      from,
      to,
      run,
      cleanup,
      afterRun,
      runDocument: jsonDocument(run),
      kubeWrites: kubeBefore === undefined || kubeAfter === undefined ? [] : kubeWrites(kubeBefore, kubeAfter, this.refusing()),
    };
  }

  /** A pass waits for a Lease another writer holds, as the CronJob's next run would. */
  private passArgs() {
    return { clusterId: this.harness.clusterId, wait: true, leaseSeconds: LEASE_SECONDS, features: this.env.features.inProcess, drainSeconds: 0 };
  }

  /** Names of the Services that may end refused by design (their warnings are expected). */
  private refusing(): Set<string> {
    return new Set(this.scenario.world.services.filter((s) => s.refusal !== null).map((s) => this.serviceName(s)));
  }

  private kube(): Promise<KubeState> {
    return readKube(this.env.namespace, this.prefix);
  }

  private async checkpoint() {
    const [cloud, kube] = await Promise.all([readCloud(this.harness.cloud), this.kube()]);
    for (const [name, service] of kube.services) this.uids.set(name, service.metadata!.uid!);
    return { cloud, kube };
  }
}

type Writer = { token: { name: string; value: string }; cloud: ReturnType<typeof createCloudscaleClient> };

/** What a paused writer did, for the run's description. */
function pausedLine(pause: PauseRecord): string {
  const takeover = pause.holder === undefined ? 'nobody took the Lease meanwhile' : `${pause.holder} took the Lease meanwhile`;
  const stopped = stoppedByFence(pause.output)
    ? 'stopped by its Lease (past its renew deadline)'
    : `last message: ${[...pause.output.matchAll(/"message": "([^"]*)"/g)].at(-1)?.[1]?.slice(0, 300) ?? '(none)'}`;
  return `stopped ${pause.forMs} ms (${takeover}), then ${pause.outcome}; ${stopped}`;
}

/**
 * Where a pool swap's kill landed, by the killed writer's (its token's) last write before the
 * end: the step that write ends, or 'during the await polling' when it polled members after
 * creating the monitor.
 */
function landingOf(log: readonly RequestLogEntry[], token: string): string {
  const own = log.filter((e) => e.token === token);
  const lastWrite = own.findLast((e) => e.method !== 'GET');
  if (lastWrite === undefined) return 'before any write';
  const polled = own.some((e) => e.seq > lastWrite.seq && e.route === '/v1/load-balancers/pools/{uuid}/members');
  const step = `${lastWrite.method} ${lastWrite.route}`;
  if (step === 'POST /v1/load-balancers/health-monitors') return polled ? 'during the await polling' : 'after its monitor create';
  return (
    {
      'POST /v1/load-balancers/pools': 'after the successor pool create',
      'POST /v1/load-balancers/pools/{uuid}/members': 'after a successor member create',
      'DELETE /v1/load-balancers/listeners/{uuid}': 'right after the old listener delete',
      'POST /v1/load-balancers/listeners': 'after the new listener create',
    }[step] ?? `after ${step}`
  );
}

/** A pass before its cloud writes are known: the requests with `from < seq <= to` are its own. */
type PassWindow = Omit<PassRecord, 'cloudWrites'> & { readonly from: number; readonly to: number };

/** The requests that arrived after arrival number `after`, in the order they arrived. */
export function arrivalOrder(log: readonly RequestLogEntry[], after: number): RequestLogEntry[] {
  return log.filter((r) => r.seq > after).sort((a, b) => a.seq - b.seq);
}

/** The list form of a fault field. */
type Rules<K extends keyof FaultConfig> = Extract<NonNullable<FaultConfig[K]>, unknown[]>;

/** The shape buildGoCcmLoadBalancer reads: a UID and one port with a nodePort. */
function fakeService(uid: string): V1Service {
  return { metadata: { uid }, spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }] } };
}
