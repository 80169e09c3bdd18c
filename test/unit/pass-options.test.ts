// The options of a load-balancer pass and their defaults, defined once for plan, sync-lb, run
// and apply (src/core/plan/pass.ts, src/core/apply/lb-pass.ts).
import { describe, expect, test } from 'vitest';
import { DEFAULT_SETTLE_SECONDS, paceOptions, type PaceFlags } from '../../src/core/apply/lb-pass.js';
import { DEFAULT_POLL_SECONDS } from '../../src/core/apply/lb-watch.js';
import { DEFAULT_DRAIN_SECONDS } from '../../src/core/lb/strategies/member-drain.js';
import { parseWindow } from '../../src/core/plan/budget-window.js';
import { drainPolicy, passBudget } from '../../src/core/plan/pass.js';

describe('paceOptions: the executor pace from the flags', () => {
  test.each<[string, PaceFlags, ReturnType<typeof paceOptions>]>([
    ['unset: the defaults', { concurrency: 4, waitTimeout: 300 }, { concurrency: 4, waitTimeoutMs: 300_000, pollIntervalMs: DEFAULT_POLL_SECONDS * 1000, settleMs: DEFAULT_SETTLE_SECONDS * 1000 }],
    ['set: as given', { concurrency: 1, waitTimeout: 2, settleSeconds: 0.5, pollSeconds: 0.25 }, { concurrency: 1, waitTimeoutMs: 2000, pollIntervalMs: 250, settleMs: 500 }],
    ['zero is a value, not unset', { concurrency: 1, waitTimeout: 0, settleSeconds: 0, pollSeconds: 0 }, { concurrency: 1, waitTimeoutMs: 0, pollIntervalMs: 0, settleMs: 0 }],
  ])('%s', (_name, flags, expected) => {
    expect(paceOptions(flags)).toEqual(expected);
  });
});

describe('drainPolicy and passBudget: what a pass plans with', () => {
  test.each<[string, number | undefined, number]>([
    ['unset: the default drain', undefined, DEFAULT_DRAIN_SECONDS],
    ['0: members leave at once', 0, 0],
    ['set', 90, 90],
  ])('drainPolicy: %s', (_name, seconds, expected) => {
    expect(drainPolicy(seconds, 1234)).toEqual({ seconds: expected, nowMs: 1234 });
  });

  const inWindow = Date.parse('2026-01-05T02:30:00Z');
  const outside = Date.parse('2026-01-05T12:00:00Z');
  test.each<[string, Parameters<typeof passBudget>[0], number, number | undefined]>([
    ['no budget', {}, outside, undefined],
    ['--max-downtime alone', { maxDowntime: 30 }, outside, 30],
    ['--max-downtime with --window, outside it', { maxDowntime: 30, window: parseWindow('Mon 02:00-04:00 UTC=10m') }, outside, 30],
  ])('passBudget: %s', (_name, options, nowMs, seconds) => {
    expect(passBudget(options, nowMs)).toEqual(seconds === undefined ? undefined : { seconds });
  });

  test("passBudget: inside the window, the window's budget", () => {
    expect(passBudget({ maxDowntime: 30, window: parseWindow('Mon 02:00-04:00 UTC=10m') }, inWindow)).toEqual({ seconds: 600 });
  });

  test('passBudget: a window without --max-downtime is a usage error', () => {
    expect(() => passBudget({ window: parseWindow('Mon 02:00-04:00 UTC=10m') }, inWindow)).toThrow(/needs --max-downtime/);
  });
});
