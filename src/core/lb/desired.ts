// The desired load balancer of a Service (docs/go-ccm-compatibility.md), and the
// desired `status.loadBalancer.ingress`.
import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import type {
  HealthMonitorHttp,
  HealthMonitorType,
  ListenerProtocol,
  LoadBalancer,
  PoolAlgorithm,
  PoolProtocol,
  Subnet,
  SubnetStub,
  Tags,
} from '../cloudscale/types.js';
import { isIP } from 'node:net';
import { quoteUntrusted } from '../text/untrusted.js';
import {
  LB_ANNOTATIONS,
  type IpMode,
  type LbAnnotationValues,
  type VipAddressRequest,
} from './annotations.js';
import { kubeSystemUidTag } from './cluster-identity.js';
import { ownershipTags } from './ownership.js';
import { isCidr } from './net.js';
import type { NodeServer } from './nodes.js';
import type { PlanWarning, Problem } from './problems.js';

// ---- identity names --------------------------------------------------------------------------
// Changing any of these names recreates resources on every existing load balancer, and breaks
// adoption of load balancers made by the Go CCM: they MUST stay as they are.

/** `k8s-service-<uid>`: the Go CCM's default load balancer name. */
export function defaultLbName(serviceUid: string): string {
  return `k8s-service-${serviceUid}`;
}

/** `tcp`, `tcp/<port name>`, `udp/<port name>` (port name case kept). */
export function poolName(protocol: 'TCP' | 'UDP', portName: string | undefined): string {
  const proto = protocol.toLowerCase();
  return portName === undefined || portName === '' ? proto : `${proto}/${portName}`;
}

/** `<address>:<port>`, IPv6 bracketed. */
export function memberName(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** `tcp/80`, `udp/53`. */
export function listenerName(protocol: string, port: number): string {
  return `${protocol.toLowerCase()}/${port}`;
}

/** The Service UID, or this placeholder for a manifest not yet created (`plan -f`). */
export const PENDING_UID = '<uid>';

// ---- desired model ---------------------------------------------------------------------------

export interface DesiredMember {
  readonly name: string;
  /** Always true; part of the member's identity (a disabled member is recreated). */
  readonly enabled: true;
  readonly protocol_port: number;
  readonly monitor_port: number;
  readonly address: string;
  /** The whole stub of the server address's subnet: part of the member's identity. */
  readonly subnet: SubnetStub;
  /** The node whose server has this address (display only). */
  readonly node: string;
}

export interface DesiredListener {
  readonly name: string;
  readonly protocol: ListenerProtocol;
  readonly protocol_port: number;
  readonly allowed_cidrs: readonly string[];
  readonly timeout_client_data_ms: number;
  readonly timeout_member_connect_ms: number;
  readonly timeout_member_data_ms: number;
}

export interface DesiredMonitor {
  readonly type: HealthMonitorType;
  readonly delay_s: number;
  readonly timeout_s: number;
  readonly up_threshold: number;
  readonly down_threshold: number;
  /** Set for http/https monitors only; `null` for the other types (sent as `{}`). */
  readonly http: HealthMonitorHttp | null;
}

/** The Service port a pool serves. */
export interface ServicePortRef {
  readonly name: string;
  readonly protocol: 'TCP' | 'UDP';
  readonly port: number;
  readonly nodePort: number;
}

export interface DesiredPool {
  readonly name: string;
  readonly algorithm: PoolAlgorithm;
  readonly protocol: PoolProtocol;
  readonly port: ServicePortRef;
  readonly members: readonly DesiredMember[];
  readonly listener: DesiredListener;
  readonly monitor: DesiredMonitor;
}

export interface DesiredLoadBalancer {
  readonly name: string;
  readonly flavor: string;
  /** `null`: no annotation and no node; the API picks the project's default zone. */
  readonly zone: string | null;
  readonly vipAddresses: readonly VipAddressRequest[];
  readonly floatingIps: readonly string[];
  /** What decided the listeners' `allowed_cidrs` (see `allowedCidrs`), for the plan's reasons. */
  readonly allowedCidrsSource: string;
  /** Ownership tags only; other tags on an existing load balancer are kept. */
  readonly tags: Tags;
  readonly pools: readonly DesiredPool[];
}

/** The API's http options when none are given; desired for http/https monitors without the annotation, so that removing it resets them. */
export const DEFAULT_HTTP: HealthMonitorHttp = {
  expected_codes: ['200'],
  method: 'GET',
  url_path: '/',
  version: '1.1',
  host: null,
};

/** The http options of the ETP Local health check: kube-proxy's health endpoint. */
export const LIVEZ_HTTP: HealthMonitorHttp = {
  expected_codes: ['200'],
  method: 'GET',
  url_path: '/livez',
  version: '1.0',
  host: null,
};

export interface DesiredInput {
  readonly service: V1Service;
  readonly annotations: LbAnnotationValues;
  /** The selected nodes mapped to servers, in node order. */
  readonly nodes: readonly NodeServer[];
  /** Every subnet of the project: the subnets the annotations name must exist. */
  readonly subnets: readonly Subnet[];
  readonly clusterId: string;
  /** The uid of namespace kube-system, tagged beside the cluster id (src/core/lb/cluster-identity.ts). */
  readonly kubeSystemUid?: string;
  /**
   * The zone of the load balancer that exists already, if any. When the zone differs from it,
   * the planner refuses the change itself; members are then not checked against the new zone.
   */
  readonly existingZone?: string;
}

export type DesiredResult =
  | {
      readonly ok: true;
      readonly lb: DesiredLoadBalancer;
      readonly warnings: readonly PlanWarning[];
    }
  | { readonly ok: false; readonly problems: readonly Problem[] };

export function serviceIdentity(service: V1Service): {
  namespace: string;
  name: string;
  uid: string;
} {
  return {
    namespace: service.metadata?.namespace ?? 'default',
    name: service.metadata?.name ?? '',
    uid: service.metadata?.uid ?? PENDING_UID,
  };
}

/** The load balancer name: the name annotation, else `k8s-service-<uid>`. */
export function desiredLbName(service: V1Service, annotations: LbAnnotationValues): string {
  return annotations.name ?? defaultLbName(serviceIdentity(service).uid);
}

/**
 * The desired load balancer of a Service whose annotations parsed. Collects every problem
 * (unsupported port protocol, nodePort 0, nodes in several zones, members outside the zone,
 * subnets that do not exist) instead of stopping at one: each is a value the API would refuse
 * halfway through building the load balancer, so it is refused before the first write.
 */
export function desiredLoadBalancer(input: DesiredInput): DesiredResult {
  const { service, annotations: a, nodes } = input;
  const identity = serviceIdentity(service);
  const problems: Problem[] = [];
  const warnings: PlanWarning[] = [];

  let zone = a.zone;
  if (zone === null) {
    const zones = [...new Set(nodes.map((n) => n.server.zone.slug))];
    if (zones.length > 1) {
      problems.push({
        kind: 'zone',
        subject: LB_ANNOTATIONS.zone.key,
        message: `no load balancer zone set and the selected nodes are in several zones (${zones.join(', ')})`,
        hint: `Set the annotation ${LB_ANNOTATIONS.zone.key} to one of ${zones.join(', ')}, or narrow the nodes with ${LB_ANNOTATIONS.nodeSelector.key}.`,
      });
    }
    zone = zones.length === 1 ? zones[0]! : null;
  }

  problems.push(...subnetProblems(a, input.subnets));
  if (zone !== null && (input.existingZone === undefined || input.existingZone === zone)) {
    problems.push(...memberZoneProblems(nodes, zone, a.listenerAllowedSubnets));
  }

  const cidrs = allowedCidrs(service, a);
  if (!cidrs.ok) problems.push(...cidrs.problems);

  const local = service.spec?.externalTrafficPolicy === 'Local';
  const monitor = desiredMonitor(a, local, warnings);
  const healthCheckNodePort = service.spec?.healthCheckNodePort ?? 0;

  const pools: DesiredPool[] = [];
  for (const [index, port] of (service.spec?.ports ?? []).entries()) {
    const protocol = port.protocol ?? 'TCP';
    const label = `port ${port.name ?? index}/${protocol}`;
    if (protocol !== 'TCP' && protocol !== 'UDP') {
      problems.push({
        kind: 'service-spec',
        subject: label,
        message: `service ${identity.namespace}/${identity.name}: cannot use ${protocol} for port ${port.port}, only TCP and UDP are supported`,
        hint: 'Remove the port or change its protocol to TCP or UDP.',
      });
      continue;
    }
    const nodePort = port.nodePort ?? 0;
    if (nodePort === 0) {
      problems.push({
        kind: 'service-spec',
        subject: label,
        message: `service ${identity.namespace}/${identity.name}: port ${port.port} has no nodePort`,
        hint: 'The load balancer sends traffic to node ports: set spec.allocateLoadBalancerNodePorts to true (the default).',
      });
      continue;
    }
    const name = poolName(protocol, port.name);
    if (pools.some((p) => p.name === name)) {
      problems.push({
        kind: 'service-spec',
        subject: label,
        message: `service ${identity.namespace}/${identity.name}: two ${protocol} ports map to pool ${name}`,
        hint: 'Give every port a unique name.',
      });
      continue;
    }
    const monitorPort = local && healthCheckNodePort > 0 ? healthCheckNodePort : nodePort;
    pools.push({
      name,
      algorithm: a.poolAlgorithm,
      protocol: protocol === 'UDP' ? 'udp' : a.poolProtocol,
      port: { name: port.name ?? '', protocol, port: port.port, nodePort },
      members: desiredMembers(nodes, nodePort, monitorPort, a.listenerAllowedSubnets),
      listener: {
        name: listenerName(protocol, port.port),
        protocol: protocol === 'UDP' ? 'udp' : a.listenerProtocol,
        protocol_port: port.port,
        allowed_cidrs: cidrs.ok ? cidrs.cidrs : [],
        timeout_client_data_ms: a.timeoutClientDataMs,
        timeout_member_connect_ms: a.timeoutMemberConnectMs,
        timeout_member_data_ms: a.timeoutMemberDataMs,
      },
      monitor,
    });
  }

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    warnings,
    lb: {
      name: desiredLbName(service, a),
      flavor: a.flavor,
      zone,
      vipAddresses: a.vipAddresses,
      floatingIps: a.floatingIps,
      allowedCidrsSource: cidrs.ok ? cidrs.source : LB_ANNOTATIONS.listenerAllowedCidrs.key,
      tags: { ...ownershipTags(input.clusterId, identity), ...kubeSystemUidTag(input.kubeSystemUid) },
      pools,
    },
  };
}

function desiredMonitor(
  a: LbAnnotationValues,
  local: boolean,
  warnings: PlanWarning[],
): DesiredMonitor {
  const numbers = {
    delay_s: a.healthMonitorDelayS,
    timeout_s: a.healthMonitorTimeoutS,
    up_threshold: a.healthMonitorUpThreshold,
    down_threshold: a.healthMonitorDownThreshold,
  };
  if (local) {
    if (a.healthMonitorType !== LB_ANNOTATIONS.healthMonitorType.default && a.healthMonitorType !== 'http') {
      warnings.push({
        reason: 'AnnotationWarning',
        message: `${LB_ANNOTATIONS.healthMonitorType.key}: ${a.healthMonitorType} is replaced by http, which externalTrafficPolicy Local requires`,
      });
    }
    if (a.healthMonitorHttp !== null) {
      warnings.push({
        reason: 'AnnotationWarning',
        message: `${LB_ANNOTATIONS.healthMonitorHttp.key} is set, so the /livez check that externalTrafficPolicy Local needs is not configured`,
      });
    }
    return { type: 'http', ...numbers, http: a.healthMonitorHttp ?? LIVEZ_HTTP };
  }
  const httpType = a.healthMonitorType === 'http' || a.healthMonitorType === 'https';
  if (!httpType && a.healthMonitorHttp !== null) {
    warnings.push({
      reason: 'AnnotationWarning',
      message: `${LB_ANNOTATIONS.healthMonitorHttp.key} is ignored: the health monitor type is ${a.healthMonitorType}`,
    });
  }
  return { type: a.healthMonitorType, ...numbers, http: httpType ? (a.healthMonitorHttp ?? DEFAULT_HTTP) : null };
}

export const SOURCE_RANGES_FIELD = 'spec.loadBalancerSourceRanges';

/**
 * The client networks every listener allows (`allowed_cidrs`; empty: everyone), from the
 * annotation `loadbalancer-listener-allowed-cidrs` and `spec.loadBalancerSourceRanges`:
 *
 * - neither set: everyone;
 * - one set (the annotation is set when present, even as `[]`; the spec field when it lists
 *   something): that one;
 * - both set with the same CIDRs (in any order): the annotation's list, so that adding the field
 *   changes nothing on an existing load balancer;
 * - both set and different: a problem naming both, nothing is written. A user who sets one
 *   believes the load balancer is restricted to it: silently picking one would open it wider
 *   than one of them says.
 *
 * Entries of the spec field are validated like the annotation's (the API server accepts some
 * that the cloudscale API refuses, and `plan -f` sees manifests no server has checked); spaces
 * around them are dropped, as Kubernetes allows them there.
 */
export function allowedCidrs(
  service: V1Service,
  a: Pick<LbAnnotationValues, 'listenerAllowedCidrs'>,
): { readonly ok: true; readonly cidrs: readonly string[]; readonly source: string } | { readonly ok: false; readonly problems: readonly Problem[] } {
  const key = LB_ANNOTATIONS.listenerAllowedCidrs.key;
  const annotationSet = service.metadata?.annotations?.[key] !== undefined;
  const ranges = (service.spec?.loadBalancerSourceRanges ?? []).map((range) => range.trim());
  const invalid = ranges.flatMap((range, index) => (isCidr(range) ? [] : [{ range, index }]));
  if (invalid.length > 0) {
    return {
      ok: false,
      problems: invalid.map(({ range, index }) => ({
        kind: 'service-spec',
        subject: `${SOURCE_RANGES_FIELD}[${index}]`,
        message: `${SOURCE_RANGES_FIELD}[${index}] ${quoteUntrusted(range)} is not a CIDR the cloudscale API accepts as an allowed client network`,
        hint: 'Write it as an address and a prefix length without leading zeros, e.g. 192.0.2.0/24 or 2001:db8::/32 (a single address is 192.0.2.1/32).',
      })),
    };
  }
  if (ranges.length === 0) return { ok: true, cidrs: a.listenerAllowedCidrs, source: key };
  if (!annotationSet) return { ok: true, cidrs: ranges, source: SOURCE_RANGES_FIELD };
  const sameSet = (x: readonly string[], y: readonly string[]) => x.every((item) => y.includes(item));
  if (sameSet(ranges, a.listenerAllowedCidrs) && sameSet(a.listenerAllowedCidrs, ranges)) {
    return { ok: true, cidrs: a.listenerAllowedCidrs, source: `${key} and ${SOURCE_RANGES_FIELD}` };
  }
  const annotation = a.listenerAllowedCidrs.length === 0 ? '[] (everyone)' : JSON.stringify(a.listenerAllowedCidrs);
  return {
    ok: false,
    problems: [
      {
        kind: 'source-ranges-conflict',
        subject: SOURCE_RANGES_FIELD,
        message: `${SOURCE_RANGES_FIELD} ${JSON.stringify(ranges)} and the annotation ${key} ${annotation} both set the clients the load balancer allows, and they differ; nothing is changed`,
        hint: `Keep one of them: remove the annotation ${key} (${SOURCE_RANGES_FIELD} is the Kubernetes field for it), or remove ${SOURCE_RANGES_FIELD}, or make both list the same CIDRs.`,
      },
    ],
  };
}

/** Same UUID, whatever the case and hyphenation of the annotation. */
function sameUuid(a: string, b: string): boolean {
  const plain = (uuid: string) => uuid.replaceAll('-', '').toLowerCase();
  return plain(a) === plain(b);
}

/**
 * Subnets the annotations name that the project does not have, and fixed VIP addresses outside
 * their subnet: the API would refuse the load balancer (VIPs), or it would get no member at all
 * (allowed subnets) while the plan showed no problem.
 */
function subnetProblems(a: LbAnnotationValues, subnets: readonly Subnet[]): Problem[] {
  const problems: Problem[] = [];
  const missing = (key: string, uuid: string): Problem => {
    const otherCase = subnets.find((s) => sameUuid(s.uuid, uuid));
    return {
      kind: 'subnet-missing',
      subject: key,
      message: `subnet ${uuid} of annotation ${key} does not exist in this cloudscale project`,
      hint:
        otherCase !== undefined
          ? `Write it as the API does: ${otherCase.uuid}.`
          : `Use the UUID of an existing private subnet (cloudscale control panel → Networks, or GET /v1/subnets), or remove it from ${key}.`,
    };
  };
  const allowedKey = LB_ANNOTATIONS.listenerAllowedSubnets.key;
  for (const uuid of a.listenerAllowedSubnets) {
    // The members are filtered by exact UUID (as the Go CCM does): another spelling matches nothing.
    if (!subnets.some((s) => s.uuid === uuid)) problems.push(missing(allowedKey, uuid));
  }
  const vipKey = LB_ANNOTATIONS.vipAddresses.key;
  for (const vip of a.vipAddresses) {
    const subnet = subnets.find((s) => sameUuid(s.uuid, vip.subnet));
    if (subnet === undefined) {
      problems.push(missing(vipKey, vip.subnet));
    } else if (vip.address !== undefined && !cidrContains(subnet.cidr, vip.address)) {
      problems.push({
        kind: 'subnet-missing',
        subject: vipKey,
        message: `address ${vip.address} of annotation ${vipKey} is not in its subnet ${subnet.uuid} (${subnet.cidr})`,
        hint: `Pick an address inside ${subnet.cidr}, or leave "address" out to get a free one.`,
      });
    }
  }
  return problems;
}

/**
 * Selected nodes whose servers would contribute members from another zone than the load
 * balancer's: the API refuses such members after the load balancer exists, and the zone of a
 * load balancer can never change.
 */
function memberZoneProblems(nodes: readonly NodeServer[], zone: string, allowedSubnets: readonly string[]): Problem[] {
  const elsewhere = nodes.filter(
    (n) => n.server.zone.slug !== zone && memberAddresses(n.server, allowedSubnets).length > 0,
  );
  if (elsewhere.length === 0) return [];
  const zones = [...new Set(elsewhere.map((n) => n.server.zone.slug))];
  const names = elsewhere.map((n) => n.node);
  const key = LB_ANNOTATIONS.zone.key;
  return [
    {
      kind: 'zone',
      subject: key,
      message: `the load balancer's zone is ${zone}, but the servers of ${names.length === 1 ? 'node' : 'nodes'} ${names.join(', ')} are in ${zones.join(', ')}: their addresses cannot be members`,
      hint: `Set ${key} to ${zones.join(' or ')} (or remove it to use the nodes' zone), or leave these nodes out with ${LB_ANNOTATIONS.nodeSelector.key}.`,
    },
  ];
}

/** Whether `address` lies in `cidr` (same family, same network bits). */
function cidrContains(cidr: string, address: string): boolean {
  const [network = '', prefixText = ''] = cidr.split('/');
  const family = isIP(network);
  if (family === 0 || family !== isIP(address)) return false;
  const bits = family === 4 ? 32 : 128;
  const prefix = BigInt(prefixText === '' ? bits : Number(prefixText));
  const shift = BigInt(bits) - prefix;
  return ipValue(network) >> shift === ipValue(address) >> shift;
}

function ipValue(address: string): bigint {
  if (isIP(address) === 4) return address.split('.').reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n);
  const [head = '', tail = ''] = address.split('::');
  const groups = (text: string) => (text === '' ? [] : text.split(':'));
  const left = groups(head);
  const right = groups(tail);
  const all = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return all.reduce((acc, group) => (acc << 16n) + BigInt(parseInt(group, 16)), 0n);
}

/**
 * Members for one port: every address with a subnet on every non-public interface of every
 * selected node's server, optionally limited to `allowedSubnets`. Zero members is allowed.
 */
function desiredMembers(
  nodes: readonly NodeServer[],
  nodePort: number,
  monitorPort: number,
  allowedSubnets: readonly string[],
): DesiredMember[] {
  const members: DesiredMember[] = [];
  for (const { node, server } of nodes) {
    for (const { address, subnet } of memberAddresses(server, allowedSubnets)) {
      const name = memberName(address, nodePort);
      if (members.some((m) => m.name === name)) continue;
      members.push({
        name,
        enabled: true,
        protocol_port: nodePort,
        monitor_port: monitorPort,
        address,
        subnet: { href: subnet.href, uuid: subnet.uuid, cidr: subnet.cidr },
        node,
      });
    }
  }
  return members;
}

/** The addresses of a server that become members: non-public, in a subnet, in `allowedSubnets` if any. */
function memberAddresses(
  server: NodeServer['server'],
  allowedSubnets: readonly string[],
): { address: string; subnet: SubnetStub }[] {
  return server.interfaces
    .filter((iface) => iface.type !== 'public')
    .flatMap((iface) => iface.addresses)
    .filter((a) => a.subnet?.uuid && (allowedSubnets.length === 0 || allowedSubnets.includes(a.subnet.uuid)))
    .map((a) => ({ address: a.address, subnet: a.subnet }));
}

// ---- status ----------------------------------------------------------------------------------

/** How ingress entries are published: one hostname, or one entry per VIP with an ipMode. */
export type IngressSettings =
  | { readonly hostname: string }
  /** `ipMode` null: the API server predates 1.30 (or its version is unknown); none is written. */
  | { readonly ipMode: IpMode | null };

export function ingressSettings(
  annotations: Pick<LbAnnotationValues, 'forceHostname' | 'ipMode'>,
  apiServerMinor: number | null,
): IngressSettings {
  if (annotations.forceHostname !== null) return { hostname: annotations.forceHostname };
  return { ipMode: apiServerMinor !== null && apiServerMinor >= 30 ? annotations.ipMode : null };
}

export function ingressFromVips(
  vips: LoadBalancer['vip_addresses'],
  settings: IngressSettings,
): V1LoadBalancerIngress[] {
  if ('hostname' in settings) return [{ hostname: settings.hostname }];
  return vips.map((vip) =>
    settings.ipMode === null ? { ip: vip.address } : { ip: vip.address, ipMode: settings.ipMode },
  );
}

/**
 * Whether two ingress lists are the same, in order. An unset `ipMode` equals `VIP`: the API
 * server defaults it so whenever `ip` is set, and would otherwise show a change on every run.
 */
export function ingressEqual(
  a: readonly V1LoadBalancerIngress[] | undefined,
  b: readonly V1LoadBalancerIngress[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  return left.every((entry, i) => {
    const other = right[i]!;
    return (
      (entry.ip ?? '') === (other.ip ?? '') &&
      (entry.hostname ?? '') === (other.hostname ?? '') &&
      (entry.ip === undefined || (entry.ipMode ?? 'VIP') === (other.ipMode ?? 'VIP')) &&
      JSON.stringify(entry.ports ?? []) === JSON.stringify(other.ports ?? [])
    );
  });
}
