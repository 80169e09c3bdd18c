// What one fault-and-race run does, as data generated from its seed alone: a small world
// (servers and their Nodes, Services with varied annotations, foreign load balancers) and a
// schedule of steps (converging passes, one-off faults, edits, writers at once, kills).
//
// Every seed maps to one of the issue's cases (seed mod 12; 0 is a random mix), so consecutive
// seeds cover all cases evenly, and a failing seed reruns alone with FAULT_RACE_SEED=<seed>
// FAULT_RACE_RUNS=1. On top of its case a run may meet the adversaries of the Lease and of the
// API's rate limit (see withAdversaries): a 429 storm, a writer paused past its Lease's renew
// deadline, a writer whose clock is off. They come from a second generator of the same seed, so
// a seed's case plays as it did before they were added. The seed fixes the world and the
// schedule, not the interleaving of concurrent requests: a race found once may need a few
// reruns to show again.
import { FLOATING_IPS } from '../lb-scenarios.js';
import { Prng } from './prng.js';

export type WriterCommand = 'sync-lb' | 'run' | 'cleanup' | 'init-nodes';

export interface ServiceSpec {
  /** `s1`, `s2` …; the Service is named `<prefix>-<key>`. */
  readonly key: string;
  readonly ports: 1 | 2;
  /** loadbalancer-name, relative: the annotation is `<prefix>-<lbName>`; `hand-made` names the untagged foreign LB. */
  readonly lbName?: string;
  readonly floatingIp?: string;
  readonly local: boolean;
  /** loadbalancer-uuid set to the other cluster's load balancer (a Service copied from there). */
  readonly copiedFromOtherCluster?: true;
  /** Created by an `add-service` edit during the schedule, not with the world. */
  readonly addedLater?: true;
  /** Why this Service may end refused by design; null: it must converge. */
  readonly refusal: string | null;
}

export interface WorldSpec {
  readonly servers: number;
  /** 1-based server numbers whose Node starts uninitialised (taint, no providerID). */
  readonly uninitialized: readonly number[];
  readonly services: readonly ServiceSpec[];
  /** A load balancer tagged for this cluster whose Service is gone: cleanup must delete it. */
  readonly orphan: boolean;
  readonly lbProvisionMs: number;
  /**
   * The simulator's data plane with health checks on (DATA_PLANE below) and every Service with
   * the fast health-monitor annotations (FAST_MONITOR in runner.ts): the pool-swap runs.
   */
  readonly dataPlane?: true;
}

export type FaultSpec =
  | { readonly kind: 'lb-list-empty' }
  | { readonly kind: 'lb-list-short' }
  | { readonly kind: 'server-list-drop'; readonly server: number }
  | { readonly kind: 'create-503-applied' }
  | { readonly kind: 'reset'; readonly method: string; readonly route: string; readonly afterApplying: boolean }
  | { readonly kind: 'hang'; readonly method: string; readonly route: string; readonly forMs: number; readonly afterApplying: boolean }
  | { readonly kind: 'error'; readonly method: string; readonly route: string; readonly status: number; readonly afterApplying: boolean; readonly retryAfterSeconds?: number }
  | { readonly kind: 'latency'; readonly ms: number }
  /** Persistent: the Service's load balancer shows status `error` until the run ends. */
  | { readonly kind: 'lb-error'; readonly service: string }
  /** A share of every API request answered 429 with Retry-After, until `count` of them were. */
  | { readonly kind: 'storm-429'; readonly rate: number; readonly count: number; readonly retryAfterSeconds: number };

export type EditSpec =
  | { readonly kind: 'not-ready'; readonly server: number }
  /** The server is deleted for real and its Node turns NotReady: the Node may go. */
  | { readonly kind: 'delete-server'; readonly server: number }
  /** Deleted (finalizer dropped, as after a lost cluster) and created again: a new UID, the same annotations. */
  | { readonly kind: 'restore'; readonly service: string }
  | { readonly kind: 'rename'; readonly service: string; readonly to: string }
  | { readonly kind: 'add-service'; readonly service: string }
  /** A change the tool carries out as a pool swap: the pool algorithm, or externalTrafficPolicy flipped. */
  | { readonly kind: 'swap'; readonly service: string; readonly change: SwapChange }
  /**
   * The node port of the Service's first port changed: a member rotation. `newUp` false: the
   * new node port fails every health check (replacements that never come up) until the final
   * passes.
   */
  | { readonly kind: 'node-port'; readonly service: string; readonly newUp: boolean }
  /**
   * loadbalancer-node-selector set: `subset` leaves out the last server (its member is
   * drained), `nothing` matches no Node, `down` matches only server 1, whose endpoints fail
   * every health check. Removed again, and the endpoints healed, before the final passes.
   */
  | { readonly kind: 'selector'; readonly service: string; readonly match: SelectorMatch }
  /**
   * Every endpoint of the Service fails its health checks: its pool has no up member and the
   * load balancer goes to status `error` (strict world); a node-port edit after it repairs it.
   */
  | { readonly kind: 'pool-down'; readonly service: string };

export type SelectorMatch = 'subset' | 'nothing' | 'down';

export type SwapChange = 'algorithm' | 'externalTrafficPolicy';

export type KillSpec =
  | { readonly after: 'request'; readonly method: string; readonly route: string; readonly count: number }
  | { readonly after: 'ms'; readonly ms: number }
  /**
   * After the `count`-th time the built CLI announced it finished step `step` (its step-pause
   * hook, CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS): between that step and the next, SIGKILL or SIGTERM.
   */
  | { readonly after: 'step'; readonly step: string; readonly count: number; readonly signal: StepSignal };

export type StepSignal = 'SIGKILL' | 'SIGTERM';

export interface PauseSpec {
  /** When to SIGSTOP it (as for a kill). */
  readonly at: KillSpec;
  /** How long it stays stopped before SIGCONT: always past its renew deadline. */
  readonly forMs: number;
}

export interface WriterSpec {
  readonly command: WriterCommand;
  /** --wait: wait for another writer's Lease instead of exiting. */
  readonly wait: boolean;
  /** Run as a process of the built CLI and SIGKILL it at this moment. */
  readonly kill?: KillSpec;
  /**
   * Run as a process with a Lease of PAUSED_LEASE_SECONDS, SIGSTOP it at `at` and SIGCONT it
   * `forMs` later; the step's other writers start once it is stopped (they find its Lease held).
   */
  readonly pause?: PauseSpec;
  /** Run as a process whose wall clock is this many seconds off (libfaketime). */
  readonly skewSeconds?: number;
  /** A process started only once the step's other writer talks to the API (it finds the Lease held). */
  readonly startsSecond?: true;
  /** The step of a pool swap its kill aims at (SWAP_KILL_POINTS), for the tally. */
  readonly swapKill?: SwapKillPoint;
  /** The strategy whose step boundary its kill (kill.after 'step') aims at, for the tally. */
  readonly stepKill?: Strategy;
}

/** Lease of a paused writer: renew deadline 3 s, a candidate takes over after watching it 6 s. */
export const PAUSED_LEASE_SECONDS = 6;

/** Whether a writer runs as a process of the built CLI (else through runCli in this process). */
export function runsAsProcess(writer: WriterSpec): boolean {
  return writer.kill !== undefined || writer.pause !== undefined || writer.skewSeconds !== undefined;
}

export type Step =
  /** Up to two `run` passes, until one writes nothing (no faults yet): the converged cluster a case starts from. */
  | { readonly kind: 'converge' }
  | { readonly kind: 'fault'; readonly fault: FaultSpec }
  | { readonly kind: 'edit'; readonly edit: EditSpec }
  /** One writer, or two at once. */
  | { readonly kind: 'writers'; readonly writers: readonly WriterSpec[] }
  /**
   * The harness itself breaks every invariant (for the suite's self-check, never in a seeded
   * run): renames the hand-made load balancer, deletes a converged Service's load balancer,
   * adds a second one of that name, deletes a Node whose server exists; in a world with the
   * data plane also holds a swapped Service's port down longer than a swap may (its endpoints
   * unhealthy for SABOTAGE_OUTAGE_MS) and, after the final passes, leaves a pool without a
   * listener and a member disabled.
   */
  | { readonly kind: 'sabotage' };

export interface Scenario {
  readonly seed: number;
  readonly caseId: number;
  readonly world: WorldSpec;
  readonly steps: readonly Step[];
  /** The adversaries added to the case: '429 storm', 'pause', 'clock skew' (see withAdversaries). */
  readonly adversaries: readonly Adversary[];
}

export type Adversary = '429 storm' | 'pause' | 'clock skew';

/** The case of the pool-swap runs (generateSwapScenario); the seeded cases are 0–11. */
export const SWAP_CASE = 12;
/** The case of the strategy runs (generateStrategyScenario). */
export const STRATEGY_CASE = 13;
/** The case of the failed-request runs (generateFailedRequestScenario). */
export const FAILED_REQUEST_CASE = 14;

export const CASES: Readonly<Record<number, string>> = {
  0: 'random mix',
  1: 'two writers at once',
  2: 'the load-balancer list answers 200 [] (or short) once on a converged cluster',
  3: 'the server list omits a live server once (NotReady Node)',
  4: 'cleanup after a Service was restored with a new UID, still carrying loadbalancer-uuid',
  5: 'cleanup while sync-lb creates a load balancer',
  6: 'a loadbalancer-name naming a hand-made untagged load balancer',
  7: 'two Services with the same loadbalancer-name',
  8: 'POST /v1/load-balancers applied, answered 503 with Retry-After',
  9: 'killed right after create-lb, then the name annotation edited',
  10: 'a Floating IP claimed by two Services',
  11: 'a load balancer in status error',
  [SWAP_CASE]: 'a pool swap killed at one of its steps (generateSwapScenario)',
  [STRATEGY_CASE]: 'a rotation, drain or pool swap signalled between two of its steps (generateStrategyScenario)',
  [FAILED_REQUEST_CASE]: 'one request of a rotation, drain or pool swap failed once (generateFailedRequestScenario)',
};

export const REFUSALS = {
  handMade: 'its loadbalancer-name names a hand-made load balancer without tags',
  sharedName: 'it shares its loadbalancer-name with another Service',
  sharedFloatingIp: 'it claims a Floating IP another Service claims too',
  lbError: 'its load balancer is in status error',
  otherCluster: "its loadbalancer-uuid names another cluster's load balancer",
} as const;

const COMMANDS: readonly WriterCommand[] = ['sync-lb', 'sync-lb', 'run', 'run', 'cleanup', 'init-nodes'];

/**
 * Where a random one-off fault lands: `/v1/**` hits the first request of that method whatever
 * it is (so the fault fires whenever the writer reads or creates anything); the others aim at
 * one route of the reads every pass makes or of the writes of a new load balancer.
 */
const FAULT_ROUTES: readonly (readonly [string, string])[] = [
  ['GET', '/v1/**'],
  ['GET', '/v1/load-balancers'],
  ['GET', '/v1/servers'],
  ['GET', '/v1/load-balancers/{uuid}'],
  ['GET', '/v1/servers/{uuid}'],
  ['POST', '/v1/**'],
  ['POST', '/v1/load-balancers'],
  ['POST', '/v1/load-balancers/pools'],
  ['POST', '/v1/load-balancers/pools/{uuid}/members'],
  ['POST', '/v1/load-balancers/listeners'],
  ['POST', '/v1/load-balancers/health-monitors'],
  ['PATCH', '/v1/**'],
  ['DELETE', '/v1/**'],
];

const KILL_ROUTES: Readonly<Record<WriterCommand, readonly (readonly [string, string, number])[]>> = {
  'sync-lb': [
    ['GET', '/v1/load-balancers', 1],
    ['POST', '/v1/load-balancers', 1],
    ['GET', '/v1/load-balancers/{uuid}', 1],
    ['POST', '/v1/load-balancers/pools', 1],
    ['POST', '/v1/load-balancers/pools/{uuid}/members', 2],
    ['POST', '/v1/load-balancers/listeners', 1],
  ],
  run: [
    ['GET', '/v1/servers', 1],
    ['GET', '/v1/load-balancers', 1],
    ['POST', '/v1/load-balancers', 1],
    ['POST', '/v1/load-balancers/pools', 1],
  ],
  cleanup: [
    ['GET', '/v1/load-balancers', 1],
    ['DELETE', '/v1/load-balancers/{uuid}', 1],
  ],
  'init-nodes': [['GET', '/v1/servers', 1]],
};

export function generateScenario(seed: number): Scenario {
  const rng = new Prng(seed);
  const caseId = seed % 12;
  const world = baseWorld(rng);
  const build = CASE_BUILDERS[caseId]!;
  const { world: cased, steps } = build(rng, world);
  return withAdversaries(new Prng(seed ^ ADVERSARY_SALT), { seed, caseId, world: cased, steps: aimKills(rng, steps), adversaries: [] });
}

const ADVERSARY_SALT = 0x5bd1e995;

/**
 * The adversaries of issue 17, each on its own share of the runs:
 *
 * - a 429 storm (20 %): before the case's last writers, a share (20–50 %) of all API requests
 *   is answered 429 with `Retry-After: 1` until 10–40 of them were;
 * - a pause (20 %): a Service is added, and a `sync-lb` or `run` process with a 6 s Lease is
 *   SIGSTOPped right after its first create (load balancer, pool, or pool member: in the midst
 *   of the step that creates a pool's members), for 4.5 s (past its renew
 *   deadline of 3 s) or 9 s (long enough for the other writer, started with --wait meanwhile,
 *   to take the Lease over), then SIGCONTed: it must write nothing more;
 * - a skewed clock (15 %): a Service is added, and a `sync-lb` or `run` process whose wall clock
 *   is 70 s or 45 s ahead runs next to an in-process writer, started first or second: they must
 *   never hold the Lease at once. (Not behind: the test cluster's certificates are minutes old,
 *   and a clock that puts them in the future fails the TLS handshake before any Lease logic.)
 */
function withAdversaries(rng: Prng, scenario: Scenario): Scenario {
  let { world, steps } = scenario;
  const adversaries: Adversary[] = [];
  if (rng.chance(0.2)) {
    adversaries.push('429 storm');
    const fault: FaultSpec = { kind: 'storm-429', rate: rng.pick([0.2, 0.3, 0.5]), count: rng.pick([10, 20, 40]), retryAfterSeconds: 1 };
    const last = steps.map((step) => step.kind).lastIndexOf('writers');
    steps = [...steps.slice(0, last), { kind: 'fault', fault }, ...steps.slice(last)];
  }
  const lease = rng.next();
  if (lease < 0.35) {
    const added = withService(world, { ports: 1, local: false, addedLater: true, refusal: null });
    world = added.world;
    const edit: Step = { kind: 'edit', edit: { kind: 'add-service', service: added.key } };
    const process = rng.pick(['sync-lb', 'run'] as const);
    const other: WriterSpec = { command: rng.pick(['sync-lb', 'run', 'cleanup'] as const), wait: true };
    if (lease < 0.2) {
      adversaries.push('pause');
      const route = rng.pick(['/v1/load-balancers', '/v1/load-balancers/pools', '/v1/load-balancers/pools/{uuid}/members']);
      const pause: PauseSpec = { at: { after: 'request', method: 'POST', route, count: 1 }, forMs: rng.pick([4500, 9000]) };
      steps = [...steps, edit, { kind: 'writers', writers: [{ command: process, wait: false, pause }, other] }];
    } else {
      adversaries.push('clock skew');
      const skewed: WriterSpec = {
        command: process,
        wait: rng.chance(0.5),
        skewSeconds: rng.pick([70, 45]),
        ...(rng.chance(0.5) ? { startsSecond: true as const } : {}),
      };
      const beside: WriterSpec = { command: rng.pick(['sync-lb', 'run'] as const), wait: rng.chance(0.5) };
      steps = [...steps, edit, { kind: 'writers', writers: [skewed, beside] }];
    }
  }
  return { ...scenario, world, steps, adversaries };
}

/**
 * A kill timed on a write (a create, a delete) misses on a cluster with nothing left to do: the
 * process ends first. After a converging step or writer, and until an edit gives work again,
 * such kills are timed on a read every pass of that command makes.
 */
function aimKills(rng: Prng, steps: readonly Step[]): Step[] {
  let settled = false;
  return steps.map((step) => {
    if (step.kind === 'converge') settled = true;
    if (step.kind === 'edit' && step.edit.kind !== 'not-ready') settled = false;
    if (step.kind !== 'writers') return step;
    const aimed = step.writers.map((w) => {
      if (!settled || w.kill?.after !== 'request' || w.kill.method === 'GET') return w;
      const [method, route, count] = rng.pick(KILL_ROUTES[w.command].filter(([m]) => m === 'GET'));
      return { ...w, kill: { after: 'request' as const, method, route, count } };
    });
    settled = true;
    return { ...step, writers: aimed };
  });
}

/**
 * The self-check: a converged world on the data plane with a Service refused by design (a
 * Floating IP claimed by a second Service added later) and one whose pool is swapped, then the
 * harness breaks every invariant on purpose.
 */
export function sabotageScenario(seed: number): Scenario {
  const ip = FLOATING_IPS[1];
  const claim = { ports: 1, floatingIp: ip, local: false, refusal: REFUSALS.sharedFloatingIp } as const;
  const world: WorldSpec = {
    servers: 2,
    uninitialized: [],
    services: [
      { key: 's1', ports: 1, local: false, refusal: null },
      { key: 's2', ...claim },
      { key: 's3', ...claim, addedLater: true },
      // Swapped, then held down by the sabotage longer than a swap may take.
      { key: 's4', ports: 1, local: false, refusal: null },
    ],
    orphan: false,
    lbProvisionMs: 0,
    dataPlane: true,
  };
  return {
    seed,
    caseId: 0,
    world,
    steps: [
      { kind: 'converge' },
      { kind: 'edit', edit: { kind: 'add-service', service: 's3' } },
      { kind: 'edit', edit: { kind: 'swap', service: 's4', change: 'algorithm' } },
      { kind: 'sabotage' },
    ],
    adversaries: [],
  };
}

// ---- pool swaps ------------------------------------------------------------------------------

/**
 * Where a pool swap's writer is killed: after the request that ends one of its steps (for the
 * await, after a number of member polls, which the generator draws). The next pass must finish
 * what the killed one left: a successor without listener, a port without any.
 */
export const SWAP_KILL_POINTS = [
  'after the successor pool create',
  'after its monitor create',
  'during the await polling',
  'right after the old listener delete',
  'after the new listener create',
] as const;

export type SwapKillPoint = (typeof SWAP_KILL_POINTS)[number];

const SWAP_KILL_ROUTES: Readonly<Record<SwapKillPoint, readonly [string, string]>> = {
  'after the successor pool create': ['POST', '/v1/load-balancers/pools'],
  'after its monitor create': ['POST', '/v1/load-balancers/health-monitors'],
  'during the await polling': ['GET', '/v1/load-balancers/pools/{uuid}/members'],
  'right after the old listener delete': ['DELETE', '/v1/load-balancers/listeners/{uuid}'],
  'after the new listener create': ['POST', '/v1/load-balancers/listeners'],
};

/** One-off faults aimed at a swap's own requests, or a list of load balancers answered short. */
const SWAP_FAULT_ROUTES: readonly (readonly [string, string])[] = [
  ['POST', '/v1/load-balancers/pools'],
  ['POST', '/v1/load-balancers/health-monitors'],
  ['GET', '/v1/load-balancers/pools/{uuid}/members'],
  ['DELETE', '/v1/load-balancers/listeners/{uuid}'],
  ['POST', '/v1/load-balancers/listeners'],
  ['DELETE', '/v1/load-balancers/pools/{uuid}'],
];

/**
 * A pool-swap run: a converged world on the data plane (health checks on), one Service's pool
 * algorithm or externalTrafficPolicy changed, and the writer carrying out the swap killed at
 * one of its steps (seed mod 5 picks which, so consecutive seeds cover every step), sometimes
 * after a one-off fault or with a second writer; then the usual three passes.
 */
export function generateSwapScenario(seed: number): Scenario {
  const rng = new Prng(seed);
  const servers = rng.int(2, 3);
  const services: ServiceSpec[] = [{ key: 's1', ports: rng.chance(0.4) ? 2 : 1, local: rng.chance(0.3), refusal: null }];
  if (rng.chance(0.5)) services.push({ key: 's2', ports: 1, local: false, refusal: null });
  const world: WorldSpec = { servers, uninitialized: [], services, orphan: false, lbProvisionMs: 0, dataPlane: true };
  const point = SWAP_KILL_POINTS[seed % SWAP_KILL_POINTS.length]!;
  const [method, route] = SWAP_KILL_ROUTES[point];
  // The pass reads the members of every pool once before it plans (one pool per Service port).
  const pools = services.reduce((n, s) => n + s.ports, 0);
  const count = point === 'during the await polling' ? pools + rng.int(3, 20) : 1;
  const victim: WriterSpec = {
    command: rng.pick(['sync-lb', 'sync-lb', 'run'] as const),
    wait: false,
    kill: { after: 'request', method, route, count },
    swapKill: point,
  };
  const killed: WriterSpec[] = [victim];
  if (rng.chance(0.3)) killed.push({ command: rng.pick(['sync-lb', 'run'] as const), wait: rng.chance(0.5) });
  const steps: Step[] = [
    { kind: 'converge' },
    { kind: 'edit', edit: { kind: 'swap', service: 's1', change: rng.pick(['algorithm', 'externalTrafficPolicy'] as const) } },
  ];
  if (rng.chance(0.3)) {
    const [faultMethod, faultRoute] = rng.pick(SWAP_FAULT_ROUTES);
    steps.push({
      kind: 'fault',
      fault: rng.chance(0.3)
        ? { kind: 'lb-list-short' }
        : { kind: 'error', method: faultMethod, route: faultRoute, status: rng.pick([500, 502, 503]), afterApplying: faultMethod !== 'GET' && rng.chance(0.5) },
    });
  }
  steps.push({ kind: 'writers', writers: killed });
  return { seed, caseId: SWAP_CASE, world, steps, adversaries: [] };
}

// ---- make-before-break strategies, signalled between two steps --------------------------------

export type Strategy = 'member rotation' | 'drain' | 'pool swap';
export const STRATEGIES: readonly Strategy[] = ['member rotation', 'drain', 'pool swap'];
export const STEP_SIGNALS: readonly StepSignal[] = ['SIGKILL', 'SIGTERM'];

/**
 * The steps each strategy announces (the executor's action kinds), in order; a signal lands
 * after the n-th of one of them, so that over the soak's seeds every boundary is met. A step
 * the pass never reaches (a drain the tool refuses: nothing healthy would remain) makes the
 * signal miss, which the tally counts.
 */
export const STRATEGY_STEPS: Readonly<Record<Strategy, readonly string[]>> = {
  // The old members are drained (disabled) by the writer, deleted by a pass after the drain period.
  'member rotation': ['create-member', 'await-members', 'update-member'],
  drain: ['update-member'],
  'pool swap': ['create-pool', 'create-member', 'create-monitor', 'await-members', 'delete-listener', 'create-listener', 'delete-monitor', 'delete-member', 'delete-pool'],
};

/**
 * What a strategy run plays (seed mod 7 picks it): the edit before the signalled writer, and
 * the strategy that edit asks for.
 */
export const STRATEGY_PLAYS: readonly { readonly name: string; readonly strategy: Strategy; readonly edits: (service: string) => EditSpec[] }[] = [
  { name: 'node port changed', strategy: 'member rotation', edits: (service) => [{ kind: 'node-port', service, newUp: true }] },
  { name: 'new members never come up', strategy: 'member rotation', edits: (service) => [{ kind: 'node-port', service, newUp: false }] },
  { name: 'a Node left out by the selector', strategy: 'drain', edits: (service) => [{ kind: 'selector', service, match: 'subset' }] },
  { name: 'a selector matching no Node', strategy: 'drain', edits: (service) => [{ kind: 'selector', service, match: 'nothing' }] },
  { name: 'a selector matching only a Node whose member is down', strategy: 'drain', edits: (service) => [{ kind: 'selector', service, match: 'down' }] },
  { name: 'pool algorithm changed', strategy: 'pool swap', edits: (service) => [{ kind: 'swap', service, change: 'algorithm' }] },
  {
    name: 'a load balancer in error repaired by a node-port change',
    strategy: 'member rotation',
    edits: (service) => [
      { kind: 'pool-down', service },
      { kind: 'node-port', service, newUp: true },
    ],
  },
];

/** The play of a strategy or failed-request seed (seed mod 7), its world of 2–3 servers and one Service, and the seed's random stream. */
function strategyPlay(seed: number) {
  const rng = new Prng(seed);
  const play = STRATEGY_PLAYS[seed % STRATEGY_PLAYS.length]!;
  const servers = rng.int(2, 3);
  const services: ServiceSpec[] = [{ key: 's1', ports: 1, local: false, refusal: null }];
  const world: WorldSpec = { servers, uninitialized: [], services, orphan: false, lbProvisionMs: 0, dataPlane: true };
  return { rng, play, servers, world };
}

/** The request each step of a strategy sends (the first of them, for a step per member). */
export const STEP_REQUESTS: Readonly<Record<string, readonly [string, string]>> = {
  'create-pool': ['POST', '/v1/load-balancers/pools'],
  'create-member': ['POST', '/v1/load-balancers/pools/{uuid}/members'],
  'create-monitor': ['POST', '/v1/load-balancers/health-monitors'],
  'await-members': ['GET', '/v1/load-balancers/pools/{uuid}/members'],
  'delete-listener': ['DELETE', '/v1/load-balancers/listeners/{uuid}'],
  'create-listener': ['POST', '/v1/load-balancers/listeners'],
  'delete-monitor': ['DELETE', '/v1/load-balancers/health-monitors/{uuid}'],
  'delete-member': ['DELETE', '/v1/load-balancers/pools/{uuid}/members/{uuid}'],
  'delete-pool': ['DELETE', '/v1/load-balancers/pools/{uuid}'],
  'update-member': ['PATCH', '/v1/load-balancers/pools/{uuid}/members/{uuid}'],
};

/**
 * The kinds of one failed request (issue: one ordinary failed request must not strand a port):
 * a 500, a 503 with Retry-After, a reset before the request was applied, no answer within the
 * client's timeout (the request applied late, after the client gave up: a create's retry is
 * refused and read back), a 400 refusing an overlapping write.
 */
export const FAILED_REQUESTS = ['500', '503 Retry-After', 'reset', 'timeout', '400'] as const;
export type FailedRequest = (typeof FAILED_REQUESTS)[number];

function failedRequestFault(failure: FailedRequest, [method, route]: readonly [string, string]): FaultSpec {
  switch (failure) {
    case '500':
      return { kind: 'error', method, route, status: 500, afterApplying: false };
    case '503 Retry-After':
      return { kind: 'error', method, route, status: 503, afterApplying: false, retryAfterSeconds: 2 };
    case 'reset':
      return { kind: 'reset', method, route, afterApplying: false };
    case 'timeout':
      return { kind: 'hang', method, route, forMs: 22_000, afterApplying: false };
    case '400':
      return { kind: 'error', method, route, status: 400, afterApplying: false };
  }
}

/**
 * A failed-request run: a converged world on the data plane, one Service changed (STRATEGY_PLAYS),
 * and the first request of one of the strategy's steps failing once (FAILED_REQUESTS) while
 * `sync-lb` or `run` carries the change out; then the usual three passes. A failure inside a
 * step pair is completed within the pass (src/core/apply/pair-completion.ts); one elsewhere
 * fails the pass before anything serving is taken away, or is retried by the client.
 */
export function generateFailedRequestScenario(seed: number): Scenario {
  const { rng, play, world } = strategyPlay(seed);
  const step = rng.pick(STRATEGY_STEPS[play.strategy]);
  const failure = rng.pick(FAILED_REQUESTS);
  const writer: WriterSpec = { command: rng.pick(['sync-lb', 'run'] as const), wait: false };
  return {
    seed,
    caseId: FAILED_REQUEST_CASE,
    world,
    steps: [
      { kind: 'converge' },
      ...play.edits('s1').map((edit): Step => ({ kind: 'edit', edit })),
      { kind: 'fault', fault: failedRequestFault(failure, STEP_REQUESTS[step]!) },
      { kind: 'writers', writers: [writer] },
    ],
    adversaries: [],
  };
}

/**
 * A strategy run: a converged world on the data plane, one Service changed (STRATEGY_PLAYS),
 * and the built CLI carrying the change out sent SIGKILL or SIGTERM right after one of the
 * strategy's steps (its step-pause hook holds it there); then the usual three passes.
 */
export function generateStrategyScenario(seed: number): Scenario {
  const { rng, play, servers, world } = strategyPlay(seed);
  const steps = STRATEGY_STEPS[play.strategy];
  const step = rng.pick(steps);
  // A step per member comes once for each server (a drain leaves out only one).
  const count = play.strategy !== 'drain' && step.endsWith('-member') ? rng.int(1, servers) : 1;
  const victim: WriterSpec = {
    command: rng.pick(['sync-lb', 'run'] as const),
    wait: false,
    kill: { after: 'step', step, count, signal: rng.pick(STEP_SIGNALS) },
    stepKill: play.strategy,
  };
  return {
    seed,
    caseId: STRATEGY_CASE,
    world,
    steps: [{ kind: 'converge' }, ...play.edits('s1').map((edit): Step => ({ kind: 'edit', edit })), { kind: 'writers', writers: [victim] }],
    adversaries: [],
  };
}

/**
 * A Service's port held down this long by the self-check: longer than a swap may take (45 s:
 * 20 s, and 25 s of retries of a failed request of its listener move) with the tolerance.
 */
export const SABOTAGE_OUTAGE_MS = 48_000;

// ---- the world -------------------------------------------------------------------------------

function baseWorld(rng: Prng): WorldSpec {
  const servers = rng.int(2, 3);
  const uninitialized = Array.from({ length: servers }, (_, i) => i + 1).filter(() => rng.chance(0.25));
  const floatingIps = rng.sample(FLOATING_IPS, FLOATING_IPS.length);
  const services: ServiceSpec[] = [];
  const count = rng.int(1, 4);
  for (let k = 1; k <= count; k++) {
    services.push({
      key: `s${k}`,
      ports: rng.chance(0.3) ? 2 : 1,
      ...(rng.chance(0.3) ? { lbName: `lb-${k}` } : {}),
      ...(rng.chance(0.35) && floatingIps.length > 1 ? { floatingIp: floatingIps.pop()! } : {}),
      local: rng.chance(0.2),
      refusal: null,
    });
  }
  if (rng.chance(0.1)) {
    services.push({ key: `s${count + 1}`, ports: 1, local: false, copiedFromOtherCluster: true, refusal: REFUSALS.otherCluster });
  }
  return { servers, uninitialized, services, orphan: rng.chance(0.5), lbProvisionMs: rng.pick([0, 0, 30, 120]) };
}

function withService(world: WorldSpec, service: Omit<ServiceSpec, 'key'>): { world: WorldSpec; key: string } {
  const key = `s${world.services.length + 1}`;
  return { world: { ...world, services: [...world.services, { ...service, key }] }, key };
}

function refuse(world: WorldSpec, keys: readonly string[], why: string): WorldSpec {
  return { ...world, services: world.services.map((s) => (keys.includes(s.key) ? { ...s, refusal: why } : s)) };
}

/** The first Service that must converge (so a case can rely on it getting a load balancer). */
function convergingService(world: WorldSpec): string {
  const service = world.services.find((s) => s.refusal === null);
  if (service === undefined) throw new Error('baseWorld always has a Service without refusal');
  return service.key;
}

// ---- steps -----------------------------------------------------------------------------------

function writer(rng: Prng, command: WriterCommand = rng.pick(COMMANDS), kill = false): WriterSpec {
  return { command, wait: rng.chance(0.15), ...(kill ? { kill: killSpec(rng, command) } : {}) };
}

function killSpec(rng: Prng, command: WriterCommand): KillSpec {
  if (rng.chance(0.3)) return { after: 'ms', ms: rng.int(0, 400) };
  const [method, route, count] = rng.pick(KILL_ROUTES[command]);
  return { after: 'request', method, route, count };
}

/** One writer, or (with `pairChance`) two at once; with `killChance` one of them is killed. */
function writers(rng: Prng, options: { pairChance?: number; killChance?: number; commands?: readonly WriterCommand[] } = {}): Step {
  const pick = () => rng.pick(options.commands ?? COMMANDS);
  const list = [writer(rng, pick())];
  if (rng.chance(options.pairChance ?? 0.5)) list.push(writer(rng, pick()));
  if (rng.chance(options.killChance ?? 0.15)) {
    const victim = rng.int(0, list.length - 1);
    list[victim] = writer(rng, list[victim]!.command, true);
  }
  return { kind: 'writers', writers: list };
}

function randomFault(rng: Prng): FaultSpec {
  const [method, route] = rng.pick(FAULT_ROUTES);
  const afterApplying = method !== 'GET' && rng.chance(0.5);
  switch (rng.int(0, 2)) {
    case 0:
      return { kind: 'reset', method, route, afterApplying };
    case 1:
      return { kind: 'hang', method, route, forMs: rng.pick([300, 1200, 4000]), afterApplying };
    default:
      return { kind: 'error', method, route, status: rng.pick([500, 502, 503, 504]), afterApplying };
  }
}

/** Sometimes a random one-off fault before the writers. */
function maybeFault(rng: Prng, chance = 0.3): Step[] {
  return rng.chance(chance) ? [{ kind: 'fault', fault: randomFault(rng) }] : [];
}

function maybeConverge(rng: Prng, chance = 0.5): Step[] {
  return rng.chance(chance) ? [{ kind: 'converge' }] : [];
}

type CaseBuilder = (rng: Prng, world: WorldSpec) => { world: WorldSpec; steps: Step[] };

const CASE_BUILDERS: Readonly<Record<number, CaseBuilder>> = {
  0: (rng, world) => {
    const steps: Step[] = [...maybeConverge(rng)];
    // Only a Node with a providerID can be matched to a deleted server (a name alone never
    // deletes a Node): without one, every Service would fail by design.
    const initialized = Array.from({ length: world.servers }, (_, i) => i + 1).filter((i) => !world.uninitialized.includes(i));
    if (rng.chance(0.3) && initialized.length > 0) {
      steps.push({ kind: 'edit', edit: { kind: 'delete-server', server: rng.pick(initialized) } });
    }
    const rounds = rng.int(1, 3);
    for (let i = 0; i < rounds; i++) steps.push(...maybeFault(rng, 0.7), writers(rng, { killChance: 0.25 }));
    return { world, steps };
  },
  1: (rng, world) => {
    const pairs: readonly (readonly [WriterCommand, WriterCommand])[] = [
      ['sync-lb', 'sync-lb'],
      ['sync-lb', 'run'],
      ['run', 'run'],
      ['sync-lb', 'cleanup'],
      ['run', 'init-nodes'],
      ['init-nodes', 'init-nodes'],
      ['cleanup', 'run'],
    ];
    const [a, b] = rng.pick(pairs);
    const kill = rng.chance(0.2) ? rng.int(0, 1) : -1;
    const step: Step = { kind: 'writers', writers: [writer(rng, a, kill === 0), writer(rng, b, kill === 1)] };
    return { world, steps: [...maybeConverge(rng, 0.3), ...maybeFault(rng), step] };
  },
  2: (rng, world) => {
    const fault: FaultSpec = rng.chance(0.7) ? { kind: 'lb-list-empty' } : { kind: 'lb-list-short' };
    return {
      world,
      steps: [{ kind: 'converge' }, { kind: 'fault', fault }, writers(rng, { commands: ['sync-lb', 'run'], pairChance: 0.3 })],
    };
  },
  3: (rng, world) => {
    const server = rng.int(1, world.servers);
    return {
      world,
      steps: [
        { kind: 'converge' },
        { kind: 'edit', edit: { kind: 'not-ready', server } },
        { kind: 'fault', fault: { kind: 'server-list-drop', server } },
        writers(rng, { commands: ['init-nodes', 'run'], pairChance: 0.3 }),
      ],
    };
  },
  4: (rng, world) => {
    const service = convergingService(world);
    const commands: readonly WriterCommand[] = rng.chance(0.5) ? ['cleanup'] : ['cleanup', rng.pick(['sync-lb', 'run'] as const)];
    return {
      world,
      steps: [
        { kind: 'converge' },
        { kind: 'edit', edit: { kind: 'restore', service } },
        { kind: 'writers', writers: commands.map((command) => writer(rng, command)) },
      ],
    };
  },
  5: (rng, base) => {
    const { world, key } = withService(base, { ports: rng.chance(0.5) ? 2 : 1, local: false, addedLater: true, refusal: null });
    const creator = rng.pick(['sync-lb', 'run'] as const);
    return {
      world,
      steps: [
        ...maybeConverge(rng, 0.6),
        { kind: 'edit', edit: { kind: 'add-service', service: key } },
        { kind: 'fault', fault: { kind: 'latency', ms: rng.pick([5, 20]) } },
        { kind: 'writers', writers: rng.chance(0.5) ? [writer(rng, creator), writer(rng, 'cleanup')] : [writer(rng, 'cleanup'), writer(rng, creator)] },
      ],
    };
  },
  6: (rng, base) => {
    const { world } = withService(base, { ports: 1, lbName: 'hand-made', local: false, refusal: REFUSALS.handMade });
    return { world, steps: [...maybeConverge(rng, 0.3), ...maybeFault(rng), writers(rng)] };
  },
  7: (rng, base) => {
    const first = withService(base, { ports: 1, lbName: 'shared', local: false, refusal: REFUSALS.sharedName });
    const second = withService(first.world, { ports: rng.chance(0.5) ? 2 : 1, lbName: 'shared', local: false, refusal: REFUSALS.sharedName });
    return {
      world: second.world,
      steps: [...maybeFault(rng), writers(rng, { commands: ['sync-lb', 'run'], pairChance: 0.6 })],
    };
  },
  8: (rng, base) => {
    const added = rng.chance(0.5);
    const { world, key } = withService(base, { ports: 1, local: false, refusal: null, ...(added ? { addedLater: true as const } : {}) });
    const steps: Step[] = added ? [{ kind: 'converge' }, { kind: 'edit', edit: { kind: 'add-service', service: key } }] : [];
    steps.push({ kind: 'fault', fault: { kind: 'create-503-applied' } }, writers(rng, { commands: ['sync-lb', 'run'], pairChance: 0.3 }));
    return { world, steps };
  },
  9: (rng, world) => {
    const service = convergingService(world);
    const command = rng.pick(['sync-lb', 'run'] as const);
    const steps: Step[] = [
      {
        kind: 'writers',
        writers: [{ command, wait: false, kill: { after: 'request', method: 'POST', route: '/v1/load-balancers', count: 1 } }],
      },
      { kind: 'edit', edit: { kind: 'rename', service, to: 'renamed' } },
    ];
    if (rng.chance(0.5)) steps.push(writers(rng, { commands: ['sync-lb', 'run', 'cleanup'] }));
    return { world, steps };
  },
  10: (rng, base) => {
    const ip = FLOATING_IPS[0];
    const holder = withService(base, { ports: 1, floatingIp: ip, local: false, refusal: REFUSALS.sharedFloatingIp });
    const later = rng.chance(0.5);
    const claimant = withService(holder.world, {
      ports: 1,
      floatingIp: ip,
      local: false,
      refusal: REFUSALS.sharedFloatingIp,
      ...(later ? { addedLater: true as const } : {}),
    });
    // Nobody else holds the contested address.
    const world = {
      ...claimant.world,
      services: claimant.world.services.map((s) => {
        if (s.floatingIp !== ip || s.refusal !== null) return s;
        const { floatingIp: _, ...rest } = s;
        return rest;
      }),
    };
    const steps: Step[] = later
      ? [{ kind: 'converge' }, { kind: 'edit', edit: { kind: 'add-service', service: claimant.key } }]
      : [];
    steps.push(...maybeFault(rng), writers(rng));
    return { world, steps };
  },
  11: (rng, base) => {
    const { world, key } = withService(base, { ports: 1, local: false, refusal: REFUSALS.lbError });
    const early = rng.chance(0.5);
    const fault: Step = { kind: 'fault', fault: { kind: 'lb-error', service: key } };
    const steps: Step[] = early ? [fault] : [{ kind: 'converge' }, fault];
    steps.push(...maybeFault(rng), writers(rng, { commands: ['sync-lb', 'run', 'cleanup'] }));
    return { world: refuse(world, [key], REFUSALS.lbError), steps };
  },
};

// ---- description -----------------------------------------------------------------------------

export function describeWorld(world: WorldSpec): string {
  const services = world.services.map((s) => {
    const traits = [
      s.ports === 2 ? '2 ports' : '',
      s.lbName === undefined ? '' : `name ${s.lbName}`,
      s.floatingIp === undefined ? '' : `fip ${s.floatingIp}`,
      s.local ? 'Local' : '',
      s.copiedFromOtherCluster ? "uuid of the other cluster's LB" : '',
      s.addedLater ? 'added later' : '',
      s.refusal === null ? '' : 'may be refused',
    ].filter((t) => t !== '');
    return traits.length === 0 ? s.key : `${s.key}[${traits.join(', ')}]`;
  });
  const uninitialized = world.uninitialized.length === 0 ? '' : ` (uninitialised: ${world.uninitialized.join(', ')})`;
  return (
    `${world.servers} servers${uninitialized}; services ${services.join(' ')}; ` +
    `foreign LBs: other-cluster, hand-made${world.orphan ? ', orphan of this cluster' : ''}; provisioning ${world.lbProvisionMs} ms` +
    (world.dataPlane ? '; data plane with health checks' : '')
  );
}

export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'converge':
      return 'converge';
    case 'fault':
      return `fault ${describeFault(step.fault)}`;
    case 'edit':
      return `edit ${Object.values(step.edit).join(' ')}`;
    case 'writers':
      return step.writers.map(describeWriter).join(' ∥ ');
    case 'sabotage':
      return 'sabotage by the harness';
  }
}

export function describeFault(fault: FaultSpec): string {
  switch (fault.kind) {
    case 'reset':
    case 'hang':
    case 'error': {
      const extra = fault.kind === 'hang' ? ` ${fault.forMs} ms` : fault.kind === 'error' ? ` ${fault.status}` : '';
      return `${fault.kind}${extra} on ${fault.method} ${fault.route}${fault.afterApplying ? ' after applying' : ''}`;
    }
    case 'server-list-drop':
      return `server list without server ${fault.server}`;
    case 'latency':
      return `latency ${fault.ms} ms`;
    case 'lb-error':
      return `load balancer of ${fault.service} in status error`;
    case 'storm-429':
      return `429 storm: ${Math.round(fault.rate * 100)} % of requests answered 429 (Retry-After ${fault.retryAfterSeconds} s) until ${fault.count} were`;
    default:
      return fault.kind;
  }
}

function describeWriter(w: WriterSpec): string {
  const flags = [
    w.wait ? '--wait' : '',
    w.kill === undefined ? '' : `${w.kill.after === 'step' ? w.kill.signal : 'SIGKILL'} ${describeKill(w.kill)}`,
    w.pause === undefined ? '' : `--lease-seconds ${PAUSED_LEASE_SECONDS}, SIGSTOP ${describeKill(w.pause.at)} for ${w.pause.forMs} ms`,
    w.skewSeconds === undefined ? '' : `clock ${w.skewSeconds > 0 ? '+' : ''}${w.skewSeconds} s`,
    w.startsSecond ? 'started second' : '',
    w.swapKill === undefined ? '' : `swap killed ${w.swapKill}`,
  ].filter((f) => f !== '');
  return flags.length === 0 ? w.command : `${w.command}(${flags.join(', ')})`;
}

function describeKill(kill: KillSpec): string {
  if (kill.after === 'step') return `after its ${kill.count}. ${kill.step} step`;
  return kill.after === 'ms' ? `${kill.ms} ms after its first API request` : `after ${kill.count}× ${kill.method} ${kill.route}`;
}

export function describeScenario(scenario: Scenario): string {
  const steps = scenario.steps.map((step, i) => `${i + 1}) ${describeStep(step)}`).join('; ');
  const adversaries = scenario.adversaries.length === 0 ? '' : ` + ${scenario.adversaries.join(', ')}`;
  return `seed ${scenario.seed}, case ${scenario.caseId} (${CASES[scenario.caseId]})${adversaries}; world: ${describeWorld(scenario.world)}; steps: ${steps}`;
}
