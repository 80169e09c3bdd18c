import { describe, expect, test } from 'vitest';
import {
  budgetLine,
  createRequestCounter,
  routePattern,
  type RequestRecord,
} from '../../src/core/cloudscale/request-counter.js';

describe('routePattern', () => {
  test.each([
    ['/v1/servers', '/v1/servers'],
    ['/v1/servers/47cec963-fcd2-482f-bdb6-24461b2d47b1', '/v1/servers/{uuid}'],
    ['/v1/servers/47CEC963-FCD2-482F-BDB6-24461B2D47B1', '/v1/servers/{uuid}'],
    ['/v1/load-balancers?tag:env=prod', '/v1/load-balancers'],
    [
      '/v1/load-balancers/pools/0aa55841-d151-4e65-b63c-3282bc06cac0/members/b9991773-857d-47f6-b20b-0a03709529a9',
      '/v1/load-balancers/pools/{uuid}/members/{uuid}',
    ],
    ['/v1/floating-ips/192.0.2.123', '/v1/floating-ips/{ip}'],
    ['/v1/floating-ips/2001:db8::cafe', '/v1/floating-ips/{ip}'],
    ['/v1/floating-ips/2001%3Adb8%3A%3Acafe', '/v1/floating-ips/{ip}'],
    ['/v1/floating-ips/999.1.1.1', '/v1/floating-ips/999.1.1.1'],
    ['/v1/load-balancers/health-monitors', '/v1/load-balancers/health-monitors'],
    ['/v1/bad%zz', '/v1/bad%zz'],
    ['/proxy/v1/servers/47cec963-fcd2-482f-bdb6-24461b2d47b1', '/proxy/v1/servers/{uuid}'],
  ])('%s → %s', (path, route) => {
    expect(routePattern(path)).toBe(route);
  });
});

const entry = (over: Partial<RequestRecord>): RequestRecord => ({
  method: 'GET',
  route: '/v1/servers',
  status: 200,
  durationMs: 3,
  attempt: 1,
  retried: false,
  final: true,
  ...over,
});

describe('request counter', () => {
  test('summary counts attempts, reads, writes, retries and routes', () => {
    const counter = createRequestCounter();
    const records = [
      entry({}),
      entry({ route: '/v1/servers/{uuid}' }),
      entry({ route: '/v1/servers/{uuid}' }),
      entry({ method: 'POST', route: '/v1/load-balancers', status: 429, final: false }),
      entry({ method: 'POST', route: '/v1/load-balancers', status: 201, attempt: 2, retried: true, waitedMs: 1_000 }),
      entry({ method: 'DELETE', route: '/v1/load-balancers/{uuid}', status: 'error', final: false }),
      entry({ method: 'DELETE', route: '/v1/load-balancers/{uuid}', status: 204, attempt: 2, retried: true, waitedMs: 250 }),
      entry({ method: 'GET', route: '/v1/floating-ips' }),
    ];
    for (const record of records) counter.record(record);
    expect(counter.summary()).toEqual({
      total: 8,
      reads: 4,
      writes: 4,
      retries: 2,
      throttled: 1,
      waitedMs: 1_250,
      byRoute: [
        { route: 'DELETE /v1/load-balancers/{uuid}', count: 2 },
        { route: 'GET /v1/servers/{uuid}', count: 2 },
        { route: 'POST /v1/load-balancers', count: 2 },
        { route: 'GET /v1/floating-ips', count: 1 },
        { route: 'GET /v1/servers', count: 1 },
      ],
    });
    expect(counter.entries()).toEqual(records);
  });

  test('entries() is a copy, and reset() forgets everything', () => {
    const counter = createRequestCounter();
    counter.record(entry({}));
    const before = counter.entries();
    counter.record(entry({}));
    expect(before).toHaveLength(1);
    counter.reset();
    expect(counter.entries()).toEqual([]);
    expect(counter.summary()).toEqual({ total: 0, reads: 0, writes: 0, retries: 0, throttled: 0, waitedMs: 0, byRoute: [] });
  });
});

describe('budgetLine', () => {
  test.each([
    { requests: { total: 812, writes: 402, throttled: 0, waitedMs: 0 }, line: '812 API requests (402 writes)' },
    { requests: { total: 812, writes: 402, throttled: 61, waitedMs: 75_400 }, line: '812 API requests (402 writes; 61 answered 429, 75 s waited)' },
  ])('$line', ({ requests, line }) => {
    expect(budgetLine(requests)).toBe(line);
  });
});
