// `cloudscale-ccm cleanup`: deletes the load balancers this cluster left behind, or, with --all,
// every load balancer of this cluster (before the cluster itself is deleted). Untagged load
// balancers and those of other clusters (another cluster id, or the same id and another
// kube-system uid) are never touched, those without the kube-system uid tag only with
// --include-untagged, and Floating IPs are never deleted: a deleted load balancer's Floating IPs
// stay in the project, unassigned. What counts as left behind, and the evidence each deletion
// needs, is src/core/apply/cleanup.ts.
//
// It lists and asks before it takes the writers' Lease, so a prompt nobody answers blocks no
// sync-lb or CronJob pass; under the Lease it reads everything again and deletes only what is
// still a candidate, unchanged (a changed one is kept and said). With --yes there is no question:
// it reads once, under the Lease.
import {
  deleteCleanupCandidates,
  findCleanupCandidates,
  recheckCandidates,
  type CleanupCandidate,
  type CleanupFindings,
  type CleanupOutcome,
  type KeptLoadBalancer,
} from '../core/apply/cleanup.js';
import { PartialFailureError, UsageError } from '../core/errors.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { CommandContext } from './context.js';
import { asWriter, type WriterOptions } from './writer.js';

export type { CleanupCandidate } from '../core/apply/cleanup.js';

export interface CleanupOptions extends WriterOptions {
  all: boolean;
  yes: boolean;
  dryRun: boolean;
  /** Also delete candidates without this cluster's kube-system uid tag (nothing proves them this cluster's). */
  includeUntagged?: boolean;
}

export interface CleanupReport {
  readonly version: 1;
  readonly clusterId: string;
  readonly dryRun: boolean;
  readonly candidates: readonly CleanupCandidate[];
  readonly deleted: readonly string[];
  /**
   * Candidates that a read by name or UUID showed to be still in use, or that changed between
   * the question and the deletion (and those that became candidates meanwhile).
   */
  readonly kept: readonly KeptLoadBalancer[];
  /**
   * Load balancers tagged with this cluster id that nothing proves to be this cluster's (another
   * cluster shares the id, or one without the kube-system uid tag): never deleted.
   */
  readonly withoutProof: readonly KeptLoadBalancer[];
}

export async function cleanupCommand(options: CleanupOptions, ctx: CommandContext): Promise<CleanupReport> {
  const asWriterPass = (work: (leased: CommandContext) => Promise<CleanupReport>) =>
    asWriter('cleanup', ctx, options, work, (report) =>
      report === undefined ? {} : { cleanup: { deleted: report.deleted.length, candidates: report.candidates.length } },
    );
  if (options.yes && !options.dryRun) {
    return asWriterPass(async (leased) => {
      const findings = await readFindings(options, leased);
      listFindings(findings, leased);
      return deletePass(options, leased, findings, []);
    });
  }
  const asked = await readFindings(options, ctx);
  listFindings(asked, ctx);
  if (options.dryRun || asked.candidates.length === 0) return finish(report(options, asked), ctx);
  if (!ctx.interactive) {
    throw new UsageError(`cleanup would delete ${asked.candidates.length} load balancer(s) and needs a confirmation`, {
      hint: 'pass --yes to delete without asking (or --dry-run to only list them)',
    });
  }
  const what = options.all ? 'EVERY load balancer of this cluster' : `${asked.candidates.length} load balancer(s)`;
  if (!(await ctx.confirm(`Delete ${what}? Their Floating IPs stay in the project, unassigned. [y/N] `))) {
    if (ctx.globals.output === 'text') ctx.stdout.write('nothing deleted\n');
    return finish(report(options, asked), ctx);
  }
  return asWriterPass(async (leased) => {
    const { findings, changed } = recheckCandidates(asked, await readFindings(options, leased));
    if (leased.globals.output === 'text') for (const k of changed) leased.stdout.write(keptLine(k));
    // The report keeps what the question listed; the deletions are what the fresh read confirms.
    return deletePass(options, leased, { ...findings, clusterId: asked.clusterId, withoutProof: asked.withoutProof }, changed, asked.candidates);
  });
}

interface Identified extends CleanupFindings {
  readonly clusterId: string;
}

async function readFindings(options: CleanupOptions, ctx: CommandContext): Promise<Identified> {
  const deps = { conn: ctx.kube(), cloud: await ctx.cloudscale() };
  const [clusterId, kubeSystemUid] = await Promise.all([ctx.clusterId(), ctx.kubeSystemUid()]);
  const scope = { all: options.all, includeUntagged: options.includeUntagged ?? false };
  return { ...(await findCleanupCandidates(deps, { clusterId, kubeSystemUid }, scope)), clusterId };
}

function keptLine(k: KeptLoadBalancer): string {
  return `${escapeUnprintable(`kept load balancer ${k.name} (${k.uuid}): ${k.why}`)}\n`;
}

function listFindings(findings: Identified, ctx: CommandContext): void {
  if (ctx.globals.output !== 'text') return;
  if (findings.candidates.length === 0) ctx.stdout.write(`nothing to clean up for cluster ${findings.clusterId}\n`);
  for (const c of findings.candidates) ctx.stdout.write(`${escapeUnprintable(`load balancer ${c.name} (${c.uuid}): ${c.why}`)}\n`);
  for (const k of findings.withoutProof) ctx.stdout.write(keptLine(k));
}

function report(
  options: CleanupOptions,
  findings: Identified,
  outcome?: Omit<CleanupOutcome, 'failures'>,
  listed: readonly CleanupCandidate[] = findings.candidates,
): CleanupReport {
  return {
    version: 1,
    clusterId: findings.clusterId,
    dryRun: options.dryRun,
    candidates: listed,
    deleted: outcome?.deleted ?? [],
    kept: outcome?.kept ?? [],
    withoutProof: findings.withoutProof,
  };
}

/**
 * Deletes `findings.candidates` (under the Lease); `changed` are those of the question kept
 * before any deletion, `listed` what the report names as candidates (what the question listed).
 */
async function deletePass(
  options: CleanupOptions,
  ctx: CommandContext,
  findings: Identified,
  changed: readonly KeptLoadBalancer[],
  listed: readonly CleanupCandidate[] = findings.candidates,
): Promise<CleanupReport> {
  const text = ctx.globals.output === 'text';
  const outcome = await deleteCleanupCandidates(findings, { conn: ctx.kube(), cloud: await ctx.cloudscale() }, {
    signal: ctx.signal,
    ...(text
      ? {
          onDeleted: (lb) => ctx.stdout.write(`deleted load balancer ${escapeUnprintable(lb.name)}\n`),
          onKept: (lb, why) => ctx.stdout.write(`${escapeUnprintable(`kept load balancer ${lb.name}: ${why}`)}\n`),
        }
      : {}),
  });
  const result = finish(report(options, findings, { deleted: outcome.deleted, kept: [...changed, ...outcome.kept] }, listed), ctx);
  if (outcome.failures.length > 0) {
    throw new PartialFailureError(
      `cleanup: ${outcome.failures.length} of ${findings.candidates.length} load balancer(s) could not be deleted`,
      outcome.failures,
    );
  }
  return result;
}

/** Writes the result document for -o json|yaml. */
function finish(result: CleanupReport, ctx: CommandContext): CleanupReport {
  const document = resultDocument('CleanupResult', 1, result);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  if (ctx.globals.output === 'yaml') ctx.stdout.write(plainYaml(document));
  return result;
}
