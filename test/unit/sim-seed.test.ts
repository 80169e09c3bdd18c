// Seed parsing and validation: the example seed is valid, and each kind of mistake gives an error
// naming the source, the entry and the problem.

import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { parseSeed } from '../../src/sim/index.js';
import { seededUuid, validateSeed } from '../../src/sim/seed.js';

const NETWORK = `
networks:
  - name: k8s-private
    zone: rma1
    subnets: [{cidr: 10.100.0.0/24}]
`;

function problemOf(yaml: string): string {
  try {
    parseSeed(yaml, 'examples/x.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('the seed was accepted');
}

describe('parseSeed', () => {
  test('the shipped example is valid: three servers in rma1, two floating IPs', () => {
    const text = readFileSync('examples/sim-seed.yaml', 'utf8');
    const seed = parseSeed(text, 'examples/sim-seed.yaml');
    expect(seed.servers?.map((s) => s.name)).toEqual(['node-1', 'node-2', 'node-3']);
    expect(seed.servers?.every((s) => s.zone === 'rma1')).toBe(true);
    expect(seed.floating_ips).toHaveLength(2);
    const valid = validateSeed(seed, 'examples/sim-seed.yaml');
    for (const server of valid.servers) {
      const publicAddresses = server.interfaces.find((i) => i.type === 'public')!.addresses;
      expect(publicAddresses.map((a) => a.version)).toEqual([4, 6]);
      const privateInterface = server.interfaces.find((i) => i.type === 'private');
      expect(privateInterface?.type === 'private' && privateInterface.addresses.length).toBe(1);
    }
  });

  test('an empty document is an empty cloud; JSON is accepted', () => {
    expect(parseSeed('', 'empty.yaml')).toEqual({});
    const json = JSON.stringify({ networks: [{ name: 'n', zone: 'lpg1', subnets: [{ cidr: '10.0.0.0/24' }] }] });
    expect(parseSeed(json, 'seed.json').networks?.[0]?.name).toBe('n');
  });

  test('UUIDs are generated from names, stable across runs, and given ones are kept', () => {
    const seed = `${NETWORK}
servers:
  - {name: a, flavor: flex-4-1, zone: rma1}
  - {name: b, flavor: flex-4-1, zone: rma1, uuid: 0B6E7C6B-9E48-4F3B-8D0E-6E5F6C1D2A3B}
`;
    const first = validateSeed(parseSeed(seed, 's'), 's');
    const second = validateSeed(parseSeed(seed, 's'), 's');
    expect(first.servers[0]!.uuid).toBe(second.servers[0]!.uuid);
    expect(first.servers[0]!.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.servers[1]!.uuid).toBe('0b6e7c6b-9e48-4f3b-8d0e-6e5f6c1d2a3b');
    expect(seededUuid('x')).not.toBe(seededUuid('y'));
  });

  test('servers with the same name get different UUIDs', () => {
    const valid = validateSeed(
      { servers: [{ name: 'twin', flavor: 'flex-4-1', zone: 'rma1' }, { name: 'twin', flavor: 'flex-4-1', zone: 'rma1' }] },
      's',
    );
    expect(new Set(valid.servers.map((s) => s.uuid)).size).toBe(2);
  });

  test('flavors expand to the API object; IPv6 addresses are normalised', () => {
    const valid = validateSeed(
      {
        servers: [
          {
            name: 'n',
            flavor: 'plus-32-16',
            zone: 'rma1',
            interfaces: [{ type: 'public', addresses: ['2a06:c01:1:1:0:0:0:11', '5.102.145.11'] }],
          },
        ],
      },
      's',
    );
    expect(valid.servers[0]!.flavor).toEqual({ slug: 'plus-32-16', name: 'Plus-32-16', vcpu_count: 16, memory_gb: 32 });
    expect(valid.servers[0]!.interfaces[0]!.addresses.map((a) => ('ip' in a ? a.ip.text : a.text))).toEqual([
      '5.102.145.11',
      '2a06:c01:1:1::11',
    ]);
  });

  test.each([
    {
      name: 'private address outside every subnet of its network',
      yaml: `${NETWORK}
servers:
  - {name: node-1, flavor: flex-4-2, zone: rma1}
  - {name: node-2, flavor: flex-4-2, zone: rma1}
  - name: node-3
    flavor: flex-4-2
    zone: rma1
    interfaces:
      - {type: public, addresses: [5.102.145.13]}
      - {type: private, network: k8s-private, addresses: [10.9.9.9]}
`,
      message: 'examples/x.yaml: servers[2] (node-3): interface 1: address 10.9.9.9 is not inside any subnet of network k8s-private',
    },
    {
      name: 'unknown network',
      yaml: `servers: [{name: a, flavor: flex-4-1, zone: rma1, interfaces: [{type: private, network: nope, addresses: []}]}]`,
      message: 'examples/x.yaml: servers[0] (a): interface 0: network "nope" is not a network of this seed',
    },
    {
      name: 'unknown zone',
      yaml: `servers: [{name: a, flavor: flex-4-1, zone: zrh1}]`,
      message: 'examples/x.yaml: servers[0] (a): zone "zrh1" is not a cloudscale zone (expected one of: rma1, lpg1)',
    },
    {
      name: 'bad flavor',
      yaml: `servers: [{name: a, flavor: large, zone: rma1}]`,
      message: 'examples/x.yaml: servers[0] (a): flavor "large" is not a flavor slug like flex-4-2 or plus-32-16',
    },
    {
      name: 'missing name',
      yaml: `servers: [{flavor: flex-4-1, zone: rma1}]`,
      message: 'examples/x.yaml: servers[0]: "name" is required',
    },
    {
      name: 'bad status',
      yaml: `servers: [{name: a, flavor: flex-4-1, zone: rma1, status: paused}]`,
      message: 'examples/x.yaml: servers[0] (a): status "paused" must be running or stopped',
    },
    {
      name: 'address with a prefix length',
      yaml: `servers: [{name: a, flavor: flex-4-1, zone: rma1, interfaces: [{type: public, addresses: [5.102.145.11/24]}]}]`,
      message:
        'examples/x.yaml: servers[0] (a): interface 0: "5.102.145.11/24" is not an IP address (write addresses without a prefix length)',
    },
    {
      name: 'address used twice',
      yaml: `servers:
  - {name: a, flavor: flex-4-1, zone: rma1, interfaces: [{type: public, addresses: [5.102.145.11]}]}
  - {name: b, flavor: flex-4-1, zone: rma1, interfaces: [{type: public, addresses: [5.102.145.11]}]}`,
      message: 'examples/x.yaml: servers[1] (b): interface 0: address 5.102.145.11 is already used by servers[0] (a)',
    },
    {
      name: 'bad interface type',
      yaml: `servers: [{name: a, flavor: flex-4-1, zone: rma1, interfaces: [{type: wan}]}]`,
      message: 'examples/x.yaml: servers[0] (a): interface 0: type "wan" must be public or private',
    },
    {
      name: 'network in another zone than the server',
      yaml: `${NETWORK}
servers: [{name: a, flavor: flex-4-1, zone: lpg1, interfaces: [{type: private, network: k8s-private, addresses: [10.100.0.5]}]}]`,
      message: 'examples/x.yaml: servers[0] (a): interface 0: network k8s-private is in zone rma1, the server in lpg1',
    },
    {
      name: 'subnet with host bits',
      yaml: `networks: [{name: n, zone: rma1, subnets: [{cidr: 10.0.0.1/24}]}]`,
      message: 'examples/x.yaml: networks[0] (n): subnets[0]: "10.0.0.1/24" is not a network in CIDR notation (host bits must be zero)',
    },
    {
      name: 'subnet smaller than /24',
      yaml: `networks: [{name: n, zone: rma1, subnets: [{cidr: 10.0.0.0/28}]}]`,
      message: 'examples/x.yaml: networks[0] (n): subnets[0]: 10.0.0.0/28 is smaller than /24, which cloudscale does not allow',
    },
    {
      name: 'overlapping subnets in one network',
      yaml: `networks: [{name: n, zone: rma1, subnets: [{cidr: 10.0.0.0/16}, {cidr: 10.0.1.0/24}]}]`,
      message: 'examples/x.yaml: networks[0] (n): subnets[1]: 10.0.1.0/24 overlaps subnet 10.0.0.0/16',
    },
    {
      name: 'duplicate network name',
      yaml: `networks: [{name: n, zone: rma1}, {name: n, zone: rma1}]`,
      message: 'examples/x.yaml: networks[1] (n): another network is already named "n" (servers refer to networks by name)',
    },
    {
      name: 'floating IP that is not a single address',
      yaml: `floating_ips: [{network: 5.102.150.0/24, region: rma}]`,
      message: 'examples/x.yaml: floating_ips[0] (5.102.150.0/24): "5.102.150.0/24" must be an IPv4 /32, an IPv6 /128 or an IPv6 /56 network',
    },
    {
      name: 'regional floating IP without region',
      yaml: `floating_ips: [{network: 5.102.150.1/32}]`,
      message: 'examples/x.yaml: floating_ips[0] (5.102.150.1/32): a regional floating IP needs a "region" (rma or lpg)',
    },
    {
      name: 'global floating IP with region',
      yaml: `floating_ips: [{network: 5.102.150.1/32, type: global, region: rma}]`,
      message: 'examples/x.yaml: floating_ips[0] (5.102.150.1/32): a global floating IP has no region',
    },
    {
      name: 'floating IP assigned to an unknown server',
      yaml: `floating_ips: [{network: 5.102.150.1, region: rma, server: ghost}]`,
      message: 'examples/x.yaml: floating_ips[0] (5.102.150.1): server "ghost" is not a server of this seed',
    },
    {
      name: 'typo in a field name',
      yaml: `servers: [{name: a, flavour: flex-4-1, flavor: flex-4-1, zone: rma1}]`,
      message: 'examples/x.yaml: servers[0] (a): unknown field "flavour" (expected one of: name, uuid, flavor, zone, status, tags, interfaces)',
    },
    {
      name: 'not a mapping',
      yaml: `- a\n- b`,
      message: 'examples/x.yaml: the seed must be a mapping with "networks", "servers" and "floating_ips"',
    },
    {
      name: 'a list that is not a list',
      yaml: `servers: {name: a}`,
      message: 'examples/x.yaml: seed: "servers" must be a list',
    },
    {
      name: 'bad UUID',
      yaml: `servers: [{name: a, uuid: 1234, flavor: flex-4-1, zone: rma1}]`,
      message: 'examples/x.yaml: servers[0] (a): "uuid" must be a string',
    },
  ])('$name', ({ yaml, message }) => {
    expect(problemOf(yaml)).toBe(message);
  });

  test('several problems are reported together', () => {
    const message = problemOf(`servers: [{name: a, flavor: big, zone: nowhere}]`);
    expect(message).toBe(
      [
        'examples/x.yaml: 2 problems:',
        '  servers[0] (a): flavor "big" is not a flavor slug like flex-4-2 or plus-32-16',
        '  servers[0] (a): zone "nowhere" is not a cloudscale zone (expected one of: rma1, lpg1)',
      ].join('\n'),
    );
  });

  test('a YAML syntax error names the file and the line', () => {
    expect(problemOf('servers:\n  - name: [a\n')).toMatch(/^examples\/x\.yaml: not valid YAML or JSON \(line \d+, column \d+\): /);
  });

  test('every seed error carries a hint', () => {
    try {
      parseSeed('servers: 3', 'x.yaml');
    } catch (error) {
      expect((error as ConfigError).hint).toContain('docs/sim.md');
      return;
    }
    throw new Error('accepted');
  });
});
