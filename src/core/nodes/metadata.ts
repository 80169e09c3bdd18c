// The metadata a Node should carry for its server: labels and status.addresses, as the Go CCM's
// InstanceMetadata returns them and the generic node controller writes them
// (docs/go-ccm-compatibility.md, docs/kubernetes-controllers.md).
import type { Server } from '../cloudscale/types.js';
import type { NodeAddress } from './types.js';
import { NODE_LABELS } from './well-known.js';

/** `rma1` → `rma`, `lpg1` → `lpg`: the Go CCM's region is the zone slug without trailing digits. */
export function regionOfZone(zoneSlug: string): string {
  return zoneSlug.replace(/\d+$/, '');
}

/** The six topology and instance-type labels, GA and beta with equal values. */
export function desiredLabels(server: Server): Record<string, string> {
  const zone = server.zone.slug;
  const region = regionOfZone(zone);
  return {
    [NODE_LABELS.instanceType]: server.flavor.slug,
    [NODE_LABELS.instanceTypeBeta]: server.flavor.slug,
    [NODE_LABELS.zone]: zone,
    [NODE_LABELS.zoneBeta]: zone,
    [NODE_LABELS.region]: region,
    [NODE_LABELS.regionBeta]: region,
  };
}

/**
 * Hostname (the server's name, not the node's), then every address of every interface in API
 * order: ExternalIP on a `public` interface, InternalIP on any other.
 */
export function cloudAddresses(server: Server): NodeAddress[] {
  const addresses: NodeAddress[] = [{ type: 'Hostname', address: server.name }];
  for (const iface of server.interfaces) {
    const type = iface.type === 'public' ? 'ExternalIP' : 'InternalIP';
    for (const { address } of iface.addresses) addresses.push({ type, address });
  }
  return addresses;
}

export type AddressesResult = { ok: true; addresses: NodeAddress[] } | { ok: false; error: string };

/**
 * The cloud addresses adjusted to the kubelet's `--node-ip` (annotation
 * `alpha.kubernetes.io/provided-node-ip`), as the generic node controller does: every provided
 * IP must be one of the cloud addresses; the matching addresses come first, every other
 * address of a matched type is dropped, the remaining addresses follow in their order.
 * `undefined` annotation: the cloud addresses unchanged.
 */
export function applyProvidedNodeIp(
  cloud: readonly NodeAddress[],
  annotation: string | undefined,
): AddressesResult {
  if (annotation === undefined) return { ok: true, addresses: [...cloud] };
  const parsed = parseProvidedNodeIp(annotation);
  if (!parsed.ok) return parsed;
  const enforced: NodeAddress[] = [];
  const enforcedTypes = new Set<string>();
  for (const ip of parsed.ips) {
    const matches = cloud.filter((a) => ipKey(a.address) === ip);
    if (matches.length === 0) {
      return {
        ok: false,
        error: `provided node IP ${ip} (annotation alpha.kubernetes.io/provided-node-ip) is not an address of the server`,
      };
    }
    for (const match of matches) {
      enforced.push({ type: match.type, address: match.address });
      enforcedTypes.add(match.type);
    }
  }
  for (const address of cloud) {
    if (!enforcedTypes.has(address.type)) enforced.push({ ...address });
  }
  return { ok: true, addresses: enforced };
}

/** One IP or a dual-stack pair, comma-separated, no spaces (kubelet's own format). */
function parseProvidedNodeIp(
  annotation: string,
): { ok: true; ips: string[] } | { ok: false; error: string } {
  const ips: string[] = [];
  for (const part of annotation.split(',')) {
    const key = ipKey(part);
    if (key === undefined) {
      return { ok: false, error: `provided node IP "${annotation}": cannot parse "${part}"` };
    }
    ips.push(key);
  }
  const families = ips.map((ip) => (ip.includes(':') ? 6 : 4));
  if (ips.length > 2 || (ips.length === 2 && families[0] === families[1])) {
    return {
      ok: false,
      error: `provided node IP "${annotation}": must be a single IP or a dual-stack pair`,
    };
  }
  if (ips.length === 2 && ips.some((ip) => ip === '0.0.0.0' || ip === '::')) {
    return {
      ok: false,
      error: `provided node IP "${annotation}": a dual-stack pair cannot include 0.0.0.0 or ::`,
    };
  }
  return { ok: true, ips };
}

/**
 * A comparable form of an IP address, or undefined if `text` is none: IPv4 dotted decimal
 * (leading zeros accepted, as Kubernetes' sloppy parser does), IPv6 compressed lowercase, and
 * IPv4-mapped IPv6 as IPv4 (Go's net.IP.Equal treats them as equal).
 */
export function ipKey(text: string): string | undefined {
  const v4 = parseIpv4(text);
  if (v4 !== undefined) return v4;
  if (!text.includes(':') || /[^0-9a-fA-F:.]/.test(text)) return undefined;
  let host: string;
  try {
    host = new URL(`http://[${text}]/`).hostname;
  } catch {
    return undefined;
  }
  const compressed = host.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped !== null) {
    const high = Number.parseInt(mapped[1] ?? '0', 16);
    const low = Number.parseInt(mapped[2] ?? '0', 16);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return compressed;
}

function parseIpv4(text: string): string | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    octets.push(value);
  }
  return octets.join('.');
}

/** Exact equality, order included: `status.addresses` is replaced only when this is false. */
export function sameAddresses(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  return (
    a.length === b.length &&
    a.every((entry, i) => entry.type === b[i]?.type && entry.address === b[i]?.address)
  );
}

/** `Hostname worker-1, ExternalIP 203.0.113.5`: how an address list appears in reasons. */
export function describeAddresses(addresses: readonly NodeAddress[]): string {
  return addresses.length === 0
    ? '(none)'
    : addresses.map((a) => `${a.type} ${a.address}`).join(', ');
}
