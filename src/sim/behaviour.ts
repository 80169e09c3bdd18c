// The behaviour switches: where the real API is not known to behave one way or the other, the
// simulator can play either (docs/sim.md, "Admin API", "Behaviour switches"). A world starts with its
// switches; `startSimulator` and the admin API change single ones.

/** Where the simulator can behave one way or another; the defaults follow the real API. */
export interface SimBehaviour {
  /** A pool delete leaves its listeners with `pool: null` instead of deleting them. */
  poolDeleteKeepsListeners: boolean;
  /**
   * A PATCH of a load balancer, pool, member, listener or health monitor with more than one
   * attribute answers 400 "Only one attribute can be changed at a time.", as a server PATCH
   * does. Whether the API has that rule for load balancers is not known (docs/cloudscale-api.md).
   */
  onePatchAttribute: boolean;
  /**
   * A write to a load balancer (or its pools, members, listeners, monitors) that arrives while
   * another write to it is still being handled answers 400 instead of waiting its turn. The real
   * API handles them one at a time; whether it queues or refuses the overlap is not known.
   */
  refuseOverlappingWrites: boolean;
}

export const DEFAULT_BEHAVIOUR: SimBehaviour = { poolDeleteKeepsListeners: false, onePatchAttribute: false, refuseOverlappingWrites: false };
