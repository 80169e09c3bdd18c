// The impact model, table-driven: from a converged Service, change one input (an annotation or a
// spec field), plan, and check the actions, their impact class and the expected downtime the
// plan shows; then apply the plan to an in-test cloud and check the next plan is empty.
//
// test/unit/lb-planner.test.ts covers the action lists of most changes; this file adds what it
// does not: every annotation of the table checked against the impact it declares (the README's
// reference is generated from it), the downtime figures, and the spec fields it leaves out.
import type { V1Node, V1Service, V1ServicePort } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import type {
  FloatingIp,
  HealthMonitor,
  Listener,
  LoadBalancer,
  Pool,
  PoolMember,
  Server,
  SubnetStub,
} from '../../src/core/cloudscale/types.js';
import { isPlannedRef, LB_REF, type ObjectRef, type PlannedAction } from '../../src/core/lb/actions.js';
import { assembleActualLoadBalancer, findLoadBalancer } from '../../src/core/lb/actual.js';
import { LB_ANNOTATIONS, type LbAnnotationName } from '../../src/core/lb/annotations.js';
import { ingressFromVips } from '../../src/core/lb/desired.js';
import { downtimeOf, IMPACT_CLASSES, impactRank, type ImpactClass } from '../../src/core/lb/impact.js';
import { LB_FINALIZER, planService, worstDowntime, type ServicePlan } from '../../src/core/lb/planner.js';

const P = 'k8s.cloudscale.ch/';
const API = 'https://api.example/v1';
const subnet = (uuid: string, cidr: string): SubnetStub => ({ href: `${API}/subnets/${uuid}`, uuid, cidr });
const SUBNET_A = subnet('aaaa0001-0000-4000-8000-000000000001', '10.0.0.0/24');
const SUBNET_B = subnet('bbbb0001-0000-4000-8000-000000000001', '10.1.0.0/24');
const PUBLIC = subnet('dddd0001-0000-4000-8000-000000000001', '192.0.2.0/24');

/** A server with a private address in SUBNET_A, and with `dual` a second one in SUBNET_B. */
function server(n: number, dual = false): Server {
  const address = (a: string, s: SubnetStub) => ({ version: 4 as const, address: a, prefix_length: 24, gateway: null, reverse_ptr: null, subnet: s });
  return {
    href: `${API}/servers/s${n}`,
    uuid: `5e000000-0000-4000-8000-00000000000${n}`,
    name: `worker-${n}`,
    status: 'running',
    zone: { slug: 'rma1' },
    flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
    image: null,
    interfaces: [
      { type: 'public', network: { href: `${API}/networks/pub`, uuid: 'pub', name: 'public' }, addresses: [address(`192.0.2.${n}`, PUBLIC)] },
      {
        type: 'private',
        network: { href: `${API}/networks/priv`, uuid: 'priv', name: 'private' },
        addresses: [address(`10.0.0.${n}`, SUBNET_A), ...(dual ? [address(`10.1.0.${n}`, SUBNET_B)] : [])],
      },
    ],
    created_at: '2024-01-01T00:00:00Z',
    tags: {},
  };
}

const node = (n: number, labels: Record<string, string> = {}): V1Node => ({ metadata: { name: `worker-${n}`, labels }, spec: {} });

function fip(network: string): FloatingIp {
  return { href: `${API}/floating-ips/${network.split('/')[0]}`, created_at: '', network, ip_version: 4, server: null, load_balancer: null, region: { slug: 'rma' }, type: 'regional', next_hop: null, reverse_ptr: null, tags: {} };
}

function service(annotations: Record<string, string> = {}, ports?: V1ServicePort[]): V1Service {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', annotations: { ...annotations }, finalizers: [] },
    spec: {
      type: 'LoadBalancer',
      ports: ports ?? [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }],
      externalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: {} },
  };
}

const stub = (o: { href: string; uuid: string; name: string }) => ({ href: o.href, uuid: o.uuid, name: o.name });

/** One Service and a cloud shaped like the API's answers; `apply` executes actions as the executor does. */
class World {
  lbs: LoadBalancer[] = [];
  pools: Pool[] = [];
  members: Record<string, PoolMember[]> = {};
  listeners: Listener[] = [];
  monitors: HealthMonitor[] = [];
  fips: FloatingIp[] = [fip('192.0.2.50/32')];
  servers: Server[] = [server(1), server(2)];
  nodes: V1Node[] = [node(1, { role: 'edge' }), node(2)];
  private seq = 0;

  constructor(public svc: V1Service) {}

  private uuid(): string {
    this.seq += 1;
    return `00000000-0000-4000-8000-${String(this.seq).padStart(12, '0')}`;
  }

  plan(): ServicePlan {
    const lb = findLoadBalancer(this.svc, this.lbs);
    const actual =
      lb === undefined
        ? null
        : assembleActualLoadBalancer(lb, { pools: this.pools, membersByPool: this.members, listeners: this.listeners, monitors: this.monitors, floatingIps: this.fips });
    return planService({
      service: this.svc,
      nodes: this.nodes,
      servers: this.servers,
      loadBalancers: this.lbs,
      actual,
      floatingIps: this.fips,
      otherServices: [],
      clusterId: 'cluster-1',
      apiServerMinor: 34,
    });
  }

  apply(actions: readonly PlannedAction[]): void {
    const refs = new Map<string, string>();
    const resolve = (ref: ObjectRef) => (isPlannedRef(ref) ? refs.get(ref.ref)! : ref.uuid);
    const meta = this.svc.metadata!;
    const newLb = () => this.lbs.find((l) => l.uuid === refs.get(LB_REF))!;
    const poolOf = (ref: ObjectRef) => this.pools.find((p) => p.uuid === resolve(ref))!;
    for (const a of actions) {
      switch (a.kind) {
        case 'add-finalizer':
          meta.finalizers = [...(meta.finalizers ?? []), LB_FINALIZER];
          break;
        case 'remove-finalizer':
          meta.finalizers = (meta.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
          break;
        case 'write-annotations':
          for (const c of a.changes) {
            meta.annotations![c.key] = 'value' in c.to ? c.to.value : c.to.attribute === 'uuid' ? newLb().uuid : newLb().zone.slug;
          }
          break;
        case 'write-status':
          this.svc.status = { loadBalancer: { ingress: 'ingress' in a.to ? [...a.to.ingress] : ingressFromVips(newLb().vip_addresses, a.to.settings) } };
          break;
        case 'create-lb': {
          const uuid = this.uuid();
          this.lbs.push({
            href: `${API}/load-balancers/${uuid}`,
            uuid,
            name: a.body.name,
            created_at: '',
            status: 'running',
            zone: { slug: a.body.zone ?? 'rma1' },
            flavor: { slug: a.body.flavor, name: a.body.flavor },
            vip_addresses: [{ version: 4, address: '198.51.100.20', subnet: PUBLIC }],
            tags: { ...a.body.tags },
          });
          refs.set(a.ref, uuid);
          break;
        }
        case 'delete-lb':
          this.lbs = this.lbs.filter((l) => l.uuid !== a.loadBalancer.uuid);
          this.pools = this.pools.filter((p) => p.load_balancer.uuid !== a.loadBalancer.uuid);
          this.listeners = this.listeners.filter((l) => l.load_balancer.uuid !== a.loadBalancer.uuid);
          this.monitors = this.monitors.filter((m) => m.load_balancer.uuid !== a.loadBalancer.uuid);
          for (const f of this.fips) if (f.load_balancer?.uuid === a.loadBalancer.uuid) f.load_balancer = null;
          break;
        case 'rename-lb':
          this.lbs.find((l) => l.uuid === a.loadBalancer.uuid)!.name = a.patch.name;
          break;
        case 'tag-lb':
          this.lbs.find((l) => l.uuid === a.loadBalancer.uuid)!.tags = { ...a.patch.tags };
          break;
        case 'create-pool': {
          const uuid = this.uuid();
          const lb = this.lbs.find((l) => l.uuid === resolve(a.loadBalancer))!;
          this.pools.push({ href: `${API}/load-balancers/pools/${uuid}`, uuid, name: a.body.name, created_at: '', load_balancer: stub(lb), algorithm: a.body.algorithm, protocol: a.body.protocol, tags: {} });
          this.members[uuid] = [];
          refs.set(a.ref, uuid);
          break;
        }
        case 'delete-pool':
          this.pools = this.pools.filter((p) => p.uuid !== a.pool.uuid);
          this.listeners = this.listeners.filter((l) => l.pool?.uuid !== a.pool.uuid);
          this.monitors = this.monitors.filter((m) => m.pool.uuid !== a.pool.uuid);
          delete this.members[a.pool.uuid];
          break;
        case 'create-member': {
          const uuid = this.uuid();
          const pool = poolOf(a.pool);
          const s = [SUBNET_A, SUBNET_B].find((x) => x.uuid === a.body.subnet)!;
          this.members[pool.uuid]!.push({
            href: `${pool.href}/members/${uuid}`,
            uuid,
            name: a.body.name,
            created_at: '',
            enabled: a.body.enabled ?? true,
            pool: stub(pool),
            load_balancer: pool.load_balancer,
            protocol_port: a.body.protocol_port,
            monitor_port: a.body.monitor_port ?? null,
            address: a.body.address,
            subnet: { ...s },
            monitor_status: 'up',
            tags: {},
          });
          break;
        }
        case 'delete-member':
          this.members[a.pool.uuid] = this.members[a.pool.uuid]!.filter((m) => m.uuid !== a.member.uuid);
          break;
        case 'create-listener': {
          const uuid = this.uuid();
          const pool = poolOf(a.pool);
          this.listeners.push({ href: `${API}/load-balancers/listeners/${uuid}`, uuid, created_at: '', pool: stub(pool), load_balancer: pool.load_balancer, ...a.body, allowed_cidrs: [...a.body.allowed_cidrs], tags: {} });
          break;
        }
        case 'delete-listener':
          this.listeners = this.listeners.filter((l) => l.uuid !== a.listener.uuid);
          break;
        case 'update-listener':
          Object.assign(this.listeners.find((l) => l.uuid === a.listener.uuid)!, a.patch);
          break;
        case 'create-monitor': {
          const uuid = this.uuid();
          const pool = poolOf(a.pool);
          const http = a.body.type === 'http' || a.body.type === 'https';
          this.monitors.push({
            href: `${API}/load-balancers/health-monitors/${uuid}`,
            uuid,
            created_at: '',
            pool: stub(pool),
            load_balancer: pool.load_balancer,
            delay_s: a.body.delay_s,
            timeout_s: a.body.timeout_s,
            up_threshold: a.body.up_threshold,
            down_threshold: a.body.down_threshold,
            type: a.body.type,
            http: http ? { expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.1', host: null, ...a.body.http } : null,
            tags: {},
          });
          break;
        }
        case 'delete-monitor':
          this.monitors = this.monitors.filter((m) => m.uuid !== a.monitor.uuid);
          break;
        case 'update-monitor': {
          const m = this.monitors.find((x) => x.uuid === a.monitor.uuid)!;
          if ('http' in a.patch) m.http = { ...m.http!, ...a.patch.http };
          else Object.assign(m, a.patch);
          break;
        }
        case 'assign-floating-ip': {
          const f = this.fips.find((x) => x.network === a.floatingIp.network)!;
          f.load_balancer = stub(this.lbs.find((l) => l.uuid === resolve(a.loadBalancer))!);
          break;
        }
        case 'refuse':
          break;
      }
    }
  }

  annotate(values: Record<string, string | null>): void {
    const annotations = this.svc.metadata!.annotations!;
    for (const [k, v] of Object.entries(values)) {
      if (v === null) delete annotations[P + k];
      else annotations[P + k] = v;
    }
  }
}

/** A World whose Service was created and applied; the next plan must be empty. */
function converged(svc: V1Service, dual = false): World {
  const world = new World(svc);
  if (dual) world.servers = [server(1, true), server(2, true)];
  world.apply(world.plan().actions);
  const again = world.plan();
  expect(again.problems).toEqual([]);
  expect(again.actions).toEqual([]);
  return world;
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
const recreatePool = (impact: ImpactClass, newPool = 'tcp/http', oldPool = 'tcp/http') => [
  `delete-listener ${LISTENER} [${impact}]`,
  `delete-monitor health monitor of pool ${oldPool} [${impact}]`,
  ...MEMBERS().map((m) => `delete-member ${m.replace('tcp/http', oldPool)} [${impact}]`),
  `delete-pool pool ${oldPool} [${impact}]`,
  `create-pool pool ${newPool} [${impact}]`,
  ...MEMBERS().map((m) => `create-member ${m.replace('tcp/http', newPool)} [${impact}]`),
  `create-listener ${LISTENER} [${impact}]`,
  `create-monitor health monitor of pool ${newPool} [${impact}]`,
];

/**
 * Every `k8s.cloudscale.ch/loadbalancer-*` annotation. `typical` rows carry the impact the
 * annotation table declares (and the README shows); the other rows are its other outcomes.
 */
const ANNOTATION_ROWS: { readonly [K in LbAnnotationName]: readonly Row[] } = {
  uuid: [
    {
      change: { 'loadbalancer-uuid': null },
      actions: ['write-annotations service shop/web annotations [none]'],
      impact: 'none',
      typical: true,
    },
  ],
  configVersion: [
    { change: { 'loadbalancer-config-version': '0' }, actions: ['write-annotations service shop/web annotations [none]'], impact: 'none', typical: true },
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
  poolAlgorithm: [{ change: { 'loadbalancer-pool-algorithm': 'least_connections' }, actions: recreatePool('pool-recreation'), impact: 'pool-recreation', typical: true }],
  poolProtocol: [{ change: { 'loadbalancer-pool-protocol': 'proxyv2' }, actions: recreatePool('pool-recreation'), impact: 'pool-recreation', typical: true }],
  forceHostname: [{ change: { 'loadbalancer-force-hostname': 'lb.example.com' }, actions: ['write-status service shop/web status [none]'], impact: 'none', typical: true }],
  ipMode: [{ change: { 'loadbalancer-ip-mode': 'VIP' }, actions: ['write-status service shop/web status [none]'], impact: 'none', typical: true }],
  healthMonitorDelayS: [{ change: { 'loadbalancer-health-monitor-delay-s': '7' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorTimeoutS: [{ change: { 'loadbalancer-health-monitor-timeout-s': '2' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorUpThreshold: [{ change: { 'loadbalancer-health-monitor-up-threshold': '4' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorDownThreshold: [{ change: { 'loadbalancer-health-monitor-down-threshold': '5' }, actions: [`update-monitor ${MONITOR} [minimal]`], impact: 'minimal', typical: true }],
  healthMonitorType: [
    { change: { 'loadbalancer-health-monitor-type': 'http' }, actions: [`delete-monitor ${MONITOR} [monitor-recreation]`, `create-monitor ${MONITOR} [monitor-recreation]`], impact: 'monitor-recreation', typical: true },
  ],
  healthMonitorHttp: [
    {
      base: { 'loadbalancer-health-monitor-type': 'http' },
      change: { 'loadbalancer-health-monitor-http': '{"version":"1.0"}' },
      actions: [`delete-monitor ${MONITOR} [monitor-recreation]`, `create-monitor ${MONITOR} [monitor-recreation]`],
      impact: 'monitor-recreation',
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
    // From one subnet to another: every member is replaced.
    {
      dual: true,
      base: { 'loadbalancer-listener-allowed-subnets': `["${SUBNET_A.uuid}"]` },
      change: { 'loadbalancer-listener-allowed-subnets': `["${SUBNET_B.uuid}"]` },
      actions: [
        ...MEMBERS().map((m) => `delete-member ${m} [member-recreation]`),
        ...MEMBERS(30080, '10.1.0').map((m) => `create-member ${m} [member-recreation]`),
      ],
      impact: 'member-recreation',
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
    'externalTrafficPolicy Local → Cluster: members back to the node port, monitor back to tcp',
    {
      change: (w) => {
        Object.assign(w.svc.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
        w.apply(w.plan().actions);
        expect(w.plan().actions).toEqual([]);
        Object.assign(w.svc.spec!, { externalTrafficPolicy: 'Cluster', healthCheckNodePort: undefined });
      },
      actions: [
        ...MEMBERS().map((m) => `delete-member ${m} [member-recreation]`),
        ...MEMBERS().map((m) => `create-member ${m} [member-recreation]`),
        `delete-monitor ${MONITOR} [monitor-recreation]`,
        `create-monitor ${MONITOR} [monitor-recreation]`,
      ],
      impact: 'member-recreation',
    },
  ],
  [
    'healthCheckNodePort changed under Local: members recreated, the monitor stays',
    {
      change: (w) => {
        Object.assign(w.svc.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
        w.apply(w.plan().actions);
        w.svc.spec!.healthCheckNodePort = 31998;
      },
      actions: [...MEMBERS().map((m) => `delete-member ${m} [member-recreation]`), ...MEMBERS().map((m) => `create-member ${m} [member-recreation]`)],
      impact: 'member-recreation',
    },
  ],
  [
    'a name given to an unnamed port: pool recreated (the README: "adding a name to a previously unnamed port")',
    {
      change: (w) => {
        w.svc.spec!.ports = [{ protocol: 'TCP', port: 80, nodePort: 30080 }];
        w.apply(w.plan().actions);
        expect(w.plan().actions).toEqual([]);
        w.svc.spec!.ports[0]!.name = 'http';
      },
      actions: recreatePool('pool-recreation', 'tcp/http', 'tcp'),
      impact: 'pool-recreation',
    },
  ],
  [
    'port protocol TCP → UDP: a new udp pool and listener replace the tcp ones',
    {
      change: (w) => (w.svc.spec!.ports![0]!.protocol = 'UDP'),
      actions: [
        `delete-listener ${LISTENER} [none]`,
        `delete-monitor ${MONITOR} [none]`,
        ...MEMBERS().map((m) => `delete-member ${m} [none]`),
        'delete-pool pool tcp/http [none]',
        'create-pool pool udp/http [none]',
        ...MEMBERS().map((m) => `create-member ${m.replace('tcp/http', 'udp/http')} [none]`),
        'create-listener listener udp/80 [none]',
        'create-monitor health monitor of pool udp/http [none]',
      ],
      impact: 'none',
    },
  ],
  [
    'type LoadBalancer → NodePort: the load balancer is deleted',
    {
      change: (w) => (w.svc.spec!.type = 'NodePort'),
      actions: ['delete-lb load balancer k8s-service-uid-web [lb-deletion]', 'write-status service shop/web status [none]', 'remove-finalizer service shop/web finalizer [none]'],
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
    ['minimal', 'minimal', 0, 5],
    ['listener-recreation', 'short', 0, 15],
    ['monitor-recreation', 'short', 0, 14],
    ['member-recreation', 'considerable', 4, 34],
    ['pool-recreation', 'considerable', 60, 120],
    ['no-members', 'total', 0, null],
    ['lb-deletion', 'total', 0, null],
    ['refused', 'none', 0, 0],
  ])('%s → %s, %i–%s s', (impact, cls, min, max) => {
    expect(downtimeOf(impact)).toMatchObject({ class: cls, minSeconds: min, maxSeconds: max });
  });

  test('the table above names every class', () => {
    expect(IMPACT_CLASSES).toHaveLength(9);
  });

  test("member and monitor recreation follow the Service's own health-check timing", () => {
    const world = converged(service({ [`${P}loadbalancer-health-monitor-delay-s`]: '5', [`${P}loadbalancer-health-monitor-up-threshold`]: '3' }));
    Object.assign(world.svc.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
    const plan = world.plan();
    const member = plan.actions.find((a) => a.kind === 'delete-member')!;
    const monitor = plan.actions.find((a) => a.kind === 'create-monitor')!;
    expect(member.downtime).toEqual({ class: 'considerable', minSeconds: 15, maxSeconds: 45, text: 'no healthy member until the new ones pass 3 checks 5 s apart (~15–45 s)' });
    expect(monitor.downtime).toEqual({ class: 'short', minSeconds: 0, maxSeconds: 25, text: 'new connections may fail until members pass 3 checks 5 s apart (~25 s at most)' });
    expect(worstDowntime([plan])?.action).toBe(member);
  });

  test('every action of a plan carries the downtime of its class', () => {
    for (const row of Object.values(ANNOTATION_ROWS).flat().concat(SPEC_ROWS.map(([, r]) => r))) {
      for (const action of prepared(row).plan().actions) expect(action.downtime).toEqual(downtimeOf(action.impact));
    }
  });
});
