// Re-reading after a write whose answer never came. A request slower than the client's timeout
// may still be applied by the API, and it applies one write at a time per load balancer
// (docs/cloudscale-api.md): the retry of such a write can be refused (a 400) because the first
// attempt is still being handled, or find its work already done. So before a write is sent again
// or reported failed, the object is read back and compared with what the write asked for. Pure:
// the transport and the client do the reading.
import type { Listener, HealthMonitor, Pool, PoolMember } from './types.js';
import type { HealthMonitorCreate, ListenerCreate, PoolCreate, PoolMemberCreate } from './types.js';

function isDict(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether `object`, as read back, already has what `patch` asks for. A reference sent as a UUID
 * (a Floating IP's `load_balancer`) is read back as an object with that `uuid`; a nested object
 * (a monitor's `http`) is patched in part; `tags` are replaced as a whole.
 */
export function patchApplied(patch: unknown, object: unknown): boolean {
  if (!isDict(patch) || !isDict(object)) return false;
  return Object.entries(patch).every(([key, wanted]) => sameValue(wanted, object[key], key === 'tags'));
}

function sameValue(wanted: unknown, have: unknown, whole: boolean): boolean {
  if (typeof wanted === 'string' && isDict(have)) return have.uuid === wanted;
  if (Array.isArray(wanted)) {
    return Array.isArray(have) && have.length === wanted.length && wanted.every((item, i) => sameValue(item, have[i], true));
  }
  if (isDict(wanted)) {
    if (!isDict(have)) return false;
    if (whole && Object.keys(have).length !== Object.keys(wanted).length) return false;
    return Object.entries(wanted).every(([key, value]) => sameValue(value, have[key], whole));
  }
  return wanted === have;
}

/**
 * The object a create made, told by what identifies it within its parent (names are unique
 * there, the Lease keeps other writers away): exactly one match, or undefined.
 */
export const createdBy = {
  pool: (body: PoolCreate) => (pool: Pool) =>
    pool.load_balancer.uuid === body.load_balancer && pool.name === body.name && pool.algorithm === body.algorithm && pool.protocol === body.protocol,
  member: (body: PoolMemberCreate) => (member: PoolMember) =>
    member.name === body.name && member.address === body.address && member.protocol_port === body.protocol_port,
  listener: (body: ListenerCreate) => (listener: Listener) =>
    listener.pool?.uuid === body.pool && listener.name === body.name && listener.protocol === body.protocol && listener.protocol_port === body.protocol_port,
  monitor: (body: HealthMonitorCreate) => (monitor: HealthMonitor) => monitor.pool.uuid === body.pool && monitor.type === body.type,
};

/** The one item `matches` picks, or undefined when none or several do. */
export function onlyMatch<T>(items: readonly T[], matches: (item: T) => boolean): T | undefined {
  const found = items.filter(matches);
  return found.length === 1 ? found[0] : undefined;
}
