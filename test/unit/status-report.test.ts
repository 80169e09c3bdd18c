// The status verdict and its text, pure: recorded times that cannot be trusted (ahead of this
// clock beyond the skew allowance, or no time at all), records with missing fields, and a
// watching run's record.
import { describe, expect, test } from 'vitest';
import { statusText, type StatusReport } from '../../src/commands/status.js';
import { CLOCK_SKEW_ALLOWANCE_MS, agoText, assessHealth, recordedTime } from '../../src/core/status/health.js';
import { parsePassRecord } from '../../src/core/status/record-parse.js';
import { NO_REACTIONS, buildPassRecord, withReaction, type PassRecord } from '../../src/core/status/record.js';

const now = Date.parse('2026-11-25T12:00:00Z');
const at = (msFromNow: number) => new Date(now + msFromNow).toISOString();
const MIN = 60_000;

function record(over: Partial<PassRecord> = {}): PassRecord {
  const finishedAt = new Date(now - MIN);
  return {
    ...buildPassRecord(
      { command: 'run', version: '1.2.3', holder: 'h/run/1', startedAt: new Date(finishedAt.getTime() - 2000), finishedAt, failures: [], requests: [] },
      undefined,
    ),
    ...over,
  };
}

function report(passes: StatusReport['passes'], maxAgeMs: number | null = 5 * MIN): StatusReport {
  const health = assessHealth(passes, now, maxAgeMs ?? Infinity);
  return {
    configMap: 'kube-system/cloudscale-ccm-status',
    exists: true,
    checkedAt: at(0),
    lastSuccess: health.lastSuccess,
    health: maxAgeMs === null ? null : { maxAgeSeconds: maxAgeMs / 1000, problems: health.problems },
    untrusted: health.untrusted,
    passes,
    unreadable: [],
  };
}

describe('recordedTime', () => {
  test.each<[string, string, ReturnType<typeof recordedTime>]>([
    ['a minute ago', at(-MIN), { kind: 'past', ageMs: MIN }],
    ['within the skew allowance ahead: now', at(CLOCK_SKEW_ALLOWANCE_MS), { kind: 'past', ageMs: 0 }],
    ['beyond the allowance', at(CLOCK_SKEW_ALLOWANCE_MS + 1), { kind: 'future', aheadMs: CLOCK_SKEW_ALLOWANCE_MS + 1 }],
    ['two hours ahead', at(2 * 60 * MIN), { kind: 'future', aheadMs: 2 * 60 * MIN }],
    ['NaN', 'NaN', { kind: 'unparseable' }],
    ['a date Date.parse reads but no writer writes', 'November 25, 2026', { kind: 'unparseable' }],
    ['an ISO shape that is no date', '2026-13-45T99:00:00Z', { kind: 'unparseable' }],
    ['an offset', '2026-11-25T12:59:00+01:00', { kind: 'past', ageMs: MIN }],
  ])('%s', (_name, text, expected) => {
    expect(recordedTime(text, now)).toEqual(expected);
  });

  test.each([
    [at(-5000), '5 s ago'],
    [at(2 * 60 * MIN), '2 h ahead of this clock'],
    ['garbage', 'at no time ("garbage")'],
  ])('agoText(%s) = %s', (text, expected) => {
    expect(agoText(text, now)).toBe(expected);
  });
});

describe('assessHealth with times that cannot be trusted', () => {
  test.each<[string, PassRecord, RegExp]>([
    [
      'a lastSuccessAt 2 h ahead (a writer whose clock ran ahead)',
      record({ finishedAt: at(2 * 60 * MIN), lastSuccessAt: at(2 * 60 * MIN) }),
      /^no success can be counted: run: lastSuccessAt 2026-11-25T14:00:00\.000Z is 2 h ahead of this clock, more than the 1 min allowed for clock skew/,
    ],
    ['a malformed lastSuccessAt', record({ lastSuccessAt: 'NaN' }), /^no success can be counted: run: lastSuccessAt "NaN" is not an ISO-8601 time$/],
  ])('%s: no success, not healthy', (_name, run, problem) => {
    const health = assessHealth({ run }, now, 5 * MIN);
    expect(health.lastSuccess).toBeNull();
    expect(health.problems).toHaveLength(1);
    expect(health.problems[0]).toMatch(problem);
  });

  test('a success within the skew allowance ahead counts, as 0 s old', () => {
    const health = assessHealth({ run: record({ lastSuccessAt: at(30_000) }) }, now, 5 * MIN);
    expect(health).toMatchObject({ problems: [], untrusted: [], lastSuccess: { command: 'run', ageMs: 0 } });
  });

  test('another command\'s trusted success still counts; the untrusted one is said', () => {
    const health = assessHealth(
      { run: record({ lastSuccessAt: at(3 * 60 * MIN) }), 'sync-lb': record({ command: 'sync-lb', finishedAt: at(-MIN), lastSuccessAt: at(-MIN) }) },
      now,
      5 * MIN,
    );
    expect(health.lastSuccess).toMatchObject({ command: 'sync-lb' });
    expect(health.untrusted).toEqual([expect.stringMatching(/^run: lastSuccessAt \S+ is 3 h ahead of this clock/)]);
  });
});

describe('statusText', () => {
  test.each<[string, PassRecord, RegExp[], RegExp[]]>([
    [
      'a success from the future reads as none counted, never "0 s ago, healthy"',
      record({ finishedAt: at(2 * 60 * MIN), lastSuccessAt: at(2 * 60 * MIN) }),
      [/^last successful pass: none counted$/m, /^  not counted: run: lastSuccessAt \S+ is 2 h ahead of this clock/m, /^run: succeeded, ended 2 h ahead of this clock/m],
      [/healthy/, /0 s ago/],
    ],
    [
      'a malformed last success is said as such, never "NaN"',
      record({ result: 'failed', error: 'x', lastSuccessAt: 'NaN' }),
      [/^last successful pass: none counted$/m, /^  last success: at no time \("NaN"\)$/m],
      [/NaN d/, /healthy/],
    ],
  ])('%s', (_name, run, present, absent) => {
    const text = statusText(report({ run }), now);
    for (const pattern of present) expect(text).toMatch(pattern);
    for (const pattern of absent) expect(text).not.toMatch(pattern);
  });

  test('a watching run: "watching since" while it watches, with what its reactions created and updated', () => {
    const reactions = withReaction(NO_REACTIONS, {
      changes: 'service/default/late',
      nodesInitialized: 0,
      loadBalancersCreated: 1,
      loadBalancersUpdated: 2,
      loadBalancersDeleted: 0,
      failures: 0,
      startedAt: new Date(now - 10_000),
      finishedAt: new Date(now - 8000),
    });
    const watching = { since: at(-5 * MIN), until: at(10 * MIN) };
    const run = record({ finishedAt: at(-8000), reactions, watching });
    const text = statusText(report({ run }, null), now);
    expect(text).toMatch(/^run: succeeded, watching since 5 min ago \(2026-11-25T11:55:00\.000Z\), until 2026-11-25T12:10:00\.000Z at the latest; last written 8 s ago, version 1\.2\.3$/m);
    expect(text).not.toMatch(/^run: .*ended/m);
    expect(text).toMatch(/^  then watched: 1 reaction pass, 1 load balancer created, 2 load balancers updated, 0 failures; the last ended 8 s ago/m);
    // Past its deadline the record is of a run that ended without writing its end.
    const stale = statusText(report({ run: record({ reactions, watching: { since: at(-20 * MIN), until: at(-10 * MIN) } }) }, null), now);
    expect(stale).toMatch(/^run: succeeded, was watching since \S+ until \S+, but no end was recorded \(killed, or its Lease lost\)/m);
  });
});

describe('parsePassRecord', () => {
  const valid = record();
  const without = (field: string, value: object = valid as object): string => {
    const copy = structuredClone(value) as Record<string, unknown>;
    delete copy[field];
    return JSON.stringify(copy);
  };

  test('a record as written reads back as it was', () => {
    expect(parsePassRecord(JSON.stringify(valid), 'run')).toEqual(valid);
  });

  test('a record written before reactions and watching existed reads them as null', () => {
    expect(parsePassRecord(without('watching', JSON.parse(without('reactions')) as object), 'run')).toEqual(valid);
  });

  test.each<[string, string, string]>([
    ['requests missing (ended status with a TypeError)', without('requests'), 'requests is missing'],
    ['nodes missing', without('nodes'), 'nodes is missing'],
    ['a count of requests missing', JSON.stringify({ ...valid, requests: { total: 1 } }), 'requests.writes is missing'],
    ['a failing item without reason', JSON.stringify({ ...valid, failing: { items: [{ object: 'x' }], omitted: 0 } }), 'failing.items[0].reason is missing'],
    ['counts that are no numbers', JSON.stringify({ ...valid, nodes: { total: 1, byOutcome: { initialized: 'one' } } }), 'nodes.byOutcome is {"initialized":"one"}, not counts by name'],
    ['an unknown result', JSON.stringify({ ...valid, result: 'fine' }), 'result "fine" is none of succeeded, partial, failed'],
    ['a durationMs of text', JSON.stringify({ ...valid, durationMs: '2s' }), 'durationMs is "2s", not a number'],
    ['reactions of an older shape', JSON.stringify({ ...valid, reactions: { passes: 1, nodesInitialized: 0, servicesChanged: 1, failures: 0, last: null } }), 'reactions.loadBalancersCreated is missing'],
  ])('%s', (_name, text, problem) => {
    expect(parsePassRecord(text, 'run')).toBe(problem);
  });
});
