// The cloudscale API v1 resources this tool uses, as the API answers them
// (docs/cloudscale-api.md, "Resources"). The simulator produces exactly these shapes.

export type Tags = Record<string, string>;

export interface SlugStub {
  slug: string;
}
export interface ObjectStub {
  href: string;
  uuid: string;
  name: string;
}
export interface SubnetStub {
  href: string;
  uuid: string;
  cidr: string;
}

export interface ServerFlavor {
  slug: string;
  name: string;
  vcpu_count: number;
  memory_gb: number;
}

export interface ServerAddress {
  version: 4 | 6;
  address: string;
  prefix_length: number;
  gateway: string | null;
  reverse_ptr: string | null;
  subnet: SubnetStub;
}

export interface ServerInterface {
  type: 'public' | 'private';
  network: ObjectStub;
  addresses: ServerAddress[];
}

/** Statuses seen from the real API; others may appear and must be tolerated. */
export type ServerStatus = 'running' | 'stopped' | 'changing' | (string & {});

export interface Server {
  href: string;
  uuid: string;
  name: string;
  status: ServerStatus;
  zone: SlugStub;
  flavor: ServerFlavor;
  image: { slug: string; name: string; operating_system: string; default_username: string } | null;
  interfaces: ServerInterface[];
  created_at: string;
  tags: Tags;
}

export interface Network {
  href: string;
  uuid: string;
  name: string;
  created_at: string;
  zone: SlugStub;
  mtu: number;
  subnets: SubnetStub[];
  tags: Tags;
}

export interface Subnet {
  href: string;
  uuid: string;
  cidr: string;
  network: ObjectStub;
  gateway_address: string | null;
  dns_servers: string[];
  tags: Tags;
}

export interface FloatingIp {
  href: string;
  created_at: string;
  /** CIDR, e.g. `192.0.2.123/32`; the part before `/` is the identifier in paths. */
  network: string;
  ip_version: 4 | 6;
  server: ObjectStub | null;
  load_balancer: ObjectStub | null;
  region: SlugStub | null;
  type: 'regional' | 'global';
  next_hop: string | null;
  reverse_ptr: string | null;
  tags: Tags;
}

export type LoadBalancerStatus = 'changing' | 'running' | 'error' | (string & {});

export interface VipAddress {
  version: 4 | 6;
  address: string;
  subnet: SubnetStub;
}

export interface LoadBalancer {
  href: string;
  uuid: string;
  name: string;
  created_at: string;
  status: LoadBalancerStatus;
  zone: SlugStub;
  flavor: { slug: string; name: string };
  vip_addresses: VipAddress[];
  tags: Tags;
}

export type PoolAlgorithm = 'round_robin' | 'least_connections' | 'source_ip';
export type PoolProtocol = 'tcp' | 'proxy' | 'proxyv2' | 'udp';

export interface Pool {
  href: string;
  uuid: string;
  name: string;
  created_at: string;
  load_balancer: ObjectStub;
  algorithm: PoolAlgorithm;
  protocol: PoolProtocol;
  tags: Tags;
}

export type MonitorStatus = 'up' | 'down' | 'changing' | 'no_monitor' | 'unknown';

export interface PoolMember {
  href: string;
  uuid: string;
  name: string;
  created_at: string;
  enabled: boolean;
  pool: ObjectStub;
  load_balancer: ObjectStub;
  protocol_port: number;
  monitor_port: number | null;
  address: string;
  subnet: SubnetStub;
  monitor_status: MonitorStatus;
  tags: Tags;
}

/**
 * What a pass keeps of a pool member: what identifies it, what the planner compares, and its
 * health (a step that takes members out of service waits for their replacements to be `up`). A
 * pass may hold tens of thousands (300 nodes behind 200 ports), so the stubs of its pool and
 * load balancer, its timestamps and tags are left out, and equal subnet stubs are shared.
 */
export type MemberState = Pick<
  PoolMember,
  'href' | 'uuid' | 'name' | 'enabled' | 'protocol_port' | 'monitor_port' | 'address' | 'subnet' | 'monitor_status'
> & {
  /** The member's tags, kept only when it has any besides none (most members have none). */
  readonly tags?: Tags;
};

export type ListenerProtocol = 'tcp' | 'udp';

export interface Listener {
  href: string;
  uuid: string;
  name: string;
  created_at: string;
  pool: ObjectStub | null;
  load_balancer: ObjectStub;
  protocol: ListenerProtocol;
  protocol_port: number;
  allowed_cidrs: string[];
  timeout_client_data_ms: number;
  timeout_member_connect_ms: number;
  timeout_member_data_ms: number;
  tags: Tags;
}

export type HealthMonitorType = 'ping' | 'tcp' | 'http' | 'https' | 'tls-hello' | 'udp-connect';
export type HttpMethod =
  | 'CONNECT'
  | 'DELETE'
  | 'GET'
  | 'HEAD'
  | 'OPTIONS'
  | 'PATCH'
  | 'POST'
  | 'PUT'
  | 'TRACE';

export interface HealthMonitorHttp {
  expected_codes: string[];
  method: HttpMethod;
  url_path: string;
  version: '1.0' | '1.1';
  host: string | null;
}

export interface HealthMonitor {
  href: string;
  uuid: string;
  created_at: string;
  pool: ObjectStub;
  load_balancer: ObjectStub;
  delay_s: number;
  timeout_s: number;
  up_threshold: number;
  down_threshold: number;
  type: HealthMonitorType;
  http: HealthMonitorHttp | null;
  tags: Tags;
}

// ---- request bodies -------------------------------------------------------------------------

export interface LoadBalancerCreate {
  name: string;
  flavor: string;
  zone?: string;
  vip_addresses: { subnet: string; address?: string }[];
  tags?: Tags;
}

export interface PoolCreate {
  name: string;
  load_balancer: string;
  algorithm: PoolAlgorithm;
  protocol: PoolProtocol;
  tags?: Tags;
}

export interface PoolMemberCreate {
  name: string;
  protocol_port: number;
  monitor_port?: number;
  address: string;
  subnet: string;
  enabled?: boolean;
  tags?: Tags;
}

export interface ListenerCreate {
  pool: string;
  name: string;
  protocol: ListenerProtocol;
  protocol_port: number;
  allowed_cidrs: string[];
  timeout_client_data_ms: number;
  timeout_member_connect_ms: number;
  timeout_member_data_ms: number;
  tags?: Tags;
}

export interface HealthMonitorCreate {
  pool: string;
  type: HealthMonitorType;
  delay_s: number;
  timeout_s: number;
  up_threshold: number;
  down_threshold: number;
  /** Always sent; `{}` for non-HTTP monitors, as the Go CCM does. */
  http: Partial<Omit<HealthMonitorHttp, 'host'>> & { host?: string };
  tags?: Tags;
}

/** One attribute per PATCH (the API's rule for servers; this tool follows it everywhere). */
export type LoadBalancerPatch = { name: string } | { tags: Tags };
export type ListenerPatch =
  | { protocol_port: number }
  | { allowed_cidrs: string[] }
  | { timeout_client_data_ms: number }
  | { timeout_member_connect_ms: number }
  | { timeout_member_data_ms: number }
  | { name: string }
  | { tags: Tags };
export type HealthMonitorPatch =
  | { delay_s: number }
  | { timeout_s: number }
  | { up_threshold: number }
  | { down_threshold: number }
  | { http: { expected_codes: string[] } }
  | { http: { method: HttpMethod } }
  | { http: { url_path: string } }
  | { http: { host: string | null } }
  | { tags: Tags };
export type PoolMemberPatch = { enabled: boolean } | { tags: Tags };
export type FloatingIpPatch = { load_balancer: string } | { server: string } | { tags: Tags };
