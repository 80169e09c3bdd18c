// `cloudscale-ccm apply FILE`: executes a plan saved by `plan --out FILE`, exactly as saved,
// held-back changes included (applying a plan is its approval), or refuses and writes nothing.
// The file is checked before anything is contacted; the cluster and API it was planned against
// before the Lease is taken; under the Lease the state is read again, and a plan whose inputs or
// actions changed since is stale (src/core/plan/saved-plan.ts).
import { readFile } from 'node:fs/promises';
import { paceOptions, reconcileLoadBalancers, type PaceFlags, type ServiceOutcome } from '../core/apply/lb-pass.js';
import { drainPolicy, planPass } from '../core/plan/pass.js';
import { executeNodePlan } from '../core/apply/node-executor.js';
import { planNodePass } from '../core/apply/node-pass.js';
import type { NodeResult } from '../core/apply/node-report.js';
import {
  checkPlanTarget,
  fingerprintChanges,
  fingerprintOf,
  parseSavedPlan,
  planDifferences,
  type SavedPlanFile,
} from '../core/plan/saved-plan.js';
import { readLbPassSnapshot } from '../core/apply/snapshot.js';
import { CcmError, ConfigError, PartialFailureError, RefusedError, errorMessage } from '../core/errors.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { nodeText, withNodeText } from '../core/render/node-report.js';
import { counted } from '../core/text/wording.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { CommandContext } from './context.js';
import { asWriter } from './writer.js';

export interface ApplyOptions extends PaceFlags {
  wait?: boolean;
  leaseSeconds?: number;
}

export const APPLY_JSON_VERSION = 1;

export interface ApplyReport {
  readonly version: typeof APPLY_JSON_VERSION;
  readonly file: string;
  readonly createdAt: string;
  readonly nodes: readonly NodeResult[];
  readonly services: readonly {
    readonly service: string;
    readonly status: ServiceOutcome['status'];
    readonly actions: readonly { readonly kind: string; readonly object: string; readonly ms: number }[];
    readonly errors: readonly string[];
  }[];
}

/** A saved plan larger than this is no plan this tool wrote (300 Services x 300 Nodes is far below). */
const MAX_PLAN_BYTES = 256 * 1024 * 1024;

/** Shown with every stale plan: the lines that say what changed, at most this many. */
const CHANGES_SHOWN = 10;

export async function applyCommand(file: string, options: ApplyOptions, ctx: CommandContext): Promise<ApplyReport> {
  const saved = parseSavedPlan(await readPlanFile(file), file);
  const cloud = await ctx.cloudscale();
  const [clusterId, kubeSystemUid] = await Promise.all([ctx.clusterId(), ctx.kubeSystemUid()]);
  checkPlanTarget(
    saved,
    { clusterId, kubeSystemUid, server: ctx.kube().config.getCurrentCluster()?.server ?? '(unknown)', apiUrl: cloud.baseUrl },
    file,
  );
  return asWriter('apply', ctx, options, (leased) => applySaved(saved, file, options, leased));
}

async function readPlanFile(file: string): Promise<string> {
  try {
    const buffer = await readFile(file);
    if (buffer.length > MAX_PLAN_BYTES) throw new ConfigError(`${file} is ${buffer.length} bytes: no saved plan is that large`);
    return buffer.toString('utf8');
  } catch (error) {
    if (error instanceof CcmError) throw error;
    throw new ConfigError(`could not read the saved plan ${file}: ${(error as Error).message}`, {
      cause: error,
      hint: 'pass the file `cloudscale-ccm plan --out FILE` wrote',
    });
  }
}

async function applySaved(saved: SavedPlanFile, file: string, options: ApplyOptions, ctx: CommandContext): Promise<ApplyReport> {
  const conn = ctx.kube();
  const cloud = await ctx.cloudscale();
  const [clusterId, kubeSystemUid] = await Promise.all([ctx.clusterId(), ctx.kubeSystemUid()]);
  const { selection } = saved;
  const [snapshot, nodePass] = await Promise.all([
    readLbPassSnapshot({ conn, cloud, clusterId, kubeSystemUid, selection }),
    saved.plan.nodes === null
      ? Promise.resolve(null)
      : planNodePass(
          [],
          saved.options.maxNodeDeletions === null ? {} : { maxNodeDeletions: saved.options.maxNodeDeletions },
          { kube: conn, cloudscale: cloud },
        ),
  ]);
  // Planned again with the time of now: a drain begins when it is applied (see planDifferences).
  const drain = drainPolicy(saved.options.drainSeconds, Date.now());
  const planned = planPass(snapshot, { selection, drain });
  const changed = fingerprintChanges(saved.fingerprint, fingerprintOf(snapshot, selection));
  const differences = changed.length > 0 ? [] : planDifferences(saved.plan, { services: planned.map((p) => p.plan), nodeActions: nodePass?.plan.actions ?? null });
  if (changed.length > 0 || differences.length > 0) throw staleError(file, saved, changed.length > 0 ? changed : differences);

  const nodes = nodePass === null ? null : await executeNodePlan(nodePass, conn, { dryRun: false, signal: ctx.signal });
  // Exactly the saved plan: one round, as planned (see ReconcileOptions.exactly).
  const outcomes = await reconcileLoadBalancers({ snapshot, planned }, { conn, cloud, clusterId }, {
    ...paceOptions(options),
    exactly: true,
    drain,
    signal: ctx.signal,
    onEventError: (error) => ctx.stderr.write(`warning: could not record an event: ${escapeUnprintable(error.message)}\n`),
  });
  const report: ApplyReport = {
    version: APPLY_JSON_VERSION,
    file,
    createdAt: saved.createdAt,
    nodes: nodes?.results ?? [],
    services: outcomes.map((o) => ({
      service: `${o.planned.plan.service.namespace}/${o.planned.plan.service.name}`,
      status: o.status,
      actions: o.execution.executed.map((e) => ({ kind: e.action.kind, object: e.action.object, ms: e.ms })),
      errors: o.status === 'failed' ? o.errors.map(errorMessage) : [],
    })),
  };
  printReport(report, ctx);
  const failures = [
    ...(nodes?.failures ?? []),
    ...outcomes.flatMap((o) => (o.status === 'failed' ? o.errors.map((error) => ({ object: `service/${o.planned.plan.service.namespace}/${o.planned.plan.service.name}`, error })) : [])),
  ];
  if (failures.length > 0) {
    throw new PartialFailureError(`applying ${file}: ${new Set(failures.map((f) => f.object)).size} object(s) failed`, failures, report);
  }
  return report;
}

function staleError(file: string, saved: SavedPlanFile, changes: readonly string[]): RefusedError {
  const shown = changes.slice(0, CHANGES_SHOWN).map(escapeUnprintable).join('; ');
  const more = changes.length > CHANGES_SHOWN ? `; and ${changes.length - CHANGES_SHOWN} more` : '';
  return new RefusedError(`the plan in ${file} is stale: since it was made (${saved.createdAt}), ${shown}${more}; nothing was applied`, {
    hint: 'run plan again (with --out), review it, and apply the new file',
  });
}

function printReport(report: ApplyReport, ctx: CommandContext): void {
  if (ctx.globals.output === 'json') {
    ctx.stdout.write(`${JSON.stringify(resultDocument('ApplyResult', APPLY_JSON_VERSION, withNodeText(report)), null, 2)}\n`);
    return;
  }
  if (ctx.globals.output === 'yaml') {
    ctx.stdout.write(plainYaml(resultDocument('ApplyResult', APPLY_JSON_VERSION, withNodeText(report))));
    return;
  }
  for (const node of report.nodes) if (node.actions.length > 0) ctx.stdout.write(`${escapeUnprintable(`${node.object} ${nodeText(node)}`)}\n`);
  for (const service of report.services) {
    const actions = service.actions.length;
    ctx.stdout.write(`${escapeUnprintable(`service/${service.service}`)}: ${service.status}${actions > 0 ? ` (${counted(actions, 'action')})` : ''}\n`);
  }
  const done = report.services.reduce((n, s) => n + s.actions.length, 0);
  ctx.stdout.write(`apply: the plan of ${report.createdAt} is applied: ${counted(done, 'load-balancer action')} done\n`);
}
