// `cloudscale-ccm status`: what the last passes recorded in the status ConfigMap, and how long
// ago the last one succeeded. Read-only, no Lease. With --fail-if-older-than it is a probe:
// exit 1 when the last success is too old or the last pass did not succeed.
import { PASS_COMMANDS, type PassRecord, type ReactionTotals } from '../core/status/record.js';
import { unreadableRecordFix } from '../core/status/record-parse.js';
import { counted } from '../core/text/wording.js';
import { agoText, assessHealth, recordedTime, type Health } from '../core/status/health.js';
import { formatDuration, parseDuration, DURATION_EXAMPLES } from '../core/duration.js';
import { UnhealthyError, UsageError } from '../core/errors.js';
import { readStatus, STATUS_CONFIGMAP } from '../core/kube/status-configmap.js';
import { budgetLine } from '../core/cloudscale/request-counter.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { CommandContext } from './context.js';
import { didText } from './run-summary.js';
import { parseServiceArgs } from './service-args.js';
import { readServiceLb } from '../core/status/service-read.js';
import { serviceLbView, type ServiceLbView } from '../core/status/service-view.js';
import { serviceLbText } from '../core/render/status-service.js';

export const STATUS_JSON_VERSION = 1;

export interface StatusOptions {
  /** --fail-if-older-than, as given (e.g. "3m"). */
  failIfOlderThan?: string;
}

export interface StatusReport {
  readonly configMap: string;
  /** False when the ConfigMap does not exist (the manifests were not applied, no pass ran yet). */
  readonly exists: boolean;
  readonly checkedAt: string;
  readonly lastSuccess: Health['lastSuccess'];
  /** With --fail-if-older-than: the threshold and the problems found (empty: healthy). */
  readonly health: { readonly maxAgeSeconds: number; readonly problems: readonly string[] } | null;
  /** Recorded successes not counted because their time is in the future or no time (health.ts). */
  readonly untrusted: Health['untrusted'];
  readonly passes: Partial<Record<PassRecord['command'], PassRecord>>;
  /** Keys that hold no valid record: what is wrong, and how to get rid of it. */
  readonly unreadable: readonly { readonly key: string; readonly reason: string; readonly fix: string }[];
}

export async function statusCommand(options: StatusOptions, ctx: CommandContext): Promise<StatusReport> {
  const maxAgeMs = options.failIfOlderThan === undefined ? undefined : thresholdMs(options.failIfOlderThan);
  const read = await readStatus(ctx.kube());
  const now = Date.now();
  const health = assessHealth(read.records, now, maxAgeMs ?? Infinity);
  const report: StatusReport = {
    configMap: `${STATUS_CONFIGMAP.namespace}/${STATUS_CONFIGMAP.name}`,
    exists: read.exists,
    checkedAt: new Date(now).toISOString(),
    lastSuccess: health.lastSuccess,
    health: maxAgeMs === undefined ? null : { maxAgeSeconds: maxAgeMs / 1000, problems: health.problems },
    untrusted: health.untrusted,
    passes: read.records,
    unreadable: read.unreadable.map((u) => ({ ...u, fix: unreadableRecordFix(STATUS_CONFIGMAP, u.key) })),
  };
  const document = resultDocument('Status', STATUS_JSON_VERSION, report);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  else if (ctx.globals.output === 'yaml') ctx.stdout.write(plainYaml(document));
  else ctx.stdout.write(statusText(report, now));

  if (report.health !== null && report.health.problems.length > 0) {
    throw new UnhealthyError(`not healthy: ${report.health.problems.join('; ')}`, {
      hint: `see the passes above; \`kubectl -n ${STATUS_CONFIGMAP.namespace} get events\` and the CronJob's Job logs tell more`,
    });
  }
  return report;
}

export interface StatusServiceOptions {
  /** -n; unset: the kubeconfig context's namespace (service-args.ts). */
  namespace?: string;
  /** --drain-seconds of the passes: when a draining member is removed. */
  drainSeconds: number;
}

/**
 * `status service/NAME`: the Service's load balancer as it serves now: listeners, pools,
 * members with their Node, `enabled` and monitor status, drains, and why a port does not serve.
 * Read-only like `status`: no Lease, GETs only.
 */
export async function statusServiceCommand(args: readonly string[], options: StatusServiceOptions, ctx: CommandContext): Promise<ServiceLbView> {
  const names = parseServiceArgs(args, () => options.namespace ?? ctx.kube().namespace);
  if (names.length !== 1) {
    throw new UsageError(`status takes one Service, not ${names.length}: ${args.join(' ')}`, {
      hint: 'name one Service: cloudscale-ccm status -n NAMESPACE service/NAME',
    });
  }
  const [cloud, clusterId] = await Promise.all([ctx.cloudscale(), ctx.clusterId()]);
  const input = await readServiceLb(ctx.kube(), cloud, clusterId, names[0]!);
  const view = serviceLbView({ ...input, drainSeconds: options.drainSeconds, nowMs: Date.now() });
  const document = resultDocument('ServiceStatus', STATUS_JSON_VERSION, view);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  else if (ctx.globals.output === 'yaml') ctx.stdout.write(plainYaml(document));
  else ctx.stdout.write(serviceLbText(view));
  return view;
}

function thresholdMs(text: string): number {
  const parsed = parseDuration(text);
  if ('problem' in parsed || parsed.ms <= 0) {
    throw new UsageError(`--fail-if-older-than ${'problem' in parsed ? parsed.problem : `"${text}" must be longer than 0`}`, {
      hint: `give a duration such as ${DURATION_EXAMPLES}: a few CronJob periods, e.g. 5m for a pass every minute`,
    });
  }
  return parsed.ms;
}

/** The report for people: the last success, then one block per command that recorded a pass. */
export function statusText(report: StatusReport, nowMs: number): string {
  const lines: string[] = [];
  // `5 s ago (2026-…)`; a text that is no time is quoted once, by agoText.
  const ago = (iso: string) => (recordedTime(iso, nowMs).kind === 'unparseable' ? agoText(iso, nowMs) : `${agoText(iso, nowMs)} (${iso})`);
  if (!report.exists) {
    lines.push(`no status recorded: configmap ${report.configMap} does not exist (the manifests were not applied, or it was deleted)`);
  }
  lines.push(
    report.lastSuccess === null
      ? `last successful pass: ${report.untrusted.length === 0 ? 'none recorded' : 'none counted'}`
      : `last successful pass ${agoText(report.lastSuccess.at, nowMs)} (${report.lastSuccess.command}, ${report.lastSuccess.at})`,
  );
  for (const why of report.untrusted) lines.push(`  not counted: ${why}`);
  for (const command of PASS_COMMANDS) {
    const record = report.passes[command];
    if (record === undefined) continue;
    lines.push('', ...recordLines(record, ago, nowMs));
  }
  for (const { key, reason, fix } of report.unreadable) {
    lines.push('', `${key}: unreadable record (${reason}) in configmap ${report.configMap}, key ${key}`, `  fix: ${fix}`);
  }
  // What is wrong is the error statusCommand throws: reported once, on stderr.
  if (report.health !== null && report.health.problems.length === 0) {
    lines.push('', `healthy: a success within ${formatDuration(report.health.maxAgeSeconds * 1000)}, and the last pass succeeded`);
  }
  // Reasons and names come from API answers and objects: each line is escaped on its own.
  return `${lines.map(escapeUnprintable).join('\n')}\n`;
}

function recordLines(record: PassRecord, ago: (iso: string) => string, nowMs: number): string[] {
  const lines = [`${record.command}: ${record.result}, ${whenText(record, ago, nowMs)}, version ${record.version}`];
  if (record.error !== null) lines.push(`  error: ${record.error}`);
  if (record.result !== 'succeeded') {
    lines.push(`  last success: ${record.lastSuccessAt === null ? 'none recorded' : ago(record.lastSuccessAt)}`);
  }
  if (record.nodes !== null) lines.push(`  nodes: ${record.nodes.total}${counts(record.nodes.byOutcome)}`);
  if (record.services !== null) {
    const waiting = record.services.waitingForIp > 0 ? `; ${record.services.waitingForIp} waiting for an IP` : '';
    lines.push(`  services: ${record.services.total}${counts(record.services.byStatus)}${waiting}`);
  }
  if (record.cleanup !== null) lines.push(`  load balancers: ${record.cleanup.deleted} deleted of ${record.cleanup.candidates} found`);
  if (record.reactions !== null) lines.push(`  ${reactionsLine(record.reactions, nowMs)}`);
  for (const failing of record.failing.items) lines.push(`  failing: ${failing.object}: ${failing.reason}`);
  if (record.failing.omitted > 0) lines.push(`  … and ${record.failing.omitted} more failing`);
  for (const held of record.held.items) lines.push(`  held back: ${held.object} (${held.change}): ${held.reason}`);
  if (record.held.omitted > 0) lines.push(`  … and ${record.held.omitted} more held back`);
  const errors = record.requests.errors > 0 ? `, ${record.requests.errors} answered with an error` : '';
  lines.push(`  cloudscale API: ${budgetLine({ ...record.requests, waitedMs: 0, throttled: 0 })}${errors}${record.holder === null ? '' : `; holder ${record.holder}`}`);
  return lines;
}

/**
 * When the pass ran. A watching run's record is rewritten while it watches: it says so until its
 * --watch-for deadline (plus the clock-skew allowance); past that, the run ended without writing
 * its last record (killed, or its Lease lost), and it says that instead.
 */
function whenText(record: PassRecord, ago: (iso: string) => string, nowMs: number): string {
  const took = `took ${(record.durationMs / 1000).toFixed(1)} s`;
  if (record.watching === null) return `ended ${ago(record.finishedAt)}, ${took}`;
  const { since, until } = record.watching;
  if (recordedTime(until, nowMs).kind === 'past') {
    return `was watching since ${since} until ${until}, but no end was recorded (killed, or its Lease lost); last written ${agoText(record.finishedAt, nowMs)}`;
  }
  return `watching since ${ago(since)}, until ${until} at the latest; last written ${agoText(record.finishedAt, nowMs)}`;
}

/** What a watching run's reaction passes did after the full pass the lines above describe. */
function reactionsLine(reactions: ReactionTotals, nowMs: number): string {
  if (reactions.last === null) return 'then watched: no reaction pass (yet)';
  const { last } = reactions;
  return (
    `then watched: ${counted(reactions.passes, 'reaction pass', 'reaction passes')}, ${didText(reactions)}, ${counted(reactions.failures, 'failure')}; ` +
    `the last ended ${agoText(last.finishedAt, nowMs)}, took ${(last.durationMs / 1000).toFixed(1)} s, for ${last.changes}`
  );
}

function counts(byKey: Readonly<Record<string, number>>): string {
  const parts = Object.entries(byKey).map(([key, count]) => `${count} ${key}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}
