// The impact model, table-driven: from a converged Service, change one input (an annotation or a
// spec field), plan, and check the actions, their impact class and the expected downtime the
// plan shows; then apply the plan to an in-test cloud and check the next plan is empty.
//
// test/unit/lb-planner.test.ts covers the action lists of most changes; this file adds what it
// does not: every annotation of the table checked against the impact it declares (the README's
// reference is generated from it), the downtime figures, and the spec fields it leaves out.
import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { LB_ANNOTATIONS, type LbAnnotationName } from '../../src/core/lb/annotations.js';
import { downtimeOf, IMPACT_CLASSES, impactRank, type ImpactClass } from '../../src/core/lb/impact.js';
import { worstDowntime, type ServicePlan } from '../../src/core/lb/service-plan.js';
import { converged as convergedWorld, fip, node, P, server, SUBNET_A, SUBNET_B, svc, World } from '../support/lb-world.js';

/** The Service of these tests, annotated; one TCP port `http` 80 → 30080 unless `ports` is given. */
function service(annotations: Record<string, string> = {}, ports?: V1ServicePort[]): V1Service {
  return svc(ports, annotations);
}

/**
 * A converged World with a Floating IP in the project and node labels for the selector rows;
 * with `dual`, every server also has an address in SUBNET_B.
 */
function converged(s: V1Service, dual = false): World {
  return convergedWorld(s, (w) => {
    w.fips = [fip('192.0.2.50/32')];
    w.nodes = [node(1, { role: 'edge' }), node(2)];
    if (dual) w.servers = [1, 2].map((n) => server(n, 'rma1', [[`10.1.0.${n}`, SUBNET_B]]));
  });
}

const shape = (plan: ServicePlan) => plan.actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`);

/** The impact the plan shows for the change: `refused` if refused, else the most severe class. */
function worstImpact(plan: ServicePlan): ImpactClass {
  if (plan.actions.some((a) => a.impact === 'refused')) return 'refused';
  return plan.actions.reduce<ImpactClass>((worst, a) => (impactRank(a.impact) > impactRank(worst) ? a.impact : worst), 'none');
}

interface Row {
  /** Annotations the Service starts with (converged before the change). */
  readonly base?: Record<string, string>;
  /** The change: annotations to set (null removes), or a function changing the World. */
  readonly change: Record<string, string | null> | ((w: World) => void);
  readonly actions: readonly string[];
  /** The class this row must show; for annotations with `typical`, the class of the table. */
  readonly impact: ImpactClass;
  /** This row is the annotation's documented case: its impact must be the table's. */
  readonly typical?: boolean;
  /** The servers have a second private address, in SUBNET_B. */
  readonly dual?: boolean;
}

function prepared(row: Row): World {
  const world = converged(service(Object.fromEntries(Object.entries(row.base ?? {}).map(([k, v]) => [P + k, v]))), row.dual);
  if (typeof row.change === 'function') row.change(world);
  else world.annotate(row.change);
  return world;
}

function runRow(row: Row): ServicePlan {
  const world = prepared(row);
  const plan = world.plan();
  expect(shape(plan)).toEqual(row.actions);
  expect(worstImpact(plan)).toBe(row.impact);
  if (plan.actions.some((a) => a.kind === 'refuse')) {
    // A refusal changes nothing: applying it is a no-op and it is planned again.
    world.apply(plan.actions);
    expect(shape(world.plan())).toEqual(row.actions);
  } else {
    world.apply(plan.actions);
    expect(world.plan().actions).toEqual([]);
  }
  return plan;
}

const MONITOR = 'health monitor of pool tcp/http';
const LISTENER = 'listener tcp/80';
const MEMBERS = (port = 30080, prefix = '10.0.0') => [`member ${prefix}.1:${port} of pool tcp/http`, `member ${prefix}.2:${port} of pool tcp/http`];
/** The pool swap: the successor built and awaited beside the old pool, the listener moved, the old pool deleted. */
const swapPool = (newPool = 'tcp/http', oldPool = 'tcp/http') => [
  `create-pool pool ${newPool} [none]`,
  ...MEMBERS().map((m) => `create-member ${m.replace('tcp/http', newPool)} [none]`),
  `create-monitor health monitor of pool ${newPool} [none]`,
  `await-members 2 members of pool ${newPool} healthy [none]`,
  `delete-listener ${LISTENER} [pool-swap]`,
  `create-listener ${LISTENER} [pool-swap]`,
  `delete-monitor health monitor of pool ${oldPool} [none]`,
  ...MEMBERS().map((m) => `delete-member ${m.replace('tcp/http', oldPool)} [none]`),
  `delete-pool pool ${oldPool} [none]`,
];
/** New members added and awaited healthy before the old ones are deleted. */
const rotateMembers = (from: string[], to: string[]) => [
  ...to.map((m) => `create-member ${m} [member-rotation]`),
  `await-members ${to.length} members of pool tcp/http healthy [member-rotation]`,
  ...from.map((m) => `delete-member ${m} [member-rotation]`),
];

/**
 * Every `k8s.cloudscale.ch/loadbalancer-*` annotation. `typical` rows carry the impact the
 * annotation table declares (and the README shows); the other rows are its other outcomes.
 */
const ANNOTATION_ROWS: { readonly [K in LbAnnotationName]: readonly Row[] } = {
  uuid: [
    {
      change: { 'loadbalancer-uuid': null },
      actions: ['write-annotations annotations [none]'],
      impact: 'none',
      typical: true,
    },
  ],
  configVersion: [
    { change: { 'loadbalancer-config-version': '0' }, actions: ['write-annotations annotations [none]'], impact: 'none', typical: true },
  ],
  name: [{ change: { 'loadbalancer-name': 'shop-web' }, actions: ['rename-lb load balancer k8s-service-uid-web [none]'], impact: 'none', typical: true }],
  flavor: [{ change: { 'loadbalancer-flavor': 'lb-large' }, actions: ['refuse load balancer k8s-service-uid-web [refused]'], impact: 'refused', typical: true }],
  zone: [{ change: { 'loadbalancer-zone': 'lpg1' }, actions: ['refuse load balancer k8s-service-uid-web [refused]'], impact: 'refused', typical: true }],
  vipAddresses: [
    {
      change: { 'loadbalancer-vip-addresses': `[{"subnet":"${SUBNET_A.uuid}"}]` },
      actions: ['refuse load balancer k8s-service-uid-web [refused]'],
      impact: 'refused',
      typical: true,
    },
  ],
  floatingIps: [
    { change: { 'loadbalancer-floating-ips': '["192.0.2.50/32"]' }, actions: ['assign-floating-ip floating IP 192.0.2.50/32 [minimal]'], impact: 'minimal', typical: true },
    // Removing a Floating IP from the annotation never unassigns it.
    { base: { 'loadbalancer-floating-ips': '["192.0.2.50/32"]' }, change: { 'loadbalancer-floating-ips': null }, actions: [], impact: 'none' },
  ],
  poolAlgorithm: [{ change: { 'loadbalancer-pool-algorithm': 'least_connections' }, actions: swapPool(), impact: 'pool-swap', typical: true }],
  poolProtocol: [{ change: { 'loadbalancer-pool-protocol': 'proxyv2' }, actions: swapPool(), impact: 'pool-swap', typical: true }],
  forceHostname: [{ change: { 'loadbalancer-force-hostname': 'lb.example.com' }, actions: ['write-status status.loadBalancer [none]'], impact: 'none', typical: true }],
  ipMode: [{ change: { 'loadbalancer-ip-mode': 'VIP' }, actions: ['write-status status.loadBalancer [none]'], impact: 'none', typical: true }],
  healthMonitorDelayS: [{ change: { 'loadbalancer-health-monitor-delay-s': '7' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorTimeoutS: [{ change: { 'loadbalancer-health-monitor-timeout-s': '2' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorUpThreshold: [{ change: { 'loadbalancer-health-monitor-up-threshold': '4' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorDownThreshold: [{ change: { 'loadbalancer-health-monitor-down-threshold': '5' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorType: [
    { change: { 'loadbalancer-health-monitor-type': 'http' }, actions: swapPool(), impact: 'pool-swap', typical: true },
  ],
  healthMonitorHttp: [
    {
      base: { 'loadbalancer-health-monitor-type': 'http' },
      change: { 'loadbalancer-health-monitor-http': '{"version":"1.0"}' },
      actions: swapPool(),
      impact: 'pool-swap',
      typical: true,
    },
    { base: { 'loadbalancer-health-monitor-type': 'http' }, change: { 'loadbalancer-health-monitor-http': '{"url_path":"/ready"}' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal' },
  ],
  // Only `tcp` exists for TCP ports, so the listener protocol cannot change; the explicit
  // default is no change. (UDP ports always get `udp` listeners, see the spec rows.)
  listenerProtocol: [{ change: { 'loadbalancer-listener-protocol': 'tcp' }, actions: [], impact: 'none' }],
  listenerAllowedCidrs: [
    { change: { 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]' }, actions: [`update-listener ${LISTENER} [minimal]`], impact: 'minimal', typical: true },
  ],
  timeoutClientDataMs: [{ change: { 'loadbalancer-timeout-client-data-ms': '1000' }, actions: [`update-listener ${LISTENER} [none]`], impact: 'none', typical: true }],
  timeoutMemberConnectMs: [{ change: { 'loadbalancer-timeout-member-connect-ms': '1000' }, actions: [`update-listener ${LISTENER} [none]`], impact: 'none', typical: true }],
  timeoutMemberDataMs: [{ change: { 'loadbalancer-timeout-member-data-ms': '1000' }, actions: [`update-listener ${LISTENER} [none]`], impact: 'none', typical: true }],
  listenerAllowedSubnets: [
    // From one subnet to another: every member is replaced, the new ones first.
    {
      dual: true,
      base: { 'loadbalancer-listener-allowed-subnets': `["${SUBNET_A.uuid}"]` },
      change: { 'loadbalancer-listener-allowed-subnets': `["${SUBNET_B.uuid}"]` },
      actions: rotateMembers(MEMBERS(), MEMBERS(30080, '10.1.0')),
      impact: 'member-rotation',
      typical: true,
    },
    // Narrowing keeps the members inside: the others just go.
    {
      dual: true,
      change: { 'loadbalancer-listener-allowed-subnets': `["${SUBNET_A.uuid}"]` },
      actions: MEMBERS(30080, '10.1.0').map((m) => `delete-member ${m} [minimal]`),
      impact: 'minimal',
    },
  ],
  nodeSelector: [
    { change: { 'loadbalancer-node-selector': 'role=edge' }, actions: ['delete-member member 10.0.0.2:30080 of pool tcp/http [minimal]'], impact: 'minimal', typical: true },
    // Matching nothing leaves the pool empty: worse than the README's "minimal".
    {
      change: { 'loadbalancer-node-selector': 'role=none' },
      actions: MEMBERS().map((m) => `delete-member ${m} [no-members]`),
      impact: 'no-members',
    },
  ],
  // This tool's own annotations change nothing on the load balancer (the budget reads them).
  approveChange: [{ change: (w) => (w.service.metadata!.annotations![LB_ANNOTATIONS.approveChange.key] = '0123456789'), actions: [], impact: 'none', typical: true }],
  announcedChanges: [{ change: (w) => (w.service.metadata!.annotations![LB_ANNOTATIONS.announcedChanges.key] = '0123456789'), actions: [], impact: 'none', typical: true }],
};

describe('every annotation: actions, impact class, convergence', () => {
  const rows = Object.entries(ANNOTATION_ROWS).flatMap(([name, list]) =>
    list.map((row, i) => [`${LB_ANNOTATIONS[name as LbAnnotationName].key} #${i + 1}`, row] as const),
  );
  test.each(rows)('%s', (_name, row) => {
    runRow(row);
  });

  test.each(Object.keys(LB_ANNOTATIONS) as LbAnnotationName[])('%s: the typical row shows the impact the annotation table declares', (name) => {
    const typical = ANNOTATION_ROWS[name].filter((r) => r.typical);
    if (name === 'listenerProtocol') {
      // The only change the table could mean (tcp → something else) is rejected.
      expect(typical).toEqual([]);
      return;
    }
    expect(typical).toHaveLength(1);
    expect(typical[0]!.impact).toBe(LB_ANNOTATIONS[name].impact);
  });
});

// Spec fields not covered by test/unit/lb-planner.test.ts (port, port name, nodePort, ports
// added/removed, ETP Cluster → Local, type change and deletion are covered there).
const SPEC_ROWS: readonly (readonly [string, Row])[] = [
  [
    'externalTrafficPolicy Local → Cluster: the pool is swapped for one with members on the node port and a tcp monitor',
    {
      change: (w) => {
        Object.assign(w.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
        w.apply(w.plan().actions);
        expect(w.plan().actions).toEqual([]);
        Object.assign(w.service.spec!, { externalTrafficPolicy: 'Cluster', healthCheckNodePort: undefined });
      },
      actions: swapPool(),
      impact: 'pool-swap',
    },
  ],
  [
    'healthCheckNodePort changed under Local: every member keeps its address and port, so the pool is swapped',
    {
      change: (w) => {
        Object.assign(w.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
        w.apply(w.plan().actions);
        w.service.spec!.healthCheckNodePort = 31998;
      },
      actions: swapPool(),
      impact: 'pool-swap',
    },
  ],
  [
    'a name given to an unnamed port: pool swapped (the Go CCM README: "adding a name to a previously unnamed port" recreates it)',
    {
      change: (w) => {
        w.service.spec!.ports = [{ protocol: 'TCP', port: 80, nodePort: 30080 }];
        w.apply(w.plan().actions);
        expect(w.plan().actions).toEqual([]);
        w.service.spec!.ports[0]!.name = 'http';
      },
      actions: swapPool('tcp/http', 'tcp'),
      impact: 'pool-swap',
    },
  ],
  [
    'port protocol TCP → UDP: a new udp pool and listener replace the tcp ones, tcp/80 stops serving',
    {
      change: (w) => (w.service.spec!.ports![0]!.protocol = 'UDP'),
      actions: [
        `delete-listener ${LISTENER} [port-removal]`,
        `delete-monitor ${MONITOR} [port-removal]`,
        ...MEMBERS().map((m) => `delete-member ${m} [port-removal]`),
        'delete-pool pool tcp/http [port-removal]',
        'create-pool pool udp/http [none]',
        ...MEMBERS().map((m) => `create-member ${m.replace('tcp/http', 'udp/http')} [none]`),
        'create-monitor health monitor of pool udp/http [none]',
        'create-listener listener udp/80 [none]',
      ],
      impact: 'port-removal',
    },
  ],
  [
    'type LoadBalancer → NodePort: the load balancer is deleted',
    {
      change: (w) => (w.service.spec!.type = 'NodePort'),
      actions: ['delete-lb load balancer k8s-service-uid-web [lb-deletion]', 'write-status status.loadBalancer [none]', 'remove-finalizer finalizer service.kubernetes.io/load-balancer-cleanup [none]'],
      impact: 'lb-deletion',
    },
  ],
];

describe('spec fields: actions, impact class, convergence', () => {
  test.each(SPEC_ROWS)('%s', (_name, row) => {
    runRow(row);
  });
});

describe('expected downtime per impact class', () => {
  test.each<[ImpactClass, string, number, number | null]>([
    ['none', 'none', 0, 0],
    ['member-drain', 'none', 0, 0],
    ['member-rotation', 'none', 0, 0],
    ['minimal', 'minimal', 0, 5],
    ['port-move', 'short', 0, 20],
    ['listener-missing', 'short', 0, 50],
    ['pool-swap', 'short', 0, 45],
    ['listener-recreation', 'short', 0, 45],
    ['monitor-recreation', 'short', 0, 14],
    ['member-recreation', 'considerable', 4, 34],
    ['pool-recreation', 'considerable', 60, 120],
    ['port-removal', 'total', 0, null],
    ['no-members', 'total', 0, null],
    ['lb-lost', 'total', 0, null],
    ['lb-deletion', 'total', 0, null],
    ['refused', 'none', 0, 0],
  ])('%s → %s, %i–%s s', (impact, cls, min, max) => {
    expect(downtimeOf(impact)).toMatchObject({ class: cls, minSeconds: min, maxSeconds: max });
  });

  test('the table above names every class', () => {
    expect(IMPACT_CLASSES).toHaveLength(16);
  });

  test('a port number change says that the old number stops answering at once (not "no interruption expected")', () => {
    const world = converged(service());
    world.service.spec!.ports![0]!.port = 8080;
    const plan = world.plan();
    expect(shape(plan)).toEqual([`update-listener ${LISTENER} [port-move]`]);
    const move = plan.actions[0]!;
    expect(move.downtime).toEqual({
      class: 'short',
      minSeconds: 0,
      maxSeconds: 20,
      text: 'the old port number stops answering at once; the new one answers once the change reaches the data plane (up to ~20 s)',
    });
    expect(worstDowntime([plan])?.downtime).toEqual(move.downtime);
    world.apply(plan.actions);
    expect(world.plan().actions).toEqual([]);
  });

  test("a member rotation and its wait follow the Service's own health-check timing", () => {
    const world = converged(service({ [`${P}loadbalancer-health-monitor-delay-s`]: '5', [`${P}loadbalancer-health-monitor-up-threshold`]: '3' }));
    world.service.spec!.ports![0]!.nodePort = 30081;
    const plan = world.plan();
    const member = plan.actions.find((a) => a.kind === 'delete-member')!;
    const wait = plan.actions.find((a) => a.kind === 'await-members')!;
    expect(member.downtime).toEqual({ class: 'none', minSeconds: 0, maxSeconds: 0, text: 'no interruption: the new members pass 3 checks 5 s apart before the old ones leave' });
    // Every new member checked (up after 3, down after 3 failures, 5 s apart), plus propagation.
    expect(wait).toMatchObject({ timeoutSeconds: 5 * 3 + 20, members: ['10.0.0.1:30081', '10.0.0.2:30081'] });
    expect(worstDowntime([plan])).toBeNull();
  });

  test('every action of a plan carries the downtime of its class', () => {
    for (const row of Object.values(ANNOTATION_ROWS).flat().concat(SPEC_ROWS.map(([, r]) => r))) {
      for (const action of prepared(row).plan().actions) expect(action.downtime).toEqual(downtimeOf(action.impact));
    }
  });
});
