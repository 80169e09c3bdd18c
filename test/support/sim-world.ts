// The one place that decides which world the tests' simulators run in (docs/testing.md, "The
// simulator's world"): the simulator's own default (DEFAULT_WORLD), or TEST_SIM_WORLD=strict|forgiving
// to run files in the other one without changing what anyone else sees. The strict world runs at
// time scale 0.05: the real API's 30 s for a new listener take 1.5 s, in the same order.
import { DEFAULT_WORLD, isWorldName, WORLD_NAMES, type WorldName } from '../../src/sim/world-names.js';

/** The time scale of the strict world in tests; the forgiving world has no timings to scale. */
export const TEST_TIME_SCALE = 0.05;

export interface TestSimWorld {
  readonly world: WorldName;
  readonly timeScale: number;
}

/** The world and time scale for `world` (by default TEST_SIM_WORLD, else DEFAULT_WORLD). */
export function testSimWorld(world: WorldName = worldFromEnv()): TestSimWorld {
  return { world, timeScale: world === 'strict' ? TEST_TIME_SCALE : 1 };
}

function worldFromEnv(): WorldName {
  const value = process.env.TEST_SIM_WORLD ?? '';
  if (value === '') return DEFAULT_WORLD;
  if (!isWorldName(value)) {
    throw new Error(`TEST_SIM_WORLD=${value}: no world of the simulator; set it to one of ${WORLD_NAMES.join(', ')}, or unset it for the default (${DEFAULT_WORLD})`);
  }
  return value;
}
