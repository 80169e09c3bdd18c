// What makes two objects the same one: the identity keys by which desired objects are paired
// with the API's (docs/go-ccm-compatibility.md: a differing key means delete and re-create),
// and the pairing itself. Shared by the planner and the strategies.
import type { HealthMonitorHttp, MemberState } from '../cloudscale/types.js';
import type { DesiredMember } from './desired.js';

/** Pairs desired and actual items by identity key; unmatched desired are created, unmatched actual deleted. */
export function diffBy<D, A>(
  desired: readonly D[],
  actual: readonly A[],
  desiredKey: (d: D) => string,
  actualKey: (a: A) => string,
): { create: D[]; remove: A[]; matched: [D, A][] } {
  // Keys are computed once per item (a pool may have hundreds of members): actual items by key,
  // in API order, each taken by the first desired item with that key.
  const byKey = new Map<string, A[]>();
  for (const a of actual) {
    const key = actualKey(a);
    const same = byKey.get(key);
    if (same === undefined) byKey.set(key, [a]);
    else same.push(a);
  }
  const taken = new Set<A>();
  const create: D[] = [];
  const matched: [D, A][] = [];
  for (const d of desired) {
    const a = byKey.get(desiredKey(d))?.shift();
    if (a === undefined) create.push(d);
    else {
      matched.push([d, a]);
      taken.add(a);
    }
  }
  return { create, remove: actual.filter((a) => !taken.has(a)), matched };
}

// Identity keys (docs/go-ccm-compatibility.md): a differing key means delete and re-create.
export const poolKey = (name: string, algorithm: string, protocol: string) =>
  JSON.stringify([name, algorithm, protocol]);
// `enabled` is not part of a member's identity: it changes in place (drain, restore).
export const desiredMemberKey = (m: DesiredMember) =>
  JSON.stringify([m.name, m.monitor_port, m.protocol_port, m.address, m.subnet.href, m.subnet.cidr, m.subnet.uuid]);
/** An unset `monitor_port` means the API uses `protocol_port`. */
export const actualMemberKey = (m: MemberState) =>
  JSON.stringify([m.name, m.monitor_port ?? m.protocol_port, m.protocol_port, m.address, m.subnet.href, m.subnet.cidr, m.subnet.uuid]);
export const listenerKey = (l: { name: string; protocol: string; protocol_port: number }) =>
  JSON.stringify([l.name, l.protocol, l.protocol_port]);
/** The HTTP version counts as 1.1 when `http` is null or has no version. */
export const monitorKey = (m: { type: string; http: Pick<HealthMonitorHttp, 'version'> | null }) =>
  JSON.stringify([m.type, m.http?.version || '1.1']);
