// One writer at a time: every command that writes (init-nodes, sync-lb, cleanup, run) holds this
// tool's Lease for its whole pass, so a terminal pass and the CronJob's never interleave their
// reads and writes. `plan` and the dry runs take none. A command run as a step of `run` works
// under the Lease `run` already holds.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { CCM_LEASE_NAME, CCM_NAMESPACE, GO_CCM_LEASE_NAME } from '../core/deploy/manifests.js';
import { holdLease } from '../core/kube/lease.js';
import { PartialFailureError } from '../core/errors.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { PassCommand } from '../core/status/record.js';
import type { CommandContext } from './context.js';
import { endOfPass, requestCount, type PassDetails, type PassReportingOptions } from './pass-end.js';

/** The Lease this tool holds for a pass, and the Go CCM's; the generated Role grants exactly these. */
export const RUN_LEASE = { namespace: CCM_NAMESPACE, name: CCM_LEASE_NAME } as const;
export const GO_CCM_LEASE = { namespace: CCM_NAMESPACE, name: GO_CCM_LEASE_NAME } as const;

export const DEFAULT_LEASE_SECONDS = 60;

export interface WriterOptions extends PassReportingOptions {
  /** Wait for another writer's pass (or its Lease's expiry) instead of exiting. */
  readonly wait?: boolean;
  /**
   * Lease duration; renewed every sixth of it, and a pass that could not renew it for half of it
   * stops writing. A killed pass blocks the others this long, counted from when they first see it.
   */
  readonly leaseSeconds?: number;
}

/** A holder identity people can trace: host, command, process. */
export function holderIdentity(command: string): string {
  return `${hostname()}/${command}/${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Runs `work` as the cluster's only writer. Without `wait`, a holder seen renewing means
 * LockHeldError (exit 1) naming it; a Lease that looks abandoned is watched and taken over once
 * this process saw it unrenewed for its whole duration. The context given to `work` carries the
 * held Lease, every write of its connections passes the Lease's fence, and its signal aborts once
 * the Lease is lost: the work stops before its next write.
 */
export async function asWriter<T>(
  command: PassCommand,
  ctx: CommandContext,
  options: WriterOptions,
  work: (ctx: CommandContext) => Promise<T>,
  /**
   * What the pass tells the status record and the metrics (pass-end.ts), from its result, or
   * from the result a PartialFailureError carries; absent when the pass threw before any.
   */
  describe: (result: T | undefined) => PassDetails = () => ({}),
): Promise<T> {
  if (ctx.writerLease !== undefined) return work(ctx);
  const startedAt = new Date();
  // The API URL and token are checked before the Lease: a bad flag or token is reported at once,
  // never after waiting for another writer. It is still recorded as this pass's failure when the
  // Lease is free right away (not waited for), so `status` says why a CronJob's passes fail.
  const settingsError = await ctx.cloudscale().then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  let leased: CommandContext | undefined;
  let requestsBefore = 0;
  try {
    return await holdWriterLease(command, ctx, settingsError === undefined ? options : { ...options, wait: false }, async (held) => {
      leased = held;
      if (settingsError !== undefined) {
        await endOfPass(command, held, options, { startedAt, requestsBefore, details: {}, error: settingsError.error });
        throw settingsError.error;
      }
      requestsBefore = await requestCount(held);
      let result: T;
      try {
        result = await work(held);
      } catch (error) {
        const partial = error instanceof PartialFailureError ? (error.result as T | undefined) : undefined;
        await endOfPass(command, held, options, { startedAt, requestsBefore, details: describe(partial), error });
        throw error;
      }
      await endOfPass(command, held, options, { startedAt, requestsBefore, details: describe(result) });
      return result;
    });
  } catch (caught) {
    if (leased !== undefined) throw caught;
    // Without the Lease (another writer holds it, the cluster is unreachable): metrics only, and
    // a settings error is what the user must fix first.
    const error = settingsError?.error ?? caught;
    await endOfPass(command, ctx, options, { startedAt, requestsBefore, details: {}, error });
    throw error;
  }
}

function holdWriterLease<T>(
  command: PassCommand,
  ctx: CommandContext,
  options: WriterOptions,
  work: (ctx: CommandContext) => Promise<T>,
): Promise<T> {
  return holdLease(
    ctx.kube(),
    {
      ...RUN_LEASE,
      holderIdentity: holderIdentity(command),
      leaseDurationSeconds: options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      wait: options.wait ?? false,
      signal: ctx.signal,
      onWaiting: (message) => ctx.stderr.write(`waiting: ${escapeUnprintable(message)}\n`),
      onWarning: (message) => ctx.stderr.write(`warning: ${escapeUnprintable(message)}\n`),
    },
    async (signal, lease) => {
      const disarm = ctx.writeFence.arm(lease);
      try {
        return await work({ ...ctx, signal, writerLease: lease });
      } finally {
        disarm();
      }
    },
  );
}
