// The fault-and-race generators make every kind of run, and the fixed seeds of `npm test` meet
// every kind (test/support/fault-race/coverage.ts): cutting the suite to a few seeds drops numbers,
// not kinds.
import { describe, expect, it } from 'vitest';
import { ALL_KINDS, kindsOf, missingKinds } from '../support/fault-race/coverage.js';
import { FIXED_FAILED_REQUEST_SEEDS, FIXED_SEEDS, FIXED_STRATEGY_SEEDS, FIXED_SWAP_SEEDS, FORMER_SEEDS, FORMER_SWAP_SEEDS, seedRange } from '../support/fault-race/seeds.js';
import { generateFailedRequestScenario, generateScenario, generateStrategyScenario, generateSwapScenario, sabotageScenario } from '../support/fault-race/scenario.js';

const scenarios = (seeds: readonly number[], swapSeeds: readonly number[], strategySeeds: readonly number[], failedRequestSeeds: readonly number[] = FIXED_FAILED_REQUEST_SEEDS) => [
  ...seeds.map((seed) => generateScenario(seed)),
  ...swapSeeds.map((seed) => generateSwapScenario(seed)),
  ...strategySeeds.map((seed) => generateStrategyScenario(seed)),
  ...failedRequestSeeds.map((seed) => generateFailedRequestScenario(seed)),
];

describe('fault-and-race coverage', () => {
  it('the generators make every kind: the former range of 110 seeds, 30 strategy seeds and 70 failed-request seeds meet each', () => {
    expect(missingKinds(scenarios(FORMER_SEEDS, FORMER_SWAP_SEEDS, seedRange(20261400, 30), seedRange(20261500, 70)))).toEqual([]);
  });

  it('the fixed seeds of `npm test` meet every kind', () => {
    expect(FIXED_SEEDS.length + FIXED_SWAP_SEEDS.length + FIXED_STRATEGY_SEEDS.length + FIXED_FAILED_REQUEST_SEEDS.length).toBe(42);
    expect(missingKinds(scenarios(FIXED_SEEDS, FIXED_SWAP_SEEDS, FIXED_STRATEGY_SEEDS))).toEqual([]);
  });

  it.for([
    { kind: 'SIGTERM between two steps of pool swap', seeds: [20261414] },
    { kind: 'SIGKILL between two steps of member rotation', seeds: [20261401, 20261403, 20261430] },
    { kind: 'edit node-port with new members never up', seeds: [20261403] },
    { kind: 'edit selector nothing', seeds: [20261405] },
    { kind: 'edit selector down', seeds: [20261406] },
    { kind: 'edit pool-down', seeds: [20261401] },
    { kind: 'one failed request: timeout', seeds: [20262079] },
  ])('without its seed the fixed set misses: $kind', ({ kind, seeds }) => {
    expect(missingKinds(scenarios(FIXED_SEEDS, FIXED_SWAP_SEEDS, FIXED_STRATEGY_SEEDS.filter((s) => !seeds.includes(s)), FIXED_FAILED_REQUEST_SEEDS.filter((s) => !seeds.includes(s))))).toContain(kind);
  });

  it.for([
    { name: 'a case-2 seed: an empty or short list on a converged cluster', scenario: () => generateScenario(20261126), has: ['case 2', 'fault lb-list-'] },
    { name: 'a swap seed: the pool swap killed at the step its seed picks', scenario: () => generateSwapScenario(20261302), has: ['case 12', 'edit swap', 'pool swap killed during the await polling'] },
    { name: 'the self-check scenario', scenario: () => sabotageScenario(1), has: ['case 0', 'edit add-service', 'edit swap'] },
  ])('kindsOf: $name', ({ scenario, has }) => {
    const kinds = [...kindsOf(scenario())];
    for (const kind of has) expect(kinds.some((k) => k.startsWith(kind)), `${kind} in ${kinds.join(', ')}`).toBe(true);
    expect(kinds.every((k) => ALL_KINDS.includes(k))).toBe(true);
  });

  it('a set of seeds without the adversaries misses them by name', () => {
    const plain = FORMER_SEEDS.map((seed) => generateScenario(seed)).filter((s) => s.adversaries.length === 0);
    expect(missingKinds(plain)).toEqual(expect.arrayContaining(['adversary 429 storm', 'adversary pause', 'adversary clock skew']));
  });
});
