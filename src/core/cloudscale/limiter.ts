// How many API requests one client keeps in flight, adapted to the API's 429 answers (additive
// increase, multiplicative decrease, as TCP's congestion window): a 429 halves the limit, each
// answer that is no 429 raises it by 1/limit (about one more request in flight per round of
// answers), up to the maximum. The API limits the rate per token, so every Service of a pass
// slows down together instead of each retrying at full speed. Pure apart from the clock it is
// given; the transport holds one per client.

export interface LimiterSettings {
  /** The limit to start from and to grow back to. */
  readonly maxInFlight: number;
  /** The limit never falls below this: progress continues even in a long storm. */
  readonly minInFlight: number;
  /**
   * A burst of 429s from one overload halves the limit once: after a halving, further 429s
   * halve it again only after this long, or after the `Retry-After` they carry if longer.
   */
  readonly coolDownMs: number;
}

export const defaultLimiterSettings: LimiterSettings = { maxInFlight: 16, minInFlight: 2, coolDownMs: 1_000 };

/** What an attempt came to, as far as the limit is concerned. */
export type AttemptAnswer = { readonly kind: 'throttled'; readonly retryAfterMs: number | undefined } | { readonly kind: 'answered' } | { readonly kind: 'failed' };

export class AdaptiveLimiter {
  private limitValue: number;
  private inFlight = 0;
  private readonly queue: (() => void)[] = [];
  private calmAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly settings: LimiterSettings = defaultLimiterSettings,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(settings.minInFlight >= 1 && settings.maxInFlight >= settings.minInFlight)) {
      throw new RangeError(`limiter: expected 1 ≤ minInFlight ≤ maxInFlight, got ${settings.minInFlight} and ${settings.maxInFlight}`);
    }
    this.limitValue = settings.maxInFlight;
  }

  /** Requests that may be in flight now. */
  get limit(): number {
    return Math.floor(this.limitValue);
  }

  /** Resolves when a request may start; the caller must `release` it once it is answered. */
  acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.queue.length === 0 && this.inFlight < this.limit) {
      this.inFlight += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener('abort', onAbort);
        this.inFlight += 1;
        resolve();
      };
      const onAbort = () => {
        const index = this.queue.indexOf(start);
        if (index >= 0) this.queue.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(start);
    });
  }

  /** Ends a request started by `acquire`, adapting the limit to its answer. */
  release(answer: AttemptAnswer): void {
    this.inFlight -= 1;
    if (answer.kind === 'throttled') this.slowDown(answer.retryAfterMs);
    else if (answer.kind === 'answered') this.limitValue = Math.min(this.settings.maxInFlight, this.limitValue + 1 / this.limitValue);
    this.startQueued();
  }

  private slowDown(retryAfterMs: number | undefined): void {
    const now = this.now();
    if (now < this.calmAt) return;
    this.limitValue = Math.max(this.settings.minInFlight, this.limitValue / 2);
    this.calmAt = now + Math.max(this.settings.coolDownMs, retryAfterMs ?? 0);
  }

  private startQueued(): void {
    while (this.queue.length > 0 && this.inFlight < this.limit) this.queue.shift()!();
  }
}
