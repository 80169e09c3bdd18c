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

/**
 * The images servers can be created from: the current releases and the older ones still
 * offered. docs/cloudscale-api.md ("Flavors and images") says which slugs public material
 * shows and which are the simulator's guess; the real list changes with every release.
 */
export const SERVER_IMAGES: readonly ServerImage[] = [
  image('debian-11', 'Debian 11', 'Debian', 'debian'),
  image('debian-12', 'Debian 12', 'Debian', 'debian'),
  image('debian-13', 'Debian 13', 'Debian', 'debian'),
  image('ubuntu-20.04', 'Ubuntu 20.04', 'Ubuntu', 'ubuntu'),
  image('ubuntu-22.04', 'Ubuntu 22.04', 'Ubuntu', 'ubuntu'),
  image('ubuntu-24.04', 'Ubuntu 24.04', 'Ubuntu', 'ubuntu'),
  image('rocky-8', 'Rocky Linux 8', 'Rocky Linux', 'rocky'),
  image('rocky-9', 'Rocky Linux 9', 'Rocky Linux', 'rocky'),
  image('alma-8', 'AlmaLinux 8', 'AlmaLinux', 'almalinux'),
  image('alma-9', 'AlmaLinux 9', 'AlmaLinux', 'almalinux'),
  image('flatcar-stable', 'Flatcar Container Linux (stable)', 'Flatcar Container Linux', 'core'),
];

function image(slug: string, name: string, operating_system: string, default_username: string): ServerImage {
  return { slug, name, operating_system, default_username };
}

/** The image of seeded servers. */
export const DEFAULT_IMAGE: ServerImage = SERVER_IMAGES.find((i) => i.slug === 'debian-12')!;

export interface FlavorGpu {
  name: string;
  count: number;
  vram_per_gpu_gb: number;
  total_vram_gb: number;
}

/** A flavor as `GET /v1/flavors` lists it (without `zones`: every flavor is offered in every zone). */
export interface CatalogFlavor extends ServerFlavor {
  gpu: FlavorGpu | null;
}

/**
 * The sizes `GET /v1/flavors` lists: `flex-<GB>-<vCPUs>` (shared vCPUs) with 1, 2 or 4 GB per
 * vCPU, `plus-<GB>-<vCPUs>` (dedicated vCPUs) with 2 or 4 GB per vCPU, and the GPU flavors
 * `gpu2-<GB>-<vCPUs>-<GPUs>-<N>`. docs/cloudscale-api.md ("Flavors and images") says which
 * sizes public material shows (`flex-4-4`: cloudscale's SDK scales a server to it in its own
 * tests) and which complete the pattern as the simulator's guess.
 */
const FLEX_SIZES: readonly (readonly [number, number])[] = [
  [4, 1], [4, 2], [4, 4], [8, 2], [8, 4], [8, 8], [16, 4], [16, 8], [16, 16], [32, 8], [32, 16], [48, 12], [64, 16],
  [80, 20], [96, 24],
];
const PLUS_SIZES: readonly (readonly [number, number])[] = [
  [8, 2], [12, 3], [16, 4], [16, 8], [24, 6], [32, 8], [32, 16], [48, 12], [64, 16], [64, 32], [96, 24], [96, 48],
  [128, 32], [128, 64], [192, 48], [192, 96],
];
const GPU_MODEL = { name: 'NVIDIA RTX PRO 6000 Max-Q', vramGb: 96 };
const GPU_SIZES: readonly (readonly [number, number, number, number])[] = [
  [128, 16, 1, 200],
  [256, 32, 2, 400],
  [512, 64, 4, 800],
];

export const SERVER_FLAVORS: readonly CatalogFlavor[] = [
  ...FLEX_SIZES.map(([memory, vcpus]) => sizedFlavor('flex', memory, vcpus)),
  ...PLUS_SIZES.map(([memory, vcpus]) => sizedFlavor('plus', memory, vcpus)),
  ...GPU_SIZES.map(([memory, vcpus, gpus, scratch]): CatalogFlavor => {
    const slug = `gpu2-${memory}-${vcpus}-${gpus}-${scratch}`;
    return {
      slug,
      name: slug.toUpperCase(),
      vcpu_count: vcpus,
      memory_gb: memory,
      gpu: { name: GPU_MODEL.name, count: gpus, vram_per_gpu_gb: GPU_MODEL.vramGb, total_vram_gb: gpus * GPU_MODEL.vramGb },
    };
  }),
];

/** The slugs servers can be created with or resized to: those `GET /v1/flavors` lists. */
export const SERVER_FLAVOR_SLUGS: readonly string[] = SERVER_FLAVORS.map((f) => f.slug);

function sizedFlavor(family: 'flex' | 'plus', memory: number, vcpus: number): CatalogFlavor {
  const name = `${family[0]!.toUpperCase()}${family.slice(1)}-${memory}-${vcpus}`;
  return { slug: `${family}-${memory}-${vcpus}`, name, vcpu_count: vcpus, memory_gb: memory, gpu: null };
}

/**
 * The flavor object a server shows (`{slug, name, vcpu_count, memory_gb}`): a listed flavor, or
 * any other `flex-<GB>-<vCPUs>` / `plus-<GB>-<vCPUs>` slug (seeds may use sizes the list lacks);
 * `undefined` for anything else.
 */
export function serverFlavor(slug: string): ServerFlavor | undefined {
  const listed = SERVER_FLAVORS.find((f) => f.slug === slug);
  if (listed !== undefined) return { slug, name: listed.name, vcpu_count: listed.vcpu_count, memory_gb: listed.memory_gb };
  const match = /^(flex|plus)-(\d+)-(\d+)$/.exec(slug);
  if (match === null) return undefined;
  const [, family, memory, vcpus] = match as unknown as [string, 'flex' | 'plus', string, string];
  const { gpu: _, ...flavor } = sizedFlavor(family, Number(memory), Number(vcpus));
  return flavor;
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
