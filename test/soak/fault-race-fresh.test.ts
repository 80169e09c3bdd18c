// The long random soak of the fault-and-race suite (`npm run soak:race`): new seeds on every run,
// 200 seeded runs, 20 pool-swap runs and 42 strategy runs (a rotation, drain or pool swap
// signalled between two steps; 42 = 6 × the 7 plays) and 70 failed-request runs (one request of
// a rotation, drain or pool swap failing once; 70 = 10 × the 7 plays) from random starting seeds. The seeds are
// printed first, and a run that breaks an invariant prints its seed and how to rerun it alone.
// FAULT_RACE_SEED/_RUNS, FAULT_RACE_SWAP_SEED/_RUNS, FAULT_RACE_STRATEGY_SEED/_RUNS and FAULT_RACE_FAILED_SEED/_RUNS choose other seeds
// (test/support/fault-race/suite.ts).
import { randomInt } from 'node:crypto';
import { seedRange } from '../support/fault-race/seeds.js';
import { faultRaceSuite, seedsFromEnv } from '../support/fault-race/suite.js';

const seeds = seedsFromEnv(process.env, {
  seeds: seedRange(randomInt(1, 2 ** 31 - 1000), 200),
  swapSeeds: seedRange(randomInt(1, 2 ** 31 - 1000), 20),
  strategySeeds: seedRange(randomInt(1, 2 ** 31 - 1000), 42),
  failedRequestSeeds: seedRange(randomInt(1, 2 ** 31 - 1000), 70),
  summary: 'soak-fresh',
});
const span = (list: readonly number[]) => (list.length === 0 ? 'none' : `${list[0]}…${list.at(-1)} (${list.length})`);
console.log(`fault-race soak: seeds ${span(seeds.seeds)}, pool-swap seeds ${span(seeds.swapSeeds)}, strategy seeds ${span(seeds.strategySeeds ?? [])}, failed-request seeds ${span(seeds.failedRequestSeeds ?? [])}`);

faultRaceSuite('fault-and-race soak: fresh seeds', seeds);
