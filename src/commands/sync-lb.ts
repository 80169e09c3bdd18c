// `cloudscale-ccm sync-lb [service/NAME …]`: one load-balancer pass. Reads one snapshot, plans
// every Service with the planner `plan` uses, reconciles them (src/core/apply), and reports a
// line (or a JSON document) per Service. Fails the pass if any Service failed.
import { paceOptions, reconcileLoadBalancers, type PaceFlags, type ServiceOutcome } from '../core/apply/lb-pass.js';
import { drainPolicy, passBudget, planPass } from '../core/plan/pass.js';
import type { HeldChange } from '../core/lb/service-plan.js';
import { approves } from '../core/plan/budget.js';
import { approvalOf } from '../core/lb/annotations.js';
import { budgetPolicy, type BudgetOptions } from '../core/plan/budget-window.js';
import { readLbPassSnapshot } from '../core/apply/snapshot.js';
import type { ServiceSelection } from '../core/plan/snapshot.js';
import { summarise } from '../core/cloudscale/request-counter.js';
import { CcmError, InternalError, PartialFailureError, errorMessage } from '../core/errors.js';
import { counted } from '../core/text/wording.js';
import { sharedClusterIdWarning, sharingClusterId } from '../core/lb/cluster-identity.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { createPassReporter, reporterMode } from '../core/render/progress.js';
import { SYNC_LB_JSON_VERSION, renderSyncLbText, type ServiceReport, type SyncLbReport } from '../core/render/sync-lb.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { CommandContext } from './context.js';
import { parseServiceArgs, serviceNotFound, type ServiceName } from './service-args.js';
import { serviceDetails, type PassReportingOptions } from './pass-end.js';
import { asWriter } from './writer.js';

// The report's types live with its text view; importers of the command find them here too.
export type { ServiceReport, SyncLbReport } from '../core/render/sync-lb.js';

export interface SyncLbOptions extends PassReportingOptions, BudgetOptions, PaceFlags {
  /** -n; unset: the namespace of the kubeconfig's current context (DefaultNamespace). */
  namespace?: string;
  /** Seconds a member leaving its pool is drained (disabled) before it is deleted; 0: deleted at once. */
  drainSeconds?: number;
  dryRun: boolean;
  /** Wait for another writer's pass instead of exiting (see writer.ts). */
  wait?: boolean;
  /** Duration of the writers' Lease held for this pass. */
  leaseSeconds?: number;
  /**
   * A named Service that no longer exists is no failure: a reaction pass of `run --watch-for`
   * names what a watch reported, and the Service may be deleted before the pass reads it (its
   * deletion then makes the next reaction pass, over every load balancer).
   */
  goneIsFine?: boolean;
  /** Test seam: runs after each round's execution, before the state is read back. */
  afterRound?: (round: number) => Promise<void>;
  /** The clock that places the pass in or out of the window (test seam; default `Date.now`). */
  now?: () => number;
}

export async function syncLbCommand(
  args: readonly string[],
  options: SyncLbOptions,
  ctx: CommandContext,
): Promise<SyncLbReport> {
  if (options.dryRun) {
    // The command line runs `plan` for --dry-run (same output, same exit code); a pass is never dry.
    throw new InternalError('sync-lb was called with dryRun: a dry run is `plan` (planCommand)');
  }
  // Arguments are checked before the Lease is taken: a typo never waits for another pass.
  const names = parseServiceArgs(args, () => options.namespace ?? ctx.kube().namespace);
  budgetPolicy(options);
  return asWriter('sync-lb', ctx, options, (leased) => syncLbPass(names, options, leased), (report) =>
    report === undefined ? {} : serviceDetails(report),
  );
}

async function syncLbPass(names: readonly ServiceName[], options: SyncLbOptions, ctx: CommandContext): Promise<SyncLbReport> {
  const started = Date.now();
  const selection: ServiceSelection = names.length > 0 ? { names } : { all: true };
  const conn = ctx.kube();
  const [cloud, clusterId, kubeSystemUid] = await Promise.all([ctx.cloudscale(), ctx.clusterId(), ctx.kubeSystemUid()]);
  // The client may have served earlier steps of the same run (init-nodes): count from here.
  const requestsBefore = cloud.requests.entries().length;
  const snapshot = await readLbPassSnapshot({ conn, cloud, clusterId, kubeSystemUid, selection });
  const sharing = sharingClusterId(snapshot.loadBalancers, { clusterId, kubeSystemUid });
  const sharedClusterId =
    sharing.length === 0
      ? null
      : { message: sharedClusterIdWarning(sharing.length, { clusterId, kubeSystemUid }), loadBalancers: sharing.map((lb) => lb.uuid) };
  if (sharedClusterId !== null) ctx.stderr.write(`warning: ${escapeUnprintable(sharedClusterId.message)}\n`);
  const drain = drainPolicy(options.drainSeconds, Date.now());
  const budget = passBudget(options, (options.now ?? Date.now)());
  const first = { snapshot, planned: planPass(snapshot, { selection, drain, ...(budget === undefined ? {} : { budget }) }) };
  // A named Service that does not exist is an error (a typo must not pass silently, as in plan).
  const missing = options.goneIsFine ? [] : names.filter(
    (name) => !snapshot.services.some((s) => s.metadata?.namespace === name.namespace && s.metadata?.name === name.name),
  );

  const reporter = createPassReporter(
    first.planned
      .filter((p) => p.plan.mode !== 'ignore')
      .map((p) => ({ service: serviceLabel(p.plan), total: p.plan.actions.length })),
    ctx.stdout,
    { mode: reporterMode(ctx.globals.output, ctx.stdout.isTTY), color: ctx.globals.color },
  );
  let outcomes: ServiceOutcome[];
  try {
    outcomes = await reconcileLoadBalancers(first, { conn, cloud, clusterId }, {
      ...paceOptions(options),
      drain,
      ...(budget === undefined ? {} : { budget }),
      signal: ctx.signal,
      onProgress: (service, event) => reporter.onProgress(service, event),
      onServiceDone: (outcome) => reporter.onServiceDone(serviceLabel(outcome.planned.plan), outcome.status),
      onRequeued: (plan) => reporter.onRequeued(serviceLabel(plan), plan.actions.length),
      onEventError: (error) => ctx.stderr.write(`warning: could not record an event: ${escapeUnprintable(error.message)}\n`),
      ...(options.afterRound === undefined ? {} : { afterRound: options.afterRound }),
    });
  } finally {
    await reporter.close();
  }

  const summary = summarise(cloud.requests.entries().slice(requestsBefore));
  const report: SyncLbReport = {
    version: SYNC_LB_JSON_VERSION,
    services: [...outcomes.map(serviceReport), ...missing.map(missingServiceReport)],
    requests: {
      total: summary.total,
      reads: summary.reads,
      writes: summary.writes,
      retries: summary.retries,
      throttled: summary.throttled,
      waitedMs: summary.waitedMs,
    },
    durationMs: Date.now() - started,
    sharedClusterId,
  };
  const document = resultDocument('SyncLbResult', SYNC_LB_JSON_VERSION, report);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  else if (ctx.globals.output === 'yaml') ctx.stdout.write(plainYaml(document));
  else ctx.stdout.write(renderSyncLbText(report));

  const failures = [
    ...outcomes.flatMap((o) =>
      o.status === 'failed'
        ? o.errors.map((error) => ({ object: `service/${o.planned.plan.service.namespace}/${o.planned.plan.service.name}`, error }))
        : [],
    ),
    ...missing.map((name) => ({ object: `service/${name.namespace}/${name.name}`, error: serviceNotFound(name) })),
  ];
  if (failures.length > 0) {
    const failed = new Set(failures.map((f) => f.object)).size;
    throw new PartialFailureError(
      `${failed} of ${counted(report.services.length, 'Service')} failed to sync`,
      failures,
      report,
    );
  }
  return report;
}

function serviceReport(outcome: ServiceOutcome): ServiceReport {
  const { plan } = outcome.planned;
  const approval = approvalOf(outcome.planned.service.metadata?.annotations);
  return {
    service: `${plan.service.namespace}/${plan.service.name}`,
    status: outcome.status,
    loadBalancer: outcome.execution.loadBalancer
      ? { name: outcome.execution.loadBalancer.name, uuid: outcome.execution.loadBalancer.uuid }
      : plan.loadBalancer,
    actions: outcome.execution.executed.map((e) => ({ kind: e.action.kind, object: e.action.object, ms: e.ms })),
    waitingForIp:
      plan.mode === 'ensure' &&
      (outcome.planned.service.status?.loadBalancer?.ingress ?? []).length === 0 &&
      !outcome.execution.executed.some((e) => e.action.kind === 'write-status'),
    ...(plan.held === undefined || plan.held.length === 0 ? {} : { held: plan.held.map((h) => heldReport(h, approval)) }),
    ...(plan.warnings.length === 0 ? {} : { warnings: plan.warnings }),
    errors:
      outcome.status === 'failed'
        ? outcome.errors.map((e) => ({
            message: errorMessage(e),
            ...(e instanceof CcmError && e.hint !== undefined ? { hint: e.hint } : {}),
          }))
        : [],
  };
}

/** A held change for the report, with the approval annotation's id when it names another change. */
function heldReport(change: HeldChange, approval: string | null): NonNullable<ServiceReport['held']>[number] {
  const mismatch = approval !== null && !approves(approval, change);
  return { id: change.id, reason: change.reason, ...(mismatch ? { approvalMismatch: approval } : {}) };
}

function missingServiceReport(name: ServiceName): ServiceReport {
  const error = serviceNotFound(name);
  return {
    service: `${name.namespace}/${name.name}`,
    status: 'failed',
    loadBalancer: null,
    actions: [],
    errors: [{ message: error.message, hint: error.hint! }],
    waitingForIp: false,
  };
}

function serviceLabel(plan: { service: { namespace: string; name: string } }): string {
  return `service/${plan.service.namespace}/${plan.service.name}`;
}
