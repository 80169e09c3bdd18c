// The simulator's fault rules as pure logic: which request a rule matches, the order rules are
// tried in, counts, and what shortList leaves of a list answer.

import { describe, expect, test } from 'vitest';
import { Faults, FaultConfigError, globToRegex } from '../../src/sim/faults.js';

describe('path patterns', () => {
  test.each([
    ['/v1/load-balancers', '/v1/load-balancers', true],
    ['/v1/load-balancers', '/v1/load-balancers/', true],
    ['/v1/load-balancers', '/v1/load-balancers/pools', false],
    ['/v1/load-balancers/*', '/v1/load-balancers/pools', true],
    ['/v1/load-balancers/*', '/v1/load-balancers/pools/abc', false],
    ['/v1/load-balancers/**', '/v1/load-balancers/pools/abc/members', true],
    ['/v1/floating-ips/2a06:c01::1', '/v1/floating-ips/2a06:c01::1', true],
    ['/v1/load-balancers.json', '/v1/load-balancersXjson', false],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(globToRegex(pattern).test(path)).toBe(expected);
  });
});

describe('decide: the first matching rule with counts left fires', () => {
  const faults = (config: unknown): Faults => {
    const f = new Faults();
    f.set(config);
    return f;
  };

  test('a route pattern matches every request of that route; methods narrow a rule', () => {
    const f = faults({ connectionReset: { pathPattern: '/v1/load-balancers/pools/{uuid}/members', methods: ['POST'], count: 5 } });
    expect(f.decide('POST', '/v1/load-balancers/pools/p1/members', '/v1/load-balancers/pools/{uuid}/members')).toEqual({ kind: 'reset', afterApplying: false });
    expect(f.decide('GET', '/v1/load-balancers/pools/p1/members', '/v1/load-balancers/pools/{uuid}/members')).toBeUndefined();
    expect(f.decide('POST', '/v1/load-balancers/pools', '/v1/load-balancers/pools')).toBeUndefined();
  });

  test.each([
    [
      'errorRate before rateLimit before connectionReset before hang',
      {
        hang: { pathPattern: '/v1/**', count: 1 },
        connectionReset: { pathPattern: '/v1/**', count: 1 },
        rateLimit: { pathPattern: '/v1/**', count: 1, retryAfterSeconds: 1 },
        errorRate: { pathPattern: '/v1/**', status: 500, count: 1 },
      },
      ['error 500', 'error 429', 'reset', 'hang until gone', 'none'],
    ],
    [
      'a spent rule lets the next one fire',
      { hang: [{ pathPattern: '/v1/servers', count: 2, forMs: 10 }, { pathPattern: '/v1/**', count: 1, afterApplying: true }] },
      ['hang 10', 'hang 10', 'hang after', 'none'],
    ],
    ['count 0 never fires', { errorRate: { pathPattern: '/v1/**', status: 503, count: 0 } }, ['none']],
    ['no count never runs out', { connectionReset: { pathPattern: '/v1/servers' } }, ['reset', 'reset', 'reset']],
  ])('%s', (_name, config, expected) => {
    const f = faults(config);
    const seen = expected.map(() => {
      const d = f.decide('GET', '/v1/servers', '/v1/servers');
      if (d === undefined) return 'none';
      if (d.kind === 'error') return `error ${d.status}`;
      if (d.kind === 'hang') return d.afterApplying ? 'hang after' : `hang ${d.forMs ?? 'until gone'}`;
      return d.kind;
    });
    expect(seen).toEqual(expected);
  });
});

describe('shortenList', () => {
  const items = [{ uuid: 'a' }, { uuid: 'b' }, { uuid: 'c' }];
  const shorten = (rule: Record<string, unknown>, status = 200, body: unknown = items) => {
    const f = new Faults();
    f.set({ shortList: { pathPattern: '/v1/load-balancers', count: 1, ...rule } });
    return { first: f.shortenList('GET', '/v1/load-balancers', '/v1/load-balancers', status, body), remaining: f.describe().remaining };
  };

  test.each([
    [{ empty: true }, []],
    [{ dropUuid: 'b' }, [{ uuid: 'a' }, { uuid: 'c' }]],
    [{ dropUuid: 'B' }, [{ uuid: 'a' }, { uuid: 'c' }]],
    [{ dropUuid: 'x' }, items],
    [{ dropFirst: 2 }, [{ uuid: 'c' }]],
    [{ dropLast: 1 }, [{ uuid: 'a' }, { uuid: 'b' }]],
    [{ dropLast: 5 }, []],
  ])('%j leaves %j, and the rule is spent', (rule, expected) => {
    expect(shorten(rule)).toEqual({ first: expected, remaining: [0] });
  });

  test('a floating IP (no uuid) is named by its address', () => {
    const fips = [{ network: '192.0.2.1/32' }, { network: '2001:db8::1/128' }];
    expect(shorten({ dropUuid: '2001:db8::1' }, 200, fips).first).toEqual([{ network: '192.0.2.1/32' }]);
  });

  test.each([
    ['an error answer', 404, { detail: 'Not found.' }],
    ['one object', 200, { uuid: 'a' }],
  ])('%s is left alone and uses up nothing', (_name, status, body) => {
    expect(shorten({ empty: true }, status, body)).toEqual({ first: undefined, remaining: [1] });
  });
});

describe('invalid configurations change nothing', () => {
  test.each([
    [{ shortList: { pathPattern: '/v1/**' } }, 'faults.shortList[0]: expected exactly one of empty, dropUuid, dropFirst, dropLast, got none'],
    [{ shortList: { pathPattern: '/v1/**', empty: false } }, 'faults.shortList[0].empty: expected true'],
    [{ shortList: { pathPattern: '/v1/**', dropFirst: 0 } }, 'faults.shortList[0].dropFirst: expected a whole number ≥ 1'],
    [{ hang: { pathPattern: '/v1/**', forMs: -1 } }, 'faults.hang[0].forMs: expected a number of milliseconds ≥ 0 (leave it out to hang until the client gives up)'],
    [{ connectionReset: [{ pathPattern: '/v1/**' }, { pathPattern: 'v1' }] }, 'faults.connectionReset[1].pathPattern: expected a path pattern starting with / (e.g. /v1/load-balancers/**)'],
    [{ hang: { pathPattern: '/v1/**', status: 500 } }, 'faults.hang[0]: unknown field "status" (expected one of: pathPattern, methods, count, afterApplying, forMs)'],
  ])('%j', (config, message) => {
    const f = new Faults();
    f.set({ latencyMs: 5 });
    expect(() => f.set(config)).toThrow(new FaultConfigError(message));
    expect(f.describe()).toEqual({ latencyMs: 5, remaining: [] });
  });
});
