import { describe, expect, test } from 'vitest';
import type { RequestRecord } from '../../src/core/cloudscale/request-counter.js';
import { formatDuration, parseDuration } from '../../src/core/duration.js';
import { escapeLabelValue, histogramSamples, renderExposition } from '../../src/core/metrics/exposition.js';
import { passMetrics } from '../../src/core/metrics/pass-metrics.js';
import { parsePushgatewayUrl, pushUrl } from '../../src/core/metrics/publish.js';
import { assessHealth } from '../../src/core/status/health.js';
import { buildPassRecord, MAX_LISTED, MAX_REASON_LENGTH, type PassOutcome, type PassRecord } from '../../src/core/status/record.js';

describe('parseDuration', () => {
  test.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['2d', 172_800_000],
    ['500ms', 500],
    ['1.5m', 90_000],
    [' 3m ', 180_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ms });
  });

  test.each([
    ['', 'is empty'],
    ['10', '"10" has no unit'],
    ['5 m', 'is not a duration'],
    ['5x', 'is not a duration'],
    ['m5', 'is not a duration'],
    ['-5m', 'is not a duration'],
  ])('%j is refused: %s', (text, problem) => {
    const parsed = parseDuration(text);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });

  test.each([
    [400, '0 s'],
    [42_000, '42 s'],
    [60_000, '1 min'],
    [200_000, '3 min 20 s'],
    [7_500_000, '2 h 5 min'],
    [100_800_000, '1 d 4 h'],
  ])('formatDuration(%d) = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('Prometheus text exposition', () => {
  test('label values escape backslash, double quote and line feed', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const text = renderExposition([
      { name: 'x_total', help: 'help with \\ and\nnewline', type: 'counter', samples: [{ labels: { route: 'GET "/v1"\n' }, value: 3 }] },
    ]);
    expect(text).toBe('# HELP x_total help with \\\\ and\\nnewline\n# TYPE x_total counter\nx_total{route="GET \\"/v1\\"\\n"} 3\n');
  });

  test('families without samples are left out; special values are spelled as the format wants', () => {
    const text = renderExposition([
      { name: 'empty', help: 'h', type: 'gauge', samples: [] },
      { name: 'odd', help: 'h', type: 'gauge', samples: [{ value: NaN }, { value: Infinity }, { value: -Infinity }] },
    ]);
    expect(text).toBe('# HELP odd h\n# TYPE odd gauge\nodd NaN\nodd +Inf\nodd -Inf\n');
  });

  test('a bad metric or label name is a bug, not output', () => {
    expect(() => renderExposition([{ name: 'bad-name', help: 'h', type: 'gauge', samples: [{ value: 1 }] }])).toThrow(/bad-name/);
    expect(() => renderExposition([{ name: 'ok', help: 'h', type: 'gauge', samples: [{ labels: { 'a-b': 'x' }, value: 1 }] }])).toThrow(/a-b/);
  });

  test('histogram buckets are cumulative, with +Inf, sum and count', () => {
    const samples = histogramSamples('d', [1, 5], [0.5, 2, 7]);
    expect(samples.map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`)).toEqual([
      'd_bucket{"le":"1"} 1',
      'd_bucket{"le":"5"} 2',
      'd_bucket{"le":"+Inf"} 3',
      'd_sum{} 9.5',
      'd_count{} 3',
    ]);
  });
});

const started = new Date('2026-11-25T10:00:00.000Z');
const finished = new Date('2026-11-25T10:00:03.500Z');
const request = (over: Partial<RequestRecord>): RequestRecord => ({
  method: 'GET',
  route: '/v1/servers',
  status: 200,
  durationMs: 40,
  attempt: 1,
  retried: false,
  final: true,
  ...over,
});
const outcome = (over: Partial<PassOutcome> = {}): PassOutcome => ({
  command: 'run',
  version: '1.2.3',
  holder: 'host/run/1',
  startedAt: started,
  finishedAt: finished,
  failures: [],
  requests: [],
  ...over,
});

describe('buildPassRecord', () => {
  test('a successful pass: counts by outcome, its end is the last success', () => {
    const record = buildPassRecord(
      outcome({
        nodes: [
          { node: 'a', outcome: 'initialized' },
          { node: 'b', outcome: 'in-sync' },
          { node: 'c', outcome: 'in-sync' },
        ],
        services: [
          { service: 'default/web', status: 'changed', waitingForIp: false },
          { service: 'default/new', status: 'unchanged', waitingForIp: true },
        ],
        requests: [request({}), request({ method: 'POST', status: 429, retried: false }), request({ method: 'POST', retried: true, status: 'error' })],
      }),
      undefined,
    );
    expect(record).toMatchObject({
      result: 'succeeded',
      durationMs: 3500,
      lastSuccessAt: finished.toISOString(),
      error: null,
      nodes: { total: 3, byOutcome: { initialized: 1, 'in-sync': 2 } },
      services: { total: 2, byStatus: { changed: 1, unchanged: 1 }, waitingForIp: 1 },
      requests: { total: 3, writes: 2, retries: 1, throttled: 1, errors: 2 },
      failing: { items: [], omitted: 0 },
    });
  });

  test('a partial pass keeps the last success of the record before it', () => {
    const previous = buildPassRecord(outcome({ finishedAt: new Date('2026-11-25T09:00:00Z') }), undefined);
    const record = buildPassRecord(outcome({ failures: [{ object: 'service/default/web', message: 'boom' }] }), previous);
    expect(record.result).toBe('partial');
    expect(record.lastSuccessAt).toBe('2026-11-25T09:00:00.000Z');
    expect(record.failing.items).toEqual([{ object: 'service/default/web', reason: 'boom' }]);
  });

  test('a pass stopped by an error is failed, with its reason; without any success before, none is claimed', () => {
    const record = buildPassRecord(outcome({ error: 'cannot reach the API server' }), undefined);
    expect(record).toMatchObject({ result: 'failed', error: 'cannot reach the API server', lastSuccessAt: null });
  });

  test('lists are capped and say how many they left out; long reasons are cut', () => {
    const failures = Array.from({ length: MAX_LISTED + 7 }, (_, i) => ({ object: `node/n${i}`, message: 'x'.repeat(2000) }));
    const record = buildPassRecord(outcome({ failures }), undefined);
    expect(record.failing.items).toHaveLength(MAX_LISTED);
    expect(record.failing.omitted).toBe(7);
    expect(record.failing.items[0]!.reason).toHaveLength(MAX_REASON_LENGTH);
    expect(JSON.stringify(record).length).toBeLessThan(15_000);
  });
});

describe('assessHealth', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  const record = (over: Partial<PassRecord>): PassRecord => ({
    ...buildPassRecord(outcome(), undefined),
    ...over,
  });
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  const fiveMinutes = 5 * 60_000;

  test.each<[string, Partial<Record<PassRecord['command'], PassRecord>>, RegExp[]]>([
    ['a success a minute ago', { run: record({ finishedAt: at(1), lastSuccessAt: at(1) }) }, []],
    ['nothing recorded', {}, [/no pass of run, sync-lb, init-nodes, apply has recorded/]],
    [
      'the last success 10 min ago',
      { run: record({ finishedAt: at(10), lastSuccessAt: at(10) }) },
      [/last successful pass \(run\) ended 10 min ago, more than 5 min/],
    ],
    [
      'a failed pass after a recent success',
      { run: record({ finishedAt: at(1), lastSuccessAt: at(2), result: 'failed', error: 'no token' }) },
      [/the last pass \(run, ended 1 min ago\) failed: no token/],
    ],
    [
      'a partial pass',
      {
        run: record({
          finishedAt: at(1),
          lastSuccessAt: at(3),
          result: 'partial',
          failing: { items: [{ object: 'service/default/web', reason: 'bad annotation' }], omitted: 2 },
        }),
      },
      [/left 3 objects failing, e\.g\. service\/default\/web: bad annotation/],
    ],
    [
      'the newest pass counts: a success of sync-lb after a failed run',
      {
        run: record({ finishedAt: at(4), lastSuccessAt: at(30), result: 'failed', error: 'x' }),
        'sync-lb': record({ command: 'sync-lb', finishedAt: at(1), lastSuccessAt: at(1) }),
      },
      [],
    ],
    [
      'cleanup counts for nothing',
      { cleanup: record({ command: 'cleanup', finishedAt: at(1), lastSuccessAt: at(1) }) },
      [/no pass of run/],
    ],
    ['never a success', { run: record({ finishedAt: at(1), lastSuccessAt: null, result: 'failed', error: 'x' }) }, [/no pass has succeeded yet/, /failed: x/]],
  ])('%s', (_name, records, expected) => {
    const health = assessHealth(records, now, fiveMinutes);
    expect(health.problems).toHaveLength(expected.length);
    expected.forEach((pattern, i) => expect(health.problems[i]).toMatch(pattern));
  });
});

describe('pass metrics', () => {
  test('names, labels and values of a pass', () => {
    const record = buildPassRecord(
      outcome({
        nodes: [{ node: 'a', outcome: 'initialized' }],
        services: [{ service: 'default/web', status: 'failed', waitingForIp: true }],
        failures: [{ object: 'service/default/web', message: 'boom' }],
        held: [{ object: 'service/default/db', change: 'c1', reason: 'over budget' }],
      }),
      undefined,
    );
    const requests = [request({ durationMs: 30 }), request({ durationMs: 3000, status: 500 })];
    const text = renderExposition(passMetrics({ record, requests, taintRemovalDelaysMs: [42_000] }));
    for (const line of [
      'cloudscale_ccm_pass_result{command="run",result="partial"} 1',
      'cloudscale_ccm_pass_result{command="run",result="succeeded"} 0',
      'cloudscale_ccm_pass_duration_seconds{command="run"} 3.5',
      'cloudscale_ccm_nodes{command="run",outcome="initialized"} 1',
      'cloudscale_ccm_services{command="run",status="failed"} 1',
      'cloudscale_ccm_services_waiting_for_ip{command="run"} 1',
      'cloudscale_ccm_objects_changed{command="run"} 1',
      'cloudscale_ccm_objects_failed{command="run"} 1',
      'cloudscale_ccm_changes_held_back{command="run"} 1',
      'cloudprovider_cloudscale_api_request_errors{command="run",method="GET",route="/v1/servers"} 1',
      'cloudprovider_cloudscale_api_request_duration_seconds_bucket{command="run",method="GET",route="/v1/servers",le="0.05"} 1',
      'cloudprovider_cloudscale_api_request_duration_seconds_count{command="run",method="GET",route="/v1/servers"} 2',
      'node_controller_cloud_provider_taint_removal_delay_seconds_bucket{command="run",le="60"} 1',
      'node_controller_cloud_provider_taint_removal_delay_seconds_sum{command="run"} 42',
      'cloudscale_ccm_build_info{command="run",version="1.2.3"} 1',
    ]) {
      expect(text).toContain(`${line}\n`);
    }
    // No success yet: no last-success sample (an alert on its absence fires).
    expect(text).not.toContain('cloudscale_ccm_last_success_timestamp_seconds{');
  });
});

describe('Pushgateway URL', () => {
  test('the grouping key is base64url-encoded, so slashes and empty values fit', () => {
    const url = pushUrl('http://pg:9091/prefix/', { cluster: 'a/b', command: 'run', empty: '' });
    expect(url.pathname).toBe('/prefix/metrics/job@base64/Y2xvdWRzY2FsZS1jY20/cluster@base64/YS9i/command@base64/cnVu/empty@base64/=');
  });

  test.each([
    ['pushgateway:9091', /must be an http/],
    ['not a url', /is not a URL/],
    ['ftp://pg:21', /must be an http/],
    ['http://pg:9091/?x=1', /must not have a query/],
  ])('%s is refused', (text, message) => {
    expect(() => parsePushgatewayUrl(text)).toThrow(message);
  });
});
