import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import type { Server, ServerInterface, Subnet, SubnetStub } from '../../src/core/cloudscale/types.js';
import { AnnotationError } from '../../src/core/errors.js';
import { parseLbAnnotations } from '../../src/core/lb/annotations.js';
import {
  defaultLbName,
  desiredLoadBalancer,
  ingressEqual,
  ingressFromVips,
  ingressSettings,
  listenerName,
  LIVEZ_HTTP,
  memberName,
  poolName,
  type DesiredInput,
  type DesiredMember,
  type DesiredPool,
} from '../../src/core/lb/desired.js';
import type { NodeServer } from '../../src/core/lb/nodes.js';

const P = 'k8s.cloudscale.ch/';
const SUBNET_A = { href: 'https://api.example/v1/subnets/aaaa0001-0000-4000-8000-000000000001', uuid: 'aaaa0001-0000-4000-8000-000000000001', cidr: '10.0.0.0/24' };
const SUBNET_B = { href: 'https://api.example/v1/subnets/bbbb0001-0000-4000-8000-000000000001', uuid: 'bbbb0001-0000-4000-8000-000000000001', cidr: '10.1.0.0/24' };
const SUBNET_V6 = { href: 'https://api.example/v1/subnets/cccc0001-0000-4000-8000-000000000001', uuid: 'cccc0001-0000-4000-8000-000000000001', cidr: 'fd00::/64' };
const PUBLIC = { href: 'https://api.example/v1/subnets/dddd', uuid: 'dddd0001-0000-4000-8000-000000000001', cidr: '192.0.2.0/24' };
/** The project's private subnets, as GET /v1/subnets lists them. */
const PROJECT_SUBNETS: Subnet[] = [SUBNET_A, SUBNET_B, SUBNET_V6].map((stub: SubnetStub) => ({
  ...stub,
  network: { href: 'https://api.example/v1/networks/n', uuid: 'n', name: 'private' },
  gateway_address: null,
  dns_servers: [],
  tags: {},
}));

function iface(type: 'public' | 'private', addresses: [string, typeof SUBNET_A | null][]): ServerInterface {
  return {
    type,
    network: { href: 'https://api.example/v1/networks/n', uuid: 'n', name: type },
    addresses: addresses.map(([address, subnet]) => ({
      version: address.includes(':') ? 6 : 4,
      address,
      prefix_length: 24,
      gateway: null,
      reverse_ptr: null,
      subnet: subnet as typeof SUBNET_A,
    })),
  };
}

function server(name: string, zone: string, interfaces: ServerInterface[]): Server {
  return {
    href: `https://api.example/v1/servers/${name}`,
    uuid: `uuid-${name}`,
    name,
    status: 'running',
    zone: { slug: zone },
    flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
    image: null,
    interfaces,
    created_at: '2024-01-01T00:00:00Z',
    tags: {},
  };
}

const worker1 = server('worker-1', 'rma1', [iface('public', [['192.0.2.1', PUBLIC]]), iface('private', [['10.0.0.1', SUBNET_A]])]);
const worker2 = server('worker-2', 'rma1', [iface('public', [['192.0.2.2', PUBLIC]]), iface('private', [['10.0.0.2', SUBNET_A]])]);
const nodes: NodeServer[] = [
  { node: 'worker-1', server: worker1 },
  { node: 'worker-2', server: worker2 },
];

function service(ports: V1ServicePort[], annotations: Record<string, string> = {}, spec: Partial<V1Service['spec']> = {}): V1Service {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'deadbeef', annotations },
    spec: { type: 'LoadBalancer', ports, ...spec },
  };
}

function desired(svc: V1Service, nodeServers: NodeServer[] = nodes) {
  const parsed = parseLbAnnotations(svc.metadata?.annotations);
  if (!parsed.ok) throw new Error('bad annotations in test');
  const input: DesiredInput = { service: svc, annotations: parsed.values, nodes: nodeServers, subnets: PROJECT_SUBNETS, clusterId: 'cluster-1' };
  return desiredLoadBalancer(input);
}

function okDesired(svc: V1Service, nodeServers: NodeServer[] = nodes) {
  const result = desired(svc, nodeServers);
  if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('\n'));
  return result;
}

function member(address: string, port: number, node: string, subnet = SUBNET_A, monitorPort = port): DesiredMember {
  return { name: memberName(address, port), enabled: true, protocol_port: port, monitor_port: monitorPort, address, subnet, node };
}

const TIMEOUTS = { timeout_client_data_ms: 50000, timeout_member_connect_ms: 5000, timeout_member_data_ms: 50000 };
const TCP_MONITOR = { type: 'tcp', delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3, http: null } as const;

describe('names (identity: changing them recreates resources)', () => {
  test.each<[string, string]>([
    [poolName('TCP', undefined), 'tcp'],
    [poolName('TCP', ''), 'tcp'],
    [poolName('UDP', 'foo'), 'udp/foo'],
    [poolName('UDP', 'FOO'), 'udp/FOO'],
    [memberName('10.0.0.1', 80), '10.0.0.1:80'],
    [memberName('::1', 443), '[::1]:443'],
    [listenerName('TCP', 80), 'tcp/80'],
    [defaultLbName('deadbeef'), 'k8s-service-deadbeef'],
  ])('%s', (actual, expected) => expect(actual).toBe(expected));
});

describe('desiredLoadBalancer', () => {
  test('TestDesiredService: two named TCP ports', () => {
    const result = okDesired(
      service([
        { name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 },
        { name: 'https', protocol: 'TCP', port: 443, nodePort: 30443 },
      ]),
    );
    expect(result.warnings).toEqual([]);
    expect(result.lb).toEqual({
      name: 'k8s-service-deadbeef',
      flavor: 'lb-standard',
      zone: 'rma1',
      vipAddresses: [],
      floatingIps: [],
      allowedCidrsSource: 'k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs',
      tags: {
        'k8s.cloudscale.ch/cluster': 'cluster-1',
        'k8s.cloudscale.ch/service-uid': 'deadbeef',
        'k8s.cloudscale.ch/service': 'default/web',
      },
      pools: [
        {
          name: 'tcp/http',
          algorithm: 'round_robin',
          protocol: 'tcp',
          port: { name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 },
          members: [member('10.0.0.1', 30080, 'worker-1'), member('10.0.0.2', 30080, 'worker-2')],
          listener: { name: 'tcp/80', protocol: 'tcp', protocol_port: 80, allowed_cidrs: [], ...TIMEOUTS },
          monitor: TCP_MONITOR,
        },
        {
          name: 'tcp/https',
          algorithm: 'round_robin',
          protocol: 'tcp',
          port: { name: 'https', protocol: 'TCP', port: 443, nodePort: 30443 },
          members: [member('10.0.0.1', 30443, 'worker-1'), member('10.0.0.2', 30443, 'worker-2')],
          listener: { name: 'tcp/443', protocol: 'tcp', protocol_port: 443, allowed_cidrs: [], ...TIMEOUTS },
          monitor: TCP_MONITOR,
        },
      ],
    } satisfies typeof result.lb);
  });

  test('TestDesiredServiceUDP: a UDP port with udp-connect monitor annotations', () => {
    const result = okDesired(
      service([{ name: 'udp', protocol: 'UDP', port: 53, nodePort: 30053 }], {
        [`${P}loadbalancer-health-monitor-type`]: 'udp-connect',
        [`${P}loadbalancer-health-monitor-delay-s`]: '3',
        [`${P}loadbalancer-health-monitor-timeout-s`]: '2',
      }),
    );
    expect(result.lb.pools).toEqual([
      {
        name: 'udp/udp',
        algorithm: 'round_robin',
        protocol: 'udp',
        port: { name: 'udp', protocol: 'UDP', port: 53, nodePort: 30053 },
        members: [member('10.0.0.1', 30053, 'worker-1'), member('10.0.0.2', 30053, 'worker-2')],
        listener: { name: 'udp/53', protocol: 'udp', protocol_port: 53, allowed_cidrs: [], ...TIMEOUTS },
        monitor: { type: 'udp-connect', delay_s: 3, timeout_s: 2, up_threshold: 2, down_threshold: 3, http: null },
      },
    ] satisfies DesiredPool[]);
  });

  test('TestDesiredServiceDualProtocol: TCP and UDP on port 53', () => {
    const result = okDesired(
      service(
        [
          { name: 'udp', protocol: 'UDP', port: 53, nodePort: 30053 },
          { name: 'tcp', protocol: 'TCP', port: 53, nodePort: 30054 },
        ],
        { [`${P}loadbalancer-health-monitor-type`]: 'udp-connect' },
      ),
    );
    expect(result.lb.pools.map((p) => [p.name, p.protocol, p.listener.name, p.listener.protocol, p.monitor.type])).toEqual([
      ['udp/udp', 'udp', 'udp/53', 'udp', 'udp-connect'],
      ['tcp/tcp', 'tcp', 'tcp/53', 'tcp', 'udp-connect'],
    ]);
  });

  test('an unnamed port gives pool "tcp"; the protocol defaults to TCP', () => {
    const result = okDesired(service([{ port: 80, nodePort: 30080 }]));
    expect(result.lb.pools.map((p) => [p.name, p.listener.name])).toEqual([['tcp', 'tcp/80']]);
  });

  test('externalTrafficPolicy Local: http monitor on /livez 1.0, members checked on healthCheckNodePort', () => {
    const result = okDesired(
      service([{ name: 'http', port: 80, nodePort: 30080 }], {}, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 }),
    );
    const [pool] = result.lb.pools;
    expect(pool!.monitor).toEqual({ type: 'http', delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3, http: LIVEZ_HTTP });
    expect(LIVEZ_HTTP).toEqual({ expected_codes: ['200'], method: 'GET', url_path: '/livez', version: '1.0', host: null });
    expect(pool!.members).toEqual([member('10.0.0.1', 30080, 'worker-1', SUBNET_A, 31999), member('10.0.0.2', 30080, 'worker-2', SUBNET_A, 31999)]);
    expect(result.warnings).toEqual([]);
  });

  test('externalTrafficPolicy Local keeps the user http options (escape hatch) with a warning', () => {
    const result = okDesired(
      service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-health-monitor-http`]: '{"url_path":"/ready"}' }, {
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31999,
      }),
    );
    expect(result.lb.pools[0]!.monitor.http).toEqual({ expected_codes: ['200'], method: 'GET', url_path: '/ready', version: '1.1', host: null });
    expect(result.warnings).toEqual([
      { reason: 'AnnotationWarning', message: expect.stringContaining('/livez check that externalTrafficPolicy Local needs is not configured') },
    ]);
  });

  test('http options are dropped (with a warning) for non-HTTP monitor types', () => {
    const result = okDesired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-health-monitor-http`]: '{"url_path":"/x"}' }));
    expect(result.lb.pools[0]!.monitor).toEqual(TCP_MONITOR);
    expect(result.warnings).toEqual([{ reason: 'AnnotationWarning', message: expect.stringContaining('is ignored: the health monitor type is tcp') }]);
  });

  test('http monitor type with http options', () => {
    const result = okDesired(
      service([{ port: 80, nodePort: 30080 }], {
        [`${P}loadbalancer-health-monitor-type`]: 'http',
        [`${P}loadbalancer-health-monitor-http`]: '{"method":"HEAD","host":"example.com"}',
      }),
    );
    expect(result.lb.pools[0]!.monitor.http).toEqual({ expected_codes: ['200'], method: 'HEAD', url_path: '/', version: '1.1', host: 'example.com' });
  });

  test('members: every non-public address with a subnet, IPv6 bracketed; allowed subnets limit them', () => {
    const multi = server('multi', 'rma1', [
      iface('public', [['192.0.2.9', PUBLIC]]),
      iface('private', [
        ['10.0.0.9', SUBNET_A],
        ['fd00::9', SUBNET_V6],
        ['10.9.9.9', null],
      ]),
      iface('private', [['10.1.0.9', SUBNET_B]]),
    ]);
    const ports = [{ port: 80, nodePort: 30080 }];
    const all = okDesired(service(ports), [{ node: 'multi', server: multi }]);
    expect(all.lb.pools[0]!.members).toEqual([
      member('10.0.0.9', 30080, 'multi'),
      member('fd00::9', 30080, 'multi', SUBNET_V6),
      member('10.1.0.9', 30080, 'multi', SUBNET_B),
    ]);
    expect(all.lb.pools[0]!.members[1]!.name).toBe('[fd00::9]:30080');

    const limited = okDesired(service(ports, { [`${P}loadbalancer-listener-allowed-subnets`]: JSON.stringify([SUBNET_B.uuid]) }), [
      { node: 'multi', server: multi },
    ]);
    expect(limited.lb.pools[0]!.members).toEqual([member('10.1.0.9', 30080, 'multi', SUBNET_B)]);

    // A subnet the project does not have would leave the load balancer without members: refused.
    const none = desired(service(ports, { [`${P}loadbalancer-listener-allowed-subnets`]: '["eeee0001-0000-4000-8000-000000000001"]' }), [
      { node: 'multi', server: multi },
    ]);
    expect(none).toEqual({
      ok: false,
      problems: [
        {
          kind: 'subnet-missing',
          subject: `${P}loadbalancer-listener-allowed-subnets`,
          message: `subnet eeee0001-0000-4000-8000-000000000001 of annotation ${P}loadbalancer-listener-allowed-subnets does not exist in this cloudscale project`,
          hint: expect.stringContaining('existing private subnet'),
        },
      ],
    });
  });

  test('TestLimitSubnets: two servers with two subnets each → 4 members, limited → 2', () => {
    const twoSubnets = (name: string, last: number) =>
      server(name, 'rma1', [iface('private', [[`10.0.0.${last}`, SUBNET_A]]), iface('private', [[`10.1.0.${last}`, SUBNET_B]])]);
    const ns = [
      { node: 'a', server: twoSubnets('a', 1) },
      { node: 'b', server: twoSubnets('b', 2) },
    ];
    expect(okDesired(service([{ port: 80, nodePort: 30080 }]), ns).lb.pools[0]!.members).toHaveLength(4);
    const limited = okDesired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-listener-allowed-subnets`]: JSON.stringify([SUBNET_A.uuid]) }), ns);
    expect(limited.lb.pools[0]!.members.map((m) => m.address)).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  test('annotations flow into the load balancer, pools, listeners and monitors', () => {
    const result = okDesired(
      service([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 }], {
        [`${P}loadbalancer-name`]: 'my-lb',
        [`${P}loadbalancer-flavor`]: 'lb-large',
        [`${P}loadbalancer-zone`]: 'lpg1',
        [`${P}loadbalancer-vip-addresses`]: `[{"subnet":"${SUBNET_A.uuid}","address":"10.0.0.100"}]`,
        [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]',
        [`${P}loadbalancer-pool-algorithm`]: 'source_ip',
        [`${P}loadbalancer-pool-protocol`]: 'proxyv2',
        [`${P}loadbalancer-listener-allowed-cidrs`]: '["10.0.0.0/8"]',
        [`${P}loadbalancer-timeout-client-data-ms`]: '1',
        [`${P}loadbalancer-timeout-member-connect-ms`]: '2',
        [`${P}loadbalancer-timeout-member-data-ms`]: '3',
        [`${P}loadbalancer-health-monitor-up-threshold`]: '5',
        [`${P}loadbalancer-health-monitor-down-threshold`]: '6',
      }),
      // No nodes: the members of lpg1 would have to be in lpg1 (checked in the zone tests).
      [],
    );
    const { pools, ...lb } = result.lb;
    expect(lb).toMatchObject({ name: 'my-lb', flavor: 'lb-large', zone: 'lpg1', vipAddresses: [{ subnet: SUBNET_A.uuid, address: '10.0.0.100' }], floatingIps: ['192.0.2.50/32'] });
    expect(pools.map((p) => [p.name, p.algorithm, p.protocol])).toEqual([
      ['tcp/http', 'source_ip', 'proxyv2'],
      ['udp/dns', 'source_ip', 'udp'],
    ]);
    expect(pools[1]!.listener).toEqual({ name: 'udp/53', protocol: 'udp', protocol_port: 53, allowed_cidrs: ['10.0.0.0/8'], timeout_client_data_ms: 1, timeout_member_connect_ms: 2, timeout_member_data_ms: 3 });
    expect(pools[0]!.monitor).toEqual({ ...TCP_MONITOR, up_threshold: 5, down_threshold: 6 });
  });

  describe('zone', () => {
    const lpg = server('worker-3', 'lpg1', [iface('private', [['10.0.0.3', SUBNET_A]])]);
    test('TestDesiredZone: nodes in two zones and no annotation → problem', () => {
      const result = desired(service([{ port: 80, nodePort: 30080 }]), [...nodes, { node: 'worker-3', server: lpg }]);
      expect(result).toEqual({
        ok: false,
        problems: [
          {
            kind: 'zone',
            subject: `${P}loadbalancer-zone`,
            message: 'no load balancer zone set and the selected nodes are in several zones (rma1, lpg1)',
            hint: expect.stringContaining(`Set the annotation ${P}loadbalancer-zone to one of rma1, lpg1`),
          },
        ],
      });
    });
    test('TestDesiredZone: the annotation decides', () => {
      const publicOnly = server('worker-4', 'lpg1', [iface('public', [['192.0.2.4', PUBLIC]])]);
      expect(okDesired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-zone`]: 'rma1' }), [...nodes, { node: 'worker-4', server: publicOnly }]).lb.zone).toBe('rma1');
    });
    test('a zone whose load balancer could not have the nodes as members is refused (the API refuses them after it exists)', () => {
      const result = desired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-zone`]: 'rma1' }), [...nodes, { node: 'worker-3', server: lpg }]);
      expect(result).toEqual({
        ok: false,
        problems: [
          {
            kind: 'zone',
            subject: `${P}loadbalancer-zone`,
            message: "the load balancer's zone is rma1, but the servers of node worker-3 are in lpg1: their addresses cannot be members",
            hint: expect.stringContaining(`Set ${P}loadbalancer-zone to lpg1`),
          },
        ],
      });
      // Every node elsewhere: the issue's `zone: lpg1` with every Node in rma1.
      const all = desired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-zone`]: 'lpg1' }));
      expect(all.ok ? [] : all.problems.map((p) => p.message)).toEqual([
        "the load balancer's zone is lpg1, but the servers of nodes worker-1, worker-2 are in rma1: their addresses cannot be members",
      ]);
    });
    test('vip-addresses: the subnet must exist and a fixed address must lie in it', () => {
      const vips = (value: object[]) => desired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-vip-addresses`]: JSON.stringify(value) }));
      const messages = (result: ReturnType<typeof desired>) => (result.ok ? [] : result.problems.map((p) => p.message));
      expect(vips([{ subnet: SUBNET_A.uuid, address: '10.0.0.50' }]).ok).toBe(true);
      expect(vips([{ subnet: SUBNET_A.uuid.toUpperCase() }]).ok).toBe(true);
      expect(messages(vips([{ subnet: 'eeee0001-0000-4000-8000-000000000001' }]))).toEqual([
        `subnet eeee0001-0000-4000-8000-000000000001 of annotation ${P}loadbalancer-vip-addresses does not exist in this cloudscale project`,
      ]);
      expect(messages(vips([{ subnet: SUBNET_A.uuid, address: '10.1.0.5' }]))).toEqual([
        `address 10.1.0.5 of annotation ${P}loadbalancer-vip-addresses is not in its subnet ${SUBNET_A.uuid} (10.0.0.0/24)`,
      ]);
      expect(messages(vips([{ subnet: SUBNET_V6.uuid, address: 'fd00::1:5' }]))).toEqual([]);
      expect(messages(vips([{ subnet: SUBNET_V6.uuid, address: 'fd01::5' }]))).toHaveLength(1);
    });
    test('listener-allowed-subnets in another spelling names the one the API lists', () => {
      const result = desired(service([{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-listener-allowed-subnets`]: JSON.stringify([SUBNET_A.uuid.toUpperCase()]) }));
      expect(result.ok ? [] : result.problems.map((p) => p.hint)).toEqual([`Write it as the API does: ${SUBNET_A.uuid}.`]);
    });
    test('no nodes and no annotation → no zone (the API default)', () => {
      const result = okDesired(service([{ port: 80, nodePort: 30080 }]), []);
      expect(result.lb.zone).toBeNull();
      expect(result.lb.pools[0]!.members).toEqual([]);
    });
  });

  test('problems for SCTP, nodePort 0 and duplicate pools are all reported', () => {
    const result = desired(
      service([
        { name: 'sctp', protocol: 'SCTP', port: 9, nodePort: 30009 },
        { name: 'a', port: 80 },
        { name: 'b', port: 81, nodePort: 0 },
        { name: 'ok', port: 82, nodePort: 30082 },
      ]),
    );
    expect(result).toEqual({
      ok: false,
      problems: [
        { kind: 'service-spec', subject: 'port sctp/SCTP', message: 'service default/web: cannot use SCTP for port 9, only TCP and UDP are supported', hint: expect.any(String) },
        { kind: 'service-spec', subject: 'port a/TCP', message: 'service default/web: port 80 has no nodePort', hint: expect.stringContaining('allocateLoadBalancerNodePorts') },
        { kind: 'service-spec', subject: 'port b/TCP', message: 'service default/web: port 81 has no nodePort', hint: expect.any(String) },
      ],
    });
  });
});

describe('allowed client networks: the annotation and spec.loadBalancerSourceRanges', () => {
  const KEY = `${P}loadbalancer-listener-allowed-cidrs`;
  const FIELD = 'spec.loadBalancerSourceRanges';
  const port: V1ServicePort[] = [{ name: 'http', port: 80, nodePort: 30080 }];
  const withBoth = (annotation: string | undefined, ranges: string[] | undefined) =>
    desired(service(port, annotation === undefined ? {} : { [KEY]: annotation }, ranges === undefined ? {} : { loadBalancerSourceRanges: ranges }));

  test.each<[string, string | undefined, string[] | undefined, string[], string]>([
    ['neither: everyone', undefined, undefined, [], KEY],
    ['an empty spec list is unset', undefined, [], [], KEY],
    ['the annotation alone', '["192.0.2.0/24"]', undefined, ['192.0.2.0/24'], KEY],
    ['the annotation alone, [] explicitly', '[]', [], [], KEY],
    ['the spec field alone', undefined, ['192.0.2.0/24', '2001:db8::/32'], ['192.0.2.0/24', '2001:db8::/32'], FIELD],
    ['the spec field alone, spaces around entries dropped', undefined, [' 192.0.2.0/24 '], ['192.0.2.0/24'], FIELD],
    ['both, the same CIDRs in another order: the annotation order', '["10.0.0.0/8","192.0.2.0/24"]', ['192.0.2.0/24', '10.0.0.0/8'], ['10.0.0.0/8', '192.0.2.0/24'], `${KEY} and ${FIELD}`],
  ])('%s', (_, annotation, ranges, cidrs, source) => {
    const result = withBoth(annotation, ranges);
    if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('\n'));
    expect(result.lb.pools.map((p) => p.listener.allowed_cidrs)).toEqual([cidrs]);
    expect(result.lb.allowedCidrsSource).toBe(source);
  });

  test.each<[string, string, string[], string]>([
    ['different CIDRs', '["10.0.0.0/8"]', ['192.0.2.0/24'], '["192.0.2.0/24"] and the annotation k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs ["10.0.0.0/8"] both set'],
    ['one more CIDR', '["10.0.0.0/8"]', ['10.0.0.0/8', '192.0.2.0/24'], 'they differ'],
    ['the annotation allows everyone explicitly', '[]', ['192.0.2.0/24'], '[] (everyone) both set'],
  ])('both set and %s: refused, naming both and how to fix it', (_, annotation, ranges, message) => {
    const result = withBoth(annotation, ranges);
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          kind: 'source-ranges-conflict',
          subject: FIELD,
          message: expect.stringContaining(message),
          hint: `Keep one of them: remove the annotation ${KEY} (${FIELD} is the Kubernetes field for it), or remove ${FIELD}, or make both list the same CIDRs.`,
        },
      ],
    });
  });

  test.each<[string, number]>([
    ['10.0.0.1', 0],
    ['010.0.0.0/8', 0],
    ['10.0.0.0/33', 0],
    ['fe80::/129', 0],
    ['bad\u0000', 0],
  ])('an entry %j that is not a CIDR is a problem naming its index', (range, index) => {
    const result = withBoth(undefined, [range]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      {
        kind: 'service-spec',
        subject: `${FIELD}[${index}]`,
        message: expect.stringContaining('is not a CIDR the cloudscale API accepts'),
        hint: expect.stringContaining('192.0.2.0/24'),
      },
    ]);
    expect(result.problems[0]!.message).not.toMatch(/\u0000/);
  });
});

// The ingress a pass writes: the planner reads the annotations with parseLbAnnotations, takes
// ingressSettings from them, and the executor builds the entries from the VIPs it finds.
describe('ingressFromVips(vips, ingressSettings(annotations, minor))', () => {
  const vips = [
    { version: 4 as const, address: '192.0.2.10', subnet: PUBLIC },
    { version: 6 as const, address: '2001:db8::10', subnet: PUBLIC },
  ];
  const ingress = (annotations: Record<string, string>, minor: number | null) => {
    const parsed = parseLbAnnotations(annotations);
    if (!parsed.ok) throw new Error(`annotations rejected: ${parsed.errors.map((e) => e.message).join('; ')}`);
    return ingressFromVips(vips, ingressSettings(parsed.values, minor));
  };
  test.each<[string, Record<string, string>, number | null, unknown]>([
    ['Proxy by default on 1.30', {}, 30, [{ ip: '192.0.2.10', ipMode: 'Proxy' }, { ip: '2001:db8::10', ipMode: 'Proxy' }]],
    ['VIP on request', { [`${P}loadbalancer-ip-mode`]: 'VIP' }, 34, [{ ip: '192.0.2.10', ipMode: 'VIP' }, { ip: '2001:db8::10', ipMode: 'VIP' }]],
    ['no ipMode before 1.30', {}, 29, [{ ip: '192.0.2.10' }, { ip: '2001:db8::10' }]],
    ['no ipMode when the version is unknown', { [`${P}loadbalancer-ip-mode`]: 'VIP' }, null, [{ ip: '192.0.2.10' }, { ip: '2001:db8::10' }]],
    ['force-hostname', { [`${P}loadbalancer-force-hostname`]: 'lb.example.com' }, 34, [{ hostname: 'lb.example.com' }]],
    ['force-hostname ignores a bad ip-mode', { [`${P}loadbalancer-force-hostname`]: 'lb.example.com', [`${P}loadbalancer-ip-mode`]: 'x' }, 34, [{ hostname: 'lb.example.com' }]],
  ])('%s', (_name, annotations, minor, expected) => {
    expect(ingress(annotations, minor)).toEqual(expected);
  });

  test('a bad ip-mode is an AnnotationError naming it, and no ingress is built', () => {
    const parsed = parseLbAnnotations({ [`${P}loadbalancer-ip-mode`]: 'vip' });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]).toBeInstanceOf(AnnotationError);
    expect(parsed.errors[0]!.annotation).toBe(`${P}loadbalancer-ip-mode`);
  });
});

describe('ingressEqual', () => {
  test.each<[string, unknown, unknown, boolean]>([
    ['both empty', [], undefined, true],
    ['unset ipMode equals VIP', [{ ip: '1.2.3.4' }], [{ ip: '1.2.3.4', ipMode: 'VIP' }], true],
    ['Proxy differs from unset', [{ ip: '1.2.3.4' }], [{ ip: '1.2.3.4', ipMode: 'Proxy' }], false],
    ['order matters', [{ ip: 'a' }, { ip: 'b' }], [{ ip: 'b' }, { ip: 'a' }], false],
    ['length differs', [{ ip: 'a' }], [{ ip: 'a' }, { ip: 'b' }], false],
    ['hostname vs ip', [{ hostname: 'x' }], [{ ip: 'x' }], false],
    ['same hostname', [{ hostname: 'x' }], [{ hostname: 'x' }], true],
    ['ports count', [{ ip: 'a', ports: [{ port: 80, protocol: 'TCP' }] }], [{ ip: 'a' }], false],
  ])('%s', (_name, a, b, expected) => {
    expect(ingressEqual(a as never, b as never)).toBe(expected);
    expect(ingressEqual(b as never, a as never)).toBe(expected);
  });
});
