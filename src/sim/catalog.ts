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

export interface ServerImage {
  slug: string;
  name: string;
  operating_system: string;
  default_username: string;
}

/** Images a server can be created from (illustrative; the real list is longer and changes). */
export const SERVER_IMAGES: readonly ServerImage[] = [
  { slug: 'debian-12', name: 'Debian 12', operating_system: 'Debian', default_username: 'debian' },
  { slug: 'debian-13', name: 'Debian 13', operating_system: 'Debian', default_username: 'debian' },
  { slug: 'ubuntu-22.04', name: 'Ubuntu 22.04', operating_system: 'Ubuntu', default_username: 'ubuntu' },
  { slug: 'ubuntu-24.04', name: 'Ubuntu 24.04', operating_system: 'Ubuntu', default_username: 'ubuntu' },
  { slug: 'rocky-9', name: 'Rocky Linux 9', operating_system: 'Rocky Linux', default_username: 'rocky' },
];

/** The image of seeded servers. */
export const DEFAULT_IMAGE: ServerImage = SERVER_IMAGES[0]!;

/**
 * The flavors `GET /v1/flavors` lists and servers can be created with or resized to (an
 * illustrative selection of the `flex-<GB>-<vCPUs>` and `plus-<GB>-<vCPUs>` families). Seeds
 * may use any slug of those two patterns.
 */
export const SERVER_FLAVOR_SLUGS: readonly string[] = [
  'flex-4-1', 'flex-4-2', 'flex-8-2', 'flex-8-4', 'flex-16-4', 'flex-16-8', 'flex-32-8', 'flex-32-16',
  'flex-48-12', 'flex-64-16', 'flex-96-24',
  'plus-16-4', 'plus-32-8', 'plus-32-16', 'plus-64-16', 'plus-96-24', 'plus-128-32', 'plus-192-96',
];

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

/**
 * Where the public addresses of servers created through the API come from, per zone: a /20 of
 * the benchmarking range for IPv4 (about 4,000 servers), a /64 for IPv6.
 */
export const PUBLIC_SERVER_NETWORKS: Record<Zone, { ipv4: string; ipv6: string }> = {
  rma1: { ipv4: '198.18.16.0/20', ipv6: '2a06:c01:1:16::/64' },
  lpg1: { ipv4: '198.18.32.0/20', ipv6: '2a06:c00:1:32::/64' },
};

/** Prefix lengths of the public subnets synthesised around seeded public server addresses. */
export const PUBLIC_PREFIX = { 4: 24, 6: 64 } as const;

/** Floating IPs created through the API come from these networks, per region. */
export const FLOATING_IP_NETWORKS: Record<string, { ipv4: string; ipv6: string }> = {
  rma: { ipv4: '5.102.150.0/24', ipv6: '2a06:c01:1:150::/64' },
  lpg: { ipv4: '185.98.123.0/24', ipv6: '2a06:c00:1:123::/64' },
};
