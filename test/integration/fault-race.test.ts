// The fault-and-race suite's fixed seeds, in `npm test` (project `fault-race`): concurrent writers
// (`sync-lb`, `run`, `cleanup --yes`, `init-nodes`), one-off simulator faults (short or empty
// lists, resets, hangs, errors, a create applied then answered 503, 429 storms), SIGKILLs of the
// built CLI, writers paused (SIGSTOP) past their Lease's renew deadline and writers whose clock is
// ahead (libfaketime), then the safety invariants after each run (test/support/fault-race/).
//
// The seeds (test/support/fault-race/seeds.ts) meet every kind of case, fault, edit, kill and
// adversary the generators make; test/unit/fault-race-coverage.test.ts names a kind they miss.
// The long random soak, with new seeds on every run and the former fixed range, is
// `npm run soak:race` (test/soak/).
//
//   FAULT_RACE_SEED=<n> FAULT_RACE_RUNS=<k>            seeds n … n+k-1 instead of the fixed ones
//   FAULT_RACE_SWAP_SEED=<n> FAULT_RACE_SWAP_RUNS=<k>  the same for the pool-swap runs (RUNS=0 skips)
//   FAULT_RACE_STRATEGY_SEED=<n> FAULT_RACE_STRATEGY_RUNS=<k>
//                                                      the same for the strategy runs: a rotation, drain
//                                                      or pool swap SIGKILLed or SIGTERMed between two
//                                                      steps (the built CLI's step-pause hook)
//   FAULT_RACE_FAILED_SEED=<n> FAULT_RACE_FAILED_RUNS=<k>
//                                                      the same for the failed-request runs: one request
//                                                      of a rotation, drain or pool swap fails once (a 500,
//                                                      a 503 with Retry-After, a reset, no answer, a 400)
//   FAULT_RACE_VERBOSE=1                               print every run's schedule and what each step did
import { FIXED_FAILED_REQUEST_SEEDS, FIXED_SEEDS, FIXED_STRATEGY_SEEDS, FIXED_SWAP_SEEDS } from '../support/fault-race/seeds.js';
import { faultRaceSuite, seedsFromEnv } from '../support/fault-race/suite.js';

faultRaceSuite(
  'fault-and-race: the safety invariants hold under kills, faults and concurrent writers',
  seedsFromEnv(process.env, { seeds: FIXED_SEEDS, swapSeeds: FIXED_SWAP_SEEDS, strategySeeds: FIXED_STRATEGY_SEEDS, failedRequestSeeds: FIXED_FAILED_REQUEST_SEEDS, summary: 'fault-race' }),
);
