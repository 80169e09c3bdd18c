// One API call = one or more HTTP attempts through ky. This is the only place that sees ky's
// errors: each attempt's outcome is classified, recorded, retried or mapped to the errors of
// ./errors.ts. ky itself never retries (its `retry` is 0): the policy in ./retry.ts decides,
// because a create must not be repeated blindly and every attempt has to be counted.
import ky, { HTTPError, isKyError, NetworkError, TimeoutError } from 'ky';
import { InternalError, errorMessage } from '../errors.js';
import { CloudscaleNoAnswerError, CloudscaleRequestError } from './errors.js';
import { routePattern, type RecordingRequestCounter } from './request-counter.js';
import { AdaptiveLimiter, type AttemptAnswer } from './limiter.js';
import { backoffDelayMs, decideRetry, parseRetryAfterMs, type AttemptOutcome, type RetryDecision, type RetryPolicy } from './retry.js';
import { patchApplied } from './reread.js';
import { abortableSleep } from '../sleep.js';
import { redactToken } from './settings.js';
import { hostOf, tlsFailureOf, type TlsFailure } from '../tls.js';
import type { WriteFence } from '../fence.js';

export type ApiMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface TransportOptions {
  /** Where the API lives, for messages; never contains credentials. */
  readonly baseUrl: string;
  readonly token: string;
  readonly userAgent: string;
  /** Per attempt: until the answer's body is read completely. */
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly counter: RecordingRequestCounter;
  readonly signal?: AbortSignal | undefined;
  /** Jitter source; `Math.random` unless a test needs determinism. */
  readonly random?: () => number;
  /** Asked before every attempt of a write (POST, PATCH, DELETE); throws to stop it unsent. */
  readonly fence?: WriteFence | undefined;
  /** Requests in flight, adapted to 429 answers; one of its own (the defaults) when absent. */
  readonly limiter?: AdaptiveLimiter;
}

export interface ApiCall {
  readonly method: ApiMethod;
  readonly url: URL;
  readonly json?: unknown;
}

/**
 * Sends `call` and returns the parsed JSON answer (undefined for an empty body, as with PATCH
 * and DELETE). A DELETE that is answered 404 on a retry counts as done: an earlier attempt
 * whose answer was lost already deleted the object. A 404 on the first attempt is an error.
 */
export type Transport = (call: ApiCall) => Promise<unknown>;

export function createTransport(options: TransportOptions): Transport {
  const api = ky.create({
    retry: 0,
    timeout: options.timeoutMs,
    throwHttpErrors: true,
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: 'application/json',
      'user-agent': options.userAgent,
    },
    // Error bodies stay raw text; normaliseErrorBody reads JSON, lists and HTML alike.
    parseJson: (text) => text,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const random = options.random ?? Math.random;
  const limiter = options.limiter ?? new AdaptiveLimiter();

  /**
   * Whether the PATCH or DELETE `call` is already done, as the object reads now: deleted (404),
   * or holding what the PATCH asks for. False when the read fails otherwise: then nobody knows.
   */
  const alreadyDone = async (call: ApiCall): Promise<boolean> => {
    try {
      const object = await send({ method: 'GET', url: call.url });
      return call.method === 'PATCH' && patchApplied(call.json, object);
    } catch (error) {
      return call.method === 'DELETE' && error instanceof CloudscaleRequestError && error.status === 404;
    }
  };

  const send: Transport = async (call) => {
    const path = call.url.pathname + call.url.search;
    const route = routePattern(call.url.pathname);
    // What this call waited so far: retry delays (Retry-After or backoff) and the limiter's queue.
    let waitedMs = 0;
    let backoffMs = 0;
    // An attempt of this PATCH or DELETE got no answer: the API may still apply it, or be applying it.
    let unanswered = false;
    for (let attempts = 1; ; attempts++) {
      const queued = performance.now();
      await limiter.acquire(options.signal);
      const queuedMs = performance.now() - queued;
      waitedMs += queuedMs;
      const started = performance.now();
      let status: number | 'error' = 'error';
      const record = (final: boolean): void => {
        options.counter.record({
          method: call.method,
          route,
          status,
          durationMs: Math.round(performance.now() - started),
          attempt: attempts,
          retried: attempts > 1,
          final,
          waitedMs: Math.round(backoffMs + queuedMs),
        });
      };

      let outcome: AttemptOutcome;
      let errorBody: unknown;
      let networkCause: unknown;
      let answer: AttemptAnswer = { kind: 'failed' };
      try {
        // Outside the inner try: a refused write was never sent, so it is neither counted nor retried.
        if (call.method !== 'GET') options.fence?.check(`cloudscale API ${call.method} ${path}`);
        try {
          const pending = api(call.url, {
            method: call.method,
            ...(call.json === undefined ? {} : { json: call.json }),
          });
          status = (await pending).status;
          answer = { kind: 'answered' };
          const text = await pending.text();
          record(true);
          // Answers are redacted too: their texts (names, tags) end up in plans, Events and logs.
          return parseSuccessBody(redactToken(text, options.token), { call, path, attempts, baseUrl: options.baseUrl });
        } catch (error) {
          if (options.signal?.aborted) {
            record(true);
            throw options.signal.reason;
          }
          if (error instanceof CloudscaleNoAnswerError) throw error;
          if (error instanceof HTTPError) {
            status = error.response.status;
            if (call.method === 'DELETE' && status === 404 && attempts > 1) {
              record(true);
              return undefined;
            }
            const retryAfter = error.response.headers.get('retry-after');
            const retryAfterMs = parseRetryAfterMs(retryAfter, Date.now());
            outcome = { kind: 'status', status, retryAfterMs };
            answer = status === 429 ? { kind: 'throttled', retryAfterMs } : status < 500 ? { kind: 'answered' } : { kind: 'failed' };
            // Redacted here, before the text becomes part of any error, event or log.
            errorBody = redactToken(error.data, options.token);
          } else if (error instanceof TimeoutError) {
            outcome = { kind: 'timeout' };
          } else if (error instanceof NetworkError) {
            outcome = { kind: 'network' };
            // ky's wrapper holds the Request (and so the token); keep only what fetch threw.
            networkCause = error.cause;
          } else {
            record(true);
            throw new InternalError(
              `cloudscale API ${call.method} ${path}: unexpected failure: ${errorMessage(error)}`,
              isKyError(error) ? undefined : { cause: error },
            );
          }
        }
      } finally {
        limiter.release(answer);
      }

      // A failed TLS handshake is no network hiccup: the same certificate fails again, and
      // nothing reached the API (so no create can have happened).
      const tls = outcome.kind === 'network' ? tlsFailureOf(networkCause) : undefined;
      let decision: RetryDecision = tls !== undefined
        ? ({ retry: false, outcomeUnknown: false } as const)
        : decideRetry({
            method: call.method,
            outcome,
            attempts,
            waitedMs,
            policy: options.retry,
            random,
          });
      // A write with no answer is read back before it is sent again or reported (reread.ts): it
      // may have been applied. So is one refused (400) after such an attempt: the API handles one
      // write per load balancer at a time, and refuses another while the first is in progress.
      if ((call.method === 'PATCH' || call.method === 'DELETE') && tls === undefined) {
        if (outcome.kind !== 'status') unanswered = true;
        const refusedAfter = unanswered && outcome.kind === 'status' && outcome.status === 400;
        if (outcome.kind !== 'status' || refusedAfter) {
          if (await alreadyDone(call)) {
            record(true);
            return undefined;
          }
          // Not done yet: the first attempt may still be in progress; tried again within the budget.
          if (refusedAfter && attempts <= options.retry.limit) decision = { retry: true, delayMs: backoffDelayMs(attempts, options.retry, random) };
        }
      }
      record(!decision.retry);
      if (decision.retry) {
        await abortableSleep(decision.delayMs, options.signal);
        backoffMs = decision.delayMs;
        waitedMs += decision.delayMs;
        continue;
      }
      if (outcome.kind === 'status') {
        throw new CloudscaleRequestError({
          status: outcome.status,
          method: call.method,
          path,
          body: errorBody,
          attempts,
          outcomeUnknown: decision.outcomeUnknown,
          retryAfterMs: outcome.retryAfterMs,
          ...(unanswered && outcome.status === 400
            ? { hint: 'an earlier attempt got no answer and was not applied when read back; the API may still be applying it: the next pass reads the state again' }
            : {}),
        });
      }
      throw new CloudscaleNoAnswerError({
        method: call.method,
        path,
        reason:
          outcome.kind === 'timeout'
            ? `no answer within ${formatSeconds(options.timeoutMs)}`
            : tls !== undefined
              ? `TLS handshake with ${hostOf(options.baseUrl)} failed: ${tls.reason}`
              : `cannot reach the API: ${innermostMessage(networkCause)}`,
        attempts,
        outcomeUnknown: decision.outcomeUnknown,
        baseUrl: options.baseUrl,
        cause: networkCause,
        ...(tls === undefined ? {} : { hint: TLS_HINTS[tls.check] }),
      });
    }
  };
  return send;
}

/** What to check when the TLS handshake with the API failed, by kind of failure. */
const TLS_HINTS: Record<TlsFailure['check'], string> = {
  trust:
    'something between here and the API presents its own certificate (a TLS-inspecting proxy?): ' +
    'add its CA with NODE_EXTRA_CA_CERTS, or check CLOUDSCALE_API_URL (--api-url)',
  name: 'check the host in CLOUDSCALE_API_URL (--api-url): it must be a name the certificate is for, e.g. api.cloudscale.ch',
  validity: "check this machine's clock; an expired certificate elsewhere means a proxy in between",
  protocol: 'check CLOUDSCALE_API_URL (--api-url): https:// and the right port (the simulator speaks http://127.0.0.1:PORT)',
  other: 'check CLOUDSCALE_API_URL (--api-url) and any proxy in between',
};

function parseSuccessBody(
  text: string,
  context: { call: ApiCall; path: string; attempts: number; baseUrl: string },
): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CloudscaleNoAnswerError({
      method: context.call.method,
      path: context.path,
      reason: 'the API answered with a body that is not JSON',
      attempts: context.attempts,
      // The create went through, but the client cannot tell which object it made.
      outcomeUnknown: context.call.method === 'POST',
      baseUrl: context.baseUrl,
      cause: error,
    });
  }
}

/** fetch reports "fetch failed" and puts the reason (ECONNREFUSED, ...) in its cause chain. */
function innermostMessage(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5; depth++) {
    if (!(current instanceof Error) || !(current.cause instanceof Error)) break;
    current = current.cause;
  }
  return errorMessage(current);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

