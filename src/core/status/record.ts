// The status record: what one writing pass leaves behind for `cloudscale-ccm status`, the
// metrics and the people reading them. Pure: built from what a pass returned, never from I/O.
// One record per command kind (run, sync-lb, init-nodes, cleanup, apply), so a terminal `sync-lb`
// never hides what the CronJob's `run` last did. Lists are capped so the record stays small
// whatever the size of the cluster; each says how many entries it left out.
import type { RequestRecord } from '../cloudscale/request-counter.js';

export const PASS_COMMANDS = ['run', 'sync-lb', 'init-nodes', 'cleanup', 'apply'] as const;
export type PassCommand = (typeof PASS_COMMANDS)[number];

/**
 * `succeeded`: every object done; `partial`: the pass ran to its end but some Nodes or Services
 * failed; `failed`: the pass stopped on an error (no cluster, no Lease, an API down).
 */
export type PassResult = 'succeeded' | 'partial' | 'failed';

/** At most this many failing objects and held-back changes are kept in a record. */
export const MAX_LISTED = 20;

export interface CappedList<T> {
  readonly items: readonly T[];
  /** How many more there were. */
  readonly omitted: number;
}

export interface PassRecord {
  readonly command: PassCommand;
  /** The tool version that ran the pass. */
  readonly version: string;
  /** The Lease holder identity of the pass (host/command/pid), or null without the Lease. */
  readonly holder: string | null;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly result: PassResult;
  /** What stopped a failed pass; null otherwise. */
  readonly error: string | null;
  /** End of the last pass of this command that succeeded (this one, or carried from before). */
  readonly lastSuccessAt: string | null;
  /** Node counts by outcome (initialized, refreshed, in-sync, failed …); null when no node pass ran. */
  readonly nodes: { readonly total: number; readonly byOutcome: Readonly<Record<string, number>> } | null;
  /** Service counts by outcome (changed, unchanged, failed) and those still without an address. */
  readonly services: {
    readonly total: number;
    readonly byStatus: Readonly<Record<string, number>>;
    readonly waitingForIp: number;
  } | null;
  /** Load balancers cleanup deleted and kept; null for other commands. */
  readonly cleanup: { readonly deleted: number; readonly candidates: number } | null;
  readonly failing: CappedList<{ readonly object: string; readonly reason: string }>;
  /** Changes planned but not applied in this pass (a downtime budget held them back). */
  readonly held: CappedList<{ readonly object: string; readonly change: string; readonly reason: string }>;
  readonly requests: RequestTotals;
  /**
   * `run --watch-for`: what its reaction passes did after the full pass the fields above describe;
   * null without a watch (and in records written before this field existed).
   */
  readonly reactions: ReactionTotals | null;
  /**
   * `run --watch-for` while it watches: since when (its full pass ended) and until when at the
   * latest (the deadline of --watch-for); null once the run has ended, and without a watch. A
   * record that still says so after `until` is of a run that ended without recording its end.
   */
  readonly watching: WatchingSpan | null;
}

export interface WatchingSpan {
  readonly since: string;
  readonly until: string;
}

/** The reaction passes of a watching `run` so far, summed, and the last one. */
export interface ReactionTotals {
  readonly passes: number;
  readonly nodesInitialized: number;
  /** Load balancers created, updated and deleted, counted as run's summary counts them. */
  readonly loadBalancersCreated: number;
  readonly loadBalancersUpdated: number;
  readonly loadBalancersDeleted: number;
  readonly failures: number;
  readonly last: {
    /** What the watch saw change: `node/a, service/default/web`. */
    readonly changes: string;
    readonly finishedAt: string;
    readonly durationMs: number;
    readonly failures: number;
  } | null;
}

/** A watching run's reactions before its first reaction pass. */
export const NO_REACTIONS: ReactionTotals = {
  passes: 0,
  nodesInitialized: 0,
  loadBalancersCreated: 0,
  loadBalancersUpdated: 0,
  loadBalancersDeleted: 0,
  failures: 0,
  last: null,
};

/** What one reaction pass did, in the counts ReactionTotals sums. */
export type ReactionCounts = Pick<ReactionTotals, 'nodesInitialized' | 'loadBalancersCreated' | 'loadBalancersUpdated' | 'loadBalancersDeleted'>;

/** `totals` with one more reaction pass, which becomes the last. */
export function withReaction(
  totals: ReactionTotals,
  pass: ReactionCounts & { readonly changes: string; readonly failures: number; readonly startedAt: Date; readonly finishedAt: Date },
): ReactionTotals {
  return {
    passes: totals.passes + 1,
    nodesInitialized: totals.nodesInitialized + pass.nodesInitialized,
    loadBalancersCreated: totals.loadBalancersCreated + pass.loadBalancersCreated,
    loadBalancersUpdated: totals.loadBalancersUpdated + pass.loadBalancersUpdated,
    loadBalancersDeleted: totals.loadBalancersDeleted + pass.loadBalancersDeleted,
    failures: totals.failures + pass.failures,
    last: {
      changes: pass.changes,
      finishedAt: pass.finishedAt.toISOString(),
      durationMs: pass.finishedAt.getTime() - pass.startedAt.getTime(),
      failures: pass.failures,
    },
  };
}

export interface RequestTotals {
  readonly total: number;
  readonly writes: number;
  readonly retries: number;
  readonly throttled: number;
  /** Attempts answered with an error status (≥ 400, 429 included) or not answered at all. */
  readonly errors: number;
}

/** What a pass tells the status record, whichever command ran it. */
export interface PassOutcome {
  readonly command: PassCommand;
  readonly version: string;
  readonly holder: string | null;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  /** The error that stopped the pass; a pass with failing objects only is not stopped. */
  readonly error?: string;
  readonly nodes?: readonly { readonly node: string; readonly outcome: string }[];
  readonly services?: readonly { readonly service: string; readonly status: string; readonly waitingForIp?: boolean }[];
  readonly cleanup?: { readonly deleted: number; readonly candidates: number };
  readonly failures: readonly { readonly object: string; readonly message: string }[];
  readonly held?: readonly { readonly object: string; readonly change: string; readonly reason: string }[];
  /** The cloudscale API attempts of this pass. */
  readonly requests: readonly RequestRecord[];
  readonly reactions?: ReactionTotals;
  readonly watching?: WatchingSpan;
}

/**
 * The record of `outcome`; `previous` is the last record of the same command, whose
 * lastSuccessAt is carried over when this pass did not succeed.
 */
export function buildPassRecord(outcome: PassOutcome, previous: PassRecord | undefined): PassRecord {
  const result: PassResult = outcome.error !== undefined ? 'failed' : outcome.failures.length > 0 ? 'partial' : 'succeeded';
  const finishedAt = outcome.finishedAt.toISOString();
  return {
    command: outcome.command,
    version: outcome.version,
    holder: outcome.holder,
    startedAt: outcome.startedAt.toISOString(),
    finishedAt,
    durationMs: outcome.finishedAt.getTime() - outcome.startedAt.getTime(),
    result,
    error: outcome.error === undefined ? null : shortened(outcome.error),
    lastSuccessAt: result === 'succeeded' ? finishedAt : (previous?.lastSuccessAt ?? null),
    nodes:
      outcome.nodes === undefined
        ? null
        : { total: outcome.nodes.length, byOutcome: countBy(outcome.nodes.map((n) => n.outcome)) },
    services:
      outcome.services === undefined
        ? null
        : {
            total: outcome.services.length,
            byStatus: countBy(outcome.services.map((s) => s.status)),
            waitingForIp: outcome.services.filter((s) => s.waitingForIp === true).length,
          },
    cleanup: outcome.cleanup ?? null,
    failing: capped(outcome.failures.map((f) => ({ object: f.object, reason: shortened(f.message) }))),
    held: capped((outcome.held ?? []).map((h) => ({ ...h, reason: shortened(h.reason) }))),
    requests: requestTotals(outcome.requests),
    reactions:
      outcome.reactions === undefined
        ? null
        : {
            ...outcome.reactions,
            last: outcome.reactions.last === null ? null : { ...outcome.reactions.last, changes: shortened(outcome.reactions.last.changes) },
          },
    watching: outcome.watching ?? null,
  };
}

export function requestTotals(requests: readonly RequestRecord[]): RequestTotals {
  return {
    total: requests.length,
    writes: requests.filter((r) => r.method !== 'GET').length,
    retries: requests.filter((r) => r.retried).length,
    throttled: requests.filter((r) => r.status === 429).length,
    errors: requests.filter(isErrorAnswer).length,
  };
}

/** An attempt that failed: an error status, or no answer at all. */
export function isErrorAnswer(request: RequestRecord): boolean {
  return request.status === 'error' || request.status >= 400;
}

/** Error messages are cut to this many characters: the record stays small whatever an API answered. */
export const MAX_REASON_LENGTH = 500;

function shortened(text: string): string {
  return text.length <= MAX_REASON_LENGTH ? text : `${text.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

function capped<T>(items: readonly T[]): CappedList<T> {
  return { items: items.slice(0, MAX_LISTED), omitted: Math.max(0, items.length - MAX_LISTED) };
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of [...values].sort()) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
