// A load-balancer pass snapshot built by hand (unit tests): its Services' load balancers located
// as readLbPassSnapshot locates them, once, from the snapshot's own lists.
import { locateLoadBalancers } from '../../src/core/lb/actual.js';
import type { LbPassSnapshot } from '../../src/core/plan/snapshot.js';

/** `fields` with `locations`: every Service of it located among its load balancers. */
export function passSnapshot(fields: Omit<LbPassSnapshot, 'locations'>): LbPassSnapshot {
  return { ...fields, locations: locateLoadBalancers(fields.services, fields.loadBalancers, fields.clusterId) };
}
