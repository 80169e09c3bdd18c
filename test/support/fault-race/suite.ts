// The fault-and-race suite as a vitest describe block, run with a given set of seeds: the fixed
// seeds of `npm test` (test/integration/fault-race.test.ts) and the long random soak of
// `npm run soak:race` (test/soak/). Each seeded run mixes concurrent writers, one-off simulator
// faults, SIGKILLs of the built CLI, paused writers and skewed clocks (./scenario.ts), then checks
// the safety invariants (./invariants.ts). The self-check always runs first: the harness breaks
// every invariant itself, and the checks must report each.
//
// A failing run names its seed, its schedule, what each step did and the evidence of each broken
// invariant; it reruns alone with FAULT_RACE_SEED=<seed> FAULT_RACE_RUNS=1 (see seedsFromEnv).
// The summary line at the end counts runs, kills, faults, pairs, passes and wall time; it is also
// written to .tmp/<summary file>.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNamespace, testConnection, uniqueName } from '../kube.js';
import { requireBuiltBinary } from '../lb-scenarios.js';
import { startHarness } from '../ccm.js';
import { probeFeatures, requireRunnableBinary } from './cli.js';
import { INVARIANTS } from './invariants.js';
import { deleteWriterLease, executeRun, type RunRecord, type SuiteEnv } from './runner.js';
import { describeScenario, generateFailedRequestScenario, generateScenario, generateStrategyScenario, generateSwapScenario, sabotageScenario } from './scenario.js';
import { Tally, runReport, violationLine } from './tally.js';

export interface SuiteSeeds {
  /** Seeds of generateScenario (the cases 0–11 with their adversaries). */
  readonly seeds: readonly number[];
  /** Seeds of generateSwapScenario (a pool swap killed at one of its steps). */
  readonly swapSeeds: readonly number[];
  /** Seeds of generateStrategyScenario (a rotation, drain or pool swap signalled between two of its steps). */
  readonly strategySeeds?: readonly number[];
  /** Seeds of generateFailedRequestScenario (one request of a rotation, drain or pool swap failed once). */
  readonly failedRequestSeeds?: readonly number[];
  /** Prefix of the summary files in .tmp/: `<prefix>-summary.json`, `<prefix>-swap-summary.json`. */
  readonly summary: string;
}

const verbose = process.env.FAULT_RACE_VERBOSE === '1';

/**
 * The seeds the environment asks for instead of `fallback`, one variable per list:
 *
 *   FAULT_RACE_SEED=<n> FAULT_RACE_RUNS=<k>            seeds n … n+k-1 (RUNS defaults to 1 with a SEED)
 *   FAULT_RACE_SWAP_SEED=<n> FAULT_RACE_SWAP_RUNS=<k>  the same for the pool-swap runs
 *   FAULT_RACE_STRATEGY_SEED=<n> FAULT_RACE_STRATEGY_RUNS=<k>  the same for the strategy runs
 *   FAULT_RACE_FAILED_SEED=<n> FAULT_RACE_FAILED_RUNS=<k>  the same for the failed-request runs
 *
 * RUNS=0 skips that list. Without SEED, RUNS alone counts on from the fallback's first seed.
 */
export function seedsFromEnv(env: NodeJS.ProcessEnv, fallback: SuiteSeeds): SuiteSeeds {
  const list = (seedName: string, runsName: string, base: readonly number[]): readonly number[] => {
    const seed = wholeNumber(env, seedName);
    const runs = wholeNumber(env, runsName);
    if (seed === undefined && runs === undefined) return base;
    const first = seed ?? base[0] ?? 1;
    return Array.from({ length: runs ?? 1 }, (_, i) => first + i);
  };
  return {
    ...fallback,
    seeds: list('FAULT_RACE_SEED', 'FAULT_RACE_RUNS', fallback.seeds),
    swapSeeds: list('FAULT_RACE_SWAP_SEED', 'FAULT_RACE_SWAP_RUNS', fallback.swapSeeds),
    strategySeeds: list('FAULT_RACE_STRATEGY_SEED', 'FAULT_RACE_STRATEGY_RUNS', fallback.strategySeeds ?? []),
    failedRequestSeeds: list('FAULT_RACE_FAILED_SEED', 'FAULT_RACE_FAILED_RUNS', fallback.failedRequestSeeds ?? []),
  };
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new Error(`${name}=${raw}: expected a whole number`);
  return Number(raw);
}

export function faultRaceSuite(title: string, { seeds, swapSeeds, strategySeeds = [], failedRequestSeeds = [], summary }: SuiteSeeds): void {
  describe(title, () => {
    let env: SuiteEnv;
    const selfCheckSeed = seeds[0] ?? swapSeeds[0] ?? 1;

    beforeAll(async () => {
      requireBuiltBinary();
      await requireEmptyCluster();
      await deleteWriterLease();
      const namespace = uniqueName('fault-race');
      await ensureNamespace(namespace);
      const harness = await startHarness();
      try {
        await requireRunnableBinary(harness.sim.url);
        env = { namespace, features: await probeFeatures(harness.sim.url) };
      } finally {
        await harness.stop();
      }
    });

    it('self-check: a breach of each invariant, made by the harness on purpose, is reported', async () => {
      const record = await executeRun(selfCheckSeed, env, sabotageScenario(selfCheckSeed));
      if (verbose) console.log(record.violations.map(violationLine).join('\n'));
      const found = new Set(record.violations.map((v) => v.invariant));
      expect(INVARIANTS.filter((i) => !found.has(i)), record.violations.map(violationLine).join('\n')).toEqual([]);
    });

    /** One group of seeded runs, its summary line printed and written to `.tmp/<file>`. */
    function seededRuns(name: string, list: readonly number[], generate: typeof generateScenario, file: string): void {
      const tally = new Tally();

      afterAll(() => {
        const line = tally.summary();
        console.log(line);
        mkdirSync('.tmp', { recursive: true });
        writeFileSync(`.tmp/${file}`, `${JSON.stringify({ summary: line, ...tally.totals() }, null, 2)}\n`);
      });

      it.for(list)(`${name} %i`, { timeout: 180_000 }, async (seed) => {
        const scenario = generate(seed);
        let record: RunRecord;
        try {
          record = await executeRun(seed, env, scenario);
        } catch (error) {
          throw new Error(`seed ${seed}: the run itself broke (${String(error)}); scenario: ${describeScenario(scenario)}`, { cause: error });
        }
        tally.add(record);
        for (const note of record.notes) console.log(`seed ${seed}: ${note}`);
        if (verbose) console.log(runReport(record));
        if (record.violations.length > 0) console.log(`fault-race: seed ${seed} broke an invariant; rerun it alone with ${rerunHint(name, seed)}`);
        expect(record.violations.map(violationLine), runReport(record)).toEqual([]);
      });
    }

    // An empty list still shows as one skipped test.
    describe.skipIf(seeds.length === 0)('seeded runs', () => seededRuns('seed', orOne(seeds), generateScenario, `${summary}-summary.json`));
    describe.skipIf(swapSeeds.length === 0)('pool swaps killed at each step', () =>
      seededRuns('swap seed', orOne(swapSeeds), generateSwapScenario, `${summary}-swap-summary.json`),
    );
    describe.skipIf(strategySeeds.length === 0)('rotations, drains and pool swaps signalled between two steps', () =>
      seededRuns('strategy seed', orOne(strategySeeds), generateStrategyScenario, `${summary}-strategy-summary.json`),
    );
    describe.skipIf(failedRequestSeeds.length === 0)('rotations, drains and pool swaps with one failed request', () =>
      seededRuns('failed-request seed', orOne(failedRequestSeeds), generateFailedRequestScenario, `${summary}-failed-request-summary.json`),
    );
  });
}

function orOne(list: readonly number[]): readonly number[] {
  return list.length === 0 ? [0] : list;
}

function rerunHint(name: string, seed: number): string {
  const variables = {
    seed: `FAULT_RACE_SEED=${seed} FAULT_RACE_SWAP_RUNS=0 FAULT_RACE_STRATEGY_RUNS=0 FAULT_RACE_FAILED_RUNS=0`,
    'swap seed': `FAULT_RACE_SWAP_SEED=${seed} FAULT_RACE_RUNS=0 FAULT_RACE_STRATEGY_RUNS=0 FAULT_RACE_FAILED_RUNS=0`,
    'strategy seed': `FAULT_RACE_STRATEGY_SEED=${seed} FAULT_RACE_RUNS=0 FAULT_RACE_SWAP_RUNS=0 FAULT_RACE_FAILED_RUNS=0`,
    'failed-request seed': `FAULT_RACE_FAILED_SEED=${seed} FAULT_RACE_RUNS=0 FAULT_RACE_SWAP_RUNS=0 FAULT_RACE_STRATEGY_RUNS=0`,
  }[name];
  return `${variables} npx vitest run --project fault-race`;
}

/**
 * Every pass works on the whole cluster: a Node or a load-balancer Service another test file
 * left behind would fail every run here. Better to say so once.
 */
async function requireEmptyCluster(): Promise<void> {
  const conn = testConnection();
  const [nodes, services] = await Promise.all([conn.core.listNode(), conn.core.listServiceForAllNamespaces()]);
  const leftovers = [
    ...nodes.items.map((n) => `Node ${n.metadata!.name!}`),
    ...services.items
      .filter((s) => (s.spec?.type === 'LoadBalancer' && !s.spec.loadBalancerClass) || (s.metadata?.finalizers ?? []).length > 0)
      .map((s) => `Service ${s.metadata!.namespace!}/${s.metadata!.name!}`),
  ];
  if (leftovers.length > 0) {
    throw new Error(`the cluster holds objects this suite did not make, which its whole-cluster passes would act on: ${leftovers.join(', ')}`);
  }
}
