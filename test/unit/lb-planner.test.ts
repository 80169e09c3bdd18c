// The planner against a small in-test cloud model: actions are applied to plain objects shaped
// like the API's answers, then the next plan is computed from them. This checks both what a
// change plans and that applying it converges (the next plan has no cloud action).
import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import { RefusedError } from '../../src/core/errors.js';
import { isCloudAction, type PlannedAction } from '../../src/core/lb/actions.js';
import { downtimeOf } from '../../src/core/lb/impact.js';
import { planService } from '../../src/core/lb/planner.js';
import { countByVerb, LB_FINALIZER, worstDowntime, type ServicePlan } from '../../src/core/lb/service-plan.js';
import { CLUSTER, converged, fip, node, P, server, SUBNET_A, SUBNET_B, svc, World } from '../support/lb-world.js';


/** A compact, complete view of an action list: verb, kind, object, impact. */
const shape = (plan: ServicePlan) => plan.actions.map((a) => `${a.verb} ${a.kind} ${a.object} [${a.impact}]`);
const cloudActions = (plan: ServicePlan) => plan.actions.filter(isCloudAction);
/** A pool swap in `shape` form: the successor built and awaited, the listener moved, the old pool deleted. */
const swapShape = (successor: string, old: string) => [
  `create create-pool pool ${successor} [none]`,
  ...[1, 2].map((n) => `create create-member member 10.0.0.${n}:30080 of pool ${successor} [none]`),
  `create create-monitor health monitor of pool ${successor} [none]`,
  `wait await-members 2 members of pool ${successor} healthy [none]`,
  'delete delete-listener listener tcp/80 [pool-swap]',
  'create create-listener listener tcp/80 [pool-swap]',
  `delete delete-monitor health monitor of pool ${old} [none]`,
  ...[1, 2].map((n) => `delete delete-member member 10.0.0.${n}:30080 of pool ${old} [none]`),
  `delete delete-pool pool ${old} [none]`,
];



describe('create from scratch', () => {
  test('one port, two nodes: the whole action list', () => {
    const world = new World(svc());
    const plan = world.plan();
    expect(plan.mode).toBe('ensure');
    expect(plan.problems).toEqual([]);
    expect(plan.warnings).toEqual([]);
    expect(plan.loadBalancer).toEqual({ name: 'k8s-service-uid-web', uuid: null });
    const none = downtimeOf('none');
    expect(plan.actions).toEqual([
      {
        kind: 'add-finalizer',
        verb: 'kube',
        object: 'finalizer service.kubernetes.io/load-balancer-cleanup',
        reason: { text: expect.any(String), field: 'metadata.finalizers', to: LB_FINALIZER },
        impact: 'none',
        downtime: none,
      },
      {
        kind: 'create-lb',
        verb: 'create',
        object: 'load balancer k8s-service-uid-web',
        reason: { text: 'the Service has no load balancer yet' },
        impact: 'none',
        downtime: none,
        ref: 'lb',
        lost: null,
        body: {
          name: 'k8s-service-uid-web',
          flavor: 'lb-standard',
          zone: 'rma1',
          vip_addresses: [],
          tags: { [`${P}cluster`]: CLUSTER, [`${P}service-uid`]: 'uid-web', [`${P}service`]: 'shop/web' },
        },
      },
      {
        kind: 'create-pool',
        verb: 'create',
        object: 'pool tcp/http',
        reason: { text: 'part of the new load balancer' },
        impact: 'none',
        downtime: none,
        ref: 'pool:tcp/http',
        loadBalancer: { ref: 'lb' },
        body: { name: 'tcp/http', algorithm: 'round_robin', protocol: 'tcp' },
        changes: [],
      },
      ...[1, 2].map((n) => ({
        kind: 'create-member',
        verb: 'create',
        object: `member 10.0.0.${n}:30080 of pool tcp/http`,
        reason: { text: 'part of the new load balancer' },
        impact: 'none',
        downtime: none,
        pool: { ref: 'pool:tcp/http' },
        poolName: 'tcp/http',
        body: { name: `10.0.0.${n}:30080`, protocol_port: 30080, monitor_port: 30080, address: `10.0.0.${n}`, subnet: SUBNET_A.uuid },
        changes: [],
      })),
      {
        kind: 'create-monitor',
        verb: 'create',
        object: 'health monitor of pool tcp/http',
        reason: { text: 'part of the new load balancer' },
        impact: 'none',
        downtime: none,
        pool: { ref: 'pool:tcp/http' },
        body: { type: 'tcp', delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3, http: {} },
        changes: [],
      },
      {
        kind: 'create-listener',
        verb: 'create',
        object: 'listener tcp/80',
        reason: { text: 'part of the new load balancer' },
        impact: 'none',
        downtime: none,
        pool: { ref: 'pool:tcp/http' },
        body: { name: 'tcp/80', protocol: 'tcp', protocol_port: 80, allowed_cidrs: [], timeout_client_data_ms: 50000, timeout_member_connect_ms: 5000, timeout_member_data_ms: 50000 },
        changes: [],
      },
      {
        kind: 'write-annotations',
        verb: 'kube',
        object: 'annotations',
        reason: { text: expect.stringContaining('loadbalancer-uuid, loadbalancer-config-version, loadbalancer-zone') },
        impact: 'none',
        downtime: none,
        changes: [
          { key: `${P}loadbalancer-uuid`, from: null, to: { ref: 'lb', attribute: 'uuid' } },
          { key: `${P}loadbalancer-config-version`, from: null, to: { value: '1' } },
          { key: `${P}loadbalancer-zone`, from: null, to: { ref: 'lb', attribute: 'zone' } },
        ],
      },
      {
        kind: 'write-status',
        verb: 'kube',
        object: 'status.loadBalancer',
        reason: { text: "publish the new load balancer's VIP addresses", field: 'status.loadBalancer.ingress' },
        impact: 'none',
        downtime: none,
        from: [],
        to: { ref: 'lb', settings: { ipMode: 'Proxy' } },
      },
    ]);
    // Plain JSON: survives a round trip unchanged.
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });

  test('several ports, FIP, UDP: category order across pools', () => {
    const world = new World(
      svc(
        [
          { name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 },
          { name: 'dns-tcp', protocol: 'TCP', port: 53, nodePort: 30054 },
        ],
        { [`${P}loadbalancer-floating-ips`]: '["192.0.2.99/32"]', [`${P}loadbalancer-health-monitor-type`]: 'udp-connect' },
      ),
    );
    world.fips = [fip('192.0.2.99/32')];
    expect(shape(world.plan())).toEqual([
      'kube add-finalizer finalizer service.kubernetes.io/load-balancer-cleanup [none]',
      'create create-lb load balancer k8s-service-uid-web [none]',
      'create create-pool pool udp/dns [none]',
      'create create-pool pool tcp/dns-tcp [none]',
      'create create-member member 10.0.0.1:30053 of pool udp/dns [none]',
      'create create-member member 10.0.0.2:30053 of pool udp/dns [none]',
      'create create-member member 10.0.0.1:30054 of pool tcp/dns-tcp [none]',
      'create create-member member 10.0.0.2:30054 of pool tcp/dns-tcp [none]',
      'create create-monitor health monitor of pool udp/dns [none]',
      'create create-monitor health monitor of pool tcp/dns-tcp [none]',
      'create create-listener listener udp/53 [none]',
      'create create-listener listener tcp/53 [none]',
      'update assign-floating-ip floating IP 192.0.2.99/32 [minimal]',
      'kube write-annotations annotations [none]',
      'kube write-status status.loadBalancer [none]',
    ]);
  });

  test('force-hostname: the status is known before the load balancer exists', () => {
    const world = new World(svc(undefined, { [`${P}loadbalancer-force-hostname`]: 'lb.example.com' }));
    const status = world.plan().actions.find((a) => a.kind === 'write-status');
    expect(status).toMatchObject({ to: { ingress: [{ hostname: 'lb.example.com' }] } });
  });
});

describe('idempotency: applying a plan converges (the next plan is empty)', () => {
  test.each<[string, V1ServicePort[], Record<string, string>, Partial<V1Service['spec']>]>([
    ['defaults', [{ name: 'http', port: 80, nodePort: 30080 }], {}, {}],
    ['unnamed port', [{ port: 80, nodePort: 30080 }], {}, {}],
    ['ETP Local', [{ port: 80, nodePort: 30080 }], {}, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 }],
    ['UDP and TCP on 53', [{ name: 'u', protocol: 'UDP', port: 53, nodePort: 30053 }, { name: 't', protocol: 'TCP', port: 53, nodePort: 30054 }], { [`${P}loadbalancer-health-monitor-type`]: 'udp-connect' }, {}],
    ['http monitor with host and codes', [{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-health-monitor-type`]: 'http', [`${P}loadbalancer-health-monitor-http`]: '{"host":"a.example","expected_codes":["200","204"],"method":"HEAD"}' }, {}],
    ['http monitor without options', [{ port: 80, nodePort: 30080 }], { [`${P}loadbalancer-health-monitor-type`]: 'http' }, {}],
    ['every tunable', [{ name: 'a', port: 80, nodePort: 30080 }, { name: 'b', port: 443, nodePort: 30443 }], {
      [`${P}loadbalancer-name`]: 'custom',
      [`${P}loadbalancer-pool-algorithm`]: 'least_connections',
      [`${P}loadbalancer-pool-protocol`]: 'proxyv2',
      [`${P}loadbalancer-listener-allowed-cidrs`]: '["10.0.0.0/8","192.0.2.0/24"]',
      [`${P}loadbalancer-timeout-client-data-ms`]: '1000',
      [`${P}loadbalancer-ip-mode`]: 'VIP',
      [`${P}loadbalancer-vip-addresses`]: `[{"subnet":"${SUBNET_A.uuid}"}]`,
      [`${P}loadbalancer-zone`]: 'rma1',
    }, {}],
  ])('%s', (_name, ports, annotations, spec) => {
    const service = svc(ports, annotations);
    Object.assign(service.spec!, spec);
    const world = converged(service);
    expect(world.service.metadata!.finalizers).toEqual([LB_FINALIZER]);
    expect(world.service.metadata!.annotations).toMatchObject({ [`${P}loadbalancer-uuid`]: world.lbs[0]!.uuid, [`${P}loadbalancer-config-version`]: '1', [`${P}loadbalancer-zone`]: 'rma1' });
  });

  test('the status: one entry per VIP with ipMode Proxy', () => {
    const world = converged();
    expect(world.service.status).toEqual({ loadBalancer: { ingress: [{ ip: '198.51.100.20', ipMode: 'Proxy' }, { ip: '2001:db8::20', ipMode: 'Proxy' }] } });
  });

  test('before 1.30 no ipMode; an ipMode VIP the API server defaulted counts as equal', () => {
    const world = converged(svc(), (w) => (w.apiServerMinor = 29));
    expect(world.service.status!.loadBalancer!.ingress).toEqual([{ ip: '198.51.100.20' }, { ip: '2001:db8::20' }]);
    world.service.status!.loadBalancer!.ingress = [{ ip: '198.51.100.20', ipMode: 'VIP' }, { ip: '2001:db8::20', ipMode: 'VIP' }];
    expect(world.plan().actions).toEqual([]);
  });

  test('a monitor whose http is null or has no version counts as HTTP 1.1', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-health-monitor-type`]: 'http' }));
    world.monitors[0]!.http = { ...world.monitors[0]!.http!, version: '' as '1.1' };
    expect(world.plan().actions).toEqual([]);
    world.monitors[0]!.http = null;
    expect(world.plan().actions).toEqual([]);
  });

  test('member monitor_port null from the API counts as protocol_port', () => {
    const world = converged();
    for (const list of Object.values(world.members)) for (const m of list) m.monitor_port = null;
    expect(world.plan().actions).toEqual([]);
  });
});

describe('changes on a converged Service: planned actions and their impact', () => {
  let world: World;
  beforeEach(() => {
    world = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }]));
  });

  const cases: [string, (w: World) => void, string[]][] = [
    ['timeouts → in place, no impact, one update of the listener', (w) => w.annotate({ 'loadbalancer-timeout-client-data-ms': '1000', 'loadbalancer-timeout-member-data-ms': '2000' }), [
      'update update-listener listener tcp/80 [none]',
    ]],
    ['name → rename in place', (w) => w.annotate({ 'loadbalancer-name': 'shop-web' }), ['update rename-lb load balancer k8s-service-uid-web [none]']],
    ['allowed CIDRs → in place, minimal', (w) => w.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]' }), ['update update-listener listener tcp/80 [minimal]']],
    ['monitor numbers → in place, minimal, one update of the monitor', (w) => w.annotate({ 'loadbalancer-health-monitor-delay-s': '5', 'loadbalancer-health-monitor-down-threshold': '4' }), [
      'update update-monitor health monitor of pool tcp/http [minimal]',
    ]],
    ['monitor type → pool swapped for one with the new monitor', (w) => w.annotate({ 'loadbalancer-health-monitor-type': 'http' }), [
      ...swapShape('tcp/http', 'tcp/http'),
    ]],
    ['pool algorithm → successor pool built and awaited, then the listener moves', (w) => w.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' }), [
      ...swapShape('tcp/http', 'tcp/http'),
    ]],
    ['pool protocol → pool swapped', (w) => w.annotate({ 'loadbalancer-pool-protocol': 'proxy' }), [
      ...swapShape('tcp/http', 'tcp/http'),
    ]],
    ['port number keeping the name → the listener moves in place, renamed in the same update', (w) => (w.service.spec!.ports![0]!.port = 8080), [
      'update update-listener listener tcp/80 [port-move]',
    ]],
    ['port name → pool swapped', (w) => (w.service.spec!.ports![0]!.name = 'web'), [
      ...swapShape('tcp/web', 'tcp/http'),
    ]],
    ['nodePort → new members added and awaited before the old ones go', (w) => (w.service.spec!.ports![0]!.nodePort = 30081), [
      'create create-member member 10.0.0.1:30081 of pool tcp/http [member-rotation]',
      'create create-member member 10.0.0.2:30081 of pool tcp/http [member-rotation]',
      'wait await-members 2 members of pool tcp/http healthy [member-rotation]',
      'delete delete-member member 10.0.0.1:30080 of pool tcp/http [member-rotation]',
      'delete delete-member member 10.0.0.2:30080 of pool tcp/http [member-rotation]',
    ]],
    ['a port added → its pool is new, nothing else changes', (w) => w.service.spec!.ports!.push({ name: 'https', port: 443, nodePort: 30443 }), [
      'create create-pool pool tcp/https [none]',
      'create create-member member 10.0.0.1:30443 of pool tcp/https [none]',
      'create create-member member 10.0.0.2:30443 of pool tcp/https [none]',
      'create create-monitor health monitor of pool tcp/https [none]',
      'create create-listener listener tcp/443 [none]',
    ]],
    ['a node added → one member per pool', (w) => {
      w.servers.push(server(3));
      w.nodes.push(node(3));
    }, ['create create-member member 10.0.0.3:30080 of pool tcp/http [minimal]']],
    ['a node excluded by label → its member removed', (w) => (w.nodes[1]!.metadata!.labels = { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' }), [
      'delete delete-member member 10.0.0.2:30080 of pool tcp/http [minimal]',
    ]],
    ['a node being deleted → its member removed (its server may still exist)', (w) => (w.nodes[0]!.metadata!.deletionTimestamp = new Date(0)), [
      'delete delete-member member 10.0.0.1:30080 of pool tcp/http [minimal]',
    ]],
    ['NotReady nodes stay members', (w) => (w.nodes[0]!.status = { conditions: [{ type: 'Ready', status: 'False' }] }), []],
    ['node selector matching one node', (w) => {
      w.nodes[0]!.metadata!.labels = { role: 'edge' };
      w.annotate({ 'loadbalancer-node-selector': 'role=edge' });
    }, ['delete delete-member member 10.0.0.2:30080 of pool tcp/http [minimal]']],
    ['node selector matching none → every member removed', (w) => w.annotate({ 'loadbalancer-node-selector': 'role=nothing' }), [
      'delete delete-member member 10.0.0.1:30080 of pool tcp/http [no-members]',
      'delete delete-member member 10.0.0.2:30080 of pool tcp/http [no-members]',
    ]],
    ['ETP Cluster → Local: pool swapped (members keep address and port, the monitor changes type)', (w) => Object.assign(w.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 }), [
      ...swapShape('tcp/http', 'tcp/http'),
    ]],
    ['ip-mode → status only', (w) => w.annotate({ 'loadbalancer-ip-mode': 'VIP' }), ['kube write-status status.loadBalancer [none]']],
    ['force-hostname → status only', (w) => w.annotate({ 'loadbalancer-force-hostname': 'lb.example.com' }), ['kube write-status status.loadBalancer [none]']],
    ['health monitor http options without an http type → nothing', (w) => w.annotate({ 'loadbalancer-health-monitor-http': '{"url_path":"/x"}' }), []],
  ];

  test.each(cases)('%s', (_name, change, expected) => {
    change(world);
    const plan = world.plan();
    expect(plan.problems).toEqual([]);
    expect(shape(plan)).toEqual(expected);
    world.apply(plan.actions);
    expect(world.plan().actions).toEqual([]);
  });

  test.each<[string, (w: World) => void]>([
    ['pool algorithm (the successor has another key)', (w) => w.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' })],
    ['externalTrafficPolicy (the successor has the same name, algorithm and protocol)', (w) => Object.assign(w.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 })],
  ])('a pool swap stopped at any step is finished by the next plan, never built twice: %s', (_name, change) => {
    const full = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }]));
    change(full);
    const steps = full.plan().actions;
    for (let done = 1; done < steps.length; done++) {
      const w = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }]));
      const original = w.pools[0]!.uuid;
      change(w);
      w.apply(w.plan().actions.slice(0, done));
      const successor = w.pools.find((p) => p.uuid !== original)?.uuid;
      const next = w.plan();
      expect(next.problems).toEqual([]);
      // The successor is finished, never torn down and built again.
      const touchesSuccessor = next.actions.filter(
        (a) => (a.kind === 'delete-pool' && a.pool.uuid === successor) || (a.kind === 'delete-member' && a.pool.uuid === successor),
      );
      expect(touchesSuccessor, `after ${done} steps`).toEqual([]);
      // Never a second successor: at most the one pool the rest of the swap still needs.
      expect(next.actions.filter((a) => a.kind === 'create-pool').length, `after ${done} steps`).toBeLessThanOrEqual(done === 0 ? 1 : 0);
      // The port is never left without a listener beyond the move itself.
      if (w.listeners.length === 0) expect(next.actions.some((a) => a.kind === 'create-listener')).toBe(true);
      w.apply(next.actions);
      expect(w.plan().actions, `after ${done} steps and the next pass`).toEqual([]);
      expect(w.pools).toHaveLength(1);
    }
  });

  test('a swap stopped midway and then reverted: the successor is deleted, the old pool stays serving', () => {
    const w = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }]));
    const pool = w.pools[0]!.uuid;
    w.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    const steps = w.plan().actions;
    w.apply(steps.slice(0, steps.findIndex((a) => a.kind === 'await-members')));
    w.annotate({ 'loadbalancer-pool-algorithm': null });
    expect(shape(w.plan())).toEqual([
      'delete delete-monitor health monitor of pool tcp/http [none]',
      'delete delete-member member 10.0.0.1:30080 of pool tcp/http [none]',
      'delete delete-member member 10.0.0.2:30080 of pool tcp/http [none]',
      'delete delete-pool pool tcp/http [none]',
    ]);
    w.converge();
    expect(w.pools.map((p) => p.uuid)).toEqual([pool]);
  });

  test('a create replacing an object of the same name lists every field that differs, not only the trigger', () => {
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip', 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]', 'loadbalancer-timeout-client-data-ms': '1000' });
    const actions = world.plan().actions;
    const changesOf = (kind: string) => (actions.find((a) => a.kind === kind) as unknown as { changes: { field?: string; from?: string; to?: string }[] }).changes;
    expect(changesOf('create-listener')).toEqual([
      { text: 'allowed_cidrs changes', field: 'allowed_cidrs', from: '[]', to: '["10.0.0.0/8"]' },
      { text: 'timeout_client_data_ms changes', field: 'timeout_client_data_ms', from: '50000', to: '1000' },
    ]);
    expect(changesOf('create-pool')).toEqual([{ text: 'algorithm changes', field: 'algorithm', from: 'round_robin', to: 'source_ip' }]);
    // The successor's monitor and members are the same as the old ones: nothing to list.
    expect(changesOf('create-monitor')).toEqual([]);
    expect(changesOf('create-member')).toEqual([]);
  });

  test('reasons name what differs, old → new', () => {
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip', 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]' });
    const plan = world.plan();
    expect(plan.actions.find((a) => a.kind === 'delete-listener')!.reason).toEqual({
      text: 'the pool algorithm cannot change in place: pool tcp/http is replaced',
      field: `${P}loadbalancer-pool-algorithm`,
      from: 'round_robin',
      to: 'source_ip',
    });
    expect(plan.actions.find((a) => a.kind === 'create-pool')!.reason.text).toBe(
      'the pool algorithm cannot change in place: pool tcp/http is replaced: a successor pool is built beside it',
    );
    // The listener moves to the successor with the new CIDRs; no separate update.
    expect(plan.actions.find((a) => a.kind === 'create-listener')).toMatchObject({ body: { allowed_cidrs: ['10.0.0.0/8'] } });
    expect(plan.actions.filter((a) => a.kind === 'update-listener')).toEqual([]);

    const fresh = converged();
    fresh.service.spec!.ports![0]!.port = 8080;
    expect(fresh.plan().actions[0]).toMatchObject({
      kind: 'update-listener',
      patch: { protocol_port: 8080, name: 'tcp/8080' },
      changes: [
        {
          text: 'the Service port changed: the listener of pool tcp/http moves to the new port in place',
          field: 'spec.ports[http].port',
          from: '80',
          to: '8080',
        },
        { text: 'the listener is named after its port', field: 'name', from: 'tcp/80', to: 'tcp/8080' },
      ],
    });
    const cidrs = converged();
    cidrs.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8","192.0.2.0/24"]' });
    const update = cidrs.plan().actions[0]!;
    expect(update).toEqual({
      kind: 'update-listener',
      verb: 'update',
      object: 'listener tcp/80',
      reason: { text: 'allowed_cidrs changes in place', field: `${P}loadbalancer-listener-allowed-cidrs`, from: '[]', to: '["10.0.0.0/8","192.0.2.0/24"]' },
      changes: [{ text: 'allowed_cidrs changes in place', field: `${P}loadbalancer-listener-allowed-cidrs`, from: '[]', to: '["10.0.0.0/8","192.0.2.0/24"]' }],
      impact: 'minimal',
      downtime: downtimeOf('minimal'),
      listener: { uuid: cidrs.listeners[0]!.uuid },
      patch: { allowed_cidrs: ['10.0.0.0/8', '192.0.2.0/24'] },
    });
  });

  test('spec.loadBalancerSourceRanges becomes allowed_cidrs, and the reason names the field', () => {
    const w = converged();
    w.service.spec!.loadBalancerSourceRanges = ['192.0.2.0/24'];
    const plan = w.plan();
    expect(shape(plan)).toEqual(['update update-listener listener tcp/80 [minimal]']);
    expect(plan.actions[0]).toMatchObject({
      reason: { text: 'allowed_cidrs changes in place', field: 'spec.loadBalancerSourceRanges', from: '[]', to: '["192.0.2.0/24"]' },
      patch: { allowed_cidrs: ['192.0.2.0/24'] },
    });
    w.apply(plan.actions);
    expect(w.plan().actions).toEqual([]);
    // The annotation with the same CIDRs beside it changes nothing; removing both opens it again.
    w.annotate({ 'loadbalancer-listener-allowed-cidrs': '["192.0.2.0/24"]' });
    expect(w.plan().actions).toEqual([]);
    w.annotate({ 'loadbalancer-listener-allowed-cidrs': null });
    w.service.spec!.loadBalancerSourceRanges = [];
    expect(w.plan().actions).toEqual([
      expect.objectContaining({ kind: 'update-listener', patch: { allowed_cidrs: [] }, reason: expect.objectContaining({ from: '["192.0.2.0/24"]', to: '[]' }) }),
    ]);
  });

  test('spec.loadBalancerSourceRanges and the annotation differing → a problem, no action at all (not even the finalizer)', () => {
    const fresh = new World(svc(undefined, { [`${P}loadbalancer-listener-allowed-cidrs`]: '["10.0.0.0/8"]' }));
    fresh.service.spec!.loadBalancerSourceRanges = ['192.0.2.0/24'];
    const plan = fresh.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems).toEqual([expect.objectContaining({ kind: 'source-ranges-conflict', subject: 'spec.loadBalancerSourceRanges' })]);
    const existing = converged();
    existing.service.spec!.loadBalancerSourceRanges = ['192.0.2.0/24'];
    existing.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]' });
    expect(existing.plan()).toMatchObject({ actions: [], problems: [{ kind: 'source-ranges-conflict' }] });
  });

  test('the order of CIDRs matters (the API keeps it)', () => {
    const w = converged(svc(undefined, { [`${P}loadbalancer-listener-allowed-cidrs`]: '["10.0.0.0/8","192.0.2.0/24"]' }));
    w.annotate({ 'loadbalancer-listener-allowed-cidrs': '["192.0.2.0/24","10.0.0.0/8"]' });
    expect(shape(w.plan())).toEqual(['update update-listener listener tcp/80 [minimal]']);
  });

  test('ETP switch reasons and downtime', () => {
    Object.assign(world.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
    const plan = world.plan();
    const move = plan.actions.find((a) => a.kind === 'delete-listener')!;
    expect(move.reason).toEqual({
      text: expect.stringContaining('the monitor type or HTTP version cannot change in place'),
      field: 'spec.externalTrafficPolicy',
      from: 'type tcp',
      to: 'type http, http.version 1.0, http.url_path /livez, http.method GET, http.expected_codes ["200"]',
    });
    expect(move.downtime).toEqual({ class: 'short', minSeconds: 0, maxSeconds: 45, text: expect.any(String) });
    const monitorCreate = plan.actions.find((a) => a.kind === 'create-monitor')!;
    expect(monitorCreate).toMatchObject({
      reason: { field: 'spec.externalTrafficPolicy', from: 'type tcp', to: 'type http, http.version 1.0, http.url_path /livez, http.method GET, http.expected_codes ["200"]' },
      body: { type: 'http', http: { expected_codes: ['200'], method: 'GET', url_path: '/livez', version: '1.0' } },
    });
    // The successor's members check the health-check port before the listener moves to them.
    expect(plan.actions.filter((a) => a.kind === 'create-member').map((a) => a.body.monitor_port)).toEqual([31999, 31999]);
    expect(worstDowntime([plan])).toEqual({ service: plan.service, action: move, downtime: move.downtime });
  });

  test.each<{ name: string; before: Record<string, string>; after: Record<string, string | null>; from: string; to: string }>([
    {
      name: 'an http check on /healthz becomes the /livez check of ETP Local: the path and the version are named',
      before: { 'loadbalancer-health-monitor-type': 'http', 'loadbalancer-health-monitor-http': '{"url_path":"/healthz"}' },
      after: { 'loadbalancer-health-monitor-type': null, 'loadbalancer-health-monitor-http': null },
      from: 'http.version 1.1, http.url_path /healthz',
      to: 'http.version 1.0, http.url_path /livez',
    },
    {
      name: 'a tcp check becomes /livez with a longer delay: the delay is named with the type',
      before: {},
      after: { 'loadbalancer-health-monitor-delay-s': '5' },
      from: 'type tcp, delay_s 2',
      to: 'type http, delay_s 5, http.version 1.0, http.url_path /livez, http.method GET, http.expected_codes ["200"]',
    },
  ])('a monitor recreation names every field that differs: $name', ({ before, after, from, to }) => {
    const w = converged(svc(undefined, Object.fromEntries(Object.entries(before).map(([key, value]) => [P + key, value]))));
    w.annotate(after);
    Object.assign(w.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
    const move = w.plan().actions.find((a) => a.kind === 'delete-listener')!;
    expect(move.reason).toMatchObject({ field: 'spec.externalTrafficPolicy', from, to });
  });

  test('monitor http options change in place, all in one update, each field with its reason', () => {
    const w = converged(svc(undefined, { [`${P}loadbalancer-health-monitor-type`]: 'http' }));
    w.annotate({ 'loadbalancer-health-monitor-http': '{"url_path":"/healthz","method":"HEAD","host":"a.example","expected_codes":["204"]}' });
    const plan = w.plan();
    expect(plan.actions.map((a) => (a.kind === 'update-monitor' ? a.patch : a.kind))).toEqual([
      { http: { host: 'a.example', url_path: '/healthz', method: 'HEAD', expected_codes: ['204'] } },
    ]);
    const update = plan.actions[0] as Extract<PlannedAction, { kind: 'update-monitor' }>;
    expect(update.changes.map((c) => `${c.text}: ${c.from} → ${c.to}`)).toEqual([
      'http.host changes in place: null → a.example',
      'http.url_path changes in place: / → /healthz',
      'http.method changes in place: GET → HEAD',
      'http.expected_codes changes in place: ["200"] → ["204"]',
    ]);
    w.apply(plan.actions);
    expect(w.plan().actions).toEqual([]);
    w.annotate({ 'loadbalancer-health-monitor-http': '{"version":"1.0"}' });
    expect(shape(w.plan()).filter((line) => !line.includes('[none]'))).toEqual([
      'delete delete-listener listener tcp/80 [pool-swap]',
      'create create-listener listener tcp/80 [pool-swap]',
    ]);
  });

  test('removing the http options resets them in place to the API defaults', () => {
    const w = converged(svc(undefined, { [`${P}loadbalancer-health-monitor-type`]: 'http', [`${P}loadbalancer-health-monitor-http`]: '{"url_path":"/ready"}' }));
    w.annotate({ 'loadbalancer-health-monitor-http': null });
    const plan = w.plan();
    expect(plan.actions).toEqual([
      expect.objectContaining({
        kind: 'update-monitor',
        reason: { text: 'http.url_path changes in place', field: `${P}loadbalancer-health-monitor-http`, from: '/ready', to: '/' },
        patch: { http: { url_path: '/' } },
      }),
    ]);
  });

  test('allowed subnets: only members outside them go', () => {
    const w = converged(svc(), (x) => (x.servers = [server(1, 'rma1', [['10.1.0.1', SUBNET_B]]), server(2, 'rma1', [['10.1.0.2', SUBNET_B]])]));
    expect(Object.values(w.members)[0]).toHaveLength(4);
    w.annotate({ 'loadbalancer-listener-allowed-subnets': JSON.stringify([SUBNET_B.uuid]) });
    expect(shape(w.plan())).toEqual([
      'delete delete-member member 10.0.0.1:30080 of pool tcp/http [minimal]',
      'delete delete-member member 10.0.0.2:30080 of pool tcp/http [minimal]',
    ]);
    w.converge();
    w.annotate({ 'loadbalancer-listener-allowed-subnets': JSON.stringify([SUBNET_A.uuid]) });
    expect(shape(w.plan())).toEqual([
      'create create-member member 10.0.0.1:30080 of pool tcp/http [member-rotation]',
      'create create-member member 10.0.0.2:30080 of pool tcp/http [member-rotation]',
      'wait await-members 2 members of pool tcp/http healthy [member-rotation]',
      'delete delete-member member 10.1.0.1:30080 of pool tcp/http [member-rotation]',
      'delete delete-member member 10.1.0.2:30080 of pool tcp/http [member-rotation]',
    ]);
  });

  test('a port removed → its pool and children go (that port stops serving: never "impact none"), the other port is untouched', () => {
    const w = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]));
    w.service.spec!.ports!.pop();
    expect(shape(w.plan())).toEqual([
      'delete delete-listener listener tcp/443 [port-removal]',
      'delete delete-monitor health monitor of pool tcp/https [port-removal]',
      'delete delete-member member 10.0.0.1:30443 of pool tcp/https [port-removal]',
      'delete delete-member member 10.0.0.2:30443 of pool tcp/https [port-removal]',
      'delete delete-pool pool tcp/https [port-removal]',
    ]);
  });

  test('drift: a deleted listener and monitor are recreated', () => {
    world.listeners = [];
    world.monitors = [];
    expect(shape(world.plan())).toEqual([
      'create create-monitor health monitor of pool tcp/http [minimal]',
      'create create-listener listener tcp/80 [listener-missing]',
    ]);
  });
});

describe('floating IPs', () => {
  test('assigned when missing, never unassigned, moved from another target', () => {
    const world = converged(svc(), (w) => (w.fips = [fip('192.0.2.50/32'), fip('192.0.2.51/32')]));
    world.fips[1]!.server = { href: '', uuid: 's9', name: 'old-server' };
    world.annotate({ 'loadbalancer-floating-ips': '["192.0.2.50/32","192.0.2.51/32"]' });
    const plan = world.plan();
    expect(plan.actions).toEqual([
      {
        kind: 'assign-floating-ip',
        verb: 'update',
        object: 'floating IP 192.0.2.50/32',
        reason: { text: 'listed in the annotation; traffic arrives within ~20 s', field: `${P}loadbalancer-floating-ips`, from: 'unassigned', to: 'load balancer k8s-service-uid-web' },
        impact: 'minimal',
        downtime: downtimeOf('minimal'),
        floatingIp: { network: '192.0.2.50/32', ip: '192.0.2.50' },
        loadBalancer: { uuid: world.lbs[0]!.uuid },
      },
      expect.objectContaining({
        kind: 'assign-floating-ip',
        reason: {
          text: 'listed in the annotation but assigned to server old-server (s9): taken from there (Warning FloatingIPReassigned), its traffic there stops',
          field: `${P}loadbalancer-floating-ips`,
          from: 'server old-server (s9)',
          to: 'load balancer k8s-service-uid-web',
        },
      }),
    ]);
    // Said as a Warning (an Event on the Service), naming the IP, where it was and what happens.
    expect(plan.warnings).toEqual([
      {
        reason: 'FloatingIPReassigned',
        message: `Floating IP 192.0.2.51/32 is assigned to server old-server (s9), but the annotation ${P}loadbalancer-floating-ips of this Service lists it: it is moved to load balancer k8s-service-uid-web (the annotation wins), and server old-server (s9) no longer receives its traffic. To leave it there, remove it from the annotation.`,
      },
    ]);
    world.apply(plan.actions);
    world.annotate({ 'loadbalancer-floating-ips': '[]' });
    expect(world.plan().actions).toEqual([]);
    expect(world.fips.every((f) => f.load_balancer?.uuid === world.lbs[0]!.uuid)).toBe(true);
  });

  test('a Floating IP moved by hand to another load balancer is taken back, with a warning naming that load balancer', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]' }), (w) => (w.fips = [fip('192.0.2.50/32')]));
    expect(world.plan().warnings).toEqual([]);
    world.fips[0]!.load_balancer = { href: '', uuid: 'lb-by-hand', name: 'by-hand' };
    const plan = world.plan();
    expect(shape(plan)).toEqual(['update assign-floating-ip floating IP 192.0.2.50/32 [minimal]']);
    expect(plan.actions[0]!.reason.from).toBe('load balancer by-hand (lb-by-hand)');
    expect(plan.warnings).toEqual([
      { reason: 'FloatingIPReassigned', message: expect.stringContaining('Floating IP 192.0.2.50/32 is assigned to load balancer by-hand (lb-by-hand)') },
    ]);
    world.apply(plan.actions);
    expect(world.plan()).toMatchObject({ actions: [], warnings: [] });
  });

  test('a Floating IP that does not exist → problem naming it; the rest is still planned', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-floating-ips': '["192.0.2.77/32"]', 'loadbalancer-timeout-member-connect-ms': '1' });
    const plan = world.plan();
    expect(plan.problems).toEqual([
      { kind: 'floating-ip-missing', subject: 'floating IP 192.0.2.77/32', message: expect.stringContaining('does not exist in this cloudscale project'), hint: expect.any(String) },
    ]);
    expect(shape(plan)).toEqual(['update update-listener listener tcp/80 [none]']);
  });

  test('two Services claiming one Floating IP → refused, nothing else', () => {
    const other = svc(undefined, { [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]' });
    other.metadata = { ...other.metadata, name: 'other', uid: 'uid-other' };
    const world = new World(svc(undefined, { [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]' }));
    world.fips = [fip('192.0.2.50/32')];
    world.others = [other, world.service /* itself is skipped by UID */];
    const plan = world.plan();
    const problem = {
      kind: 'floating-ip-conflict',
      subject: `${P}loadbalancer-floating-ips`,
      message: 'at least one Floating IP assigned to service shop/web is also assigned to another service. Refusing to continue to avoid flapping: 192.0.2.50/32->shop/other',
      hint: expect.any(String),
    };
    expect(plan.problems).toEqual([problem]);
    expect(plan.actions).toEqual([
      {
        kind: 'refuse',
        verb: 'refuse',
        object: 'service shop/web',
        reason: { text: problem.message, field: `${P}loadbalancer-floating-ips` },
        impact: 'refused',
        downtime: downtimeOf('refused'),
        problem,
      },
    ]);
  });

  test('a conflicting Service with a broken annotation or another type claims nothing', () => {
    const broken = svc(undefined, { [`${P}loadbalancer-floating-ips`]: '[' });
    broken.metadata = { ...broken.metadata, uid: 'uid-b' };
    const clusterIp = svc(undefined, { [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]' });
    clusterIp.metadata = { ...clusterIp.metadata, uid: 'uid-c' };
    clusterIp.spec!.type = 'ClusterIP';
    const world = new World(svc(undefined, { [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]' }));
    world.fips = [fip('192.0.2.50/32')];
    world.others = [broken, clusterIp];
    expect(world.plan().problems).toEqual([]);
  });
});

describe('refused changes: flavor, zone, VIP addresses', () => {
  test.each<[string, Record<string, string>, string[]]>([
    ['flavor', { 'loadbalancer-flavor': 'lb-large' }, [`${P}loadbalancer-flavor`]],
    ['zone', { 'loadbalancer-zone': 'lpg1' }, [`${P}loadbalancer-zone`]],
    ['VIP addresses', { 'loadbalancer-vip-addresses': `[{"subnet":"${SUBNET_B.uuid}"}]` }, [`${P}loadbalancer-vip-addresses`]],
    ['flavor and zone at once', { 'loadbalancer-flavor': 'lb-large', 'loadbalancer-zone': 'lpg1' }, [`${P}loadbalancer-flavor`, `${P}loadbalancer-zone`]],
  ])('%s → refuse, nothing else', (_name, change, subjects) => {
    const world = converged();
    world.annotate({ ...change, 'loadbalancer-timeout-client-data-ms': '1' });
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(subjects.map(() => 'refuse'));
    expect(plan.problems.map((p) => [p.kind, p.subject])).toEqual(subjects.map((s) => ['forbidden-change', s]));
    for (const action of plan.actions) {
      expect(action.impact).toBe('refused');
      expect(action.object).toBe('load balancer k8s-service-uid-web');
      if (action.kind === 'refuse') {
        expect(action.problem.hint).toContain('delete and re-create the Service');
        expect(action.problem.hint).toContain('loses its IP addresses');
      }
    }
  });

  test.each<{ name: string; change: Record<string, string>; reason: { field: string } & Record<string, string>; message: string; hint: RegExp }>([
    {
      name: 'flavor',
      change: { 'loadbalancer-flavor': 'lb-large' },
      reason: { field: `${P}loadbalancer-flavor`, from: 'lb-standard', to: 'lb-large', text: 'the flavor of a load balancer is fixed' },
      message: 'the flavor of load balancer k8s-service-uid-web cannot change (lb-standard → lb-large); nothing was changed',
      hint: /^Set k8s\.cloudscale\.ch\/loadbalancer-flavor back to lb-standard\. To really change it/,
    },
    {
      name: 'zone',
      change: { 'loadbalancer-zone': 'lpg1' },
      reason: { field: `${P}loadbalancer-zone`, from: 'rma1', to: 'lpg1', text: 'the zone of a load balancer is fixed' },
      message: 'the zone of load balancer k8s-service-uid-web cannot change (rma1 → lpg1); nothing was changed',
      hint: /^Set k8s\.cloudscale\.ch\/loadbalancer-zone to rma1\. To really change it/,
    },
    {
      name: 'VIP addresses',
      change: { 'loadbalancer-vip-addresses': `[{"subnet":"${SUBNET_B.uuid}"}]` },
      reason: { field: `${P}loadbalancer-vip-addresses`, to: `[{"subnet":"${SUBNET_B.uuid}"}]`, text: 'the VIP addresses of a load balancer are fixed' },
      message: `the VIP addresses of load balancer k8s-service-uid-web cannot change ([{"subnet":"dddd0001-0000-4000-8000-000000000001","address":"198.51.100.20"},{"subnet":"dddd0001-0000-4000-8000-000000000001","address":"2001:db8::20"}] → [{"subnet":"${SUBNET_B.uuid}"}]); nothing was changed`,
      hint: /^Set k8s\.cloudscale\.ch\/loadbalancer-vip-addresses back to \[\{"subnet":"dddd0001-[^ ]+"2001:db8::20"\}\]\. To really change it/,
    },
  ])('the $name refusal names the change and says how to go back', ({ change, reason, message, hint }) => {
    const world = converged();
    world.annotate(change);
    const [action] = world.plan().actions;
    expect(action).toMatchObject({
      reason,
      problem: { kind: 'forbidden-change', subject: reason.field, message, hint: expect.stringMatching(hint) },
    });
  });

  test('a VIP address pinned to the one already in use is no change; an empty list is never a change', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-vip-addresses`]: `[{"subnet":"${SUBNET_A.uuid}"}]` }));
    world.annotate({ 'loadbalancer-vip-addresses': `[{"subnet":"${SUBNET_A.uuid}","address":"10.0.0.200"}]` });
    expect(world.plan().actions).toEqual([]);
    world.annotate({ 'loadbalancer-vip-addresses': `[{"subnet":"${SUBNET_A.uuid}","address":"10.0.0.201"}]` });
    expect(world.plan().actions.map((a) => a.kind)).toEqual(['refuse']);
    world.annotate({ 'loadbalancer-vip-addresses': null });
    expect(world.plan().actions).toEqual([]);
  });
});

describe('ownership and adoption', () => {
  test('a load balancer of the Go CCM (no tags, uuid annotation, finalizer) is adopted: tags written, nothing recreated', () => {
    const world = converged();
    world.lbs[0]!.tags = { team: 'shop' };
    const plan = world.plan();
    expect(plan.actions).toEqual([
      {
        kind: 'tag-lb',
        verb: 'update',
        object: 'load balancer k8s-service-uid-web',
        reason: expect.objectContaining({ text: expect.stringContaining('adopt the load balancer'), field: 'tags' }),
        impact: 'none',
        downtime: downtimeOf('none'),
        loadBalancer: { uuid: world.lbs[0]!.uuid },
        patch: { tags: { team: 'shop', [`${P}cluster`]: CLUSTER, [`${P}service-uid`]: 'uid-web', [`${P}service`]: 'shop/web' } },
        changes: [expect.objectContaining({ field: 'tags' })],
      },
    ]);
    world.apply(plan.actions);
    expect(world.plan().actions).toEqual([]);
  });

  test('a Go CCM Service without the uuid annotation is found by name', () => {
    const world = converged();
    world.lbs[0]!.tags = {};
    delete world.service.metadata!.annotations![`${P}loadbalancer-uuid`];
    expect(shape(world.plan())).toEqual([
      'update tag-lb load balancer k8s-service-uid-web [none]',
      'kube write-annotations annotations [none]',
    ]);
  });

  test('tagged for another cluster → refused, never modified', () => {
    const world = converged();
    world.lbs[0]!.tags = { ...world.lbs[0]!.tags, [`${P}cluster`]: 'cluster-2' };
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems).toEqual([
      {
        kind: 'ownership',
        subject: 'load balancer k8s-service-uid-web',
        message: expect.stringContaining('belongs to another cluster (tag k8s.cloudscale.ch/cluster=cluster-2, this cluster is cluster-1)'),
        hint: expect.stringContaining(`remove its annotation ${P}loadbalancer-uuid`),
      },
    ]);
  });

  test('tagged for another existing Service of this cluster → refused; for a gone one → re-tagged', () => {
    const world = converged();
    world.lbs[0]!.tags = { ...world.lbs[0]!.tags, [`${P}service-uid`]: 'uid-old' };
    expect(shape(world.plan())).toEqual(['update tag-lb load balancer k8s-service-uid-web [none]']);
    const owner = svc();
    owner.metadata = { ...owner.metadata, name: 'owner', uid: 'uid-old' };
    world.others = [owner];
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems[0]!.message).toContain('belongs to Service shop/owner');
  });
});

describe('deletion and type change', () => {
  test('Service being deleted → delete the load balancer, then remove the finalizer', () => {
    const world = converged();
    world.service.metadata!.deletionTimestamp = new Date(0);
    const plan = world.plan();
    expect(plan.mode).toBe('delete');
    expect(plan.actions).toEqual([
      {
        kind: 'delete-lb',
        verb: 'delete',
        object: 'load balancer k8s-service-uid-web',
        reason: { text: 'the Service is being deleted; the load balancer and everything on it are deleted' },
        impact: 'lb-deletion',
        downtime: { class: 'total', minSeconds: 0, maxSeconds: null, text: 'the Service loses its load balancer and its addresses' },
        loadBalancer: { uuid: world.lbs[0]!.uuid, href: world.lbs[0]!.href, name: 'k8s-service-uid-web' },
      },
      {
        kind: 'remove-finalizer',
        verb: 'kube',
        object: 'finalizer service.kubernetes.io/load-balancer-cleanup',
        reason: { text: 'the Service is being deleted; its load balancer is gone', field: 'metadata.finalizers', from: LB_FINALIZER },
        impact: 'none',
        downtime: downtimeOf('none'),
      },
    ]);
    world.apply(plan.actions);
    expect(world.lbs).toEqual([]);
    expect(world.plan()).toMatchObject({ mode: 'ignore', actions: [] });
  });

  test('type changed to ClusterIP → delete, clear the status, remove the finalizer', () => {
    const world = converged();
    world.service.spec!.type = 'ClusterIP';
    expect(shape(world.plan())).toEqual([
      'delete delete-lb load balancer k8s-service-uid-web [lb-deletion]',
      'kube write-status status.loadBalancer [none]',
      'kube remove-finalizer finalizer service.kubernetes.io/load-balancer-cleanup [none]',
    ]);
    world.converge();
    expect(world.service.status).toEqual({ loadBalancer: { ingress: [] } });
    expect(world.service.metadata!.finalizers).toEqual([]);
  });

  test('the load balancer a live Service records is gone (404 by UUID) → a new one, impact lb-lost, naming the addresses that change', () => {
    const world = converged();
    const uuid = world.lbs[0]!.uuid;
    const before = world.service.status!.loadBalancer!.ingress!.map((entry) => entry.ip!);
    world.service.status = { loadBalancer: { ingress: [...before.map((ip) => ({ ip })), { ip: '192.0.2.50' }] } };
    world.annotate({ 'loadbalancer-floating-ips': '["192.0.2.50/32"]' });
    world.uuidLookups.set(uuid, { kind: 'gone' });
    world.lbs = [];
    const create = world.plan().actions.find((a) => a.kind === 'create-lb')!;
    expect(create).toMatchObject({
      impact: 'lb-lost',
      downtime: downtimeOf('lb-lost'),
      lost: { uuid, addresses: [...before, '192.0.2.50'], kept: ['192.0.2.50'] },
      reason: { field: 'status.loadBalancer.ingress', from: before.join(', '), to: 'new addresses, known once the load balancer exists' },
    });
    // A Service that never had one gets a plain new load balancer.
    expect(new World(svc()).plan().actions.find((a) => a.kind === 'create-lb')).toMatchObject({ impact: 'none', lost: null });
  });

  test('the load balancer is already gone (404 by UUID) → only the finalizer', () => {
    const world = converged();
    world.uuidLookups.set(world.lbs[0]!.uuid, { kind: 'gone' });
    world.lbs = [];
    world.service.metadata!.deletionTimestamp = new Date(0);
    expect(shape(world.plan())).toEqual(['kube remove-finalizer finalizer service.kubernetes.io/load-balancer-cleanup [none]']);
  });

  test.each([
    ['not read by UUID', undefined],
    ['unreadable by UUID', { kind: 'unreadable', error: 'cloudscale API GET …: 503' } as const],
  ])('missing from a list but %s → nothing, the finalizer stays, a lookup problem', (_name, lookup) => {
    const world = converged();
    if (lookup !== undefined) world.uuidLookups.set(world.lbs[0]!.uuid, lookup);
    world.lbs = [];
    world.service.metadata!.deletionTimestamp = new Date(0);
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems.map((p) => p.kind)).toEqual(['lookup']);
    expect(plan.problems[0]!.message).toContain('nothing is created or deleted until its absence is certain');
  });

  test('a load balancer of another cluster is not deleted and the finalizer stays', () => {
    const world = converged();
    world.lbs[0]!.tags = { [`${P}cluster`]: 'cluster-2' };
    world.service.metadata!.deletionTimestamp = new Date(0);
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems.map((p) => p.kind)).toEqual(['ownership']);
  });

  test('not LoadBalancer and no finalizer → ignored', () => {
    const service = svc();
    service.spec!.type = 'ClusterIP';
    expect(new World(service).plan()).toEqual({ service: { namespace: 'shop', name: 'web', uid: 'uid-web' }, mode: 'ignore', loadBalancer: null, actions: [], problems: [], warnings: [] });
  });

  test('spec.loadBalancerClass set → ignored, even with our finalizer', () => {
    const world = converged();
    world.service.spec!.loadBalancerClass = 'example.com/other';
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    expect(world.plan()).toMatchObject({ mode: 'ignore', actions: [], problems: [] });
  });
});

describe('problems stop the Service before any change', () => {
  test('every bad annotation is reported, no action is planned', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-health-monitor-delay-s': 'soon', 'loadbalancer-node-selector': 'a in b', 'loadbalancer-ip-mode': 'vip' });
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems.map((p) => [p.kind, p.subject])).toEqual([
      ['annotation', `${P}loadbalancer-ip-mode`],
      ['annotation', `${P}loadbalancer-health-monitor-delay-s`],
      ['annotation', `${P}loadbalancer-node-selector`],
    ]);
    expect(plan.problems[1]!.message).toBe(`${P}loadbalancer-health-monitor-delay-s: invalid value "soon": not an integer; expected an integer number of seconds ≥ 1`);
  });

  test('an unmapped node → problem naming it, no action (even for a new Service)', () => {
    const world = new World(svc());
    world.nodes.push(node(7));
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems).toEqual([{ kind: 'node-mapping', subject: 'node worker-7', message: expect.stringContaining('no server is named worker-7'), hint: expect.any(String) }]);
  });

  test('the UUID annotation and the name point to different load balancers → lookup problem', () => {
    const world = converged();
    world.lbs.push({ ...world.lbs[0]!, uuid: 'ffffffff-0000-4000-8000-000000000000', name: 'elsewhere' });
    world.annotate({ 'loadbalancer-name': 'elsewhere' });
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems.map((p) => p.kind)).toEqual(['lookup']);
  });

  test('the planner plans for the location it is given: an ambiguous one is a lookup problem, in ensure and in delete mode', () => {
    const world = converged();
    const error = new RefusedError('found more than one load balancer: a (1), b (2)', { hint: 'rename one' });
    const input = { nodes: world.nodes, servers: world.servers, floatingIps: [], subnets: world.subnets, otherServices: [], clusterId: CLUSTER, apiServerMinor: 34 };
    const deleted = { ...world.service, metadata: { ...world.service.metadata, deletionTimestamp: new Date(), finalizers: [LB_FINALIZER] } };
    for (const service of [world.service, deleted]) {
      const plan = planService({ ...input, service, location: { kind: 'ambiguous', error } });
      expect(plan.actions).toEqual([]);
      expect(plan.problems).toEqual([{ kind: 'lookup', subject: `service ${service.metadata?.namespace}/${service.metadata?.name}`, message: error.message, hint: 'rename one' }]);
    }
  });
});

describe('warnings', () => {
  test('NoValidNodes when the selector matches nothing; UnAvailableLoadBalancer when no node is eligible', () => {
    const world = new World(svc(undefined, { [`${P}loadbalancer-node-selector`]: 'role=none' }));
    expect(world.plan().warnings).toEqual([
      { reason: 'NoValidNodes', message: `No valid nodes for service found, double-check node-selector annotation: ${P}loadbalancer-node-selector: role=none` },
    ]);
    world.nodes = [];
    expect(world.plan().warnings).toEqual([{ reason: 'UnAvailableLoadBalancer', message: 'There are no available nodes for LoadBalancer' }]);
    // With no nodes and no zone annotation the API picks the zone.
    expect(world.plan().actions.find((a) => a.kind === 'create-lb')).toMatchObject({ body: { name: 'k8s-service-uid-web' } });
    expect((world.plan().actions.find((a) => a.kind === 'create-lb') as { body: object }).body).not.toHaveProperty('zone');
  });

  test('annotation warnings are passed on', () => {
    const world = new World(svc(undefined, { [`${P}loadbalancer-health-monitor-type`]: 'http', [`${P}loadbalancer-health-monitor-http`]: '{"path":"/x"}' }));
    expect(world.plan().warnings).toEqual([{ reason: 'AnnotationWarning', message: expect.stringContaining('ignoring unknown field "path"') }]);
  });
});

describe('summaries', () => {
  test('worstDowntime picks the most disruptive action across Services; refusals and no-impact actions do not count', () => {
    const a = converged();
    a.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]' });
    const b = converged();
    b.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    const c = converged();
    c.annotate({ 'loadbalancer-flavor': 'lb-large' });
    const plans = [a.plan(), b.plan(), c.plan()];
    const worst = worstDowntime(plans)!;
    expect(worst.action.kind).toBe('delete-listener');
    expect(worst.downtime).toEqual(downtimeOf('pool-swap'));
    expect(worstDowntime([c.plan(), converged().plan()])).toBeNull();
    expect(worstDowntime([a.plan()])!.downtime.class).toBe('minimal');
    expect(countByVerb(plans)).toEqual({ create: 5, update: 1, delete: 5, refuse: 1, kube: 0, wait: 1 });
  });

  test('deletion outranks a pool swap', () => {
    const a = converged();
    a.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    const b = converged();
    b.service.metadata!.deletionTimestamp = new Date(0);
    const worst = worstDowntime([a.plan(), b.plan()])!;
    expect(worst.action.kind).toBe('delete-lb');
  });
});

test('cloud actions of a plan are executable in order: every symbolic reference is created before use', () => {
  const world = new World(svc([{ name: 'a', port: 80, nodePort: 30080 }, { name: 'b', protocol: 'UDP', port: 53, nodePort: 30053 }]));
  const defined = new Set<string>();
  for (const action of cloudActions(world.plan())) {
    for (const value of Object.values(action)) {
      if (value && typeof value === 'object' && 'ref' in value && typeof value.ref === 'string' && action.kind !== 'create-lb' && action.kind !== 'create-pool') {
        expect(defined.has(value.ref)).toBe(true);
      }
    }
    if (action.kind === 'create-lb' || action.kind === 'create-pool') defined.add(action.ref);
  }
  expect(defined).toEqual(new Set(['lb', 'pool:tcp/a', 'pool:udp/b']));
});

describe('listeners moving between pools or left without one', () => {
  const shape = (actions: readonly PlannedAction[]) => actions.map((a) => `${a.verb} ${a.kind} ${a.object}`);

  test('two named ports swapping numbers: every listener delete comes before any create; the pools are kept', () => {
    const world = converged(
      svc([
        { name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 },
        { name: 'https', protocol: 'TCP', port: 443, nodePort: 30443 },
      ]),
    );
    const [http, https] = world.service.spec!.ports!;
    http!.port = 443;
    https!.port = 80;
    const plan = world.plan();
    expect(shape(plan.actions)).toEqual([
      'delete delete-listener listener tcp/80',
      'delete delete-listener listener tcp/443',
      'create create-listener listener tcp/443',
      'create create-listener listener tcp/80',
    ]);
    world.apply(plan.actions);
    expect(world.plan().actions).toEqual([]);
  });

  test('a listener left without a pool blocks the recreated pool’s port: it is deleted first; other free listeners stay', () => {
    const world = converged();
    const [pool] = world.pools;
    world.pools = [];
    world.monitors = [];
    delete world.members[pool!.uuid];
    world.listeners = world.listeners.map((l) => ({ ...l, pool: null }));
    const unrelated = { ...world.listeners[0]!, uuid: 'free-0000', name: 'tcp/9999', protocol_port: 9999 };
    world.listeners.push(unrelated);

    const plan = world.plan();
    expect(shape(plan.actions.filter((a) => a.kind.endsWith('listener') || a.kind === 'create-pool'))).toEqual([
      'create create-pool pool tcp/http',
      'delete delete-listener listener tcp/80',
      'create create-listener listener tcp/80',
    ]);
    expect(plan.actions.find((a) => a.kind === 'delete-listener')!.reason.text).toBe(
      'left without a pool (its pool was deleted), it blocks port http TCP 80 of pool tcp/http',
    );
    world.apply(plan.actions);
    expect(world.listeners.map((l) => l.name).sort()).toEqual(['tcp/80', 'tcp/9999']);
    expect(world.plan().actions).toEqual([]);
  });
});

describe('drains: the deletion that waits for the drain period is planned as pending', () => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const draining = () => {
    const world = converged(svc(), (w) => (w.drain = { seconds: 60, nowMs: start }));
    world.nodes = [node(1)];
    return world;
  };
  const pendingShape = (plan: ServicePlan) => (plan.pending ?? []).map((p) => `${p.action.kind} ${p.action.object} after ${p.after}`);

  test('the pass that starts a drain disables the member now and names its deletion after the drain period', () => {
    const plan = draining().plan();
    expect(shape(plan)).toEqual(['update update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]']);
    expect(pendingShape(plan)).toEqual(['delete-member member 10.0.0.2:30080 of pool tcp/http after 2026-01-01T00:01:00.000Z']);
  });

  test('within the drain period nothing runs, and the deletion is pending with its time', () => {
    const world = draining();
    world.converge();
    world.drain = { seconds: 60, nowMs: start + 30_000 };
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(pendingShape(plan)).toEqual(['delete-member member 10.0.0.2:30080 of pool tcp/http after 2026-01-01T00:01:00.000Z']);
    // What is pending is what the pass after the drain period runs.
    world.drain = { seconds: 60, nowMs: start + 60_000 };
    const due = world.plan();
    expect(due.actions).toEqual([plan.pending![0]!.action]);
    expect(due.pending).toBeUndefined();
  });

  test('a converged Service and members deleted at once (--drain-seconds 0) have nothing pending', () => {
    expect(converged().plan().pending).toBeUndefined();
    const world = converged(svc(), (w) => (w.drain = { seconds: 0, nowMs: start }));
    world.nodes = [node(1)];
    expect(shape(world.plan())).toEqual(['delete delete-member member 10.0.0.2:30080 of pool tcp/http [minimal]']);
    expect(world.plan().pending).toBeUndefined();
  });
});
