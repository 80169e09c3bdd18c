// `cloudscale-ccm run`: what the CronJob runs. init-nodes, then sync-lb, under this tool's own
// Lease so a terminal run and a CronJob run never overlap; refuses by default while another
// cloud controller manager (e.g. the Go CCM) holds `kube-system/cloud-controller-manager`.
import { LockHeldError, PartialFailureError, RefusedError } from '../core/errors.js';
import { leaseInUse } from '../core/kube/lease.js';
import { budgetLine } from '../core/cloudscale/request-counter.js';
import { counted } from '../core/text/wording.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { withNodeText } from '../core/render/node-report.js';
import type { CommandContext, OutputStream } from './context.js';
import { initNodesCommand, type InitNodesResult } from './init-nodes.js';
import { listWatchStart, watchAfterPass, type PassFailure, type ReactionSteps, type RunWatchReport, type WatchStart } from './run-watch.js';
import { syncLbCommand, type SyncLbOptions, type SyncLbReport } from './sync-lb.js';
import { didText, summarise, type RunSummary } from './run-summary.js';
import { budgetPolicy } from '../core/plan/budget-window.js';
import { endOfPass, failedBeforeTheLease, nodeDetails, requestCount, runDetails, type PassDetails, type PassReportingOptions } from './pass-end.js';
import { NO_REACTIONS, requestTotals, withReaction, type ReactionTotals, type WatchingSpan } from '../core/status/record.js';
import { GO_CCM_LEASE, asWriter } from './writer.js';

export { GO_CCM_LEASE, RUN_LEASE } from './writer.js';

export interface RunOptions extends PassReportingOptions {
  wait?: boolean;
  force: boolean;
  concurrency: number;
  maxNodeDeletions?: number;
  waitTimeout: number;
  settleSeconds?: number;
  pollSeconds?: number;
  drainSeconds?: number;
  /** Lease duration; renewed every sixth of it while the pass runs (see WriterOptions). */
  leaseSeconds?: number;
  /**
   * --watch-for: after the pass, watch Nodes and Services and react to their changes until this
   * long after `run` started (src/commands/run-watch.ts); 0 or absent: one pass only.
   */
  watchForMs?: number;
  /** Test seam: how long a change is collected before its reaction pass (default WATCH_DEBOUNCE_MS). */
  watchDebounceMs?: number;
  /** `--max-downtime`, for every load-balancer pass. */
  maxDowntime?: SyncLbOptions['maxDowntime'];
  /** `--window`, placed per pass. */
  window?: SyncLbOptions['window'];
  /** The clock of the window (test seam). */
  now?: () => number;
}

export interface RunReport {
  readonly version: 1;
  readonly holder: string;
  readonly summary: RunSummary;
  readonly nodes: InitNodesResult | null;
  readonly loadBalancers: SyncLbReport | null;
  readonly failures: readonly { readonly object: string; readonly message: string }[];
  readonly requests: { readonly total: number; readonly writes: number; readonly throttled: number; readonly waitedMs: number };
  readonly durationMs: number;
  /**
   * With --watch-for: the reaction passes after the full pass, and (`did`) what they did summed
   * (`summary` counts the full pass only); null without.
   */
  readonly watch: (RunWatchReport & { readonly did: ReactionTotals }) | null;
}

export async function runCommand(options: RunOptions, ctx: CommandContext): Promise<RunReport> {
  const started = Date.now();
  // A budget that cannot apply is a usage error before anything is read or written.
  budgetPolicy(options);
  // The watch ends this long after `run` started, however long the pass took (CronJob timing).
  const watchUntil = performance.now() + (options.watchForMs ?? 0);
  const conn = ctx.kube();

  if (!options.force) {
    // client-go renews every 2 s: two renewals and a margin show a live holder whose clock differs.
    const goCcm = await leaseInUse(conn, GO_CCM_LEASE, { watchMs: 5000, recentMs: 3_600_000, signal: ctx.signal });
    if (goCcm !== undefined) {
      // Refused before the Lease: no status record (see pass-end.ts), but the metrics say so.
      throw await failedBeforeTheLease('run', ctx, options, new Date(started), new RefusedError(
        `another cloud controller manager holds the Lease ${GO_CCM_LEASE.namespace}/${GO_CCM_LEASE.name} (holder ${goCcm.holderIdentity}, valid until ${goCcm.expiresAt?.toISOString() ?? 'renewed'} by its clock)`,
        {
          hint: 'two controllers would fight over the same load balancers: remove the other CCM (e.g. the Go CCM DaemonSet) first, or pass --force if you are sure',
        },
      ));
    }
  }

  let holder = '';
  // The run's failures: of each object, the last pass over it decides (a retry that succeeded
  // clears it), so the exit code and the record say how the run left it.
  const failures: PassFailure[] = [];
  let nodes: InitNodesResult | undefined;
  let loadBalancers: SyncLbReport | undefined;
  let watch: RunWatchReport | null = null;
  // A watching run's record is its full pass and, summed, what its reaction passes did since;
  // while it watches, the record says so (since when, until when at the latest).
  let reactions: ReactionTotals | undefined;
  let watching: WatchingSpan | undefined;
  const reactionDelaysMs: number[] = [];
  const recordDetails = (): PassDetails => {
    const details = runDetails(nodes, loadBalancers, [...failures]);
    if (reactions === undefined) return details;
    return {
      ...details,
      reactions,
      ...(watching === undefined ? {} : { watching }),
      taintRemovalDelaysMs: [...(details.taintRemovalDelaysMs ?? []), ...reactionDelaysMs],
    };
  };
  await asWriter('run', ctx, options, async (leased) => {
    holder = leased.writerLease!.holderIdentity;
    const requestsAtStart = await requestCount(leased);
    const text = ctx.globals.output === 'text';
    // With -o json/yaml the steps print nothing; their results go into one document at the end.
    const stepCtx = text ? leased : withStdout(leased, { write: () => true, isTTY: false });
    /** The steps of one pass: the node pass, then sync-lb (all Services or the named ones). */
    const pass = async (steps: ReactionSteps, passCtx: CommandContext) => {
      const result: { nodes?: InitNodesResult; loadBalancers?: SyncLbReport; failures: PassFailure[] } = { failures: [] };
      if (steps.nodes) {
        result.nodes = await collect(result.failures, () =>
          initNodesCommand(
            [],
            { dryRun: false, ...(options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions }) },
            passCtx,
          ),
        );
      }
      if (!passCtx.signal.aborted) {
        const named = steps.services !== 'all';
        result.loadBalancers = await collect(result.failures, () =>
          syncLbCommand(
            named ? [...steps.services.args] : [],
            {
              namespace: named ? steps.services.namespace : 'default',
              // Named by a watch event: deleted since, the Service is no typo (see SyncLbOptions).
              goneIsFine: named,
              concurrency: options.concurrency,
              waitTimeout: options.waitTimeout,
              dryRun: false,
              ...(options.settleSeconds === undefined ? {} : { settleSeconds: options.settleSeconds }),
              ...(options.drainSeconds === undefined ? {} : { drainSeconds: options.drainSeconds }),
              ...(options.pollSeconds === undefined ? {} : { pollSeconds: options.pollSeconds }),
              ...(options.maxDowntime === undefined ? {} : { maxDowntime: options.maxDowntime }),
              ...(options.window === undefined ? {} : { window: options.window }),
              ...(options.now === undefined ? {} : { now: options.now }),
            },
            passCtx,
          ),
        );
      }
      return result;
    };
    // Listed before the pass, so that a change made while it runs is seen by the watch.
    const watchStart: WatchStart | undefined = (options.watchForMs ?? 0) > 0 ? await listWatchStart(stepCtx) : undefined;
    const full = await pass({ nodes: true, services: 'all' }, stepCtx);
    ({ nodes, loadBalancers } = full);
    failures.push(...full.failures);
    if (watchStart !== undefined && !stepCtx.signal.aborted) {
      // The full pass is recorded before the watch begins, not only when the run ends.
      reactions = NO_REACTIONS;
      watching = { since: new Date().toISOString(), until: new Date(started + (options.watchForMs ?? 0)).toISOString() };
      await endOfPass('run', stepCtx, options, { startedAt: new Date(started), requestsBefore: requestsAtStart, details: recordDetails() });
      // Reaction passes print one line each (run-watch.ts), not their steps' output.
      const quiet = withStdout(stepCtx, { write: () => true, isTTY: false });
      try {
        watch = await watchAfterPass(
          watchStart,
          {
            untilMs: watchUntil,
            forSeconds: (options.watchForMs ?? 0) / 1000,
            ...(options.watchDebounceMs === undefined ? {} : { debounceMs: options.watchDebounceMs }),
          },
          stepCtx,
          async (steps, changes) => {
            const startedAt = new Date();
            const requestsBefore = await requestCount(quiet);
            const result = await pass(steps, quiet);
            const summary = summarise(result.nodes, result.loadBalancers);
            supersede(failures, coveredBy(result), result.failures);
            const work = {
              stepsOfFailed: (result.loadBalancers?.services ?? []).filter((s) => s.status === 'failed').reduce((n, s) => n + s.actions.length, 0),
              writes: requestTotals((await ctx.cloudscale()).requests.entries().slice(requestsBefore)).writes,
            };
            reactions = withReaction(reactions ?? NO_REACTIONS, {
              changes,
              nodesInitialized: summary.nodesInitialized,
              loadBalancersCreated: summary.loadBalancersCreated,
              loadBalancersUpdated: summary.loadBalancersUpdated,
              loadBalancersDeleted: summary.loadBalancersDeleted,
              failures: result.failures.length,
              startedAt,
              finishedAt: new Date(),
            });
            if (result.nodes !== undefined) reactionDelaysMs.push(...(nodeDetails(result.nodes).taintRemovalDelaysMs ?? []));
            // Each reaction pass updates the record (status, metrics) of the run so far: its full
            // pass, the reactions summed, and every request and failure since the run started.
            await endOfPass('run', quiet, options, { startedAt: new Date(started), requestsBefore: requestsAtStart, details: recordDetails() });
            return { failures: result.failures, summary, work };
          },
        );
      } finally {
        // The record written when the run ends (asWriter) is no longer watching.
        watching = undefined;
      }
    }
    // A Lease taken over mid-pass stops the pass between steps: that is a failure, never a quiet exit 0.
    const reason: unknown = stepCtx.signal.reason;
    if (stepCtx.signal.aborted && reason instanceof LockHeldError && !failures.some((f) => f.object === 'lease')) {
      failures.push({
        object: 'lease',
        message: `${reason.message}; ${watch !== null ? 'the watch' : 'the pass'} stopped${watch === null && loadBalancers === undefined ? ' before sync-lb' : ''}`,
      });
    }
  }, recordDetails);

  const requests = (await ctx.cloudscale()).requests.summary();
  // Assigned inside asWriter's callback, which TypeScript does not follow.
  const watched = watch as RunWatchReport | null;
  const report: RunReport = {
    version: 1,
    holder,
    summary: summarise(nodes, loadBalancers),
    nodes: nodes ?? null,
    loadBalancers: loadBalancers ?? null,
    failures,
    requests: { total: requests.total, writes: requests.writes, throttled: requests.throttled, waitedMs: requests.waitedMs },
    durationMs: Date.now() - started,
    watch: watched === null ? null : { ...watched, did: reactions ?? NO_REACTIONS },
  };
  const document = resultDocument('RunResult', 1, { ...report, nodes: report.nodes === null ? null : withNodeText(report.nodes) });
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  else if (ctx.globals.output === 'yaml') ctx.stdout.write(plainYaml(document));
  else ctx.stdout.write(`${summaryLine(report)}\n`);
  if (failures.length > 0) {
    throw new PartialFailureError(
      `run: ${counted(failures.length, 'failure')}`,
      failures.map((f) => ({ object: f.object, error: new Error(f.message) })),
      report,
    );
  }
  return report;
}

function summaryLine(report: RunReport): string {
  const s = report.summary;
  return (
    `run: nodes ${s.nodesInitialized} initialized, ${s.nodesRefreshed} refreshed, ${s.nodesDeleted} deleted; ` +
    `load balancers ${s.loadBalancersCreated} created, ${s.loadBalancersUpdated} updated, ${s.loadBalancersDeleted} deleted` +
    `${s.changesHeld === 0 ? '' : `, ${counted(s.changesHeld, 'change')} held back`}; ` +
    `${counted(report.failures.length, 'failure')}; ${budgetLine(report.requests)}; ` +
    `${(report.durationMs / 1000).toFixed(1)} s` +
    // The counts above are the full pass's; what the reaction passes did follows, summed (each
    // also printed its own `watch:` line).
    (report.watch === null
      ? ''
      : `; then ${counted(report.watch.reactionPasses.length, 'reaction pass', 'reaction passes')} while watching` +
        (report.watch.reactionPasses.length === 0 ? '' : `: ${didText(report.watch.did)}`))
  );
}

/** The objects a pass went over (`node/a`, `service/default/web`), whether they failed or not. */
function coveredBy(result: { nodes?: InitNodesResult; loadBalancers?: SyncLbReport; failures: readonly PassFailure[] }): Set<string> {
  return new Set([
    ...(result.nodes?.nodes ?? []).map((n) => `node/${n.node}`),
    ...(result.loadBalancers?.services ?? []).map((s) => `service/${s.service}`),
    ...result.failures.map((f) => f.object),
  ]);
}

/** `failures` after a pass over `covered`: its objects' earlier failures give way to its own. */
function supersede(failures: PassFailure[], covered: ReadonlySet<string>, fresh: readonly PassFailure[]): void {
  const kept = failures.filter((f) => !covered.has(f.object));
  failures.splice(0, failures.length, ...kept, ...fresh);
}

/** Runs one step; a partial failure is recorded and its result kept, so the next step still runs. */
async function collect<T>(failures: PassFailure[], step: () => Promise<T>): Promise<T | undefined> {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof PartialFailureError)) throw error;
    for (const failure of error.failures) failures.push({ object: failure.object, message: failure.error.message });
    return error.result as T | undefined;
  }
}

/** The context of one step with its output silenced (-o json/yaml: one document at the end). */
function withStdout(ctx: CommandContext, stdout: OutputStream): CommandContext {
  return { ...ctx, stdout };
}
