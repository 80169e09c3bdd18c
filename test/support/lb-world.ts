// The planner's in-test cloud: objects shaped like the API's answers, one Service, and `apply`,
// which executes planned actions the way the executor does. Shared by the planner and impact
// tests: a plan applied here must converge (the next plan has no action).
import type { V1Node, V1Service, V1ServicePort } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type {
  FloatingIp,
  HealthMonitor,
  Listener,
  LoadBalancer,
  Pool,
  PoolMember,
  Server,
  ServerInterface,
  Subnet,
  SubnetStub,
} from '../../src/core/cloudscale/types.js';
import { isPlannedRef, LB_REF, type ObjectRef, type PlannedAction } from '../../src/core/lb/actions.js';
import { assembleLocation, locateLoadBalancer, type UuidLookup } from '../../src/core/lb/actual.js';
import { ingressFromVips } from '../../src/core/lb/desired.js';
import { planService } from '../../src/core/lb/planner.js';
import { LB_FINALIZER, type DrainPolicy, type ServicePlan } from '../../src/core/lb/service-plan.js';

export const P = 'k8s.cloudscale.ch/';
export const CLUSTER = 'cluster-1';
export const API = 'https://api.example/v1';

export const subnet = (id: string, cidr: string): SubnetStub => ({ href: `${API}/subnets/${id}`, uuid: id, cidr });
export const SUBNET_A = subnet('aaaa0001-0000-4000-8000-000000000001', '10.0.0.0/24');
export const SUBNET_B = subnet('bbbb0001-0000-4000-8000-000000000001', '10.1.0.0/24');
export const PUBLIC = subnet('dddd0001-0000-4000-8000-000000000001', '192.0.2.0/24');

/** A private subnet as GET /v1/subnets lists it. */
export function projectSubnet(stub: SubnetStub): Subnet {
  return { ...stub, network: { href: `${API}/networks/private`, uuid: 'private', name: 'private' }, gateway_address: null, dns_servers: [], tags: {} };
}

export function iface(type: 'public' | 'private', addresses: [string, SubnetStub][]): ServerInterface {
  return {
    type,
    network: { href: `${API}/networks/${type}`, uuid: type, name: type },
    addresses: addresses.map(([address, s]) => ({ version: address.includes(':') ? 6 : 4, address, prefix_length: 24, gateway: null, reverse_ptr: null, subnet: s })),
  };
}

export function server(n: number, zone = 'rma1', extra: [string, SubnetStub][] = []): Server {
  return {
    href: `${API}/servers/s${n}`,
    uuid: `5e000000-0000-4000-8000-00000000000${n}`,
    name: `worker-${n}`,
    status: 'running',
    zone: { slug: zone },
    flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
    image: null,
    interfaces: [iface('public', [[`192.0.2.${n}`, PUBLIC]]), iface('private', [[`10.0.0.${n}`, SUBNET_A], ...extra])],
    created_at: '2024-01-01T00:00:00Z',
    tags: {},
  };
}

export function node(n: number, labels: Record<string, string> = {}): V1Node {
  // worker-1 is found by providerID, the others by name.
  return { metadata: { name: `worker-${n}`, labels }, spec: n === 1 ? { providerID: `cloudscale://${server(1).uuid.replaceAll('-', '').toUpperCase()}` } : {} };
}

export function svc(ports: V1ServicePort[] = [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }], annotations: Record<string, string> = {}): V1Service {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', annotations: { ...annotations }, finalizers: [] },
    spec: { type: 'LoadBalancer', ports, externalTrafficPolicy: 'Cluster' },
    status: { loadBalancer: {} },
  };
}

export const stub = (o: { href: string; uuid: string; name: string }) => ({ href: o.href, uuid: o.uuid, name: o.name });

/** A cloud and one Service; `apply` executes actions the way the executor will. */
export class World {
  lbs: LoadBalancer[] = [];
  pools: Pool[] = [];
  members: Record<string, PoolMember[]> = {};
  listeners: Listener[] = [];
  monitors: HealthMonitor[] = [];
  fips: FloatingIp[] = [];
  subnets: Subnet[] = [projectSubnet(SUBNET_A), projectSubnet(SUBNET_B)];
  servers: Server[] = [server(1), server(2)];
  nodes: V1Node[] = [node(1), node(2)];
  others: V1Service[] = [];
  apiServerMinor: number | null = 34;
  /** This cluster's kube-system uid; undefined: not tagged nor checked (most tests). */
  kubeSystemUid: string | undefined = undefined;
  /** Reads by UUID of load balancers missing from the list (the pass makes them; see snapshot.ts). */
  uuidLookups = new Map<string, UuidLookup>();
  /** How members leave; unset: deleted at once, as the Go CCM does. */
  drain: DrainPolicy | undefined = undefined;
  private seq = 0;

  constructor(public service: V1Service) {}

  private uuid(): string {
    this.seq += 1;
    return `00000000-0000-4000-8000-${String(this.seq).padStart(12, '0')}`;
  }

  plan(): ServicePlan {
    const location = assembleLocation(locateLoadBalancer(this.service, this.lbs, CLUSTER), {
      pools: this.pools,
      membersByPool: this.members,
      listeners: this.listeners,
      monitors: this.monitors,
      floatingIps: this.fips,
    });
    return planService({
      service: this.service,
      nodes: this.nodes,
      servers: this.servers,
      location,
      floatingIps: this.fips,
      subnets: this.subnets,
      otherServices: this.others,
      clusterId: CLUSTER,
      kubeSystemUid: this.kubeSystemUid,
      apiServerMinor: this.apiServerMinor,
      uuidLookups: this.uuidLookups,
      ...(this.drain === undefined ? {} : { drain: this.drain }),
    });
  }

  /** Plans, applies, and returns the plan. */
  converge(): ServicePlan {
    const plan = this.plan();
    this.apply(plan.actions);
    return plan;
  }

  apply(actions: readonly PlannedAction[]): void {
    const refs = new Map<string, string>();
    const resolve = (ref: ObjectRef) => (isPlannedRef(ref) ? refs.get(ref.ref)! : ref.uuid);
    const meta = this.service.metadata!;
    for (const a of actions) {
      switch (a.kind) {
        case 'add-finalizer':
          meta.finalizers = [...(meta.finalizers ?? []), LB_FINALIZER];
          break;
        case 'remove-finalizer':
          meta.finalizers = (meta.finalizers ?? []).filter((f) => f !== LB_FINALIZER);
          break;
        case 'write-annotations': {
          const lb = this.lbs.find((l) => l.uuid === refs.get(LB_REF));
          for (const c of a.changes) {
            meta.annotations![c.key] = 'value' in c.to ? c.to.value : c.to.attribute === 'uuid' ? lb!.uuid : lb!.zone.slug;
          }
          break;
        }
        case 'write-status': {
          const ingress = 'ingress' in a.to ? [...a.to.ingress] : ingressFromVips(this.lbs.find((l) => l.uuid === refs.get(LB_REF))!.vip_addresses, a.to.settings);
          this.service.status = { loadBalancer: { ingress } };
          break;
        }
        case 'create-lb': {
          const uuid = this.uuid();
          const vips =
            a.body.vip_addresses.length === 0
              ? [
                  { version: 4 as const, address: '198.51.100.20', subnet: PUBLIC },
                  { version: 6 as const, address: '2001:db8::20', subnet: PUBLIC },
                ]
              : a.body.vip_addresses.map((v, i) => ({ version: 4 as const, address: v.address ?? `10.0.0.${200 + i}`, subnet: subnet(v.subnet, '10.0.0.0/24') }));
          this.lbs.push({
            href: `${API}/load-balancers/${uuid}`,
            uuid,
            name: a.body.name,
            created_at: '',
            status: 'running',
            zone: { slug: a.body.zone ?? 'rma1' },
            flavor: { slug: a.body.flavor, name: a.body.flavor },
            vip_addresses: vips,
            tags: { ...a.body.tags },
          });
          refs.set(a.ref, uuid);
          break;
        }
        case 'delete-lb': {
          const uuid = a.loadBalancer.uuid;
          this.lbs = this.lbs.filter((l) => l.uuid !== uuid);
          const gone = this.pools.filter((p) => p.load_balancer.uuid === uuid).map((p) => p.uuid);
          this.pools = this.pools.filter((p) => !gone.includes(p.uuid));
          this.listeners = this.listeners.filter((l) => l.load_balancer.uuid !== uuid);
          this.monitors = this.monitors.filter((m) => m.load_balancer.uuid !== uuid);
          for (const f of this.fips) if (f.load_balancer?.uuid === uuid) f.load_balancer = null;
          break;
        }
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
          delete this.members[a.pool.uuid];
          break;
        case 'create-member': {
          const uuid = this.uuid();
          const pool = this.pools.find((p) => p.uuid === resolve(a.pool))!;
          const s = this.servers.flatMap((x) => x.interfaces.flatMap((i) => i.addresses)).find((x) => x.subnet.uuid === a.body.subnet)!.subnet;
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
        case 'update-member':
          Object.assign(this.members[a.pool.uuid]!.find((m) => m.uuid === a.member.uuid)!, a.patch);
          break;
        case 'await-members':
          // Members of this world are up as soon as they exist.
          break;
        case 'create-listener': {
          const uuid = this.uuid();
          const pool = this.pools.find((p) => p.uuid === resolve(a.pool))!;
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
          const pool = this.pools.find((p) => p.uuid === resolve(a.pool))!;
          const httpType = a.body.type === 'http' || a.body.type === 'https';
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
            // The API fills defaults for HTTP types and answers null for the others.
            http: httpType ? { expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.1', host: null, ...a.body.http } : null,
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
          const lb = this.lbs.find((l) => l.uuid === resolve(a.loadBalancer))!;
          const f = this.fips.find((x) => x.network === a.floatingIp.network)!;
          f.load_balancer = stub(lb);
          f.server = null;
          break;
        }
        case 'refuse':
          break;
      }
    }
  }

  annotate(values: Record<string, string | null>): void {
    const annotations = this.service.metadata!.annotations!;
    for (const [k, v] of Object.entries(values)) {
      if (v === null) delete annotations[P + k];
      else annotations[P + k] = v;
    }
  }
}

export function fip(network: string): FloatingIp {
  return { href: `${API}/floating-ips/${network.split('/')[0]}`, created_at: '', network, ip_version: 4, server: null, load_balancer: null, region: { slug: 'rma' }, type: 'regional', next_hop: null, reverse_ptr: null, tags: {} };
}

/** A World whose Service is converged: created, applied, and planned again to nothing. */
export function converged(service = svc(), setup: (w: World) => void = () => undefined): World {
  const world = new World(service);
  setup(world);
  world.converge();
  const again = world.plan();
  expect(again.problems).toEqual([]);
  expect(again.actions).toEqual([]);
  return world;
}
