// `cloudscale-ccm cleanup`: deletes the load balancers this cluster left behind, or, with --all,
// every load balancer of this cluster (before the cluster itself is deleted). Untagged load
// balancers and those of other clusters (another cluster id, or the same id and another
// kube-system uid) are never touched, and Floating IPs are never deleted: a deleted load
// balancer's Floating IPs stay in the project, unassigned. What counts as left behind, and the
// evidence each deletion needs, is src/core/apply/cleanup.ts.
import {
  deleteCleanupCandidates,
  findCleanupCandidates,
  type CleanupCandidate,
  type CleanupOutcome,
  type KeptLoadBalancer,
} from '../core/apply/cleanup.js';
import { PartialFailureError, UsageError } from '../core/errors.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { escapeUnprintable } from '../core/render/untrusted.js';
import type { CommandContext } from './context.js';
import { asWriter, type WriterOptions } from './writer.js';

export type { CleanupCandidate } from '../core/apply/cleanup.js';

export interface CleanupOptions extends WriterOptions {
  all: boolean;
  yes: boolean;
  dryRun: boolean;
}

export interface CleanupReport {
  readonly version: 1;
  readonly clusterId: string;
  readonly dryRun: boolean;
  readonly candidates: readonly CleanupCandidate[];
  readonly deleted: readonly string[];
  /** Candidates of the lists that a read by name or UUID showed to be still in use. */
  readonly kept: CleanupOutcome['kept'];
  /**
   * Load balancers tagged with this cluster id that nothing proves to be this cluster's (another
   * cluster shares the id, or one without the kube-system uid tag): never deleted.
   */
  readonly withoutProof: readonly KeptLoadBalancer[];
}

export async function cleanupCommand(options: CleanupOptions, ctx: CommandContext): Promise<CleanupReport> {
  if (options.dryRun) return cleanupPass(options, ctx);
  return asWriter('cleanup', ctx, options, (leased) => cleanupPass(options, leased), (report) =>
    report === undefined ? {} : { cleanup: { deleted: report.deleted.length, candidates: report.candidates.length } },
  );
}

async function cleanupPass(options: CleanupOptions, ctx: CommandContext): Promise<CleanupReport> {
  const deps = { conn: ctx.kube(), cloud: await ctx.cloudscale() };
  const [clusterId, kubeSystemUid] = await Promise.all([ctx.clusterId(), ctx.kubeSystemUid()]);
  const findings = await findCleanupCandidates(deps, { clusterId, kubeSystemUid }, options.all);
  const { candidates, withoutProof } = findings;

  const text = ctx.globals.output === 'text';
  if (text) {
    if (candidates.length === 0) ctx.stdout.write(`nothing to clean up for cluster ${clusterId}\n`);
    for (const c of candidates) ctx.stdout.write(`${escapeUnprintable(`load balancer ${c.name} (${c.uuid}): ${c.why}`)}\n`);
    for (const k of withoutProof) ctx.stdout.write(`${escapeUnprintable(`kept load balancer ${k.name} (${k.uuid}): ${k.why}`)}\n`);
  }
  const report = (outcome?: CleanupOutcome): CleanupReport => ({
    version: 1,
    clusterId,
    dryRun: options.dryRun,
    candidates,
    deleted: outcome?.deleted ?? [],
    kept: outcome?.kept ?? [],
    withoutProof,
  });
  let outcome: CleanupOutcome | undefined;
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
        return report();
      }
    }
    outcome = await deleteCleanupCandidates(findings, deps, {
      signal: ctx.signal,
      ...(text
        ? {
            onDeleted: (lb) => ctx.stdout.write(`deleted load balancer ${escapeUnprintable(lb.name)}\n`),
            onKept: (lb, why) => ctx.stdout.write(`${escapeUnprintable(`kept load balancer ${lb.name}: ${why}`)}\n`),
          }
        : {}),
    });
  }
  const result = report(outcome);
  const document = resultDocument('CleanupResult', 1, result);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  if (ctx.globals.output === 'yaml') ctx.stdout.write(plainYaml(document));
  if (outcome !== undefined && outcome.failures.length > 0) {
    throw new PartialFailureError(
      `cleanup: ${outcome.failures.length} of ${candidates.length} load balancer(s) could not be deleted`,
      outcome.failures,
    );
  }
  return result;
}
