// What a run did, counted: the summary of run's report, of each reaction pass and of `status`.
// Its own module so that run.ts (the pass) and run-watch.ts (the reaction passes) both read it
// without importing each other.
import { counted } from '../core/text/wording.js';
import type { ReactionCounts } from '../core/status/record.js';
import type { InitNodesResult } from './init-nodes.js';
import type { SyncLbReport } from './sync-lb.js';

export interface RunSummary {
  readonly nodesInitialized: number;
  readonly nodesRefreshed: number;
  readonly nodesDeleted: number;
  readonly loadBalancersCreated: number;
  readonly loadBalancersUpdated: number;
  readonly loadBalancersDeleted: number;
  readonly servicesFailed: number;
  /** Changes the downtime budget held back (not failures). */
  readonly changesHeld: number;
}

export function summarise(nodes: InitNodesResult | undefined, lbs: SyncLbReport | undefined): RunSummary {
  const nodeCount = (outcome: string) => nodes?.nodes.filter((n) => n.outcome === outcome).length ?? 0;
  const services = lbs?.services ?? [];
  const did = (kind: string) => (s: SyncLbReport['services'][number]) => s.actions.some((a) => a.kind === kind);
  return {
    nodesInitialized: nodeCount('initialized'),
    nodesRefreshed: nodeCount('refreshed'),
    nodesDeleted: nodeCount('deleted'),
    loadBalancersCreated: services.filter(did('create-lb')).length,
    loadBalancersDeleted: services.filter(did('delete-lb')).length,
    loadBalancersUpdated: services.filter(
      (s) => s.status === 'changed' && !did('create-lb')(s) && !did('delete-lb')(s),
    ).length,
    servicesFailed: services.filter((s) => s.status === 'failed').length,
    changesHeld: services.reduce((n, s) => n + (s.held?.length ?? 0), 0),
  };
}

/**
 * What one or more reaction passes changed, in the words of run's summary line; `nothing
 * changed` if nothing. Also for the reactions summed (run's summary, `status`).
 */
export function didText(s: ReactionCounts & Partial<Pick<RunSummary, 'nodesRefreshed' | 'nodesDeleted'>>): string {
  const parts = [
    [s.nodesInitialized, 'node', 'initialized'],
    [s.nodesRefreshed ?? 0, 'node', 'refreshed'],
    [s.nodesDeleted ?? 0, 'node', 'deleted'],
    [s.loadBalancersCreated, 'load balancer', 'created'],
    [s.loadBalancersUpdated, 'load balancer', 'updated'],
    [s.loadBalancersDeleted, 'load balancer', 'deleted'],
  ] as const;
  const shown = parts.filter(([n]) => n > 0).map(([n, noun, verb]) => `${counted(n, noun)} ${verb}`);
  return shown.length === 0 ? 'nothing changed' : shown.join(', ');
}

/** What a reaction pass wrote, beyond the changes it completed (RunSummary). */
export interface PassWork {
  /** Steps executed for Services that then failed: a change begun, not completed. */
  readonly stepsOfFailed: number;
  /** cloudscale API write attempts. */
  readonly writes: number;
}

/**
 * A reaction pass's line after what changed: what it completed, its writes, and its failures
 * with the steps done before them (`1 load balancer created, 7 writes, 1 failure after 2
 * steps`); `nothing changed` only when it wrote nothing.
 */
export function reactionText(summary: RunSummary, work: PassWork, failures: number): string {
  const completed = didText(summary);
  const did = [...(completed === 'nothing changed' ? [] : [completed]), ...(work.writes === 0 ? [] : [counted(work.writes, 'write')])];
  const failed = `${counted(failures, 'failure')}${work.stepsOfFailed === 0 ? '' : ` after ${counted(work.stepsOfFailed, 'step')}`}`;
  return `${did.length === 0 ? 'nothing changed' : did.join(', ')}, ${failed}`;
}
