// The part of the soak that replays the range `npm test` ran before its seeds were cut to the
// fixed set (test/support/fault-race/seeds.ts): 100 seeded runs and 10 pool-swap runs. It runs
// beside test/soak/fault-race-fresh.test.ts, on a control plane of its own.
import { FORMER_SEEDS, FORMER_SWAP_SEEDS } from '../support/fault-race/seeds.js';
import { faultRaceSuite } from '../support/fault-race/suite.js';

faultRaceSuite('fault-and-race soak: the former fixed range', { seeds: FORMER_SEEDS, swapSeeds: FORMER_SWAP_SEEDS, summary: 'soak-former' });
