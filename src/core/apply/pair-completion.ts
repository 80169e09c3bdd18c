// The second half of a step pair (step-pairs.ts) — the create that gives back what the first half
// took away: a listener moved to its successor pool or re-created, a member replaced at the same
// address — and a listener put back where an earlier pass left a port without one. While it is
// missing the port (or the pool) lacks what it serves with, so one failed request must not end
// the pass there: the create is sent again until the API takes it, within PAIR_RETRY_MS.
//
// What counts as transient here is wider than the client's own retries, which never repeat a
// create whose outcome is unknown: inside a pair the object is looked for before each new
// attempt (the client reads back after an unknown outcome; a refusal after one is read back
// here), so a second create is sent only when the first is definitely not there. The Lease
// keeps other writers of this load balancer away, and the API holds one listener per port and
// one member per address and port: a create that the API applies late is refused on the next
// attempt (a 400), which is read back and found.
import { CloudscaleRequestError, CloudscaleNoAnswerError, isOutcomeUnknown } from '../cloudscale/errors.js';
import { CcmError, errorMessage } from '../errors.js';
import { abortableSleep } from '../sleep.js';

/**
 * How long after its first attempt a pair's create may still be sent again. With the API's
 * per-request timeout (20 s by default) one attempt that gets no answer fits, with the attempt
 * after it; plan's prediction for a listener move counts it (src/core/lb/impact.ts).
 */
export const PAIR_RETRY_MS = 25_000;

/** The shortest and longest pause between two attempts (a refusal while a delete settles gets the shortest). */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 4_000;

/** The create that completes a step pair was not made within PAIR_RETRY_MS. */
export class PairNotCompletedError extends CcmError {}

export interface CompletionAttempts<T> {
  /** Sends the create once (the client reads back after an unknown outcome). */
  readonly create: () => Promise<T>;
  /** Looks for the object an earlier attempt may have made; undefined when it is not there. */
  readonly findMade: () => Promise<T | undefined>;
  readonly signal?: AbortSignal | undefined;
  /** What is being created, for the error: `listener http`. */
  readonly what: string;
  /** The time between attempts is measured and spent on it; the real one by default. */
  readonly clock?: CompletionClock;
}

export interface CompletionClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason once it aborts. */
  sleep(ms: number, signal: AbortSignal | undefined): Promise<void>;
}

const realClock: CompletionClock = { now: () => performance.now(), sleep: abortableSleep };

/**
 * Sends the create until it is made, a failure that is not transient comes, or the window has
 * passed (PairNotCompletedError, with the last failure as its cause). Transient: 5xx, 429, a
 * refusal (400: the API still holds what a delete freed, or handles another write of the load
 * balancer), no answer.
 */
export async function completeCreate<T>(attempts: CompletionAttempts<T>): Promise<T> {
  const clock = attempts.clock ?? realClock;
  const windowMs = PAIR_RETRY_MS;
  const started = clock.now();
  let mayExist = false;
  let failures = 0;
  for (;;) {
    let failure: unknown;
    try {
      return await attempts.create();
    } catch (error) {
      if (!isTransient(error)) throw error;
      failure = error;
    }
    failures += 1;
    // A refusal after an attempt whose outcome is unknown may be that attempt, applied late.
    if (mayExist && isRefusal(failure)) {
      const made = await attempts.findMade();
      if (made !== undefined) return made;
    }
    if (isOutcomeUnknown(failure) || failure instanceof CloudscaleNoAnswerError) mayExist = true;
    const pauseMs = pauseAfter(failure, failures);
    const elapsed = clock.now() - started;
    if (elapsed + pauseMs >= windowMs) {
      throw new PairNotCompletedError(
        `${attempts.what} was not created within ${Math.round(windowMs / 1000)} s (${failures} attempts): ${errorMessage(failure)}`,
        { cause: failure, hint: 'the next pass reads the state again and creates it; check the API status if this repeats' },
      );
    }
    await clock.sleep(pauseMs, attempts.signal);
  }
}

function isRefusal(error: unknown): boolean {
  return error instanceof CloudscaleRequestError && error.status === 400;
}

function isTransient(error: unknown): boolean {
  if (error instanceof CloudscaleNoAnswerError) return true;
  return error instanceof CloudscaleRequestError && (error.status === 400 || error.status === 429 || error.status >= 500);
}

/** `Retry-After` when the answer had one; a short pause after a refusal; else doubling from the first. */
function pauseAfter(error: unknown, failures: number): number {
  if (error instanceof CloudscaleRequestError && error.retryAfterMs !== undefined) return error.retryAfterMs;
  if (isRefusal(error)) return FIRST_PAUSE_MS * 2;
  return Math.min(FIRST_PAUSE_MS * 2 ** (failures - 1), MAX_PAUSE_MS);
}
