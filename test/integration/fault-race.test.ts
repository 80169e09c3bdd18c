// The fault-and-race suite: seeded, repeatable runs that mix concurrent writers (`sync-lb`,
// `run`, `cleanup --yes`, `init-nodes`), one-off simulator faults (short or empty lists, resets,
// hangs, errors, a create applied then answered 503, 429 storms), SIGKILLs of the built CLI,
// writers paused (SIGSTOP) past their Lease's renew deadline and writers whose clock is ahead
// (libfaketime), then check the safety invariants (test/support/fault-race/invariants.ts) after
// each run.
//
//   FAULT_RACE_SEED=<n>          the first run's seed (default 20261123); run i uses seed n + i
//   FAULT_RACE_RUNS=<n>          how many runs (default 100; 0 skips them, the self-check stays).
//                                A run takes about twice as long since pauses, skewed clocks and
//                                429 storms joined (4.8 s against 2.5 s): 100 runs keep the
//                                suite's share of `npm test` where 200 runs had it.
//   FAULT_RACE_SWAP_SEED=<n>     the first pool-swap run's seed (default 20261300); run i uses n + i
//   FAULT_RACE_SWAP_RUNS=<n>     how many pool-swap runs (default 10; 0 skips them). Each runs on the
//                                simulator's data plane with health checks on, changes one Service's
//                                pool algorithm or externalTrafficPolicy and kills the writer carrying
//                                out the swap at one of its steps (seed mod 5: after the successor pool
//                                create, after its monitor create, during the await polling, right
//                                after the old listener delete, after the new listener create); about
//                                11 s each (the data plane's checks: each swap waits ~2.5 s)
//   FAULT_RACE_VERBOSE=1         print every run's schedule and what each step did
//
// A failing run names its seed, its schedule, what each step did and the evidence of each
// broken invariant. The summary line at the end counts runs, kills, faults, pairs, passes and
// wall time; it is also written to .tmp/fault-race-summary.json. The self-check always runs:
// the harness breaks every invariant itself, and the checks must report each.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNamespace, testConnection, uniqueName } from '../support/kube.js';
import { requireBuiltBinary } from '../support/lb-scenarios.js';
import { startHarness } from '../support/ccm.js';
import { probeFeatures, requireRunnableBinary } from '../support/fault-race/cli.js';
import { INVARIANTS } from '../support/fault-race/invariants.js';
import { deleteWriterLease, executeRun, type RunRecord, type SuiteEnv } from '../support/fault-race/runner.js';
import { describeScenario, generateScenario, generateSwapScenario, sabotageScenario } from '../support/fault-race/scenario.js';
import { Tally, runReport, violationLine } from '../support/fault-race/tally.js';

const firstSeed = wholeNumber('FAULT_RACE_SEED', 20261123);
const runs = wholeNumber('FAULT_RACE_RUNS', 100);
const firstSwapSeed = wholeNumber('FAULT_RACE_SWAP_SEED', 20261300);
const swapRuns = wholeNumber('FAULT_RACE_SWAP_RUNS', 10);
const verbose = process.env.FAULT_RACE_VERBOSE === '1';
// With FAULT_RACE_RUNS=0, one skipped test stands for the seeded runs.
const seeds = Array.from({ length: Math.max(runs, 1) }, (_, i) => firstSeed + i);
const swapSeeds = Array.from({ length: Math.max(swapRuns, 1) }, (_, i) => firstSwapSeed + i);

function wholeNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name}=${raw}: expected a whole number`);
  return Number(raw);
}

describe('fault-and-race: the safety invariants hold under kills, faults and concurrent writers', () => {
  let env: SuiteEnv;

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
    const record = await executeRun(firstSeed, env, sabotageScenario(firstSeed));
    if (verbose) console.log(record.violations.map(violationLine).join('\n'));
    const found = new Set(record.violations.map((v) => v.invariant));
    expect(INVARIANTS.filter((i) => !found.has(i)), record.violations.map(violationLine).join('\n')).toEqual([]);
  });

  /** One group of seeded runs, its summary line printed and written to `.tmp/<summaryFile>`. */
  function seededRuns(title: string, list: readonly number[], generate: typeof generateScenario, summaryFile: string): void {
    const tally = new Tally();

    afterAll(() => {
      const line = tally.summary();
      console.log(line);
      mkdirSync('.tmp', { recursive: true });
      writeFileSync(`.tmp/${summaryFile}`, `${JSON.stringify({ summary: line, ...tally.totals() }, null, 2)}\n`);
    });

    it.for(list)(`${title} %i`, { timeout: 180_000 }, async (seed) => {
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
      expect(record.violations.map(violationLine), runReport(record)).toEqual([]);
    });
  }

  describe.skipIf(runs === 0)('seeded runs', () => seededRuns('seed', seeds, generateScenario, 'fault-race-summary.json'));
  describe.skipIf(swapRuns === 0)('pool swaps killed at each step', () =>
    seededRuns('swap seed', swapSeeds, generateSwapScenario, 'fault-race-swap-summary.json'),
  );
});

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
