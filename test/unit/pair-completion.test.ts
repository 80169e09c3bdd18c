import { describe, expect, test } from 'vitest';
import { CloudscaleNoAnswerError, CloudscaleRequestError } from '../../src/core/cloudscale/errors.js';
import { completeCreate, PAIR_RETRY_MS, PairNotCompletedError, type CompletionClock } from '../../src/core/apply/pair-completion.js';

/** A clock whose sleeps advance it at once, recording each pause. */
function fakeClock(): CompletionClock & { pauses: number[] } {
  let now = 0;
  const pauses: number[] = [];
  return {
    pauses,
    now: () => now,
    sleep: async (ms) => {
      pauses.push(ms);
      now += ms;
    },
  };
}

const refused = (status: number, extra: { retryAfterMs?: number; outcomeUnknown?: boolean } = {}) =>
  new CloudscaleRequestError({
    status,
    method: 'POST',
    path: '/v1/load-balancers/listeners',
    body: { detail: `answer ${status}` },
    attempts: 1,
    outcomeUnknown: extra.outcomeUnknown ?? status >= 500,
    retryAfterMs: extra.retryAfterMs,
  });
const noAnswer = () =>
  new CloudscaleNoAnswerError({ method: 'POST', path: '/v1/load-balancers/listeners', reason: 'no answer within 20 s', attempts: 1, outcomeUnknown: true, baseUrl: 'http://127.0.0.1:1' });

/** A create that fails with `failures` in turn, then makes `made`; counts its attempts and look-ups. */
function scripted(failures: Error[], found?: string) {
  const calls = { creates: 0, lookups: 0 };
  return {
    calls,
    create: async () => {
      calls.creates += 1;
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return 'made';
    },
    findMade: async () => {
      calls.lookups += 1;
      return found;
    },
  };
}

describe('completeCreate: the create that ends a step pair is sent again through one failed request', () => {
  test.each<[string, () => Error, number]>([
    ['a 500', () => refused(500), 250],
    ['a 503 with Retry-After: 3', () => refused(503, { retryAfterMs: 3000 }), 3000],
    ['a 429 with Retry-After: 1', () => refused(429, { retryAfterMs: 1000, outcomeUnknown: false }), 1000],
    ['a reset or a timeout before it was applied (no answer)', noAnswer, 250],
    ['a 400 refusing an overlapping write', () => refused(400, { outcomeUnknown: false }), 500],
  ])('%s, then success: created by the second attempt, after the pause the answer asks for', async (_, failure, pause) => {
    const clock = fakeClock();
    const create = scripted([failure()]);
    await expect(completeCreate({ ...create, what: 'listener tcp/80', clock })).resolves.toBe('made');
    expect(create.calls.creates).toBe(2);
    expect(clock.pauses).toEqual([pause]);
  });

  test('a refusal after an attempt without an answer is that attempt, applied late: read back, not sent a third time', async () => {
    const clock = fakeClock();
    const create = scripted([noAnswer(), refused(400, { outcomeUnknown: false })], 'found');
    await expect(completeCreate({ ...create, what: 'listener tcp/80', clock })).resolves.toBe('found');
    expect(create.calls).toEqual({ creates: 2, lookups: 1 });
  });

  test('refusals while a delete settles cost no read-back: nothing was sent that may exist', async () => {
    const clock = fakeClock();
    const create = scripted([refused(400), refused(400), refused(400)].map((e) => Object.assign(e, { outcomeUnknown: false })));
    await expect(completeCreate({ ...create, what: 'listener tcp/80', clock })).resolves.toBe('made');
    expect(create.calls).toEqual({ creates: 4, lookups: 0 });
    expect(clock.pauses).toEqual([500, 500, 500]);
  });

  test('the pauses double from 250 ms up to 4 s', async () => {
    const clock = fakeClock();
    const create = scripted(Array.from({ length: 7 }, () => refused(502)));
    await completeCreate({ ...create, what: 'listener tcp/80', clock });
    expect(clock.pauses).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000]);
  });

  test(`failures past ${PAIR_RETRY_MS / 1000} s end it: PairNotCompletedError, naming the object and the last failure`, async () => {
    const clock = fakeClock();
    const create = scripted(Array.from({ length: 100 }, () => refused(500)));
    const error = await completeCreate({ ...create, what: 'listener tcp/80', clock }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PairNotCompletedError);
    expect((error as Error).message).toMatch(/^listener tcp\/80 was not created within 25 s \(\d+ attempts\): .*500/);
    expect((error as Error).cause).toBeInstanceOf(CloudscaleRequestError);
    expect(clock.now()).toBeLessThan(PAIR_RETRY_MS);
  });

  test('a Retry-After longer than the time left is not waited for: it ends the retries at once', async () => {
    const clock = fakeClock();
    const create = scripted([refused(503, { retryAfterMs: 60_000 })]);
    await expect(completeCreate({ ...create, what: 'listener tcp/80', clock })).rejects.toBeInstanceOf(PairNotCompletedError);
    expect(clock.pauses).toEqual([]);
  });

  test.each<[string, Error]>([
    ['401', refused(401, { outcomeUnknown: false })],
    ['404', refused(404, { outcomeUnknown: false })],
    ['a bug', new TypeError('x is undefined')],
  ])('%s is no transient failure: thrown at once, unchanged', async (_, failure) => {
    const clock = fakeClock();
    const create = scripted([failure]);
    await expect(completeCreate({ ...create, what: 'listener tcp/80', clock })).rejects.toBe(failure);
    expect(create.calls.creates).toBe(1);
  });

  test('an abort during a pause ends it with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('interrupted');
    const clock: CompletionClock = {
      now: () => 0,
      sleep: async (_, signal) => {
        controller.abort(reason);
        signal?.throwIfAborted();
      },
    };
    const create = scripted([refused(500)]);
    await expect(completeCreate({ ...create, what: 'listener tcp/80', clock, signal: controller.signal })).rejects.toBe(reason);
  });
});
