// `--max-downtime` and `--window`: parsing (bad input is a UsageError naming the value) and the
// budget at an instant, with the clock given (DST and days in the window's own time zone).
import { describe, expect, test } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { budgetSecondsAt, parseDuration, parseWindow } from '../../src/core/plan/budget-window.js';
import { formatSeconds } from '../../src/core/plan/budget.js';

describe('parseDuration', () => {
  test.each([
    ['0s', 0],
    ['15s', 15],
    ['2m', 120],
    ['1h', 3600],
    ['1h30m', 5400],
    ['1m30s', 90],
    [' 5m ', 300],
    ['1.5m', 90],
  ])('%s → %d s', (raw, seconds) => {
    expect(parseDuration(raw, '--max-downtime')).toBe(seconds);
  });

  test.each(['0s', '0.7s', '1m0.7s', '1.1m', '1ms', '100000h', '2d', '100000h0.5s'])(
    '%s written back as the manifests write it parses to the same budget',
    (raw) => {
      const seconds = parseDuration(raw, '--max-downtime');
      expect(parseDuration(formatSeconds(seconds), '--max-downtime')).toBeCloseTo(seconds, 3);
    },
  );

  test.each([
    ['', /is empty/],
    ['15', /^--max-downtime: "15" has no unit$/],
    ['1x', /^--max-downtime: "1x" is not a duration$/],
    ['1m1x', /^--max-downtime: "1m1x" is not a duration \(at "1x"\)$/],
    ['-5s', /a negative duration: "-5s"/],
    ['5 minutes', /not a duration/],
    ['1.5x', /not a duration/],
    ['99999999999999999999999h', /"99999999999999999999999h" is too long/],
  ])('%j is a usage error naming the flag and the value', (raw, message) => {
    const error = (() => {
      try {
        parseDuration(raw, '--max-downtime');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(/^--max-downtime: /);
    expect((error as UsageError).message).toMatch(message);
    expect((error as UsageError).hint).toContain('0s, 15s, 2m');
  });
});

describe('parseWindow', () => {
  test('days, hours, zone and budget', () => {
    const window = parseWindow('Mon-Fri 02:00-04:00 Europe/Zurich=5m');
    expect([...window.days].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(window).toMatchObject({ startMinute: 120, endMinute: 240, timeZone: 'Europe/Zurich', seconds: 300 });
  });

  test.each([
    ['Sat,Sun 00:00-24:00 UTC=1h', [0, 6]],
    ['Fri-Mon 22:00-02:00 UTC=1h', [0, 1, 5, 6]],
    ['daily 01:00-02:00 UTC=0s', [0, 1, 2, 3, 4, 5, 6]],
    ['mon,wed-thu 01:00-02:00 UTC=0s', [1, 3, 4]],
  ])('%s → days %j', (raw, days) => {
    expect([...parseWindow(raw).days].sort()).toEqual(days);
  });

  test.each([
    ['Mon-Fri 02:00-04:00 Europe/Zurich', /--window: not a window/],
    ['Mon-Fri 2am-4am Europe/Zurich=5m', /--window: not a window/],
    ['Mo-Fr 02:00-04:00 Europe/Zurich=5m', /unknown days "Mo-Fr"/],
    ['Mon-Fri 25:00-04:00 UTC=5m', /not a time of day/],
    ['Mon-Fri 02:00-02:00 UTC=5m', /empty/],
    ['Mon-Fri 02:00-04:00 Europe/Zurch=5m', /unknown time zone "Europe\/Zurch"/],
    ['Mon-Fri 02:00-04:00 UTC=-5m', /a negative duration: "-5m"/],
    ['Mon-Fri 02:00-04:00 UTC=5', /has no unit/],
  ])('%s is a usage error', (raw, message) => {
    expect(() => parseWindow(raw)).toThrow(UsageError);
    expect(() => parseWindow(raw)).toThrow(message);
  });
});

describe('budgetSecondsAt', () => {
  const policy = { seconds: 0, window: parseWindow('Mon-Fri 02:00-04:00 Europe/Zurich=5m') };
  test.each([
    // Winter (UTC+1): 02:00 local is 01:00 UTC.
    ['2026-01-05T00:59:59Z', 0, 'Monday 01:59 local: before'],
    ['2026-01-05T01:00:00Z', 300, 'Monday 02:00 local: inside'],
    ['2026-01-05T02:59:59Z', 300, 'Monday 03:59 local: inside'],
    ['2026-01-05T03:00:00Z', 0, 'Monday 04:00 local: after'],
    ['2026-01-04T01:30:00Z', 0, 'Sunday: not a listed day'],
    // Summer (UTC+2): 02:00 local is 00:00 UTC.
    ['2026-07-06T00:30:00Z', 300, 'summer Monday 02:30 local'],
    ['2026-07-06T02:30:00Z', 0, 'summer Monday 04:30 local'],
  ])('%s → %d s (%s)', (iso, seconds) => {
    expect(budgetSecondsAt(policy, Date.parse(iso))).toBe(seconds);
  });

  test('a window across midnight belongs to the day it begins on', () => {
    const night = { seconds: 15, window: parseWindow('Fri 23:00-01:00 UTC=10m') };
    expect(budgetSecondsAt(night, Date.parse('2026-01-02T23:30:00Z'))).toBe(600); // Friday
    expect(budgetSecondsAt(night, Date.parse('2026-01-03T00:30:00Z'))).toBe(600); // Saturday morning
    expect(budgetSecondsAt(night, Date.parse('2026-01-03T23:30:00Z'))).toBe(15); // Saturday night
    expect(budgetSecondsAt(night, Date.parse('2026-01-02T00:30:00Z'))).toBe(15); // Friday morning
  });

  test('without a window the budget is the same at every instant', () => {
    expect(budgetSecondsAt({ seconds: 42 }, 0)).toBe(42);
  });
});
