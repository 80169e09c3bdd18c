// The simulated cloud: records of every object, and their rendering into the API's JSON shapes.
// Records hold references as UUIDs; stubs (`{href, uuid, name}`) are built when an object is
// rendered, so a rename shows up everywhere at once, as with the real API.

import type {
  FloatingIp,
  HealthMonitor,
  HealthMonitorHttp,
  HealthMonitorType,
  Listener,
  ListenerProtocol,
  LoadBalancer,
  MonitorStatus,
  Network,
  ObjectStub,
  Pool,
  PoolAlgorithm,
  PoolMember,
  PoolProtocol,
  Server,
  ServerFlavor,
  Subnet,
  SubnetStub,
  Tags,
} from '../core/cloudscale/types.js';
import { DEFAULT_BEHAVIOUR, type SimBehaviour } from './behaviour.js';
import { DEFAULT_IMAGE, LB_FLAVORS, PUBLIC_PREFIX, PUBLIC_VIP_NETWORKS, ZONES, type ServerImage, type Zone } from './catalog.js';
import { DEFAULT_DATA_PLANE, type DataPlaneTimings, type PropagationKind } from './dataplane-timings.js';
import { DataPlane, type ConfigChange } from './dataplane.js';
import { addressAt, enclosingNetwork, parseCidr, type CidrNetwork, type IpAddress } from './net.js';
import { seededUuid, type ValidSeed } from './seed.js';

export interface NetworkRecord {
  uuid: string;
  name: string;
  createdAt: string;
  zone: Zone;
  mtu: number;
  tags: Tags;
  /** The provider's public network of a zone: referenced by stubs, never listed. */
  isPublic: boolean;
}

export interface SubnetRecord {
  uuid: string;
  cidr: CidrNetwork;
  networkUuid: string;
  gatewayAddress: string | null;
  dnsServers: string[];
  tags: Tags;
  isPublic: boolean;
}

export interface ServerAddressRecord {
  ip: IpAddress;
  subnetUuid: string;
  gateway: string | null;
  reversePtr: string | null;
}

export interface ServerRecord {
  uuid: string;
  name: string;
  createdAt: string;
  flavor: ServerFlavor;
  image: ServerImage;
  /** Size of the root volume. */
  volumeSizeGb: number;
  zone: Zone;
  tags: Tags;
  /** The settled status; `changing` is shown while `changingUntil` lies in the future. */
  status: 'running' | 'stopped';
  changingUntil: number;
  interfaces: ServerInterfaceRecord[];
}

export interface ServerInterfaceRecord {
  type: 'public' | 'private';
  networkUuid: string;
  addresses: ServerAddressRecord[];
}

export interface FloatingIpRecord {
  network: CidrNetwork;
  createdAt: string;
  type: 'regional' | 'global';
  region: string | null;
  serverUuid: string | null;
  loadBalancerUuid: string | null;
  reversePtr: string | null;
  tags: Tags;
}

export interface LoadBalancerRecord {
  uuid: string;
  name: string;
  createdAt: string;
  zone: Zone;
  flavorSlug: string;
  vips: { ip: IpAddress; subnetUuid: string }[];
  tags: Tags;
  /** `changing` until this clock value, `running` afterwards (unless a fault pins the status). */
  readyAt: number;
}

export interface PoolRecord {
  uuid: string;
  name: string;
  createdAt: string;
  loadBalancerUuid: string;
  algorithm: PoolAlgorithm;
  protocol: PoolProtocol;
  tags: Tags;
}

export interface MemberRecord {
  uuid: string;
  name: string;
  createdAt: string;
  poolUuid: string;
  enabled: boolean;
  protocolPort: number;
  monitorPort: number | null;
  address: IpAddress;
  subnetUuid: string;
  tags: Tags;
}

export interface ListenerRecord {
  uuid: string;
  name: string;
  createdAt: string;
  poolUuid: string | null;
  loadBalancerUuid: string;
  protocol: ListenerProtocol;
  protocolPort: number;
  allowedCidrs: string[];
  timeoutClientDataMs: number;
  timeoutMemberConnectMs: number;
  timeoutMemberDataMs: number;
  tags: Tags;
}

export interface MonitorRecord {
  uuid: string;
  createdAt: string;
  poolUuid: string;
  delayS: number;
  timeoutS: number;
  upThreshold: number;
  downThreshold: number;
  type: HealthMonitorType;
  http: HealthMonitorHttp | null;
  tags: Tags;
}

/** Fields the real API returns on servers beyond those the tool's types declare. */
export interface SimServer extends Server {
  volumes: { href: string; uuid: string; name: string; type: 'ssd' | 'bulk'; size_gb: number }[];
  ssh_fingerprints: string[];
  ssh_host_keys: string[];
  anti_affinity_with: { href: string; uuid: string }[];
  server_groups: ObjectStub[];
}

export type PinnedLbStatus = 'changing' | 'error';

/** ISO-8601 UTC with microseconds, as the API writes `created_at`. */
export function apiTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/Z$/, '000Z');
}

export class SimState {
  readonly networks = new Map<string, NetworkRecord>();
  readonly subnets = new Map<string, SubnetRecord>();
  readonly servers = new Map<string, ServerRecord>();
  /** Keyed by the floating IP's address (the part of `network` before the slash). */
  readonly floatingIps = new Map<string, FloatingIpRecord>();
  readonly loadBalancers = new Map<string, LoadBalancerRecord>();
  readonly pools = new Map<string, PoolRecord>();
  readonly members = new Map<string, MemberRecord>();
  readonly listeners = new Map<string, ListenerRecord>();
  readonly monitors = new Map<string, MonitorRecord>();
  /** LB status pinned by a fault, keyed by LB UUID or name. */
  pinnedLbStatus = new Map<string, PinnedLbStatus>();
  /** Behaviour switches (docs/sim.md, "Behaviour switches"). */
  behaviour: SimBehaviour = { ...DEFAULT_BEHAVIOUR };
  /** What the load balancers do, behind the API (docs/sim.md, "Data plane"). */
  readonly dataPlane: DataPlane;

  /**
   * `dataPlane`: the timings in force (default: the forgiving ones); `timeScale` multiplies the
   * data plane's durations (docs/sim.md, "Worlds").
   */
  constructor(
    readonly baseUrl: string,
    seed: ValidSeed,
    readonly now: () => number = Date.now,
    options: { dataPlane?: DataPlaneTimings; timeScale?: number } = {},
  ) {
    this.dataPlane = new DataPlane(
      options.dataPlane ?? DEFAULT_DATA_PLANE,
      now,
      (address, at) => this.serverHealthyAt(address, at),
      options.timeScale,
    );
    const createdAt = apiTimestamp(now());
    for (const zone of ZONES) {
      const vipNetworks = PUBLIC_VIP_NETWORKS[zone];
      this.publicSubnet(zone, parseCidr(vipNetworks.ipv4)!);
      this.publicSubnet(zone, parseCidr(vipNetworks.ipv6)!);
    }
    for (const network of seed.networks) {
      this.networks.set(network.uuid, {
        uuid: network.uuid,
        name: network.name,
        createdAt,
        zone: network.zone,
        mtu: network.mtu,
        tags: network.tags,
        isPublic: false,
      });
      for (const subnet of network.subnets) {
        this.subnets.set(subnet.uuid, {
          uuid: subnet.uuid,
          cidr: subnet.network,
          networkUuid: network.uuid,
          gatewayAddress: subnet.gatewayAddress,
          dnsServers: subnet.dnsServers,
          tags: subnet.tags,
          isPublic: false,
        });
      }
    }
    for (const server of seed.servers) {
      this.addServer({
        uuid: server.uuid,
        name: server.name,
        createdAt,
        flavor: server.flavor,
        image: DEFAULT_IMAGE,
        volumeSizeGb: 10,
        zone: server.zone,
        tags: server.tags,
        status: server.status,
        changingUntil: 0,
        interfaces: server.interfaces.map((iface) => {
          if (iface.type === 'private') {
            return {
              type: 'private' as const,
              networkUuid: iface.networkUuid,
              addresses: iface.addresses.map(({ ip, subnetUuid }) => this.privateAddress(ip, subnetUuid)),
            };
          }
          return {
            type: 'public' as const,
            networkUuid: this.publicNetwork(server.zone).uuid,
            addresses: iface.addresses.map((ip) => this.publicAddress(server.zone, ip)),
          };
        }),
      });
    }
    for (const floatingIp of seed.floatingIps) {
      this.floatingIps.set(addressPart(floatingIp.network.text), {
        network: floatingIp.network,
        createdAt,
        type: floatingIp.type,
        region: floatingIp.region,
        serverUuid: floatingIp.serverUuid,
        loadBalancerUuid: null,
        reversePtr: floatingIp.reversePtr,
        tags: floatingIp.tags,
      });
    }
  }

  // ---- the provider's public network ---------------------------------------------------------

  publicNetwork(zone: Zone): NetworkRecord {
    const uuid = seededUuid(`public-network:${zone}`);
    let network = this.networks.get(uuid);
    if (network === undefined) {
      network = {
        uuid,
        name: 'public',
        createdAt: apiTimestamp(0),
        zone,
        mtu: 1500,
        tags: {},
        isPublic: true,
      };
      this.networks.set(uuid, network);
    }
    return network;
  }

  /** The public subnet `cidr` of `zone`, created on first use; its gateway is the first host. */
  publicSubnet(zone: Zone, cidr: CidrNetwork): SubnetRecord {
    const uuid = seededUuid(`public-subnet:${zone}:${cidr.text}`);
    let subnet = this.subnets.get(uuid);
    if (subnet === undefined) {
      subnet = {
        uuid,
        cidr,
        networkUuid: this.publicNetwork(zone).uuid,
        gatewayAddress: addressAt(cidr, 1n).text,
        dnsServers: [],
        tags: {},
        isPublic: true,
      };
      this.subnets.set(uuid, subnet);
    }
    return subnet;
  }

  /**
   * A public server address with its subnet: `range` when the address was allocated from one,
   * otherwise the /24 (IPv4) or /64 (IPv6) around it.
   */
  publicAddress(zone: Zone, ip: IpAddress, range?: CidrNetwork): ServerAddressRecord {
    const subnet = this.publicSubnet(zone, range ?? enclosingNetwork(ip, PUBLIC_PREFIX[ip.version]));
    return { ip, subnetUuid: subnet.uuid, gateway: subnet.gatewayAddress, reversePtr: reversePtrOf(ip) };
  }

  privateAddress(ip: IpAddress, subnetUuid: string): ServerAddressRecord {
    return { ip, subnetUuid, gateway: this.subnets.get(subnetUuid)?.gatewayAddress ?? null, reversePtr: null };
  }

  // ---- servers -------------------------------------------------------------------------------

  /** Servers by address, for the pool members' monitor status; rebuilt after server changes. */
  private serverIndex: Map<string, ServerRecord> | undefined;

  addServer(server: ServerRecord): void {
    this.changeServer(server, () => this.servers.set(server.uuid, server));
  }

  setServerInterfaces(server: ServerRecord, interfaces: ServerInterfaceRecord[]): void {
    this.changeServer(server, () => {
      server.interfaces = interfaces;
    });
  }

  /**
   * Every change of a server (status, addresses, existence) goes through here: the data plane
   * catches up with the server as it was, then learns which addresses changed.
   */
  changeServer(server: ServerRecord, change: () => void): void {
    this.dataPlane.beforeServerChange();
    const addresses = new Set(serverAddresses(server));
    change();
    this.serverIndex = undefined;
    for (const address of serverAddresses(server)) addresses.add(address);
    this.dataPlane.serverChanged([...addresses], server.changingUntil);
  }

  /** The server that has `address` on one of its interfaces. */
  serverWithAddress(address: string): ServerRecord | undefined {
    if (this.serverIndex === undefined) {
      this.serverIndex = new Map();
      for (const server of this.servers.values()) {
        for (const iface of server.interfaces) for (const a of iface.addresses) this.serverIndex.set(a.ip.text, server);
      }
    }
    return this.serverIndex.get(address);
  }

  // ---- derived facts -------------------------------------------------------------------------

  /** Every address in use by a server interface or an LB VIP. */
  addressesInUse(): Set<string> {
    const used = new Set<string>();
    for (const server of this.servers.values()) {
      for (const iface of server.interfaces) for (const address of iface.addresses) used.add(address.ip.text);
    }
    for (const lb of this.loadBalancers.values()) for (const vip of lb.vips) used.add(vip.ip.text);
    return used;
  }

  zoneOfSubnet(subnet: SubnetRecord): Zone | undefined {
    return this.networks.get(subnet.networkUuid)?.zone;
  }

  lbStatus(lb: LoadBalancerRecord): string {
    const pinned = this.pinnedLbStatus.get(lb.uuid) ?? this.pinnedLbStatus.get(lb.name);
    if (pinned !== undefined) return pinned;
    if (this.now() < lb.readyAt) return 'changing';
    return this.dataPlane.timings.errorWhilePoolDown && this.dataPlane.hasPoolDown(lb.uuid) ? 'error' : 'running';
  }

  serverStatus(server: ServerRecord): string {
    return this.now() < server.changingUntil ? 'changing' : server.status;
  }

  /**
   * Whether a health check of `address` succeeds at `at` (not before the latest server change):
   * the server with that address is `running` and not `changing`. An address of no server
   * counts as healthy: nothing here answers probes.
   */
  serverHealthyAt(address: string, at: number): boolean {
    const server = this.serverWithAddress(address);
    return server === undefined || (server.status === 'running' && at >= server.changingUntil);
  }

  /**
   * What the data plane says (docs/sim.md, "Data plane"); before the member reached it:
   * `no_monitor` in a pool without health monitor, `unknown` when disabled, `changing` otherwise.
   */
  memberMonitorStatus(member: MemberRecord): MonitorStatus {
    const known = this.dataPlane.monitorStatus(member.uuid);
    if (known !== undefined) return known;
    const monitored = [...this.monitors.values()].some((monitor) => monitor.poolUuid === member.poolUuid);
    if (!monitored) return 'no_monitor';
    return member.enabled ? 'changing' : 'unknown';
  }

  /** Tells the data plane about a configuration change of load balancer `lbUuid` the API just took. */
  configured(lbUuid: string, change: ConfigChange, as?: PropagationKind): void {
    this.dataPlane.configure(lbUuid, change, as);
  }

  // ---- cascades ------------------------------------------------------------------------------

  /** Deletes an LB with its pools, members, listeners and monitors; its floating IPs stay, unassigned. */
  deleteLoadBalancer(uuid: string): void {
    for (const pool of [...this.pools.values()]) if (pool.loadBalancerUuid === uuid) this.deletePool(pool.uuid);
    for (const listener of [...this.listeners.values()]) {
      if (listener.loadBalancerUuid === uuid) this.listeners.delete(listener.uuid);
    }
    for (const floatingIp of this.floatingIps.values()) {
      if (floatingIp.loadBalancerUuid === uuid) floatingIp.loadBalancerUuid = null;
    }
    this.loadBalancers.delete(uuid);
    this.configured(uuid, { kind: 'lb-deleted' });
  }

  /**
   * Deletes a pool with its members, monitor and listeners, as the real API does; with
   * `poolDeleteKeepsListeners` the listeners stay, with `pool: null`.
   */
  deletePool(uuid: string): void {
    const lbUuid = this.pools.get(uuid)?.loadBalancerUuid;
    if (lbUuid !== undefined) {
      this.configured(lbUuid, { kind: 'pool-deleted', uuid, keepListeners: this.behaviour.poolDeleteKeepsListeners });
    }
    for (const member of [...this.members.values()]) if (member.poolUuid === uuid) this.members.delete(member.uuid);
    for (const monitor of [...this.monitors.values()]) if (monitor.poolUuid === uuid) this.monitors.delete(monitor.uuid);
    for (const listener of [...this.listeners.values()]) {
      if (listener.poolUuid !== uuid) continue;
      if (this.behaviour.poolDeleteKeepsListeners) listener.poolUuid = null;
      else this.listeners.delete(listener.uuid);
    }
    this.pools.delete(uuid);
  }

  /** Deletes a server; floating IPs that pointed at it become unassigned. */
  deleteServer(uuid: string): void {
    for (const floatingIp of this.floatingIps.values()) {
      if (floatingIp.serverUuid === uuid) floatingIp.serverUuid = null;
    }
    const server = this.servers.get(uuid);
    if (server !== undefined) this.changeServer(server, () => this.servers.delete(uuid));
  }

  // ---- rendering -----------------------------------------------------------------------------

  href(path: string): string {
    return `${this.baseUrl}/v1/${path}`;
  }

  private objectStub(path: string, uuid: string, name: string): ObjectStub {
    return { href: this.href(`${path}/${uuid}`), uuid, name };
  }

  subnetStub(uuid: string): SubnetStub {
    const subnet = this.subnets.get(uuid);
    return { href: this.href(`subnets/${uuid}`), uuid, cidr: subnet?.cidr.text ?? '' };
  }

  networkStub(uuid: string): ObjectStub {
    return this.objectStub('networks', uuid, this.networks.get(uuid)?.name ?? '');
  }

  loadBalancerStub(uuid: string): ObjectStub {
    return this.objectStub('load-balancers', uuid, this.loadBalancers.get(uuid)?.name ?? '');
  }

  poolStub(uuid: string): ObjectStub {
    return this.objectStub('load-balancers/pools', uuid, this.pools.get(uuid)?.name ?? '');
  }

  renderServer(server: ServerRecord): SimServer {
    return {
      href: this.href(`servers/${server.uuid}`),
      uuid: server.uuid,
      name: server.name,
      status: this.serverStatus(server),
      zone: { slug: server.zone },
      flavor: { ...server.flavor },
      image: { ...server.image },
      volumes: [
        {
          href: this.href(`volumes/${seededUuid(`volume:${server.uuid}`)}`),
          uuid: seededUuid(`volume:${server.uuid}`),
          name: `${server.name}-root`,
          type: 'ssd',
          size_gb: server.volumeSizeGb,
        },
      ],
      interfaces: server.interfaces.map((iface) => ({
        type: iface.type,
        network: this.networkStub(iface.networkUuid),
        addresses: iface.addresses.map((address) => ({
          version: address.ip.version,
          address: address.ip.text,
          prefix_length: this.subnets.get(address.subnetUuid)?.cidr.prefix ?? 0,
          gateway: address.gateway,
          reverse_ptr: address.reversePtr,
          subnet: this.subnetStub(address.subnetUuid),
        })),
      })),
      ssh_fingerprints: [],
      ssh_host_keys: [],
      anti_affinity_with: [],
      server_groups: [],
      created_at: server.createdAt,
      tags: { ...server.tags },
    };
  }

  renderNetwork(network: NetworkRecord): Network {
    return {
      href: this.href(`networks/${network.uuid}`),
      uuid: network.uuid,
      name: network.name,
      created_at: network.createdAt,
      zone: { slug: network.zone },
      mtu: network.mtu,
      subnets: [...this.subnets.values()]
        .filter((subnet) => subnet.networkUuid === network.uuid)
        .map((subnet) => this.subnetStub(subnet.uuid)),
      tags: { ...network.tags },
    };
  }

  renderSubnet(subnet: SubnetRecord): Subnet {
    return {
      href: this.href(`subnets/${subnet.uuid}`),
      uuid: subnet.uuid,
      cidr: subnet.cidr.text,
      network: this.networkStub(subnet.networkUuid),
      gateway_address: subnet.gatewayAddress,
      dns_servers: [...subnet.dnsServers],
      tags: { ...subnet.tags },
    };
  }

  renderFloatingIp(floatingIp: FloatingIpRecord): FloatingIp {
    const server = floatingIp.serverUuid === null ? undefined : this.servers.get(floatingIp.serverUuid);
    const lb = floatingIp.loadBalancerUuid === null ? undefined : this.loadBalancers.get(floatingIp.loadBalancerUuid);
    return {
      href: this.href(`floating-ips/${addressPart(floatingIp.network.text)}`),
      created_at: floatingIp.createdAt,
      network: floatingIp.network.text,
      ip_version: floatingIp.network.version,
      server: server === undefined ? null : this.objectStub('servers', server.uuid, server.name),
      load_balancer: lb === undefined ? null : this.loadBalancerStub(lb.uuid),
      region: floatingIp.region === null ? null : { slug: floatingIp.region },
      type: floatingIp.type,
      next_hop: this.nextHop(floatingIp, server, lb),
      reverse_ptr: floatingIp.reversePtr,
      tags: { ...floatingIp.tags },
    };
  }

  /** The address traffic for a floating IP is routed to: the target's public address of its IP version. */
  private nextHop(
    floatingIp: FloatingIpRecord,
    server: ServerRecord | undefined,
    lb: LoadBalancerRecord | undefined,
  ): string | null {
    const version = floatingIp.network.version;
    if (server !== undefined) {
      const publicAddresses = server.interfaces.filter((i) => i.type === 'public').flatMap((i) => i.addresses);
      return publicAddresses.find((a) => a.ip.version === version)?.ip.text ?? null;
    }
    if (lb !== undefined) return lb.vips.find((vip) => vip.ip.version === version)?.ip.text ?? null;
    return null;
  }

  renderLoadBalancer(lb: LoadBalancerRecord): LoadBalancer {
    const flavor = LB_FLAVORS.find((f) => f.slug === lb.flavorSlug) ?? { slug: lb.flavorSlug, name: lb.flavorSlug };
    return {
      href: this.href(`load-balancers/${lb.uuid}`),
      uuid: lb.uuid,
      name: lb.name,
      created_at: lb.createdAt,
      status: this.lbStatus(lb),
      zone: { slug: lb.zone },
      flavor: { slug: flavor.slug, name: flavor.name },
      vip_addresses: lb.vips.map((vip) => ({
        version: vip.ip.version,
        address: vip.ip.text,
        subnet: this.subnetStub(vip.subnetUuid),
      })),
      tags: { ...lb.tags },
    };
  }

  renderPool(pool: PoolRecord): Pool {
    return {
      href: this.href(`load-balancers/pools/${pool.uuid}`),
      uuid: pool.uuid,
      name: pool.name,
      created_at: pool.createdAt,
      load_balancer: this.loadBalancerStub(pool.loadBalancerUuid),
      algorithm: pool.algorithm,
      protocol: pool.protocol,
      tags: { ...pool.tags },
    };
  }

  renderMember(member: MemberRecord): PoolMember {
    const lbUuid = this.pools.get(member.poolUuid)?.loadBalancerUuid ?? '';
    return {
      href: this.href(`load-balancers/pools/${member.poolUuid}/members/${member.uuid}`),
      uuid: member.uuid,
      name: member.name,
      created_at: member.createdAt,
      enabled: member.enabled,
      pool: this.poolStub(member.poolUuid),
      load_balancer: this.loadBalancerStub(lbUuid),
      protocol_port: member.protocolPort,
      monitor_port: member.monitorPort,
      address: member.address.text,
      subnet: this.subnetStub(member.subnetUuid),
      monitor_status: this.memberMonitorStatus(member),
      tags: { ...member.tags },
    };
  }

  renderListener(listener: ListenerRecord): Listener {
    return {
      href: this.href(`load-balancers/listeners/${listener.uuid}`),
      uuid: listener.uuid,
      name: listener.name,
      created_at: listener.createdAt,
      pool: listener.poolUuid === null ? null : this.poolStub(listener.poolUuid),
      load_balancer: this.loadBalancerStub(listener.loadBalancerUuid),
      protocol: listener.protocol,
      protocol_port: listener.protocolPort,
      allowed_cidrs: [...listener.allowedCidrs],
      timeout_client_data_ms: listener.timeoutClientDataMs,
      timeout_member_connect_ms: listener.timeoutMemberConnectMs,
      timeout_member_data_ms: listener.timeoutMemberDataMs,
      tags: { ...listener.tags },
    };
  }

  renderMonitor(monitor: MonitorRecord): HealthMonitor {
    const lbUuid = this.pools.get(monitor.poolUuid)?.loadBalancerUuid ?? '';
    return {
      href: this.href(`load-balancers/health-monitors/${monitor.uuid}`),
      uuid: monitor.uuid,
      created_at: monitor.createdAt,
      pool: this.poolStub(monitor.poolUuid),
      load_balancer: this.loadBalancerStub(lbUuid),
      delay_s: monitor.delayS,
      timeout_s: monitor.timeoutS,
      up_threshold: monitor.upThreshold,
      down_threshold: monitor.downThreshold,
      type: monitor.type,
      http: monitor.http === null ? null : { ...monitor.http, expected_codes: [...monitor.http.expected_codes] },
      tags: { ...monitor.tags },
    };
  }
}

function serverAddresses(server: ServerRecord): string[] {
  return server.interfaces.flatMap((iface) => iface.addresses.map((address) => address.ip.text));
}

/** `192.0.2.10/32` → `192.0.2.10`: how floating IPs are named in paths. */
export function addressPart(cidr: string): string {
  return cidr.slice(0, cidr.indexOf('/'));
}

function reversePtrOf(ip: IpAddress): string {
  return ip.version === 4 ? `${ip.text.replaceAll('.', '-')}.cust.cloudscale.ch` : `${ip.text}.cust.cloudscale.ch`;
}
