// `cloudscale-ccm plan`: the actions init-nodes and sync-lb would take, with impact and
// expected downtime. Strictly read-only: it reads the cluster and the cloud (and, for -f, asks
// the API server for a dry-run apply, which stores nothing) and prints.
import type { V1Service } from '@kubernetes/client-node';
import { plainYaml } from '../core/render/document.js';
import { readLbPassSnapshot, type ServiceSelection } from '../core/apply/snapshot.js';
import { planLbPass } from '../core/apply/lb-pass.js';
import { DEFAULT_DRAIN_SECONDS } from '../core/lb/strategies.js';
import { planNodePass } from '../core/apply/node-pass.js';
import { dryRunService } from '../core/kube/dry-run.js';
import { LB_ANNOTATIONS } from '../core/lb/annotations.js';
import { UsageError } from '../core/errors.js';
import { planDocument, renderPlanText, type PlanDocument } from '../core/render/plan.js';
import type { CommandContext, CommandResult } from './context.js';
import { readServiceManifests } from './service-manifests.js';
import { parseServiceArgs, type ServiceName } from './service-args.js';

export interface PlanOptions {
  namespace: string;
  filename?: string;
  detailedExitcode: boolean;
  maxNodeDeletions?: number;
  /** As sync-lb's: how long a member leaving its pool is drained before it is deleted. */
  drainSeconds?: number;
}

export async function planCommand(
  args: readonly string[],
  options: PlanOptions,
  ctx: CommandContext,
): Promise<CommandResult> {
  const { document, missing } = await planWithLookups(args, options, ctx);
  writePlan(document, ctx);
  // Problems and missing Services are errors: the plan is printed, the exit code says "error".
  for (const name of missing) {
    ctx.stderr.write(`error: service ${name.namespace}/${name.name} not found\nhint: check the name and the namespace (-n)\n`);
  }
  if (document.summary.problems > 0) {
    ctx.stderr.write(`error: the plan has ${document.summary.problems} problem(s); see above\n`);
  }
  if (missing.length > 0 || document.summary.problems > 0) return { exitCode: 1 };
  return { exitCode: options.detailedExitcode && document.summary.changes ? 2 : 0 };
}

/** The plan document: nodes (for a whole-cluster plan) and the Services in play. */
export async function computePlan(
  args: readonly string[],
  options: PlanOptions,
  ctx: CommandContext,
): Promise<PlanDocument> {
  return (await planWithLookups(args, options, ctx)).document;
}

/** The plan, and the named Services that do not exist. */
async function planWithLookups(
  args: readonly string[],
  options: PlanOptions,
  ctx: CommandContext,
): Promise<{ document: PlanDocument; missing: ServiceName[] }> {
  const names = parseServiceArgs(args, options.namespace);
  if (names.length > 0 && options.filename !== undefined) {
    throw new UsageError('plan takes Service names or -f FILE, not both', {
      hint: 'to plan a proposed manifest, pass only -f; to plan live Services, only their names',
    });
  }
  // The manifest is checked before anything is asked of the cluster or the cloud.
  const manifests =
    options.filename === undefined ? [] : await readServiceManifests(options.filename, options.namespace, (maxBytes) => ctx.readStdin(maxBytes));
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
  const planned = planLbPass(snapshot, selection, proposed, {
    seconds: options.drainSeconds ?? DEFAULT_DRAIN_SECONDS,
    nowMs: Date.now(),
  });
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
  return { document, missing };
}

function writePlan(document: PlanDocument, ctx: CommandContext): void {
  switch (ctx.globals.output) {
    case 'json':
      ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
      return;
    case 'yaml':
      ctx.stdout.write(plainYaml(document));
      return;
    case 'text':
      ctx.stdout.write(renderPlanText(document, { color: ctx.globals.color }));
  }
}
