// The end of every writing pass: its record in the status ConfigMap, its metrics in a file and
// on a Pushgateway. asWriter (writer.ts) calls `endOfPass` once per pass of `run`, `sync-lb`,
// `init-nodes` and `cleanup`; `run --watch-for` calls it after each reaction pass too.
//
// Reporting never changes a pass's result: a record, file or push that fails is a warning on
// stderr, and the pass exits as it would have. The record is written only while the pass holds
// the writers' Lease (its write passes the Lease's fence): a pass that never got the Lease, or
// lost it, cannot know that no other writer is recording at the same moment, so it leaves the
// record alone; its metrics (file, push) still say it failed.
import { VERSION } from '../version.js';
import { CcmError, PartialFailureError, errorMessage } from '../core/errors.js';
import { readStatus, writeStatusRecord, type StatusRead } from '../core/kube/status-configmap.js';
import { renderExposition } from '../core/metrics/exposition.js';
import { passMetrics } from '../core/metrics/pass-metrics.js';
import { pushMetrics, writeMetricsFile } from '../core/metrics/publish.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import { buildPassRecord, type PassCommand, type PassOutcome, type PassRecord } from '../core/status/record.js';
import type { CommandContext } from './context.js';

/** --metrics-file and --pushgateway of the writing commands. */
export interface PassReportingOptions {
  /** Write the pass's metrics here (Prometheus text format), replacing the file. */
  readonly metricsFile?: string;
  /** Push the pass's metrics to this Pushgateway (its base URL). */
  readonly pushgateway?: string;
}

/** What a command tells about its pass, beyond times and requests (see PassOutcome). */
export type PassDetails = Pick<PassOutcome, 'nodes' | 'services' | 'cleanup' | 'held' | 'reactions' | 'watching'> & {
  readonly failures?: PassOutcome['failures'];
  /** Creation-to-taint-removal delays of the Nodes the pass initialised. */
  readonly taintRemovalDelaysMs?: readonly number[];
};

export interface EndedPass {
  readonly startedAt: Date;
  /** How many cloudscale API attempts the client had recorded when the pass started. */
  readonly requestsBefore: number;
  readonly details: PassDetails;
  /** What the pass threw, if it threw: a PartialFailureError's failures count as failing objects. */
  readonly error?: unknown;
}

/** Records and publishes one pass; returns the record (also when it could not be stored). */
export async function endOfPass(
  command: PassCommand,
  ctx: CommandContext,
  options: PassReportingOptions,
  pass: EndedPass,
): Promise<PassRecord> {
  // A warning carries the error's hint: nothing else reports these errors.
  const warn = (message: string, error: unknown) => {
    const hint = error instanceof CcmError && error.hint !== undefined ? ` (${error.hint})` : '';
    ctx.stderr.write(`warning: ${escapeUnprintable(`${message}${hint}`)}\n`);
  };
  const partial = pass.error instanceof PartialFailureError ? pass.error : undefined;
  const failures = [
    ...(pass.details.failures ?? []),
    ...(partial?.failures.map((f) => ({ object: f.object, message: f.error.message })) ?? []),
  ];
  // A pass without the Lease sent no cloud request, and asking for the client would build it.
  const requests =
    ctx.writerLease === undefined
      ? []
      : await ctx.cloudscale().then(
          (client) => client.requests.entries().slice(pass.requestsBefore),
          // The pass itself failed on the same error and reports it.
          () => [],
        );
  const outcome: PassOutcome = {
    command,
    version: VERSION,
    holder: ctx.writerLease?.holderIdentity ?? null,
    startedAt: pass.startedAt,
    finishedAt: new Date(),
    ...(pass.error !== undefined && partial === undefined ? { error: errorMessage(pass.error) } : {}),
    ...withoutFailures(pass.details),
    failures,
    requests,
  };

  const publishing = options.metricsFile !== undefined || options.pushgateway !== undefined;
  const leased = ctx.writerLease !== undefined;
  let previous: StatusRead | undefined;
  if (leased || publishing) {
    try {
      previous = await readStatus(ctx.kube());
    } catch (error) {
      // Without the Lease the pass failed early, often on this very connection: its error says it.
      if (leased) warn(`the status record was not read: ${errorMessage(error)}`, error);
    }
  }
  const record = buildPassRecord(outcome, previous?.records[command]);
  if (leased && previous !== undefined) {
    try {
      await writeStatusRecord(ctx.kube(), record, previous.exists);
    } catch (error) {
      warn(`the status record of this pass was not written: ${errorMessage(error)}`, error);
    }
  }

  if (publishing) {
    const text = renderExposition(
      passMetrics({ record, requests, taintRemovalDelaysMs: pass.details.taintRemovalDelaysMs ?? [] }),
    );
    if (options.metricsFile !== undefined) {
      await writeMetricsFile(options.metricsFile, text).catch((error: unknown) => warn(errorMessage(error), error));
    }
    if (options.pushgateway !== undefined) {
      const cluster = await ctx.clusterId().catch(() => 'unknown');
      await pushMetrics(options.pushgateway, { cluster, command }, text).catch((error: unknown) => warn(errorMessage(error), error));
    }
  }
  return record;
}

/**
 * For a pass refused before it tried to take the Lease (`run` while the Go CCM holds its own):
 * reports it like asWriter reports a pass that did not get the Lease, and returns the error.
 */
export async function failedBeforeTheLease<E>(
  command: PassCommand,
  ctx: CommandContext,
  options: PassReportingOptions,
  startedAt: Date,
  error: E,
): Promise<E> {
  await endOfPass(command, ctx, options, { startedAt, requestsBefore: 0, details: {}, error });
  return error;
}

/** The attempts the cloudscale client has recorded so far; 0 when it cannot be built. */
export async function requestCount(ctx: CommandContext): Promise<number> {
  return ctx.cloudscale().then(
    (client) => client.requests.entries().length,
    () => 0,
  );
}

function withoutFailures(details: PassDetails): Omit<PassDetails, 'failures' | 'taintRemovalDelaysMs'> {
  const { failures: _failures, taintRemovalDelaysMs: _delays, ...rest } = details;
  return rest;
}

// ---- what each command's result tells -------------------------------------------------------

/** From init-nodes' result: the Nodes by outcome and the taint-removal delays. */
export function nodeDetails(result: {
  readonly nodes: readonly { readonly node: string; readonly outcome: string; readonly taintRemovalDelayMs?: number }[];
}): Pick<PassDetails, 'nodes' | 'taintRemovalDelaysMs'> {
  return {
    nodes: result.nodes.map((n) => ({ node: n.node, outcome: n.outcome })),
    taintRemovalDelaysMs: result.nodes.flatMap((n) => (n.taintRemovalDelayMs === undefined ? [] : [n.taintRemovalDelayMs])),
  };
}

/** From sync-lb's report: the Services by status, those without an address, held-back changes. */
export function serviceDetails(report: {
  readonly services: readonly {
    readonly service: string;
    readonly status: string;
    readonly waitingForIp?: boolean;
    readonly held?: readonly { readonly id: string; readonly reason: string }[];
  }[];
}): Pick<PassDetails, 'services' | 'held'> {
  return {
    services: report.services.map((s) => ({
      service: s.service,
      status: s.status,
      ...(s.waitingForIp === undefined ? {} : { waitingForIp: s.waitingForIp }),
    })),
    held: report.services.flatMap((s) =>
      (s.held ?? []).map((h) => ({ object: `service/${s.service}`, change: h.id, reason: h.reason })),
    ),
  };
}

/** From `run`'s steps: the node pass, the load-balancer pass and the failures run collected. */
export function runDetails(
  nodes: Parameters<typeof nodeDetails>[0] | undefined,
  loadBalancers: Parameters<typeof serviceDetails>[0] | undefined,
  failures: PassOutcome['failures'],
): PassDetails {
  return {
    ...(nodes === undefined ? {} : nodeDetails(nodes)),
    ...(loadBalancers === undefined ? {} : serviceDetails(loadBalancers)),
    failures,
  };
}
