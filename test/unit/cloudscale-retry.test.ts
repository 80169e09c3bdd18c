import { describe, expect, test } from 'vitest';
import {
  backoffDelayMs,
  decideRetry,
  parseRetryAfterMs,
  type AttemptOutcome,
  type RetryPolicy,
} from '../../src/core/cloudscale/retry.js';

const policy: RetryPolicy = { limit: 4, baseDelayMs: 100, maxDelayMs: 5_000, throttledAttempts: 30, throttledWaitBudgetMs: 60_000 };
const status = (code: number, retryAfterMs?: number): AttemptOutcome => ({
  kind: 'status',
  status: code,
  retryAfterMs,
});
const timeout: AttemptOutcome = { kind: 'timeout' };
const network: AttemptOutcome = { kind: 'network' };

describe('decideRetry: which failures are tried again', () => {
  test.each([
    // method, outcome, expected retry, expected outcomeUnknown when not retried
    { method: 'GET', outcome: status(500), retry: true },
    { method: 'GET', outcome: status(502), retry: true },
    { method: 'GET', outcome: status(503), retry: true },
    { method: 'GET', outcome: status(429), retry: true },
    { method: 'GET', outcome: timeout, retry: true },
    { method: 'GET', outcome: network, retry: true },
    { method: 'PATCH', outcome: status(500), retry: true },
    { method: 'PATCH', outcome: timeout, retry: true },
    { method: 'DELETE', outcome: status(503), retry: true },
    { method: 'DELETE', outcome: network, retry: true },
    { method: 'GET', outcome: status(400), retry: false, outcomeUnknown: false },
    { method: 'GET', outcome: status(401), retry: false, outcomeUnknown: false },
    { method: 'GET', outcome: status(404), retry: false, outcomeUnknown: false },
    { method: 'DELETE', outcome: status(400), retry: false, outcomeUnknown: false },
    { method: 'PATCH', outcome: status(400), retry: false, outcomeUnknown: false },
    // A create is repeated only when the answer proves nothing was created.
    { method: 'POST', outcome: status(429), retry: true },
    { method: 'POST', outcome: status(429, 1000), retry: true },
    // 503 with Retry-After may come from a proxy after the API applied the create: unknown, not retried.
    { method: 'POST', outcome: status(503, 2000), retry: false, outcomeUnknown: true },
    { method: 'POST', outcome: status(503), retry: false, outcomeUnknown: true },
    { method: 'POST', outcome: status(500), retry: false, outcomeUnknown: true },
    { method: 'POST', outcome: status(502, 1000), retry: false, outcomeUnknown: true },
    { method: 'POST', outcome: timeout, retry: false, outcomeUnknown: true },
    { method: 'POST', outcome: network, retry: false, outcomeUnknown: true },
    { method: 'POST', outcome: status(400), retry: false, outcomeUnknown: false },
    { method: 'POST', outcome: status(404), retry: false, outcomeUnknown: false },
  ])('$method after $outcome.kind $outcome.status → retry $retry', (row) => {
    const decision = decideRetry({
      method: row.method,
      outcome: row.outcome,
      attempts: 1,
      policy,
      random: () => 0.5,
    });
    expect(decision.retry).toBe(row.retry);
    if (!decision.retry) expect(decision.outcomeUnknown).toBe(row.outcomeUnknown);
  });

  test('stops after the retry budget: limit 4 means 5 attempts in all', () => {
    const decide = (attempts: number) =>
      decideRetry({ method: 'GET', outcome: status(503), attempts, policy, random: () => 0 });
    expect([1, 2, 3, 4, 5].map((attempts) => decide(attempts).retry)).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(decide(5)).toEqual({ retry: false, outcomeUnknown: false });
  });

  test('an exhausted POST budget on 429 is not outcome-unknown (nothing was created)', () => {
    const decision = decideRetry({
      method: 'POST',
      outcome: status(429, 0),
      attempts: 30,
      policy,
      random: () => 0,
    });
    expect(decision).toEqual({ retry: false, outcomeUnknown: false });
  });

  // The API says when to come back and that nothing happened: more patience than for a 503.
  test.each([
    { method: 'GET', outcome: status(429, 1_000), attempts: 5, waitedMs: 4_000, retry: true },
    { method: 'POST', outcome: status(429, 1_000), attempts: 12, waitedMs: 11_000, retry: true },
    { method: 'POST', outcome: status(429, 1_000), attempts: 29, waitedMs: 28_000, retry: true },
    { method: 'POST', outcome: status(429, 1_000), attempts: 30, waitedMs: 29_000, retry: false },
    { method: 'GET', outcome: status(429, 5_000), attempts: 3, waitedMs: 55_000, retry: true },
    { method: 'GET', outcome: status(429, 5_000), attempts: 3, waitedMs: 55_001, retry: false },
    // Without Retry-After, a 429 gets the ordinary budget of `limit` retries.
    { method: 'GET', outcome: status(429), attempts: 4, waitedMs: 0, retry: true },
    { method: 'GET', outcome: status(429), attempts: 5, waitedMs: 0, retry: false },
    // A 503 with Retry-After gets the ordinary budget too.
    { method: 'GET', outcome: status(503, 1_000), attempts: 5, waitedMs: 4_000, retry: false },
  ])('$method after 429/503 (Retry-After $outcome.retryAfterMs) at attempt $attempts, $waitedMs ms waited → retry $retry', (row) => {
    const decision = decideRetry({ ...row, policy, random: () => 0.5 });
    expect(decision.retry).toBe(row.retry);
    if (!decision.retry) expect(decision.outcomeUnknown).toBe(false);
  });

  test('limit 0 never retries, not even a 429 with Retry-After', () => {
    expect(decideRetry({ method: 'GET', outcome: status(429, 1_000), attempts: 1, policy: { ...policy, limit: 0 }, random: () => 0 })).toEqual({
      retry: false,
      outcomeUnknown: false,
    });
  });

  test('limit 0 never retries', () => {
    const decision = decideRetry({
      method: 'GET',
      outcome: timeout,
      attempts: 1,
      policy: { ...policy, limit: 0 },
      random: () => 0,
    });
    expect(decision).toEqual({ retry: false, outcomeUnknown: false });
  });
});

describe('decideRetry: how long to wait', () => {
  test.each([
    { outcome: status(429, 2_000), delayMs: 2_000 },
    { outcome: status(503, 0), delayMs: 0 },
    { outcome: status(429, 60_000), delayMs: 5_000 }, // capped at maxDelayMs
  ])('Retry-After $outcome.retryAfterMs ms → waits $delayMs ms, no jitter', ({ outcome, delayMs }) => {
    const decision = decideRetry({ method: 'GET', outcome, attempts: 1, policy, random: () => 0.99 });
    expect(decision).toEqual({ retry: true, delayMs });
  });

  test('without Retry-After the wait is the jittered backoff', () => {
    const decision = decideRetry({
      method: 'GET',
      outcome: status(500),
      attempts: 3,
      policy,
      random: () => 1,
    });
    expect(decision).toEqual({ retry: true, delayMs: 400 });
  });
});

describe('backoffDelayMs', () => {
  test.each([
    { attempts: 1, random: 0, delayMs: 50 },
    { attempts: 1, random: 1, delayMs: 100 },
    { attempts: 2, random: 0.5, delayMs: 150 },
    { attempts: 4, random: 1, delayMs: 800 },
    { attempts: 10, random: 1, delayMs: 5_000 }, // 100 × 2^9 capped
    { attempts: 10, random: 0, delayMs: 2_500 },
  ])('attempt $attempts, random $random → $delayMs ms', ({ attempts, random, delayMs }) => {
    expect(backoffDelayMs(attempts, policy, () => random)).toBe(delayMs);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');
  test.each([
    { header: null, ms: undefined },
    { header: '', ms: undefined },
    { header: '0', ms: 0 },
    { header: '3', ms: 3_000 },
    { header: ' 12 ', ms: 12_000 },
    { header: '-1', ms: undefined },
    { header: '1.5', ms: undefined },
    { header: 'soon', ms: undefined },
    { header: 'Fri, 01 May 2026 12:00:30 GMT', ms: 30_000 },
    { header: 'Fri, 01 May 2026 11:00:00 GMT', ms: 0 }, // in the past: no wait
  ])('$header → $ms', ({ header, ms }) => {
    expect(parseRetryAfterMs(header, now)).toBe(ms);
  });
});
