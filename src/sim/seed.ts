// The seed: the cloud the simulator starts with (networks, servers, floating IPs), read from YAML
// or JSON. Validation collects every problem and reports them together, each naming its entry.
// The format is documented in docs/sim.md.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError, errorMessage } from '../core/errors.js';
import type { ServerFlavor, Tags } from '../core/cloudscale/types.js';
import { isZone, REGIONS, regionOfZone, serverFlavor, ZONES, type Zone } from './catalog.js';
import { DEFAULT_DATA_PLANE, readDataPlaneTimings, type DataPlaneChanges } from './dataplane-timings.js';
import { cidrContains, parseCidr, parseIp, type CidrNetwork, type IpAddress } from './net.js';

// ---- the seed as written (snake_case, like the API) ---------------------------------------

export interface SimSeed {
  networks?: SeedNetwork[];
  servers?: SeedServer[];
  floating_ips?: SeedFloatingIp[];
  /** The data plane's timings (docs/sim.md, "Data plane"); the defaults keep it instant. */
  dataPlane?: DataPlaneChanges;
}

export interface SeedNetwork {
  name: string;
  zone: string;
  uuid?: string;
  mtu?: number;
  tags?: Tags;
  subnets?: SeedSubnet[];
}

export interface SeedSubnet {
  cidr: string;
  uuid?: string;
  gateway_address?: string | null;
  dns_servers?: string[];
  tags?: Tags;
}

export interface SeedServer {
  name: string;
  uuid?: string;
  /** Slug such as `flex-4-2`; expands to the API's flavor object. */
  flavor: string;
  zone: string;
  status?: 'running' | 'stopped';
  tags?: Tags;
  interfaces?: SeedInterface[];
}

export interface SeedInterface {
  type: 'public' | 'private';
  /** Private interfaces: the name or UUID of a seeded network. */
  network?: string;
  addresses?: string[];
}

export interface SeedFloatingIp {
  /** `192.0.2.10/32`, `2001:db8::10/128`, a `/56` IPv6 network, or a bare single address. */
  network: string;
  type?: 'regional' | 'global';
  /** Required for regional floating IPs, absent for global ones. */
  region?: string;
  /** Name or UUID of a seeded server the floating IP is assigned to. */
  server?: string;
  reverse_ptr?: string | null;
  tags?: Tags;
}

// ---- the validated seed --------------------------------------------------------------------

export interface ValidSeed {
  networks: ValidNetwork[];
  servers: ValidServer[];
  floatingIps: ValidFloatingIp[];
  /** The timings the seed gives (checked), over the simulator's world; absent: none. */
  dataPlane?: DataPlaneChanges;
}

export interface ValidNetwork {
  uuid: string;
  name: string;
  zone: Zone;
  mtu: number;
  tags: Tags;
  subnets: ValidSubnet[];
}

export interface ValidSubnet {
  uuid: string;
  network: CidrNetwork;
  gatewayAddress: string | null;
  dnsServers: string[];
  tags: Tags;
}

export interface ValidServer {
  uuid: string;
  name: string;
  flavor: ServerFlavor;
  zone: Zone;
  status: 'running' | 'stopped';
  tags: Tags;
  interfaces: ValidInterface[];
}

export type ValidInterface =
  | { type: 'public'; addresses: IpAddress[] }
  | { type: 'private'; networkUuid: string; addresses: { ip: IpAddress; subnetUuid: string }[] };

export interface ValidFloatingIp {
  network: CidrNetwork;
  type: 'regional' | 'global';
  region: string | null;
  serverUuid: string | null;
  reversePtr: string | null;
  tags: Tags;
}

export const DEFAULT_DNS_SERVERS = ['5.102.144.101', '5.102.144.102'];

// ---- entry points ------------------------------------------------------------------------

/** Reads and validates a seed file (YAML or JSON). Throws ConfigError naming file and entry. */
export async function loadSeedFile(path: string): Promise<SimSeed> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${path}: cannot read the seed file: ${errorMessage(error)}`, {
      cause: error,
      hint: 'Pass an existing YAML or JSON file; examples/sim-seed.yaml is a starting point.',
    });
  }
  return parseSeed(text, path);
}

/**
 * Parses and validates seed text (YAML or JSON; an empty document is an empty cloud).
 * `source` names the text in errors, usually the file path.
 */
export function parseSeed(text: string, source: string): SimSeed {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter });
  const syntaxError = document.errors[0];
  if (syntaxError !== undefined) {
    const where = lineCounter.linePos(syntaxError.pos[0]);
    const at = where === undefined ? '' : ` (line ${where.line}, column ${where.col})`;
    throw new ConfigError(`${source}: not valid YAML or JSON${at}: ${syntaxError.message}`, {
      hint: 'Fix the syntax; docs/sim.md describes the seed format.',
    });
  }
  const data: unknown = document.toJS() ?? {};
  validateSeed(data, source);
  return data as SimSeed;
}

/**
 * Checks a seed object and resolves it: UUIDs (generated from names when absent), flavors,
 * subnets of private addresses. Throws one ConfigError listing every problem.
 */
export function validateSeed(data: unknown, source: string): ValidSeed {
  const problems: string[] = [];
  const result = collect(data, problems);
  if (problems.length === 1) {
    throw new ConfigError(`${source}: ${problems[0]}`, { hint: SEED_HINT });
  }
  if (problems.length > 1) {
    throw new ConfigError(
      `${source}: ${problems.length} problems:\n${problems.map((p) => `  ${p}`).join('\n')}`,
      { hint: SEED_HINT },
    );
  }
  return result;
}

const SEED_HINT = 'docs/sim.md describes the seed format; examples/sim-seed.yaml is an example.';

/** A UUID derived from `key`, so that seeds without UUIDs give the same cloud every time. */
export function seededUuid(key: string): string {
  const hex = createHash('sha1').update(`cloudscale-ccm-sim:${key}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// ---- validation ----------------------------------------------------------------------------

type Problems = string[];
type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKeys(entry: Dict, allowed: readonly string[], where: string, problems: Problems): void {
  for (const key of Object.keys(entry)) {
    if (!allowed.includes(key)) {
      problems.push(`${where}: unknown field "${key}" (expected one of: ${allowed.join(', ')})`);
    }
  }
}

function optionalList(entry: Dict, key: string, where: string, problems: Problems): unknown[] {
  const value = entry[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${where}: "${key}" must be a list`);
    return [];
  }
  return value;
}

function requiredString(entry: Dict, key: string, where: string, problems: Problems): string | undefined {
  const value = entry[key];
  if (typeof value === 'string' && value !== '') return value;
  problems.push(
    value === undefined ? `${where}: "${key}" is required` : `${where}: "${key}" must be a non-empty string`,
  );
  return undefined;
}

function optionalString(entry: Dict, key: string, where: string, problems: Problems): string | undefined {
  const value = entry[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  problems.push(`${where}: "${key}" must be a string`);
  return undefined;
}

function tagsOf(entry: Dict, where: string, problems: Problems): Tags {
  const value = entry.tags;
  if (value === undefined || value === null) return {};
  if (!isDict(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    problems.push(`${where}: "tags" must map strings to strings`);
    return {};
  }
  return { ...(value as Tags) };
}

function zoneOf(entry: Dict, where: string, problems: Problems): Zone | undefined {
  const zone = requiredString(entry, 'zone', where, problems);
  if (zone === undefined) return undefined;
  if (!isZone(zone)) {
    problems.push(`${where}: zone "${zone}" is not a cloudscale zone (expected one of: ${ZONES.join(', ')})`);
    return undefined;
  }
  return zone;
}

function uuidOf(entry: Dict, where: string, fallbackKey: string, seen: Set<string>, problems: Problems): string {
  const given = optionalString(entry, 'uuid', where, problems);
  let uuid = given?.toLowerCase() ?? seededUuid(fallbackKey);
  if (given !== undefined && !UUID_PATTERN.test(given)) {
    problems.push(`${where}: uuid "${given}" is not a UUID`);
  } else if (seen.has(uuid)) {
    if (given !== undefined) problems.push(`${where}: uuid ${uuid} is used twice`);
    else for (let n = 2; seen.has(uuid); n++) uuid = seededUuid(`${fallbackKey}#${n}`);
  }
  seen.add(uuid);
  return uuid;
}

function collect(data: unknown, problems: Problems): ValidSeed {
  const seed: ValidSeed = { networks: [], servers: [], floatingIps: [] };
  if (!isDict(data)) {
    problems.push('the seed must be a mapping with "networks", "servers" and "floating_ips"');
    return seed;
  }
  checkKeys(data, ['networks', 'servers', 'floating_ips', 'dataPlane'], 'seed', problems);
  if (data.dataPlane !== undefined && data.dataPlane !== null) {
    // Checked here against any base; applied over the world's timings when the simulator starts.
    const read = readDataPlaneTimings(data.dataPlane, DEFAULT_DATA_PLANE, 'dataPlane');
    problems.push(...read.problems);
    if (read.problems.length === 0) seed.dataPlane = data.dataPlane as DataPlaneChanges;
  }
  const seenUuids = new Set<string>();

  optionalList(data, 'networks', 'seed', problems).forEach((raw, index) => {
    const network = collectNetwork(raw, index, seed.networks, seenUuids, problems);
    if (network !== undefined) seed.networks.push(network);
  });

  const usedAddresses = new Map<string, string>();
  optionalList(data, 'servers', 'seed', problems).forEach((raw, index) => {
    const server = collectServer(raw, index, seed.networks, seenUuids, usedAddresses, problems);
    if (server !== undefined) seed.servers.push(server);
  });

  const seenFloatingIps = new Set<string>();
  optionalList(data, 'floating_ips', 'seed', problems).forEach((raw, index) => {
    const floatingIp = collectFloatingIp(raw, index, seed.servers, seenFloatingIps, problems);
    if (floatingIp !== undefined) seed.floatingIps.push(floatingIp);
  });
  return seed;
}

function entryLabel(kind: string, index: number, raw: unknown, key: string): string {
  const name = isDict(raw) && typeof raw[key] === 'string' ? ` (${raw[key]})` : '';
  return `${kind}[${index}]${name}`;
}

function collectNetwork(
  raw: unknown,
  index: number,
  earlier: readonly ValidNetwork[],
  seenUuids: Set<string>,
  problems: Problems,
): ValidNetwork | undefined {
  const where = entryLabel('networks', index, raw, 'name');
  if (!isDict(raw)) {
    problems.push(`${where}: must be a mapping`);
    return undefined;
  }
  checkKeys(raw, ['name', 'zone', 'uuid', 'mtu', 'tags', 'subnets'], where, problems);
  const name = requiredString(raw, 'name', where, problems);
  const zone = zoneOf(raw, where, problems);
  if (name !== undefined && earlier.some((network) => network.name === name)) {
    problems.push(`${where}: another network is already named "${name}" (servers refer to networks by name)`);
  }
  const uuid = uuidOf(raw, where, `network:${name ?? index}`, seenUuids, problems);
  let mtu = 9000;
  if (raw.mtu !== undefined) {
    if (typeof raw.mtu === 'number' && Number.isInteger(raw.mtu) && raw.mtu >= 1280 && raw.mtu <= 9000) {
      mtu = raw.mtu;
    } else {
      problems.push(`${where}: "mtu" must be an integer from 1280 to 9000`);
    }
  }
  const subnets: ValidSubnet[] = [];
  optionalList(raw, 'subnets', where, problems).forEach((rawSubnet, subnetIndex) => {
    const subnetWhere = `${where}: subnets[${subnetIndex}]`;
    if (!isDict(rawSubnet)) {
      problems.push(`${subnetWhere}: must be a mapping`);
      return;
    }
    checkKeys(rawSubnet, ['cidr', 'uuid', 'gateway_address', 'dns_servers', 'tags'], subnetWhere, problems);
    const cidrText = requiredString(rawSubnet, 'cidr', subnetWhere, problems);
    const cidr = cidrText === undefined ? undefined : parseCidr(cidrText, { strict: true });
    if (cidrText !== undefined && cidr === undefined) {
      problems.push(`${subnetWhere}: "${cidrText}" is not a network in CIDR notation (host bits must be zero)`);
    } else if (cidr !== undefined && cidr.version === 4 && cidr.prefix > 24) {
      problems.push(`${subnetWhere}: ${cidr.text} is smaller than /24, which cloudscale does not allow`);
    }
    const subnetUuid = uuidOf(rawSubnet, subnetWhere, `subnet:${name ?? index}:${cidrText ?? subnetIndex}`, seenUuids, problems);
    const gateway = optionalString(rawSubnet, 'gateway_address', subnetWhere, problems);
    if (gateway !== undefined && cidr !== undefined) {
      const ip = parseIp(gateway);
      if (ip === undefined || !cidrContains(cidr, ip)) {
        problems.push(`${subnetWhere}: gateway_address ${gateway} is not an address inside ${cidr.text}`);
      }
    }
    let dnsServers = DEFAULT_DNS_SERVERS;
    if (rawSubnet.dns_servers !== undefined && rawSubnet.dns_servers !== null) {
      const list = rawSubnet.dns_servers;
      if (!Array.isArray(list) || list.some((d) => typeof d !== 'string' || parseIp(d) === undefined)) {
        problems.push(`${subnetWhere}: "dns_servers" must be a list of IP addresses`);
      } else {
        dnsServers = list as string[];
      }
    }
    if (cidr === undefined) return;
    // Networks are separate layer-2 domains: only subnets of one network must not overlap.
    const overlapping = subnets.find((other) => overlaps(other.network, cidr));
    if (overlapping !== undefined) {
      problems.push(`${subnetWhere}: ${cidr.text} overlaps subnet ${overlapping.network.text}`);
    }
    subnets.push({
      uuid: subnetUuid,
      network: cidr,
      gatewayAddress: gateway ?? null,
      dnsServers: [...dnsServers],
      tags: tagsOf(rawSubnet, subnetWhere, problems),
    });
  });
  if (name === undefined || zone === undefined) return undefined;
  return { uuid, name, zone, mtu, tags: tagsOf(raw, where, problems), subnets };
}

function overlaps(a: CidrNetwork, b: CidrNetwork): boolean {
  if (a.version !== b.version) return false;
  const wider = a.prefix <= b.prefix ? a : b;
  const narrower = wider === a ? b : a;
  return cidrContains(wider, { version: narrower.version, value: narrower.base, text: '' });
}

function collectServer(
  raw: unknown,
  index: number,
  networks: readonly ValidNetwork[],
  seenUuids: Set<string>,
  usedAddresses: Map<string, string>,
  problems: Problems,
): ValidServer | undefined {
  const where = entryLabel('servers', index, raw, 'name');
  if (!isDict(raw)) {
    problems.push(`${where}: must be a mapping`);
    return undefined;
  }
  checkKeys(raw, ['name', 'uuid', 'flavor', 'zone', 'status', 'tags', 'interfaces'], where, problems);
  const name = requiredString(raw, 'name', where, problems);
  if (name !== undefined && name.length > 63) problems.push(`${where}: the name is longer than 63 characters`);
  const uuid = uuidOf(raw, where, `server:${name ?? index}`, seenUuids, problems);
  const flavorSlug = requiredString(raw, 'flavor', where, problems);
  const flavor = flavorSlug === undefined ? undefined : serverFlavor(flavorSlug);
  if (flavorSlug !== undefined && flavor === undefined) {
    problems.push(`${where}: flavor "${flavorSlug}" is not a flavor slug like flex-4-2 or plus-32-16`);
  }
  const zone = zoneOf(raw, where, problems);
  const status = raw.status ?? 'running';
  if (status !== 'running' && status !== 'stopped') {
    problems.push(`${where}: status "${String(status)}" must be running or stopped`);
  }

  const interfaces: ValidInterface[] = [];
  optionalList(raw, 'interfaces', where, problems).forEach((rawInterface, interfaceIndex) => {
    const at = `${where}: interface ${interfaceIndex}`;
    if (!isDict(rawInterface)) {
      problems.push(`${at}: must be a mapping`);
      return;
    }
    checkKeys(rawInterface, ['type', 'network', 'addresses'], at, problems);
    const addressTexts = optionalList(rawInterface, 'addresses', at, problems);
    const addresses: IpAddress[] = [];
    for (const text of addressTexts) {
      const ip = typeof text === 'string' ? parseIp(text) : undefined;
      if (ip === undefined) {
        problems.push(`${at}: ${JSON.stringify(text)} is not an IP address (write addresses without a prefix length)`);
        continue;
      }
      const owner = usedAddresses.get(ip.text);
      if (owner !== undefined) problems.push(`${at}: address ${ip.text} is already used by ${owner}`);
      usedAddresses.set(ip.text, where);
      addresses.push(ip);
    }
    if (rawInterface.type === 'public') {
      if (rawInterface.network !== undefined) {
        problems.push(`${at}: a public interface takes no "network" (the public network is implied)`);
      }
      if (interfaces.some((i) => i.type === 'public')) problems.push(`${at}: a server has at most one public interface`);
      for (const version of [4, 6] as const) {
        if (addresses.filter((a) => a.version === version).length > 1) {
          problems.push(`${at}: a public interface has at most one IPv${version} address`);
        }
      }
      // The API lists the IPv4 address of a public interface before the IPv6 one.
      interfaces.push({ type: 'public', addresses: [...addresses].sort((a, b) => a.version - b.version) });
      return;
    }
    if (rawInterface.type !== 'private') {
      problems.push(`${at}: type ${JSON.stringify(rawInterface.type)} must be public or private`);
      return;
    }
    const networkRef = requiredString(rawInterface, 'network', at, problems);
    if (networkRef === undefined) return;
    const network = networks.find((n) => n.name === networkRef || n.uuid === networkRef.toLowerCase());
    if (network === undefined) {
      problems.push(`${at}: network "${networkRef}" is not a network of this seed`);
      return;
    }
    if (zone !== undefined && network.zone !== zone) {
      problems.push(`${at}: network ${network.name} is in zone ${network.zone}, the server in ${zone}`);
    }
    const resolved: { ip: IpAddress; subnetUuid: string }[] = [];
    for (const ip of addresses) {
      const subnet = network.subnets.find((s) => cidrContains(s.network, ip));
      if (subnet === undefined) {
        problems.push(`${at}: address ${ip.text} is not inside any subnet of network ${network.name}`);
        continue;
      }
      resolved.push({ ip, subnetUuid: subnet.uuid });
    }
    interfaces.push({ type: 'private', networkUuid: network.uuid, addresses: resolved });
  });

  if (name === undefined || flavor === undefined || zone === undefined) return undefined;
  if (status !== 'running' && status !== 'stopped') return undefined;
  return { uuid, name, flavor, zone, status, tags: tagsOf(raw, where, problems), interfaces };
}

function collectFloatingIp(
  raw: unknown,
  index: number,
  servers: readonly ValidServer[],
  seen: Set<string>,
  problems: Problems,
): ValidFloatingIp | undefined {
  const where = entryLabel('floating_ips', index, raw, 'network');
  if (!isDict(raw)) {
    problems.push(`${where}: must be a mapping`);
    return undefined;
  }
  checkKeys(raw, ['network', 'type', 'region', 'server', 'reverse_ptr', 'tags'], where, problems);
  const text = requiredString(raw, 'network', where, problems);
  let network: CidrNetwork | undefined;
  if (text !== undefined) {
    const single = parseIp(text);
    network = single === undefined
      ? parseCidr(text, { strict: true })
      : parseCidr(`${single.text}/${single.version === 4 ? 32 : 128}`);
    const allowed = network === undefined ? false : network.version === 4 ? network.prefix === 32 : network.prefix === 128 || network.prefix === 56;
    if (network === undefined || !allowed) {
      problems.push(`${where}: "${text}" must be an IPv4 /32, an IPv6 /128 or an IPv6 /56 network`);
      network = undefined;
    } else if (seen.has(network.text)) {
      problems.push(`${where}: floating IP ${network.text} is listed twice`);
    } else {
      seen.add(network.text);
    }
  }
  const type = raw.type ?? 'regional';
  if (type !== 'regional' && type !== 'global') {
    problems.push(`${where}: type ${JSON.stringify(type)} must be regional or global`);
  }
  const region = optionalString(raw, 'region', where, problems);
  if (type === 'global' && region !== undefined) problems.push(`${where}: a global floating IP has no region`);
  if (type === 'regional') {
    if (region === undefined) problems.push(`${where}: a regional floating IP needs a "region" (${REGIONS.join(' or ')})`);
    else if (!REGIONS.includes(region)) {
      problems.push(`${where}: region "${region}" is not a cloudscale region (expected one of: ${REGIONS.join(', ')})`);
    }
  }
  const serverRef = optionalString(raw, 'server', where, problems);
  let serverUuid: string | null = null;
  if (serverRef !== undefined) {
    const matches = servers.filter((s) => s.name === serverRef || s.uuid === serverRef.toLowerCase());
    const server = matches[0];
    if (server === undefined) problems.push(`${where}: server "${serverRef}" is not a server of this seed`);
    else if (matches.length > 1) problems.push(`${where}: several servers are named "${serverRef}"; use its uuid`);
    else if (type === 'regional' && region !== undefined && regionOfZone(server.zone) !== region) {
      problems.push(`${where}: server ${server.name} is in zone ${server.zone}, outside region ${region}`);
    } else serverUuid = server.uuid;
  }
  const reversePtr = optionalString(raw, 'reverse_ptr', where, problems);
  if (network === undefined || (type !== 'regional' && type !== 'global')) return undefined;
  return {
    network,
    type,
    region: type === 'regional' ? (region ?? null) : null,
    serverUuid,
    reversePtr: reversePtr ?? null,
    tags: tagsOf(raw, where, problems),
  };
}
