// The names of the simulator's worlds and the default one, apart from the worlds themselves
// (src/sim/world.ts) so that the CLI can offer them without loading the simulator.

export const WORLD_NAMES = ['strict', 'forgiving'] as const;
export type WorldName = (typeof WORLD_NAMES)[number];

/**
 * The world of a simulator started without one: `cloudscale-ccm sim` (and with it the sandbox,
 * helpers/run-in-test-cluster) and every `startSimulator` call without `world`, the test
 * harnesses included (at time scale 0.05, test/support/sim-world.ts). The one line that decides
 * it: the real API, as strictly as its sources show it; the forgiving world is opt-in.
 */
export const DEFAULT_WORLD: WorldName = 'strict';

export function isWorldName(value: unknown): value is WorldName {
  return typeof value === 'string' && (WORLD_NAMES as readonly string[]).includes(value);
}

/** A time scale compresses (below 1) or stretches every modelled duration; 0.001 to 100. */
export const TIME_SCALE_RANGE = { min: 0.001, max: 100 } as const;

export function isTimeScale(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= TIME_SCALE_RANGE.min && value <= TIME_SCALE_RANGE.max;
}
