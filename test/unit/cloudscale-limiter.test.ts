import { describe, expect, test } from 'vitest';
import { AdaptiveLimiter, type AttemptAnswer, type LimiterSettings } from '../../src/core/cloudscale/limiter.js';

const settings: LimiterSettings = { maxInFlight: 8, minInFlight: 2, coolDownMs: 1_000 };
const throttled = (retryAfterMs?: number): AttemptAnswer => ({ kind: 'throttled', retryAfterMs });
const answered: AttemptAnswer = { kind: 'answered' };
const failed: AttemptAnswer = { kind: 'failed' };

/** A limiter on a clock the test moves; `step` runs one request to the answer given at time `at`. */
function limiterAt() {
  let now = 0;
  const limiter = new AdaptiveLimiter(settings, () => now);
  return {
    limiter,
    async step(at: number, answer: AttemptAnswer): Promise<number> {
      now = at;
      await limiter.acquire();
      limiter.release(answer);
      return limiter.limit;
    },
  };
}

describe('AdaptiveLimiter: the limit after a sequence of answers', () => {
  test.each([
    { name: 'starts at the maximum', answers: [] as [number, AttemptAnswer][], limit: 8 },
    { name: 'a 429 halves it', answers: [[0, throttled(1_000)]] as [number, AttemptAnswer][], limit: 4 },
    {
      name: 'a burst of 429s within the cool-down halves it once',
      answers: [[0, throttled(1_000)], [100, throttled(1_000)], [999, throttled()]] as [number, AttemptAnswer][],
      limit: 4,
    },
    {
      name: 'a 429 after the cool-down halves it again',
      answers: [[0, throttled(1_000)], [1_000, throttled(1_000)]] as [number, AttemptAnswer][],
      limit: 2,
    },
    {
      name: 'a longer Retry-After is a longer cool-down',
      answers: [[0, throttled(5_000)], [4_000, throttled(1_000)]] as [number, AttemptAnswer][],
      limit: 4,
    },
    {
      name: 'never below the minimum',
      answers: [0, 1_000, 2_000, 3_000, 4_000].map((at) => [at, throttled(1_000)]) as [number, AttemptAnswer][],
      limit: 2,
    },
    {
      name: 'answers raise it by one per limit of them (4 answers at limit 4)',
      answers: [[0, throttled(1_000)], ...[1, 2, 3, 4, 5].map((at) => [at, answered])] as [number, AttemptAnswer][],
      limit: 5,
    },
    {
      name: 'failures (5xx, timeouts) change nothing',
      answers: [[0, throttled(1_000)], ...[1, 2, 3, 4, 5, 6].map((at) => [at, failed])] as [number, AttemptAnswer][],
      limit: 4,
    },
    {
      name: 'never above the maximum',
      answers: Array.from({ length: 50 }, (_, i) => [i, answered]) as [number, AttemptAnswer][],
      limit: 8,
    },
  ])('$name → $limit', async ({ answers, limit }) => {
    const { limiter, step } = limiterAt();
    for (const [at, answer] of answers) await step(at, answer);
    expect(limiter.limit).toBe(limit);
  });
});

describe('AdaptiveLimiter: requests in flight', () => {
  test('at most `limit` start; the others queue and start in order as answers come', async () => {
    const limiter = new AdaptiveLimiter({ maxInFlight: 2, minInFlight: 1, coolDownMs: 1_000 }, () => 0);
    const started: number[] = [];
    const requests = [1, 2, 3, 4].map((n) => limiter.acquire().then(() => started.push(n)));
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    limiter.release(throttled(1_000)); // limit 2 → 1, one in flight: nothing starts
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    limiter.release(answered); // none in flight, limit 1 + 1/1 → 2: two start
    await Promise.all(requests.slice(0, 4));
    expect(started).toEqual([1, 2, 3, 4]);
  });

  test('a queued request leaves the queue when its signal aborts', async () => {
    const limiter = new AdaptiveLimiter({ maxInFlight: 1, minInFlight: 1, coolDownMs: 1_000 }, () => 0);
    await limiter.acquire();
    const abort = new AbortController();
    const queued = limiter.acquire(abort.signal);
    abort.abort(new Error('stopped'));
    await expect(queued).rejects.toThrow('stopped');
    limiter.release(answered);
    // The aborted request took no slot: the next one starts at once.
    await expect(limiter.acquire()).resolves.toBeUndefined();
  });

  test.each([
    { minInFlight: 0, maxInFlight: 4 },
    { minInFlight: 5, maxInFlight: 4 },
  ])('refuses min $minInFlight, max $maxInFlight', (bad) => {
    expect(() => new AdaptiveLimiter({ ...bad, coolDownMs: 0 })).toThrow(RangeError);
  });
});
