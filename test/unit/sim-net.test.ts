// Pure helpers of the simulator: addresses and CIDRs, query parsing, tag filters, fault globs.

import { describe, expect, test } from 'vitest';
import { matchesTagFilters } from '../../src/sim/api.js';
import { globToRegex } from '../../src/sim/faults.js';
import { cidrContains, firstFreeAddress, formatIp, parseCidr, parseIp } from '../../src/sim/net.js';
import { parseQuery } from '../../src/sim/http.js';

describe('addresses', () => {
  test.each([
    ['10.1.2.3', '10.1.2.3'],
    ['2a06:c01:1:1:0:0:0:11', '2a06:c01:1:1::11'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::', '::'],
    ['::1', '::1'],
    ['fe80::', 'fe80::'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:3:4:5:6'],
  ])('parseIp(%s) → %s', (input, canonical) => {
    expect(parseIp(input)?.text).toBe(canonical);
  });

  test.each(['10.1.2', '10.1.2.3/32', 'node-1', '', '2001:db8::g'])('parseIp(%s) is not an address', (input) => {
    expect(parseIp(input)).toBeUndefined();
  });

  test('formatIp round-trips through parseIp', () => {
    const ip = parseIp('2a06:c01:1:148::a')!;
    expect(formatIp(6, ip.value)).toBe('2a06:c01:1:148::a');
  });

  test.each([
    ['10.100.0.0/24', { strict: true }, '10.100.0.0/24'],
    ['10.100.0.7/24', {}, '10.100.0.0/24'],
    ['10.100.0.7/24', { strict: true }, undefined],
    ['2a06:c01:1:1::/64', { strict: true }, '2a06:c01:1:1::/64'],
    ['1.1.1.1', {}, undefined],
    ['1.1.1.1/33', {}, undefined],
    ['1.1.1.1/x', {}, undefined],
    ['0.0.0.0/0', { strict: true }, '0.0.0.0/0'],
  ])('parseCidr(%s, %o) → %s', (input, options, expected) => {
    expect(parseCidr(input, options)?.text).toBe(expected);
  });

  test('cidrContains respects prefix and version', () => {
    const network = parseCidr('10.100.0.0/24')!;
    expect(cidrContains(network, parseIp('10.100.0.255')!)).toBe(true);
    expect(cidrContains(network, parseIp('10.100.1.0')!)).toBe(false);
    expect(cidrContains(network, parseIp('::a64:0')!)).toBe(false);
    expect(cidrContains(parseCidr('2a06:c01::/32')!, parseIp('2a06:c01:1::1')!)).toBe(true);
  });

  test('firstFreeAddress skips taken addresses and stops before the IPv4 broadcast', () => {
    const network = parseCidr('192.0.2.0/30')!;
    expect(firstFreeAddress(network, 1n, () => false)?.text).toBe('192.0.2.1');
    expect(firstFreeAddress(network, 1n, (a) => a === '192.0.2.1')?.text).toBe('192.0.2.2');
    expect(firstFreeAddress(network, 1n, (a) => a !== '192.0.2.3')).toBeUndefined();
  });
});

describe('query strings and tag filters', () => {
  test.each([
    ['', []],
    ['tag:env=prod', [['tag:env', 'prod']]],
    ['tag%3Aenv=prod', [['tag:env', 'prod']]],
    ['tag:env', [['tag:env', undefined]]],
    ['tag:env=', [['tag:env', '']]],
    ['tag:a=b+c&tag:d=%2F', [['tag:a', 'b c'], ['tag:d', '/']]],
  ])('parseQuery(%s)', (raw, expected) => {
    expect(parseQuery(raw)).toEqual(expected);
  });

  const tags = { env: 'prod', team: '' };
  test.each([
    ['no filter', '', true],
    ['exact value', 'tag:env=prod', true],
    ['other value', 'tag:env=dev', false],
    ['key only', 'tag:env', true],
    ['key with empty value matches any value', 'tag:env=', true],
    ['missing key', 'tag:owner', false],
    ['empty tag value matches key-only filter', 'tag:team', true],
    ['filters are ANDed', 'tag:env=prod&tag:owner', false],
    ['non-tag parameters are ignored', 'limit=5', true],
  ])('%s', (_name, query, expected) => {
    expect(matchesTagFilters(parseQuery(query), tags)).toBe(expected);
  });
});

describe('fault path globs', () => {
  test.each([
    ['/v1/load-balancers', '/v1/load-balancers', true],
    ['/v1/load-balancers', '/v1/load-balancers/', true],
    ['/v1/load-balancers', '/v1/load-balancers/pools', false],
    ['/v1/load-balancers/*', '/v1/load-balancers/pools', true],
    ['/v1/load-balancers/*', '/v1/load-balancers/pools/x/members', false],
    ['/v1/load-balancers/**', '/v1/load-balancers/pools/x/members', true],
    ['/v1/**', '/v1/servers', true],
    ['/v1/floating-ips/*', '/v1/floating-ips/2a06:c01::1', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(globToRegex(pattern).test(path)).toBe(expected);
  });
});
