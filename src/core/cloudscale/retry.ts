// When the client tries a request again, and how long it waits first. Pure: the transport feeds
// in what happened to one attempt and gets back a decision; no clock, no randomness of its own.

export interface RetryPolicy {
  /** Retries after the first attempt (but see `throttledAttempts`); 0 disables retrying. */
  readonly limit: number;
  /** Backoff before the first retry; doubled for each further retry. */
  readonly baseDelayMs: number;
  /** Upper bound of every wait, including one asked for by `Retry-After`. */
  readonly maxDelayMs: number;
  /**
   * Attempts in all for a call the API keeps answering 429 with `Retry-After`. Such an answer
   * says when to come back and proves nothing happened, so it is retried more patiently than
   * other failures: as long as the attempts stay within this limit and the waits of the call
   * within `throttledWaitBudgetMs`.
   */
  readonly throttledAttempts: number;
  /** Total of the waits one call may spend honouring `Retry-After`. */
  readonly throttledWaitBudgetMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  limit: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  throttledAttempts: 30,
  throttledWaitBudgetMs: 120_000,
};

/** What one attempt came to, as far as retrying is concerned. 2xx answers never get here. */
export type AttemptOutcome =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'network' };

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | {
      readonly retry: false;
      /**
       * True when a create may have taken effect although the client saw no success: the
       * caller must re-read the state before it creates again, or it may create a duplicate.
       */
      readonly outcomeUnknown: boolean;
    };

/**
 * GET, PATCH and DELETE can be sent again without changing the result, so they are retried on
 * 429, any 5xx, timeouts and network errors. A POST creates an object: it is retried only when
 * the answer proves that nothing was created (429, the rate limiter's refusal). Any other failed
 * POST may or may not have created its object — a 503 with `Retry-After` too: a proxy or an
 * overloaded API may have applied the request and lost the answer — so the caller must look for
 * the object before it ever sends the create again. A 429 with `Retry-After` gets the patient
 * budget (`throttledAttempts`, `throttledWaitBudgetMs`): the API said when to come back.
 */
export function decideRetry(input: {
  method: string;
  outcome: AttemptOutcome;
  /** Attempts made so far, including the one that produced `outcome` (1 = first try). */
  attempts: number;
  /** The waits this call already spent before its retries (0 when absent). */
  waitedMs?: number;
  policy: RetryPolicy;
  /** A number in [0, 1) for the jitter; `Math.random` in production. */
  random: () => number;
}): RetryDecision {
  const { outcome, policy } = input;
  const worthRetrying = isIdempotent(input.method)
    ? isTransient(outcome)
    : provesNothingHappened(outcome);
  const outcomeUnknown = !isIdempotent(input.method) && !worthRetrying && mayHaveHappened(outcome);
  if (!worthRetrying || policy.limit === 0) return { retry: false, outcomeUnknown };
  if (outcome.kind === 'status' && outcome.retryAfterMs !== undefined) {
    const delayMs = Math.min(outcome.retryAfterMs, policy.maxDelayMs);
    const patient = outcome.status === 429;
    const withinBudget = patient
      ? input.attempts < policy.throttledAttempts && (input.waitedMs ?? 0) + delayMs <= policy.throttledWaitBudgetMs
      : input.attempts <= policy.limit;
    return withinBudget ? { retry: true, delayMs } : { retry: false, outcomeUnknown };
  }
  if (input.attempts > policy.limit) return { retry: false, outcomeUnknown };
  return { retry: true, delayMs: backoffDelayMs(input.attempts, policy, input.random) };
}

/**
 * Exponential backoff with "equal jitter": half of the doubled delay is fixed, the other half
 * random, so parallel clients spread out but none retries at once.
 */
export function backoffDelayMs(
  attempts: number,
  policy: RetryPolicy,
  random: () => number,
): number {
  const exponential = policy.baseDelayMs * 2 ** Math.max(0, attempts - 1);
  const capped = Math.min(exponential, policy.maxDelayMs);
  return Math.round(capped / 2 + (capped / 2) * random());
}

/**
 * The wait a `Retry-After` header asks for, in ms: delay-seconds or an HTTP date. Undefined when
 * the header is absent or unreadable (the caller falls back to backoff).
 */
export function parseRetryAfterMs(
  header: string | null | undefined,
  nowMs: number,
): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

export function isIdempotent(method: string): boolean {
  return ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase());
}

function isTransient(outcome: AttemptOutcome): boolean {
  return outcome.kind !== 'status' || outcome.status === 429 || outcome.status >= 500;
}

function provesNothingHappened(outcome: AttemptOutcome): boolean {
  if (outcome.kind !== 'status') return false;
  return outcome.status === 429;
}

/** Any 4xx is a refusal; only 5xx, timeouts and lost connections leave the outcome open. */
function mayHaveHappened(outcome: AttemptOutcome): boolean {
  return outcome.kind !== 'status' || outcome.status >= 500;
}
