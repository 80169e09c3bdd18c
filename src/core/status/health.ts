// Whether the recorded passes look healthy: what `status --fail-if-older-than` decides. Pure.
//
// The passes that reconcile the cluster (run, sync-lb, init-nodes, apply) count; cleanup is an
// occasional manual task and counts for neither success nor failure. Healthy means: the newest
// success is younger than the threshold, and the newest pass succeeded (a pass with failing
// Nodes or Services is not a success: someone has to look at them).
import { formatDuration } from '../duration.js';
import type { PassCommand, PassRecord } from './record.js';

export const RECONCILING_COMMANDS: readonly PassCommand[] = ['run', 'sync-lb', 'init-nodes', 'apply'];

export interface Health {
  /** The newest success among the reconciling commands. */
  readonly lastSuccess: { readonly command: PassCommand; readonly at: string; readonly ageMs: number } | null;
  /** The newest pass among the reconciling commands. */
  readonly latest: PassRecord | null;
  /** Why it is not healthy, one sentence each; empty when healthy. */
  readonly problems: readonly string[];
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
  const success = newest(
    reconciling.filter((r) => r.lastSuccessAt !== null),
    (r) => Date.parse(r.lastSuccessAt!),
  );
  const lastSuccess =
    success === null
      ? null
      : { command: success.command, at: success.lastSuccessAt!, ageMs: nowMs - Date.parse(success.lastSuccessAt!) };

  const problems: string[] = [];
  if (latest === null) {
    problems.push(`no pass of ${RECONCILING_COMMANDS.join(', ')} has recorded its outcome yet`);
  } else if (lastSuccess === null) {
    problems.push('no pass has succeeded yet');
  } else if (lastSuccess.ageMs > maxAgeMs) {
    problems.push(
      `the last successful pass (${lastSuccess.command}) ended ${formatDuration(lastSuccess.ageMs)} ago, more than ${formatDuration(maxAgeMs)}`,
    );
  }
  if (latest !== null && latest.result !== 'succeeded') problems.push(latestProblem(latest, nowMs));
  return { lastSuccess, latest, problems };
}

function latestProblem(latest: PassRecord, nowMs: number): string {
  const when = `the last pass (${latest.command}, ended ${formatDuration(nowMs - Date.parse(latest.finishedAt))} ago)`;
  if (latest.result === 'failed') return `${when} failed: ${latest.error ?? 'no reason recorded'}`;
  const failing = latest.failing.items.length + latest.failing.omitted;
  const first = latest.failing.items[0];
  return `${when} left ${failing} object${failing === 1 ? '' : 's'} failing${first === undefined ? '' : `, e.g. ${first.object}: ${first.reason}`}`;
}
