import { describe, expect, test } from 'vitest';
import type { Server, ServerInterface } from '../../src/core/cloudscale/types.js';
import {
  applyProvidedNodeIp,
  cloudAddresses,
  desiredLabels,
  ipKey,
  regionOfZone,
  sameAddresses,
} from '../../src/core/nodes/metadata.js';
import type { NodeAddress } from '../../src/core/nodes/types.js';

function iface(type: 'public' | 'private', ...addresses: string[]): ServerInterface {
  return {
    type,
    network: { href: 'https://api.example/v1/networks/n', uuid: 'n', name: type },
    addresses: addresses.map((address) => ({
      version: address.includes(':') ? 6 : 4,
      address,
      prefix_length: address.includes(':') ? 64 : 24,
      gateway: null,
      reverse_ptr: null,
      subnet: { href: 'https://api.example/v1/subnets/s', uuid: 's', cidr: '10.0.0.0/8' },
    })),
  };
}

function server(overrides: Partial<Server> = {}): Server {
  return {
    href: 'https://api.example/v1/servers/u',
    uuid: '47cec963-fcd2-482f-bdb6-24461b2d47b1',
    name: 'k8test-worker-1',
    status: 'running',
    zone: { slug: 'lpg1' },
    flavor: { slug: 'plus-32-16', name: 'Plus-32-16', vcpu_count: 16, memory_gb: 32 },
    image: null,
    interfaces: [
      iface('public', '203.0.113.123', '2001:db8:1000:1165::123'),
      iface('private', '10.1.1.123'),
    ],
    created_at: '2019-05-27T16:45:32Z',
    tags: {},
    ...overrides,
  };
}

const HOST = { type: 'Hostname', address: 'k8test-worker-1' };
const EXT4 = { type: 'ExternalIP', address: '203.0.113.123' };
const EXT6 = { type: 'ExternalIP', address: '2001:db8:1000:1165::123' };
const INT4 = { type: 'InternalIP', address: '10.1.1.123' };

describe('regionOfZone', () => {
  test.each([
    ['rma1', 'rma'],
    ['lpg1', 'lpg'],
    ['abc12', 'abc'],
    ['rma', 'rma'],
  ])('%s → %s', (zone, region) => expect(regionOfZone(zone)).toBe(region));
});

describe('desiredLabels', () => {
  test('GA and beta labels with equal values', () => {
    expect(desiredLabels(server({ zone: { slug: 'rma1' } }))).toEqual({
      'node.kubernetes.io/instance-type': 'plus-32-16',
      'beta.kubernetes.io/instance-type': 'plus-32-16',
      'topology.kubernetes.io/zone': 'rma1',
      'failure-domain.beta.kubernetes.io/zone': 'rma1',
      'topology.kubernetes.io/region': 'rma',
      'failure-domain.beta.kubernetes.io/region': 'rma',
    });
  });
});

describe('cloudAddresses', () => {
  test.each<{ name: string; server: Server; expected: NodeAddress[] }>([
    {
      name: 'hostname, public v4 + v6 as ExternalIP, private as InternalIP, in API order',
      server: server(),
      expected: [HOST, EXT4, EXT6, INT4],
    },
    {
      name: 'hostname is the server name even when the node is called otherwise',
      server: server({ name: 'other-name', interfaces: [] }),
      expected: [{ type: 'Hostname', address: 'other-name' }],
    },
    {
      name: 'private interface first stays first; IPv6 on a private interface is InternalIP',
      server: server({
        interfaces: [iface('private', '10.0.0.5', 'fd00::5'), iface('public', '198.51.100.7')],
      }),
      expected: [
        HOST,
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'InternalIP', address: 'fd00::5' },
        { type: 'ExternalIP', address: '198.51.100.7' },
      ],
    },
    {
      name: 'an interface without addresses contributes nothing',
      server: server({ interfaces: [iface('private'), iface('public', '198.51.100.7')] }),
      expected: [HOST, { type: 'ExternalIP', address: '198.51.100.7' }],
    },
  ])('$name', ({ server, expected }) => {
    expect(cloudAddresses(server)).toEqual(expected);
  });
});

describe('applyProvidedNodeIp', () => {
  const cloud = [HOST, EXT4, EXT6, INT4, { type: 'InternalIP', address: '10.2.2.2' }];

  test.each<{ name: string; annotation: string | undefined; expected: NodeAddress[] }>([
    { name: 'no annotation: cloud order unchanged', annotation: undefined, expected: cloud },
    {
      name: 'a private IP comes first; the other InternalIPs are dropped',
      annotation: '10.2.2.2',
      expected: [{ type: 'InternalIP', address: '10.2.2.2' }, HOST, EXT4, EXT6],
    },
    {
      name: 'a public IP comes first; the other ExternalIP (v6) is dropped',
      annotation: '203.0.113.123',
      expected: [EXT4, HOST, INT4, { type: 'InternalIP', address: '10.2.2.2' }],
    },
    {
      name: 'a dual-stack pair: both first, in annotation order',
      annotation: '2001:db8:1000:1165::123,203.0.113.123',
      expected: [EXT6, EXT4, HOST, INT4, { type: 'InternalIP', address: '10.2.2.2' }],
    },
    {
      name: 'IPv6 is compared as an address, not as text',
      annotation: '2001:0db8:1000:1165:0:0:0:0123',
      expected: [EXT6, HOST, INT4, { type: 'InternalIP', address: '10.2.2.2' }],
    },
    {
      name: 'IPv4 with leading zeros matches (sloppy parse)',
      annotation: '010.001.001.123',
      expected: [INT4, HOST, EXT4, EXT6],
    },
  ])('$name', ({ annotation, expected }) => {
    expect(applyProvidedNodeIp(cloud, annotation)).toEqual({ ok: true, addresses: expected });
  });

  test.each<{ name: string; annotation: string; error: RegExp }>([
    { name: 'an IP the server does not have', annotation: '192.0.2.99', error: /not an address of the server/ },
    { name: 'garbage', annotation: 'not-an-ip', error: /cannot parse "not-an-ip"/ },
    { name: 'spaces are not trimmed', annotation: '10.1.1.123, 2001:db8:1000:1165::123', error: /cannot parse/ },
    { name: 'two IPv4', annotation: '10.1.1.123,10.2.2.2', error: /single IP or a dual-stack pair/ },
    { name: 'three IPs', annotation: '10.1.1.123,2001:db8:1000:1165::123,10.2.2.2', error: /single IP or a dual-stack pair/ },
    { name: 'unspecified in a pair', annotation: '0.0.0.0,::', error: /cannot include 0.0.0.0/ },
    { name: 'empty', annotation: '', error: /cannot parse ""/ },
  ])('refused: $name', ({ annotation, error }) => {
    const result = applyProvidedNodeIp(cloud, annotation);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(error);
  });
});

describe('ipKey', () => {
  test.each([
    ['10.0.0.1', '10.0.0.1'],
    ['010.000.000.001', '10.0.0.1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['256.0.0.1', undefined],
    ['1.2.3', undefined],
    ['host.example', undefined],
    ['fe80::1%eth0', undefined],
  ])('%s → %s', (text, key) => expect(ipKey(text)).toBe(key));
});

describe('sameAddresses', () => {
  test('order matters', () => {
    expect(sameAddresses([EXT4, INT4], [EXT4, INT4])).toBe(true);
    expect(sameAddresses([EXT4, INT4], [INT4, EXT4])).toBe(false);
    expect(sameAddresses([EXT4], [EXT4, INT4])).toBe(false);
    expect(sameAddresses([EXT4], [{ ...EXT4, type: 'InternalIP' }])).toBe(false);
  });
});
