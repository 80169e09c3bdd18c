// IP addresses and CIDR networks as the simulator needs them: parse, normalise, test
// membership, pick free addresses. Addresses are held as bigints so IPv4 and IPv6 share one code
// path.

import { isIP } from 'node:net';

export type IpVersion = 4 | 6;

export interface IpAddress {
  version: IpVersion;
  value: bigint;
  /** Canonical text: dotted quad, or RFC 5952 compressed IPv6. */
  text: string;
}

export interface CidrNetwork {
  version: IpVersion;
  /** The network address (host bits cleared). */
  base: bigint;
  prefix: number;
  /** Canonical `address/prefix` of the network (host bits cleared). */
  text: string;
}

const BITS: Record<IpVersion, number> = { 4: 32, 6: 128 };

/** Parses an IP address; `undefined` if `text` is not one (a CIDR is not an address). */
export function parseIp(text: string): IpAddress | undefined {
  const version = isIP(text);
  if (version === 4) {
    const value = text
      .split('.')
      .reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
    return { version: 4, value, text: formatIp(4, value) };
  }
  if (version === 6) {
    // The URL parser normalises IPv6 (including embedded IPv4) into compressed hex form.
    const normalised = new URL(`http://[${text}]/`).hostname.slice(1, -1);
    const value = ipv6ToBigint(normalised);
    return { version: 6, value, text: formatIp(6, value) };
  }
  return undefined;
}

/**
 * Parses `address/prefix`. With `strict`, host bits must be zero (`10.0.0.1/24` is rejected);
 * without, they are cleared. `undefined` if the text is not CIDR notation.
 */
export function parseCidr(text: string, options: { strict?: boolean } = {}): CidrNetwork | undefined {
  const slash = text.indexOf('/');
  if (slash <= 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (ip === undefined || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const bits = BITS[ip.version];
  if (prefix > bits) return undefined;
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  if (options.strict === true && (ip.value & hostMask) !== 0n) return undefined;
  const base = ip.value & ~hostMask;
  return { version: ip.version, base, prefix, text: `${formatIp(ip.version, base)}/${prefix}` };
}

export function cidrContains(network: CidrNetwork, ip: IpAddress): boolean {
  if (network.version !== ip.version) return false;
  const shift = BigInt(BITS[network.version] - network.prefix);
  return ip.value >> shift === network.base >> shift;
}

/** The network of `prefix` bits that contains `ip` (e.g. the /24 around a public IPv4). */
export function enclosingNetwork(ip: IpAddress, prefix: number): CidrNetwork {
  const hostMask = (1n << BigInt(BITS[ip.version] - prefix)) - 1n;
  const base = ip.value & ~hostMask;
  return { version: ip.version, base, prefix, text: `${formatIp(ip.version, base)}/${prefix}` };
}

/** The address `offset` positions after the network address. */
export function addressAt(network: CidrNetwork, offset: bigint): IpAddress {
  const value = network.base + offset;
  return { version: network.version, value, text: formatIp(network.version, value) };
}

/**
 * The first address of `network` from `firstOffset` on that `isTaken` rejects, skipping the
 * network address, and for IPv4 the broadcast address. `undefined` when the network is full.
 */
export function firstFreeAddress(
  network: CidrNetwork,
  firstOffset: bigint,
  isTaken: (address: string) => boolean,
): IpAddress | undefined {
  const size = 1n << BigInt(BITS[network.version] - network.prefix);
  const last = network.version === 4 ? size - 2n : size - 1n;
  // Bounded so that a huge IPv6 network with many taken addresses cannot loop for long.
  const limit = firstOffset + 100_000n;
  for (let offset = firstOffset; offset <= last && offset < limit; offset++) {
    const candidate = addressAt(network, offset);
    if (!isTaken(candidate.text)) return candidate;
  }
  return undefined;
}

export function formatIp(version: IpVersion, value: bigint): string {
  if (version === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  }
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  // RFC 5952: compress the longest run (at least two) of zero groups, the first one on ties.
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; ) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(':');
  const head = hex.slice(0, bestStart).join(':');
  const tail = hex.slice(bestStart + bestLength).join(':');
  return `${head}::${tail}`;
}

function ipv6ToBigint(compressed: string): bigint {
  const [headText, tailText] = compressed.includes('::')
    ? (compressed.split('::') as [string, string])
    : [compressed, undefined];
  const head = headText === '' ? [] : headText.split(':');
  const tail = tailText === undefined || tailText === '' ? [] : tailText.split(':');
  const zeros = tailText === undefined ? [] : Array<string>(8 - head.length - tail.length).fill('0');
  return [...head, ...zeros, ...tail].reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}
