// The pure parts of the data plane: the arithmetic of health checks (how many fall in a span of
// time, the counters after them, when a member's status next changes) and a port's serving
// history as intervals and its longest outage. No clock and no state: unit-tested on their own.

export type CheckedStatus = 'changing' | 'up' | 'down';

export interface CheckCounters {
  status: CheckedStatus;
  /** Consecutive successful checks (0 after a failure). */
  ok: number;
  /** Consecutive failed checks (0 after a success). */
  failed: number;
}

export interface MonitorTiming {
  delayMs: number;
  upThreshold: number;
  downThreshold: number;
}

/** How many checks fall in (from, to] when checks run at anchor + k × delay, k ≥ 1. */
export function checksBetween(anchor: number, delayMs: number, from: number, to: number): number {
  if (to <= from) return 0;
  const index = (t: number): number => (t < anchor ? 0 : Math.floor((t - anchor) / delayMs));
  return index(to) - index(from);
}

/** The counters after `count` checks that all succeeded (`healthy`) or all failed. */
export function applyChecks(counters: CheckCounters, count: number, healthy: boolean, timing: MonitorTiming): CheckCounters {
  if (count <= 0) return counters;
  if (healthy) {
    const ok = counters.ok + count;
    return { status: ok >= timing.upThreshold ? 'up' : counters.status, ok, failed: 0 };
  }
  const failed = counters.failed + count;
  return { status: failed >= timing.downThreshold ? 'down' : counters.status, ok: 0, failed };
}

/**
 * When the status next changes if every check after `now` gives `healthy`: the time of the check
 * that reaches the threshold, or undefined when the status is already where that leads.
 */
export function nextStatusChange(
  counters: CheckCounters,
  healthy: boolean,
  anchor: number,
  now: number,
  timing: MonitorTiming,
): number | undefined {
  if (healthy ? counters.status === 'up' : counters.status === 'down') return undefined;
  const needed = Math.max(1, healthy ? timing.upThreshold - counters.ok : timing.downThreshold - counters.failed);
  const firstIndex = (now < anchor ? 0 : Math.floor((now - anchor) / timing.delayMs)) + 1;
  return anchor + (firstIndex + needed - 1) * timing.delayMs;
}

/** A change of a port's serving state, in time order; the first is the load balancer's creation. */
export interface Transition {
  at: number;
  serving: boolean;
}

export interface ServingInterval {
  from: number;
  /** null: still so now. */
  to: number | null;
  serving: boolean;
}

/** The intervals of [since, now], adjacent equal states merged; the last one is open (to null). */
export function servingIntervals(transitions: readonly Transition[], since: number, now: number): ServingInterval[] {
  const intervals: ServingInterval[] = [];
  if (transitions.length === 0 || since > now) return intervals;
  const start = Math.max(since, transitions[0]!.at);
  for (let i = 0; i < transitions.length; i++) {
    const current = transitions[i]!;
    const end = transitions[i + 1]?.at ?? Infinity;
    if (end <= start || current.at > now) continue;
    const from = Math.max(current.at, start);
    const last = intervals.at(-1);
    if (last !== undefined && last.serving === current.serving) {
      last.to = end === Infinity || end > now ? null : end;
      continue;
    }
    if (last !== undefined) last.to = from;
    intervals.push({ from, to: end === Infinity || end > now ? null : end, serving: current.serving });
  }
  return intervals;
}

/**
 * The longest interval without serving within [since, now], counted only after the port first
 * served (at any time, also before `since`): a port that never served has no outage yet. An
 * outage still going on counts up to `now`.
 */
export function longestOutageMs(transitions: readonly Transition[], since: number, now: number): number {
  const firstServed = transitions.find((t) => t.serving)?.at;
  if (firstServed === undefined) return 0;
  let longest = 0;
  for (const interval of servingIntervals(transitions, Math.max(since, firstServed), now)) {
    if (!interval.serving) longest = Math.max(longest, (interval.to ?? now) - interval.from);
  }
  return longest;
}
