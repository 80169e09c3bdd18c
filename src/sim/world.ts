// The simulator's worlds: how strictly it plays the real API's load balancers. `strict` follows
// what cloudscale's own acceptance tests and clients show of the real API (docs/cloudscale-api.md,
// "What happens at once and what takes time"); `forgiving` is the simulator as it was before it
// had a data plane: every change serves at once, no health checks, no `error` status, deletes
// free their slot at once. docs/sim.md, "Worlds", describes both.

import { DEFAULT_DATA_PLANE, type DataPlaneTimings, type PropagationTable } from './dataplane-timings.js';
import { DEFAULT_BEHAVIOUR, type SimBehaviour } from './behaviour.js';
import type { WorldName } from './world-names.js';

export { DEFAULT_WORLD, isTimeScale, isWorldName, TIME_SCALE_RANGE, WORLD_NAMES, type WorldName } from './world-names.js';

export interface World {
  dataPlane: DataPlaneTimings;
  behaviour: SimBehaviour;
}

/**
 * The real API's delays, in the API's own seconds (a time scale compresses them). Where a source
 * gives a bound ("within 30 s") the delay is that bound, where it gives a range the slow end:
 * - newListener 30 s: the acceptance tests give a new listener 30 s to serve;
 * - listener 15 s: re-creating a listener costs 10–15 s (the Go CCM's notes);
 * - newPool 45 s: re-creating a pool costs 30–45 s (the Go CCM's notes), so a port whose pool
 *   is deleted and created anew serves no sooner than that;
 * - allowedCidrs 15 s: the acceptance tests sleep 15 s after a change of `allowed_cidrs`;
 * - member 5 s: a member's change reaches the load balancer within 20 s and a re-enabled one
 *   serves within 10 s (the acceptance tests); 5 s plus the default monitor's first checks
 *   (2 × 2 s) fits both, and it is the settling time the Go CCM waits between deleting and
 *   re-creating members ("pool member deletes take a moment to propagate");
 * - monitor 5 s and delete 2 s: no source gives a figure (guesses); a delete must settle for a
 *   moment, so a re-create right after it clashes (`deletesHoldUntilPropagated`).
 */
export const REAL_PROPAGATION: PropagationTable = {
  newListener: 30_000,
  listener: 15_000,
  newPool: 45_000,
  allowedCidrs: 15_000,
  member: 5_000,
  monitor: 5_000,
  delete: 2_000,
};

export const WORLDS: Record<WorldName, World> = {
  strict: {
    dataPlane: { propagationMs: REAL_PROPAGATION, healthChecks: true, deletesHoldUntilPropagated: true, errorWhilePoolDown: true },
    behaviour: { ...DEFAULT_BEHAVIOUR },
  },
  forgiving: {
    dataPlane: { ...DEFAULT_DATA_PLANE },
    behaviour: { ...DEFAULT_BEHAVIOUR },
  },
};
