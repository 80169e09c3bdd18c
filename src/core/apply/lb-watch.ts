// Waiting for load balancers to leave `changing`, for every Service of a pass at once: one poll
// loop reads them all each interval — by UUID while one is awaited, with one list when several
// are — so a pass that creates many load balancers lets them provision side by side and pays
// one read per interval, not one per load balancer.
import type { CloudscaleClient } from '../cloudscale/client.js';
import type { LoadBalancer } from '../cloudscale/types.js';
import { CcmError } from '../errors.js';
import { abortableSleep } from '../sleep.js';

/**
 * Seconds between reads of a load balancer that is `changing`. One second: a new Service's
 * ingress is written within about a second of its load balancer becoming ready, which is what
 * `run --watch-for` promises; the reads of all waiting load balancers are one list per interval.
 */
export const DEFAULT_POLL_SECONDS = 1;

/** The load balancer stayed `changing` longer than allowed. */
export class LoadBalancerNotReadyError extends CcmError {}

interface Waiter {
  readonly lb: LoadBalancer;
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly resolve: (lb: LoadBalancer) => void;
  readonly reject: (error: unknown) => void;
}

export class ReadinessWatch {
  private readonly waiters = new Set<Waiter>();
  private polling: Promise<void> | undefined;
  /** Why the last list of load balancers failed, while no list has succeeded since. */
  private listFailure: CcmError | undefined;

  constructor(
    private readonly cloud: CloudscaleClient,
    private readonly options: { readonly pollIntervalMs: number; readonly signal?: AbortSignal | undefined },
  ) {}

  /**
   * The load balancer as soon as a read shows it no longer `changing` (`running` or `error`:
   * the caller decides). Rejects with LoadBalancerNotReadyError after `timeoutMs`, with the read's
   * error if a read fails, and with the signal's reason when the pass is stopped.
   */
  ready(lb: LoadBalancer, timeoutMs: number): Promise<LoadBalancer> {
    if (lb.status !== 'changing') return Promise.resolve(lb);
    return new Promise<LoadBalancer>((resolve, reject) => {
      this.waiters.add({ lb, deadline: Date.now() + timeoutMs, timeoutMs, resolve, reject });
      this.polling ??= this.poll().finally(() => (this.polling = undefined));
    });
  }

  private async poll(): Promise<void> {
    while (this.waiters.size > 0) {
      try {
        await abortableSleep(this.options.pollIntervalMs, this.options.signal);
        this.expire();
        if (this.waiters.size === 0) return;
        const seen = await this.read([...this.waiters].map((w) => w.lb.uuid));
        for (const waiter of [...this.waiters]) {
          const now = seen.get(waiter.lb.uuid);
          if (now instanceof Error) this.settle(waiter, () => waiter.reject(now));
          else if (now !== undefined && now.status !== 'changing') this.settle(waiter, () => waiter.resolve(now));
        }
      } catch (error) {
        for (const waiter of [...this.waiters]) this.settle(waiter, () => waiter.reject(error));
      }
    }
  }

  /**
   * The current state of the awaited load balancers: one by UUID, several with one list. One
   * missing from the list is read by UUID (a list is no evidence that it is gone). A list that
   * fails after its retries concerns no load balancer in particular: this round learns nothing,
   * every waiter keeps waiting (until its deadline, which then names the failure), and the next
   * round lists again.
   */
  private async read(uuids: readonly string[]): Promise<Map<string, LoadBalancer | Error>> {
    const seen = new Map<string, LoadBalancer | Error>();
    if (uuids.length > 1) {
      const wanted = new Set(uuids);
      let listed: readonly LoadBalancer[];
      try {
        listed = await this.cloud.loadBalancers.list();
      } catch (error) {
        if (!(error instanceof CcmError) || this.options.signal?.aborted) throw error;
        this.listFailure = error;
        return seen;
      }
      this.listFailure = undefined;
      for (const lb of listed) if (wanted.has(lb.uuid)) seen.set(lb.uuid, lb);
    }
    for (const uuid of uuids) {
      if (seen.has(uuid)) continue;
      // A failed read concerns that load balancer's Service only (deleted meanwhile, say).
      const read = await this.cloud.loadBalancers.get(uuid).catch((error: unknown) => {
        if (error instanceof CcmError) return error;
        throw error;
      });
      seen.set(uuid, read);
    }
    return seen;
  }

  private expire(): void {
    const now = Date.now();
    for (const waiter of [...this.waiters]) {
      if (now + this.options.pollIntervalMs <= waiter.deadline) continue;
      const { lb } = waiter;
      this.settle(waiter, () =>
        waiter.reject(
          new LoadBalancerNotReadyError(
            `load balancer ${lb.name} (${lb.uuid}) is still "${lb.status}" after ${Math.round(waiter.timeoutMs / 1000)} s` +
              (this.listFailure === undefined ? '' : ` (the last list of load balancers failed: ${this.listFailure.message})`),
            {
              hint: 'the next pass continues where this one stopped; raise --wait-timeout if provisioning is slow, or check the load balancer in the cloudscale control panel',
            },
          ),
        ),
      );
    }
  }

  private settle(waiter: Waiter, how: () => void): void {
    this.waiters.delete(waiter);
    how();
  }
}
