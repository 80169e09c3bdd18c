// `cloudscale-ccm run`: what the CronJob runs. init-nodes, then sync-lb, under this tool's own
// Lease so a terminal run and a CronJob run never overlap; refuses by default while another
// cloud controller manager (e.g. the Go CCM) holds `kube-system/cloud-controller-manager`.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { LockHeldError, PartialFailureError, RefusedError } from '../core/errors.js';
import { acquireLease, readLease, type LeaseHandle } from '../core/kube/lease.js';
import type { CommandContext, OutputStream } from './context.js';
import { initNodesCommand } from './init-nodes.js';
import { syncLbCommand } from './sync-lb.js';

export const RUN_LEASE = { namespace: 'kube-system', name: 'cloudscale-ccm' } as const;
export const GO_CCM_LEASE = { namespace: 'kube-system', name: 'cloud-controller-manager' } as const;

export interface RunOptions {
  wait: boolean;
  force: boolean;
  concurrency: number;
  maxNodeDeletions?: number;
  waitTimeout: number;
  settleSeconds?: number;
  pollSeconds?: number;
  /** Lease duration; renewed every third of it while the pass runs. */
  leaseSeconds?: number;
}

export interface RunReport {
  readonly version: 1;
  readonly holder: string;
  readonly nodes: unknown;
  readonly loadBalancers: unknown;
  readonly failures: readonly { readonly object: string; readonly message: string }[];
  readonly requests: { readonly total: number; readonly writes: number };
  readonly durationMs: number;
}

export async function runCommand(options: RunOptions, ctx: CommandContext): Promise<RunReport> {
  const started = Date.now();
  const conn = ctx.kube();
  const holder = `${hostname()}_${randomBytes(4).toString('hex')}`;
  const leaseSeconds = options.leaseSeconds ?? 60;

  if (!options.force) {
    const goCcm = await readLease(conn, GO_CCM_LEASE.namespace, GO_CCM_LEASE.name);
    if (goCcm?.holderIdentity && goCcm.expiresAt !== undefined && goCcm.expiresAt.getTime() > Date.now()) {
      throw new RefusedError(
        `another cloud controller manager holds the Lease ${GO_CCM_LEASE.namespace}/${GO_CCM_LEASE.name} (holder ${goCcm.holderIdentity}, valid until ${goCcm.expiresAt.toISOString()})`,
        {
          hint: 'two controllers would fight over the same load balancers: remove the other CCM (e.g. the Go CCM DaemonSet) first, or pass --force if you are sure',
        },
      );
    }
  }

  const lease = await takeLease(conn, holder, leaseSeconds, options.wait, ctx);
  const renewal = setInterval(() => {
    lease.renew().catch((error: unknown) => {
      ctx.stderr.write(`warning: could not renew the Lease: ${(error as Error).message}\n`);
    });
  }, (leaseSeconds * 1000) / 3);
  renewal.unref();

  const json = ctx.globals.output !== 'text';
  const captured = { nodes: '', loadBalancers: '' };
  const failures: { object: string; message: string }[] = [];
  try {
    const nodesCtx = json ? withStdout(ctx, capture((t) => (captured.nodes += t))) : ctx;
    await collectFailures(failures, () =>
      initNodesCommand(
        [],
        { dryRun: false, ...(options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions }) },
        nodesCtx,
      ),
    );
    if (!ctx.signal.aborted) {
      const lbCtx = json ? withStdout(ctx, capture((t) => (captured.loadBalancers += t))) : ctx;
      await collectFailures(failures, () =>
        syncLbCommand(
          [],
          {
            namespace: 'default',
            concurrency: options.concurrency,
            waitTimeout: options.waitTimeout,
            dryRun: false,
            ...(options.settleSeconds === undefined ? {} : { settleSeconds: options.settleSeconds }),
            ...(options.pollSeconds === undefined ? {} : { pollSeconds: options.pollSeconds }),
          },
          lbCtx,
        ),
      );
    }
  } finally {
    clearInterval(renewal);
    await lease.release().catch((error: unknown) => {
      ctx.stderr.write(`warning: could not release the Lease (it expires by itself): ${(error as Error).message}\n`);
    });
  }

  const requests = (await ctx.cloudscale()).requests.summary();
  const report: RunReport = {
    version: 1,
    holder,
    nodes: json ? parseJson(captured.nodes) : null,
    loadBalancers: json ? parseJson(captured.loadBalancers) : null,
    failures,
    requests: { total: requests.total, writes: requests.writes },
    durationMs: Date.now() - started,
  };
  if (json) {
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    ctx.stdout.write(
      `run: ${failures.length === 0 ? 'done' : `${failures.length} failure(s)`}; ${requests.total} API requests (${requests.writes} writes) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  }
  if (failures.length > 0) {
    throw new PartialFailureError(
      `run: ${failures.length} failure(s)`,
      failures.map((f) => ({ object: f.object, error: new Error(f.message) })),
    );
  }
  return report;
}

async function takeLease(
  conn: ReturnType<CommandContext['kube']>,
  holder: string,
  leaseSeconds: number,
  wait: boolean,
  ctx: CommandContext,
): Promise<LeaseHandle> {
  for (;;) {
    try {
      return await acquireLease(conn, {
        namespace: RUN_LEASE.namespace,
        name: RUN_LEASE.name,
        holderIdentity: holder,
        leaseDurationSeconds: leaseSeconds,
      });
    } catch (error) {
      if (!(error instanceof LockHeldError) || !wait) {
        if (error instanceof LockHeldError) {
          throw new LockHeldError(error.message, {
            hint: 'another run is in progress; pass --wait to wait for it',
          });
        }
        throw error;
      }
      ctx.stderr.write(`waiting: ${error.message}\n`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      ctx.signal.throwIfAborted();
    }
  }
}

async function collectFailures(
  failures: { object: string; message: string }[],
  step: () => Promise<unknown>,
): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (!(error instanceof PartialFailureError)) throw error;
    for (const failure of error.failures) failures.push({ object: failure.object, message: failure.error.message });
  }
}

function capture(write: (text: string) => void): OutputStream {
  return { write, isTTY: false };
}

function withStdout(ctx: CommandContext, stdout: OutputStream): CommandContext {
  return { ...ctx, stdout, kube: () => ctx.kube(), cloudscale: () => ctx.cloudscale(), clusterId: () => ctx.clusterId() };
}

function parseJson(text: string): unknown {
  return text.trim() === '' ? null : JSON.parse(text);
}
