// `cloudscale-ccm plan`: the actions init-nodes and sync-lb would take, with impact and
// expected downtime. Strictly read-only: it reads the cluster and the cloud (and, for -f, asks
// the API server for a dry-run apply, which stores nothing) and prints.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import type { V1Service } from '@kubernetes/client-node';
import { plainYaml } from '../core/render/document.js';
import { readLbPassSnapshot } from '../core/apply/snapshot.js';
import { type LbPassSnapshot, type ServiceSelection } from '../core/plan/snapshot.js';
import { SAVED_PLAN_FORMAT, SAVED_PLAN_VERSION, fingerprintOf, serializeSavedPlan } from '../core/plan/saved-plan.js';
import { drainPolicy, passBudget, planPass } from '../core/plan/pass.js';
import type { DrainPolicy } from '../core/lb/service-plan.js';
import { budgetPolicy, type MaintenanceWindow } from '../core/plan/budget-window.js';
import { planNodePass } from '../core/apply/node-pass.js';
import { dryRunService } from '../core/kube/dry-run.js';
import { LB_ANNOTATIONS } from '../core/lb/annotations.js';
import { counted } from '../core/text/wording.js';
import { CcmError, ConfigError, UsageError } from '../core/errors.js';
import { formatTopLevelError } from '../core/render/error.js';
import { renderPlanMarkdown } from '../core/render/markdown.js';
import { renderPlanText } from '../core/render/plan.js';
import { planDocument, type PlanDocument } from '../core/plan/document.js';
import type { CommandContext, CommandResult } from './context.js';
import { readServiceManifests } from './service-manifests.js';
import { parseServiceArgs, serviceNotFound, type ServiceName } from './service-args.js';

export interface PlanOptions {
  /** -n; unset: the namespace of the kubeconfig's current context (DefaultNamespace). */
  namespace?: string;
  filename?: string;
  detailedExitcode: boolean;
  maxNodeDeletions?: number;
  /** As sync-lb's: how long a member leaving its pool is drained before it is deleted. */
  drainSeconds?: number;
  /** Also save the plan with its fingerprint to this file, for `apply FILE`. */
  out?: string;
  /** As sync-lb's `--max-downtime`/`--window`: what a pass would hold back is marked held. */
  maxDowntime?: number;
  window?: MaintenanceWindow;
}

export async function planCommand(
  args: readonly string[],
  options: PlanOptions,
  ctx: CommandContext,
): Promise<CommandResult> {
  if (options.out !== undefined && options.filename !== undefined) {
    throw new UsageError('plan --out cannot save a plan of a proposed manifest (-f): it was planned for Services that do not exist like that', {
      hint: 'apply the manifest with kubectl first, then run plan --out for the live Services',
    });
  }
  const planned = await planWithLookups(args, options, ctx);
  const { document, missing } = planned;
  if (options.out !== undefined) await savePlan(options.out, planned, options, ctx);
  // When none of the named Services exists the text view has nothing to show: "No changes" would
  // read as a verdict on Services that were never looked at. A document (-o json) stays whole.
  const nothingFound = missing.length > 0 && document.services.length === 0 && document.nodes === null;
  if (!(nothingFound && ctx.globals.output === 'text')) writePlan(document, ctx);
  // Problems and missing Services are errors: the plan is printed, the exit code says "error",
  // and each error is worded as every top-level error is (src/core/render/error.ts).
  const errors = [
    ...missing.map(serviceNotFound),
    ...(document.summary.problems > 0 ? [new CcmError(`the plan has ${counted(document.summary.problems, 'problem')}; see above`)] : []),
  ];
  for (const error of errors) ctx.stderr.write(formatTopLevelError(error, { verbose: ctx.globals.verbose }));
  if (errors.length > 0) return { exitCode: 1 };
  return { exitCode: options.detailedExitcode && document.summary.changes ? 2 : 0 };
}

/** The plan, and the named Services that do not exist. */
async function planWithLookups(
  args: readonly string[],
  options: PlanOptions,
  ctx: CommandContext,
): Promise<PlanWithInputs> {
  const namespace = () => options.namespace ?? ctx.kube().namespace;
  if (args.length > 0 && options.filename !== undefined) {
    throw new UsageError('plan takes Service names or -f FILE, not both', {
      hint: 'to plan a proposed manifest, pass only -f; to plan live Services, only their names',
    });
  }
  const names = parseServiceArgs(args, namespace);
  // A budget that cannot apply is a usage error before anything is read.
  budgetPolicy(options);
  // The manifest is checked before anything is asked of the cluster or the cloud.
  const manifests =
    options.filename === undefined ? [] : await readServiceManifests(options.filename, namespace, (maxBytes) => ctx.readStdin(maxBytes));
  const conn = ctx.kube();
  const [cloud, clusterId, kubeSystemUid] = await Promise.all([ctx.cloudscale(), ctx.clusterId(), ctx.kubeSystemUid()]);

  let proposed: V1Service[] = [];
  if (options.filename !== undefined) {
    // What the tool writes back stays on the Service when a manifest without it is applied;
    // the zone annotation is both user input and written back, so it is kept too.
    const toolAnnotations = [
      ...Object.values(LB_ANNOTATIONS)
        .filter((a) => a.writtenBy === 'tool')
        .map((a) => a.key),
      LB_ANNOTATIONS.zone.key,
    ];
    proposed = await Promise.all(manifests.map((m) => dryRunService(conn, m, toolAnnotations)));
  }
  const selection: ServiceSelection =
    proposed.length > 0
      ? { names: proposed.map((s) => ({ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '' })) }
      : names.length > 0
        ? { names }
        : { all: true };
  const wholeCluster = proposed.length === 0 && names.length === 0;

  const [snapshot, nodePass] = await Promise.all([
    readLbPassSnapshot({ conn, cloud, clusterId, kubeSystemUid, proposed, selection }),
    wholeCluster
      ? planNodePass(
          [],
          options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions },
          { kube: conn, cloudscale: cloud },
        )
      : Promise.resolve(null),
  ]);
  const nowMs = Date.now();
  const drain = drainPolicy(options.drainSeconds, nowMs);
  const budget = passBudget(options, nowMs);
  const planned = planPass(snapshot, { selection, proposed, drain, ...(budget === undefined ? {} : { budget }) });
  const missing = names.filter(
    (name) => !snapshot.services.some((s) => s.metadata?.namespace === name.namespace && s.metadata?.name === name.name),
  );
  const document = planDocument({
    nodes:
      nodePass === null
        ? null
        : {
            actions: nodePass.plan.actions,
            unchanged: nodePass.plan.untouched.length,
            deletionRefusal: nodePass.plan.deletions.refusal,
          },
    services: planned.map((p) => p.plan),
  });
  return { document, missing, snapshot, selection, drain, nowMs, apiUrl: cloud.baseUrl };
}

interface PlanWithInputs {
  readonly document: PlanDocument;
  /** Named Services that do not exist. */
  readonly missing: ServiceName[];
  /** What the plan was made from, for a saved plan's fingerprint. */
  readonly snapshot: LbPassSnapshot;
  readonly selection: ServiceSelection;
  /** The drain the plan was made with; `apply` plans again with its seconds. */
  readonly drain: DrainPolicy;
  readonly nowMs: number;
  readonly apiUrl: string;
}

/**
 * Writes the saved plan (src/core/plan/saved-plan.ts) to `file`: to a temporary file beside it,
 * then renamed over it, so a reader never sees half of it.
 */
async function savePlan(file: string, planned: PlanWithInputs, options: PlanOptions, ctx: CommandContext): Promise<void> {
  const { snapshot, selection } = planned;
  const text = serializeSavedPlan({
    format: SAVED_PLAN_FORMAT,
    version: SAVED_PLAN_VERSION,
    cluster: {
      clusterId: snapshot.clusterId,
      kubeSystemUid: snapshot.kubeSystemUid,
      server: ctx.kube().config.getCurrentCluster()?.server ?? '(unknown)',
    },
    api: { url: planned.apiUrl },
    createdAt: new Date(planned.nowMs).toISOString(),
    selection,
    options: { drainSeconds: planned.drain.seconds, maxNodeDeletions: options.maxNodeDeletions ?? null },
    fingerprint: fingerprintOf(snapshot, selection),
    plan: planned.document,
  });
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o644 });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new ConfigError(`could not write the plan to ${file}: ${(error as Error).message}`, {
      cause: error,
      hint: 'pass --out a path in a directory you can write to',
    });
  }
  ctx.stderr.write(`The plan is saved in ${file}; apply exactly this plan with: cloudscale-ccm apply ${file}\n`);
}

function writePlan(document: PlanDocument, ctx: CommandContext): void {
  switch (ctx.globals.output) {
    case 'json':
      ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
      return;
    case 'yaml':
      ctx.stdout.write(plainYaml(document));
      return;
    case 'markdown':
      ctx.stdout.write(renderPlanMarkdown(document));
      return;
    case 'text':
      ctx.stdout.write(renderPlanText(document, { color: ctx.globals.color }));
  }
}
