// Whether the recorded passes look healthy: what `status --fail-if-older-than` decides. Pure.
//
// The passes that reconcile the cluster (run, sync-lb, init-nodes, apply) count; cleanup is an
// occasional manual task and counts for neither success nor failure. Healthy means: the newest
// success is younger than the threshold, and the newest pass succeeded (a pass with failing
// Nodes or Services is not a success: someone has to look at them).
//
// A recorded time is trusted only when it is an ISO-8601 time no later than now plus
// CLOCK_SKEW_ALLOWANCE_MS: a writer whose clock ran ahead (or a hand-edited record) must not
// make a probe green with a success that has not happened yet. Such a success is not counted,
// and the verdict says which record and why.
import { formatDuration } from '../duration.js';
import type { PassCommand, PassRecord } from './record.js';

export const RECONCILING_COMMANDS: readonly PassCommand[] = ['run', 'sync-lb', 'init-nodes', 'apply'];

/**
 * How far past this clock a recorded time may lie and still count (as "now"): the clocks of
 * the writers' nodes and of the reader differ by a little under NTP; more means a wrong clock.
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 60_000;

/** A recorded time as this clock sees it. */
export type RecordedTime =
  | { readonly kind: 'past'; readonly ageMs: number }
  | { readonly kind: 'future'; readonly aheadMs: number }
  | { readonly kind: 'unparseable' };

/** The writers write `Date.toISOString()`; anything else (`NaN`, `yesterday`, `2026`) is no time. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Where `text` lies from `nowMs`; within the skew allowance ahead counts as now (age 0). */
export function recordedTime(text: string, nowMs: number): RecordedTime {
  const ms = ISO_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) return { kind: 'unparseable' };
  if (ms - nowMs > CLOCK_SKEW_ALLOWANCE_MS) return { kind: 'future', aheadMs: ms - nowMs };
  return { kind: 'past', ageMs: Math.max(0, nowMs - ms) };
}

/** Why a recorded success does not count, or null when it does: "… is 2 h ahead of this clock …". */
export function untrustedTime(field: string, text: string, nowMs: number): string | null {
  const time = recordedTime(text, nowMs);
  if (time.kind === 'past') return null;
  if (time.kind === 'unparseable') return `${field} ${JSON.stringify(text)} is not an ISO-8601 time`;
  return (
    `${field} ${text} is ${formatDuration(time.aheadMs)} ahead of this clock, more than the ${formatDuration(CLOCK_SKEW_ALLOWANCE_MS)} allowed ` +
    'for clock skew (the writer\'s clock is wrong, or the record was edited)'
  );
}

export interface Health {
  /** The newest success among the reconciling commands, of those whose time can be trusted. */
  readonly lastSuccess: { readonly command: PassCommand; readonly at: string; readonly ageMs: number } | null;
  /** The newest pass among the reconciling commands. */
  readonly latest: PassRecord | null;
  /** Why it is not healthy, one sentence each; empty when healthy. */
  readonly problems: readonly string[];
  /** Successes not counted because their time cannot be trusted: `run: lastSuccessAt … is 2 h ahead …`. */
  readonly untrusted: readonly string[];
}

export function assessHealth(
  records: Partial<Record<PassCommand, PassRecord>>,
  nowMs: number,
  maxAgeMs: number,
): Health {
  const reconciling = RECONCILING_COMMANDS.flatMap((command) => (records[command] === undefined ? [] : [records[command]!]));
  const newest = <T>(items: readonly T[], time: (item: T) => number): T | null =>
    items.reduce<T | null>((best, item) => (best === null || time(item) > time(best) ? item : best), null);

  const latest = newest(reconciling, (r) => Date.parse(r.finishedAt));
  const untrusted: string[] = [];
  const successes = reconciling.flatMap((r) => {
    if (r.lastSuccessAt === null) return [];
    const why = untrustedTime('lastSuccessAt', r.lastSuccessAt, nowMs);
    if (why !== null) untrusted.push(`${r.command}: ${why}`);
    return why === null ? [r] : [];
  });
  const success = newest(successes, (r) => Date.parse(r.lastSuccessAt!));
  const lastSuccess =
    success === null
      ? null
      : { command: success.command, at: success.lastSuccessAt!, ageMs: Math.max(0, nowMs - Date.parse(success.lastSuccessAt!)) };

  const problems: string[] = [];
  if (latest === null) {
    problems.push(`no pass of ${RECONCILING_COMMANDS.join(', ')} has recorded its outcome yet`);
  } else if (lastSuccess === null) {
    problems.push(
      untrusted.length === 0 ? 'no pass has succeeded yet' : `no success can be counted: ${untrusted.join('; ')}`,
    );
  } else if (lastSuccess.ageMs > maxAgeMs) {
    problems.push(
      `the last successful pass (${lastSuccess.command}) ended ${formatDuration(lastSuccess.ageMs)} ago, more than ${formatDuration(maxAgeMs)}`,
    );
  }
  if (latest !== null && latest.result !== 'succeeded') problems.push(latestProblem(latest, nowMs));
  return { lastSuccess, latest, problems, untrusted };
}

function latestProblem(latest: PassRecord, nowMs: number): string {
  const when = `the last pass (${latest.command}, ended ${agoText(latest.finishedAt, nowMs)})`;
  if (latest.result === 'failed') return `${when} failed: ${latest.error ?? 'no reason recorded'}`;
  const failing = latest.failing.items.length + latest.failing.omitted;
  const first = latest.failing.items[0];
  return `${when} left ${failing} object${failing === 1 ? '' : 's'} failing${first === undefined ? '' : `, e.g. ${first.object}: ${first.reason}`}`;
}

/** `5 s ago`, or what is wrong with the time: `2 h ahead of this clock`, `at no time ("NaN")`. */
export function agoText(text: string, nowMs: number): string {
  const time = recordedTime(text, nowMs);
  if (time.kind === 'past') return `${formatDuration(time.ageMs)} ago`;
  if (time.kind === 'future') return `${formatDuration(time.aheadMs)} ahead of this clock`;
  return `at no time (${JSON.stringify(text)})`;
}
