// The suite's account of what it covered: runs, kills, faults by kind, concurrent pairs,
// passes, wall time, and which invariants failed for which seeds. Printed as one summary line
// at the end, and written as JSON for the README's reliability figures.
import { CASES, FAILED_REQUEST_CASE, STRATEGY_CASE, SWAP_CASE, describeScenario, generateFailedRequestScenario, generateScenario, generateStrategyScenario, generateSwapScenario } from './scenario.js';
import { INVARIANTS, type Invariant, type Violation } from './invariants.js';
import type { RunRecord } from './runner.js';

export class Tally {
  private readonly records: RunRecord[] = [];
  private readonly started = Date.now();

  add(record: RunRecord): void {
    this.records.push(record);
  }

  totals() {
    const sum = (pick: (r: RunRecord) => number) => this.records.reduce((n, r) => n + pick(r), 0);
    const merge = (pick: (r: RunRecord) => Readonly<Record<string, number>>) => {
      const merged: Record<string, number> = {};
      for (const record of this.records) for (const [k, n] of Object.entries(pick(record))) merged[k] = (merged[k] ?? 0) + n;
      return merged;
    };
    const count = (items: readonly string[]) => {
      const counted: Record<string, number> = {};
      for (const item of items) counted[item] = (counted[item] ?? 0) + 1;
      return counted;
    };
    const violations: Partial<Record<Invariant, number[]>> = {};
    for (const record of this.records) {
      for (const invariant of new Set(record.violations.map((v) => v.invariant))) {
        (violations[invariant] ??= []).push(record.seed);
      }
    }
    return {
      runs: this.records.length,
      seeds: this.records.length === 0 ? null : { first: this.records[0]!.seed, last: this.records.at(-1)!.seed },
      runsByCase: count(this.records.map((r) => `${r.caseId}`)),
      processes: sum((r) => r.processes),
      kills: sum((r) => r.kills),
      killsMissed: sum((r) => r.killsMissed),
      faultsInjected: merge((r) => r.faults),
      faultsFired: merge((r) => r.faultsFired),
      concurrentPairs: count(this.records.flatMap((r) => r.pairs)),
      passes: sum((r) => r.passes),
      leasesReleased: sum((r) => r.leasesReleased),
      runsByAdversary: count(this.records.flatMap((r) => r.adversaries)),
      pauses: sum((r) => r.pauses),
      pausesMissed: sum((r) => r.pausesMissed),
      takeoversWhilePaused: sum((r) => r.takeoversWhilePaused),
      pausedStoppedByFence: sum((r) => r.pausedStoppedByFence),
      skews: sum((r) => r.skews),
      swapKillsAimed: count(this.records.flatMap((r) => (r.swapKill === undefined ? [] : [r.swapKill.aimed]))),
      swapKillsLanded: count(this.records.flatMap((r) => (r.swapKill?.landed === undefined ? [] : [r.swapKill.landed]))),
      runsWithViolations: this.records.filter((r) => r.violations.length > 0).length,
      runsWithNotes: this.records.filter((r) => r.notes.length > 0).map((r) => r.seed),
      violatingSeedsByInvariant: violations,
      secondsByPhase: Object.fromEntries(
        (['world', 'schedule', 'passes', 'checks'] as const).map((p) => [p, Math.round(sum((r) => r.ms[p]) / 1000)]),
      ),
      wallSeconds: Math.round((Date.now() - this.started) / 1000),
    };
  }

  /** One line: what the suite covered and what it found. */
  summary(): string {
    const t = this.totals();
    const list = (counts: Record<string, number>) =>
      Object.entries(counts)
        .sort(([, a], [, b]) => b - a)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none';
    const pairs = Object.values(t.concurrentPairs).reduce((a, b) => a + b, 0);
    const failed = INVARIANTS.filter((i) => t.violatingSeedsByInvariant[i] !== undefined)
      .map((i) => `${i}: ${t.violatingSeedsByInvariant[i]!.length}`)
      .join(', ');
    const swaps =
      Object.keys(t.swapKillsAimed).length === 0
        ? ''
        : `pool swaps killed, aimed: ${list(t.swapKillsAimed)}; landed (by the killed writer's last write): ${list(t.swapKillsLanded)}; `;
    return (
      `fault-race: ${t.runs} runs (seeds ${t.seeds?.first ?? '-'}–${t.seeds?.last ?? '-'}); ` +
      `${t.kills} kills of ${t.processes} CLI processes (${t.killsMissed} ended before their kill); ` +
      `faults injected: ${list(t.faultsInjected)}; faulted requests: ${list(t.faultsFired)}; ` +
      `${pairs} concurrent pairs (${list(t.concurrentPairs)}); ${t.passes} passes; ` +
      `${t.leasesReleased} abandoned Leases released by the harness; ` +
      `adversaries: ${list(t.runsByAdversary)}; ` +
      `${t.pauses} writers paused past their renew deadline (${t.pausesMissed} ended first; ` +
      `${t.takeoversWhilePaused} Leases taken over meanwhile; ${t.pausedStoppedByFence} stopped with the LeaseLostError); ` +
      `${t.skews} writers with a skewed clock; ${t.faultsFired.rateLimit ?? 0} requests answered 429; ` +
      swaps +
      `runs with violations: ${t.runsWithViolations}${failed === '' ? '' : ` (${failed})`}; ` +
      `runs with notes: ${t.runsWithNotes.length}${t.runsWithNotes.length === 0 ? '' : ` (seeds ${t.runsWithNotes.join(', ')})`}; ` +
      `wall time ${t.wallSeconds} s (${list(t.secondsByPhase)} s; the rest is teardown)`
    );
  }
}

/** The message of a failed run: its seed, how to rerun it, the schedule, and each violation with its evidence. */
export function runReport(record: RunRecord): string {
  const [scenario, rerun] =
    record.caseId === SWAP_CASE
      ? [generateSwapScenario(record.seed), `FAULT_RACE_RUNS=0 FAULT_RACE_STRATEGY_RUNS=0 FAULT_RACE_SWAP_SEED=${record.seed} FAULT_RACE_SWAP_RUNS=1`]
      : record.caseId === STRATEGY_CASE
        ? [generateStrategyScenario(record.seed), `FAULT_RACE_RUNS=0 FAULT_RACE_SWAP_RUNS=0 FAULT_RACE_FAILED_RUNS=0 FAULT_RACE_STRATEGY_SEED=${record.seed}`]
        : record.caseId === FAILED_REQUEST_CASE
          ? [generateFailedRequestScenario(record.seed), `FAULT_RACE_RUNS=0 FAULT_RACE_SWAP_RUNS=0 FAULT_RACE_STRATEGY_RUNS=0 FAULT_RACE_FAILED_SEED=${record.seed}`]
          : [generateScenario(record.seed), `FAULT_RACE_SEED=${record.seed} FAULT_RACE_RUNS=1 FAULT_RACE_SWAP_RUNS=0 FAULT_RACE_STRATEGY_RUNS=0`];
  return [
    `seed ${record.seed} (case ${record.caseId}: ${CASES[record.caseId]}); rerun alone: ${rerun} npx vitest run test/integration/fault-race.test.ts`,
    `scenario: ${describeScenario(scenario)}`,
    `what happened: ${record.description}`,
  ].join('\n');
}

export function violationLine(violation: Violation): string {
  return `[${violation.invariant}] ${violation.evidence}`;
}
