// `cloudscale-ccm cleanup`: deletes the load balancers this cluster left behind — tagged with
// this cluster's identity and whose Service no longer exists — or, with --all, every load
// balancer of this cluster (before the cluster itself is deleted). Untagged load balancers and
// those of other clusters are never touched, and Floating IPs are never deleted: a deleted load
// balancer's Floating IPs stay in the project, unassigned.
import { stringify as toYaml } from 'yaml';
import { resultDocument } from '../core/render/document.js';
import type { LoadBalancer } from '../core/cloudscale/types.js';
import { PartialFailureError, UsageError, errorMessage } from '../core/errors.js';
import { listServices } from '../core/kube/services.js';
import { OWNER_CLUSTER_TAG, parseOwnershipTags } from '../core/lb/annotations.js';
import type { CommandContext } from './context.js';

export interface CleanupOptions {
  all: boolean;
  yes: boolean;
  dryRun: boolean;
}

export interface CleanupCandidate {
  readonly name: string;
  readonly uuid: string;
  readonly service: string | null;
  readonly why: string;
}

export interface CleanupReport {
  readonly version: 1;
  readonly clusterId: string;
  readonly dryRun: boolean;
  readonly candidates: readonly CleanupCandidate[];
  readonly deleted: readonly string[];
}

/** The load balancers `cleanup` would delete; pure, so `--dry-run` and the real run agree. */
export function cleanupCandidates(
  loadBalancers: readonly LoadBalancer[],
  clusterId: string,
  existingServiceUids: ReadonlySet<string>,
  all: boolean,
): CleanupCandidate[] {
  return loadBalancers.flatMap((lb) => {
    const owner = parseOwnershipTags(lb.tags);
    if (owner.kind !== 'tagged' || owner.clusterId !== clusterId) return [];
    const serviceGone = owner.serviceUid === null || !existingServiceUids.has(owner.serviceUid);
    if (!all && !serviceGone) return [];
    return [
      {
        name: lb.name,
        uuid: lb.uuid,
        service: owner.service,
        why: serviceGone
          ? `its Service ${owner.service ?? '(unknown)'} no longer exists`
          : `--all: every load balancer of this cluster (Service ${owner.service ?? '(unknown)'} still exists)`,
      },
    ];
  });
}

export async function cleanupCommand(options: CleanupOptions, ctx: CommandContext): Promise<CleanupReport> {
  const conn = ctx.kube();
  const [cloud, clusterId] = await Promise.all([ctx.cloudscale(), ctx.clusterId()]);
  const [loadBalancers, services] = await Promise.all([
    cloud.loadBalancers.list({ [OWNER_CLUSTER_TAG]: clusterId }),
    listServices(conn),
  ]);
  const uids = new Set(services.flatMap((s) => (s.metadata?.uid ? [s.metadata.uid] : [])));
  const candidates = cleanupCandidates(loadBalancers, clusterId, uids, options.all);
  const byUuid = new Map(loadBalancers.map((lb) => [lb.uuid, lb]));

  const text = ctx.globals.output === 'text';
  if (text) {
    if (candidates.length === 0) ctx.stdout.write(`nothing to clean up for cluster ${clusterId}\n`);
    for (const c of candidates) ctx.stdout.write(`load balancer ${c.name} (${c.uuid}): ${c.why}\n`);
  }
  const deleted: string[] = [];
  const failures: { object: string; error: Error }[] = [];
  if (!options.dryRun && candidates.length > 0) {
    if (!options.yes) {
      if (!ctx.interactive) {
        throw new UsageError(`cleanup would delete ${candidates.length} load balancer(s) and needs a confirmation`, {
          hint: 'pass --yes to delete without asking (or --dry-run to only list them)',
        });
      }
      const what = options.all ? 'EVERY load balancer of this cluster' : `${candidates.length} load balancer(s)`;
      if (!(await ctx.confirm(`Delete ${what}? Their Floating IPs stay in the project, unassigned. [y/N] `))) {
        if (text) ctx.stdout.write('nothing deleted\n');
        return { version: 1, clusterId, dryRun: options.dryRun, candidates, deleted };
      }
    }
    for (const candidate of candidates) {
      if (ctx.signal.aborted) break;
      try {
        await cloud.deleteByHref(byUuid.get(candidate.uuid)!.href);
        deleted.push(candidate.uuid);
        if (text) ctx.stdout.write(`deleted load balancer ${candidate.name}\n`);
      } catch (error) {
        failures.push({ object: `load balancer ${candidate.name}`, error: error instanceof Error ? error : new Error(errorMessage(error)) });
      }
    }
  }
  const report: CleanupReport = { version: 1, clusterId, dryRun: options.dryRun, candidates, deleted };
  const document = resultDocument('CleanupResult', 1, report);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  if (ctx.globals.output === 'yaml') ctx.stdout.write(toYaml(document));
  if (failures.length > 0) {
    throw new PartialFailureError(`cleanup: ${failures.length} of ${candidates.length} load balancer(s) could not be deleted`, failures);
  }
  return report;
}
