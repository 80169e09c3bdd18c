// Fixed facts of the simulated cloud: zones and regions, flavors, the synthesised public networks.
// Values that the real API leaves to the provider (public address ranges, the image) are
// illustrative; only their shapes matter.

import type { ServerFlavor } from '../core/cloudscale/types.js';

export const ZONES = ['rma1', 'lpg1'] as const;
export type Zone = (typeof ZONES)[number];

export function isZone(value: string): value is Zone {
  return (ZONES as readonly string[]).includes(value);
}

/** `rma1` → `rma`: the region is the zone slug without its trailing digits. */
export function regionOfZone(zone: string): string {
  return zone.replace(/\d+$/, '');
}

export const REGIONS: readonly string[] = [...new Set(ZONES.map(regionOfZone))];

export const LB_FLAVORS = [{ slug: 'lb-standard', name: 'LB-Standard' }] as const;

export const DEFAULT_IMAGE = {
  slug: 'debian-12',
  name: 'Debian 12',
  operating_system: 'Debian',
  default_username: 'debian',
} as const;

/**
 * Server flavors follow `flex-<memoryGB>-<vCPUs>` (shared) and `plus-<memoryGB>-<vCPUs>`
 * (dedicated); `undefined` for any other slug.
 */
export function serverFlavor(slug: string): ServerFlavor | undefined {
  const match = /^(flex|plus)-(\d+)-(\d+)$/.exec(slug);
  if (match === null) return undefined;
  const [, family, memory, vcpus] = match as unknown as [string, string, string, string];
  return {
    slug,
    name: `${family[0]!.toUpperCase()}${family.slice(1)}-${memory}-${vcpus}`,
    vcpu_count: Number(vcpus),
    memory_gb: Number(memory),
  };
}

/**
 * Where public load balancer VIPs of a zone come from (IPv4 first, then IPv6). The IPv4 ranges
 * are /21s of the benchmarking range 198.18.0.0/15, which no real address uses: about 2,000
 * load balancers per zone, room for scale tests.
 */
export const PUBLIC_VIP_NETWORKS: Record<Zone, { ipv4: string; ipv6: string }> = {
  rma1: { ipv4: '198.18.0.0/21', ipv6: '2a06:c01:1:148::/64' },
  lpg1: { ipv4: '198.18.8.0/21', ipv6: '2a06:c00:1:122::/64' },
};

/** Prefix lengths of the public subnets synthesised around seeded public server addresses. */
export const PUBLIC_PREFIX = { 4: 24, 6: 64 } as const;

/** Floating IPs created through the API come from these networks, per region. */
export const FLOATING_IP_NETWORKS: Record<string, { ipv4: string; ipv6: string }> = {
  rma: { ipv4: '5.102.150.0/24', ipv6: '2a06:c01:1:150::/64' },
  lpg: { ipv4: '185.98.123.0/24', ipv6: '2a06:c00:1:123::/64' },
};
