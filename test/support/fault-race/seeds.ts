// The seeds of the fault-and-race suite: the fixed set `npm test` runs, and the range it ran
// before, which the soak (`npm run soak:race`) replays beside its fresh seeds.

/** `count` consecutive seeds from `first` (consecutive seeds cover the cases evenly: case = seed mod 12). */
export function seedRange(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

/**
 * 17 seeds of generateScenario from the former range: the 13 that a greedy cover picked to meet
 * every kind of ./coverage.ts, and 4 more for a second run of the commonest cases (20261124,
 * 20261125 and 20261128 made way for the strategy seeds: their kinds the others meet).
 * test/unit/fault-race-coverage.test.ts fails when they miss a kind.
 */
export const FIXED_SEEDS: readonly number[] = [
  20261123, 20261126, 20261127, 20261129, 20261130, 20261131, 20261132, 20261133, 20261134, 20261135, 20261136, 20261137,
  20261138, 20261139, 20261140, 20261148, 20261196,
];

/** One pool-swap seed per kill point (seed mod 5 picks it). */
export const FIXED_SWAP_SEEDS: readonly number[] = seedRange(20261300, 5);

/**
 * 10 seeds of generateStrategyScenario from 20261400 on, a greedy cover of every play (a node
 * port changed, new members never up, a Node left out by the selector, a selector matching
 * nothing or only a down member, a pool swap, a load balancer in `error` repaired) and of
 * SIGKILL and SIGTERM between two steps of each strategy, the signals taken only from the plays
 * that reach their steps (a rotation whose new members come up, a drain, a pool swap): six of
 * the ten are those.
 */
export const FIXED_STRATEGY_SEEDS: readonly number[] = [
  20261400, 20261401, 20261402, 20261403, 20261405, 20261406, 20261411, 20261414, 20261430, 20261432,
];

/**
 * 10 seeds of generateFailedRequestScenario: a pool swap's listener create failing once with each
 * kind of failure (a 500, a 503 with Retry-After, a reset, no answer, a 400; a 500 under `run`
 * too), its listener delete answered 503, its wait for the new members' health reset once, a
 * rotation's member create answered 503 and a drain's member update answered 500.
 */
export const FIXED_FAILED_REQUEST_SEEDS: readonly number[] = [
  20261540, 20263248, 20261659, 20262079, 20261666, 20262030, 20261519, 20261617, 20261507, 20261530,
];

/** What `npm test` ran before the fixed set: 100 seeded runs and 10 pool-swap runs. */
export const FORMER_SEEDS: readonly number[] = seedRange(20261123, 100);
export const FORMER_SWAP_SEEDS: readonly number[] = seedRange(20261300, 10);
