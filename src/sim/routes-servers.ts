// API routes of servers: create (with interfaces on the public and private networks), read,
// PATCH (one attribute: name, tags, flavor, interfaces), delete, the start/stop/reboot actions,
// and the flavor list.

import { randomUUID } from 'node:crypto';
import { PUBLIC_SERVER_NETWORKS, SERVER_FLAVORS, SERVER_FLAVOR_SLUGS, SERVER_IMAGES, serverFlavor, ZONES, type Zone } from './catalog.js';
import { ApiError, badRequest, Fields, isDict, notFound, referenceProblem, type Dict } from './fields.js';
import { API_LIMITS } from './limits.js';
import { cidrContains, firstFreeAddress, parseCidr, type IpAddress } from './net.js';
import { created, noContent, now, ok, resource, type Route } from './routing.js';
import type { ServerAddressRecord, ServerInterfaceRecord, ServerRecord, SimState } from './state.js';

/** At most this many floating IPs point at one server. */
export const MAX_FLOATING_IPS_PER_SERVER = 15;

/**
 * Server names are host names (or FQDNs): letters, digits and hyphens in dot-separated labels
 * that neither start nor end with a hyphen.
 */
const SERVER_NAME = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$/;
const SERVER_NAME_MESSAGE = 'Enter a valid host name or FQDN: letters, digits and hyphens, in labels separated by dots.';

function readServerName(fields: Fields, required: boolean): string | undefined {
  const name = fields.string('name', { required, maxLength: 63 });
  if (typeof name !== 'string') return undefined;
  if (!SERVER_NAME.test(name)) {
    fields.add('name', SERVER_NAME_MESSAGE);
    return undefined;
  }
  return name;
}

function readFlavor(fields: Fields, required: boolean) {
  const slug = fields.choice('flavor', SERVER_FLAVOR_SLUGS, { required });
  return typeof slug === 'string' ? serverFlavor(slug) : undefined;
}

// ---- interfaces ----------------------------------------------------------------------------

/** What an interface of a create or PATCH body asks for, checked against the cloud. */
type InterfaceRequest =
  | { type: 'public' }
  | { type: 'private'; networkUuid: string; addresses: { subnetUuid: string; ip: IpAddress | undefined }[] | 'auto' };

/**
 * Reads `interfaces` (`[{network?: "public" | uuid, addresses?: [{subnet, address?}]}]`) into
 * requests; per-item problems go into `fields.errors.interfaces` in DRF's nested shape.
 */
function readInterfaces(state: SimState, fields: Fields, zone: Zone): InterfaceRequest[] | undefined {
  const items = fields.list('interfaces');
  if (items === undefined) return undefined;
  const errors: Dict[] = items.map(() => ({}));
  const requests = items.map((item, index) => readInterface(state, item, zone, errors[index]!));
  if (errors.some((e) => Object.keys(e).length > 0)) {
    fields.errors.interfaces = errors;
    return undefined;
  }
  return requests as InterfaceRequest[];
}

function readInterface(state: SimState, item: unknown, zone: Zone, errors: Dict): InterfaceRequest | undefined {
  if (!isDict(item)) {
    errors.non_field_errors = `Invalid data. Expected a dictionary, but got ${typeof item}.`;
    return undefined;
  }
  const itemFields = new Fields(item);
  const addressItems = itemFields.list('addresses');
  if (item.network === 'public') {
    if (addressItems !== undefined && addressItems.length > 0) {
      errors.addresses = 'Addresses on the public network are assigned by the cloud and cannot be chosen.';
      return undefined;
    }
    return { type: 'public' };
  }
  let networkUuid: string | undefined;
  if (item.network !== undefined && item.network !== null) {
    const problem = referenceProblem(item.network, state.networks);
    const network = problem === undefined ? state.networks.get(String(item.network).toLowerCase()) : undefined;
    if (network === undefined || network.isPublic) {
      errors.network = problem ?? `Object with uuid=${String(item.network)} does not exist.`;
      return undefined;
    }
    if (network.zone !== zone) {
      errors.network = `The network is in zone ${network.zone}, not in zone ${zone} of the server.`;
      return undefined;
    }
    networkUuid = network.uuid;
  }
  if (addressItems === undefined) {
    Object.assign(errors, itemFields.errors);
    if (networkUuid === undefined) errors.network = 'This field is required.';
    return networkUuid === undefined ? undefined : { type: 'private', networkUuid, addresses: 'auto' };
  }
  const addressErrors: Dict[] = addressItems.map(() => ({}));
  const addresses: { subnetUuid: string; ip: IpAddress | undefined }[] = [];
  addressItems.forEach((raw, index) => {
    const problems = addressErrors[index]!;
    if (!isDict(raw)) {
      problems.non_field_errors = `Invalid data. Expected a dictionary, but got ${typeof raw}.`;
      return;
    }
    const addressFields = new Fields(raw);
    const subnet = addressFields.reference('subnet', state.subnets, { required: true });
    const ip = addressFields.ipAddress('address', { nullable: true });
    Object.assign(problems, addressFields.errors);
    if (!subnet) return;
    if (subnet.isPublic) {
      problems.subnet = `Object with uuid=${subnet.uuid} does not exist.`;
      return;
    }
    networkUuid ??= subnet.networkUuid;
    if (subnet.networkUuid !== networkUuid) {
      problems.subnet = 'The subnet does not belong to the network of this interface.';
      return;
    }
    if (state.zoneOfSubnet(subnet) !== zone) {
      problems.subnet = `The subnet is not in zone ${zone} of the server.`;
      return;
    }
    if (ip && !cidrContains(subnet.cidr, ip)) {
      problems.address = `IP address ${ip.text} is not a valid IP for the specified subnet.`;
      return;
    }
    addresses.push({ subnetUuid: subnet.uuid, ip: ip ?? undefined });
  });
  if (addressErrors.some((e) => Object.keys(e).length > 0)) {
    errors.addresses = addressErrors;
    return undefined;
  }
  if (networkUuid === undefined) {
    errors.network = 'This field is required unless an address names a subnet.';
    return undefined;
  }
  return { type: 'private', networkUuid, addresses };
}

/**
 * Turns interface requests into interfaces with addresses. `previous` (on PATCH) are the
 * server's current interfaces: their addresses count as free for it, and a public interface or
 * an automatic private address keeps the address it had.
 */
function allocateInterfaces(
  state: SimState,
  zone: Zone,
  requests: readonly InterfaceRequest[],
  withIpv6: boolean,
  previous: readonly ServerInterfaceRecord[] = [],
): ServerInterfaceRecord[] {
  const own = new Set(previous.flatMap((iface) => iface.addresses.map((a) => a.ip.text)));
  const used = new Set([...state.addressesInUse()].filter((address) => !own.has(address)));
  const taken = (address: string): boolean => used.has(address);
  const errors: Dict[] = requests.map(() => ({}));
  const interfaces = requests.map((request, index): ServerInterfaceRecord => {
    if (request.type === 'public') {
      const kept = previous.find((iface) => iface.type === 'public');
      if (kept !== undefined) {
        for (const address of kept.addresses) used.add(address.ip.text);
        return { ...kept, addresses: [...kept.addresses] };
      }
      const ranges = PUBLIC_SERVER_NETWORKS[zone];
      const addresses = (withIpv6 ? [ranges.ipv4, ranges.ipv6] : [ranges.ipv4]).map((text) => {
        const range = parseCidr(text)!;
        const ip = firstFreeAddress(range, 10n, taken);
        if (ip === undefined) throw badRequest(`No public addresses are left for servers in zone ${zone}.`);
        used.add(ip.text);
        return state.publicAddress(zone, ip, range);
      });
      return { type: 'public', networkUuid: state.publicNetwork(zone).uuid, addresses };
    }
    const wanted =
      request.addresses === 'auto' ? automaticAddress(state, request.networkUuid, previous) : request.addresses;
    const addresses: ServerAddressRecord[] = [];
    for (const { subnetUuid, ip } of wanted) {
      const subnet = state.subnets.get(subnetUuid)!;
      if (ip !== undefined && used.has(ip.text)) {
        errors[index]!.addresses = [{ address: `IP address ${ip.text} is already in use.` }];
        continue;
      }
      const chosen = ip ?? firstFreeAddress(subnet.cidr, 1n, (a) => taken(a) || a === subnet.gatewayAddress);
      if (chosen === undefined) {
        errors[index]!.addresses = [{ subnet: 'No free address is left in this subnet.' }];
        continue;
      }
      used.add(chosen.text);
      addresses.push(state.privateAddress(chosen, subnetUuid));
    }
    return { type: 'private', networkUuid: request.networkUuid, addresses };
  });
  if (errors.some((e) => Object.keys(e).length > 0)) throw new ApiError(400, { interfaces: errors });
  return interfaces;
}

/**
 * A private interface without `addresses`: the address it had (PATCH), or one free address of
 * the network's first IPv4 subnet; none when the network has no subnet.
 */
function automaticAddress(
  state: SimState,
  networkUuid: string,
  previous: readonly ServerInterfaceRecord[],
): { subnetUuid: string; ip: IpAddress | undefined }[] {
  const kept = previous.find((iface) => iface.type === 'private' && iface.networkUuid === networkUuid);
  if (kept !== undefined) return kept.addresses.map((a) => ({ subnetUuid: a.subnetUuid, ip: a.ip }));
  const subnet = [...state.subnets.values()].find((s) => s.networkUuid === networkUuid && s.cidr.version === 4);
  return subnet === undefined ? [] : [{ subnetUuid: subnet.uuid, ip: undefined }];
}

/** Interfaces of a create without `interfaces`: `use_public_network`, `use_private_network`. */
function defaultInterfaces(state: SimState, fields: Fields, zone: Zone): InterfaceRequest[] {
  const usePublic = fields.boolean('use_public_network') ?? true;
  const usePrivate = fields.boolean('use_private_network') ?? false;
  const requests: InterfaceRequest[] = usePublic ? [{ type: 'public' }] : [];
  if (usePrivate) {
    const network = [...state.networks.values()].find((n) => !n.isPublic && n.zone === zone);
    if (network === undefined) fields.add('use_private_network', `There is no private network in zone ${zone}.`);
    else requests.push({ type: 'private', networkUuid: network.uuid, addresses: 'auto' });
  }
  return requests;
}

// ---- routes --------------------------------------------------------------------------------

const servers = resource({
  path: '/v1/servers',
  records: (state) => state.servers,
  render: (state, server) => state.renderServer(server),
  remove: (ctx, server) => ctx.state.deleteServer(server.uuid),
});

export const serverRoutes: Route[] = [
  ...servers.routes,
  {
    method: 'POST',
    pattern: servers.path,
    handle: (ctx) => {
      const { state } = ctx;
      const fields = new Fields(ctx.body);
      const name = readServerName(fields, true);
      const flavor = readFlavor(fields, true);
      const imageSlug = fields.choice('image', SERVER_IMAGES.map((i) => i.slug), { required: true });
      const zone = fields.choice('zone', ZONES, { style: 'choose' }) ?? 'rma1';
      const volumeSizeGb = fields.integer('volume_size_gb', API_LIMITS.volume_size_gb);
      const useIpv6 = fields.boolean('use_ipv6') ?? true;
      fields.stringList('ssh_keys');
      fields.string('password', { nullable: true });
      const tags = fields.tags();
      const requests = fields.has('interfaces') ? readInterfaces(state, fields, zone) : defaultInterfaces(state, fields, zone);
      fields.check();
      if (name === undefined || flavor === undefined || typeof imageSlug !== 'string' || requests === undefined) {
        throw new ApiError(400, fields.errors);
      }
      const server: ServerRecord = {
        uuid: randomUUID(),
        name,
        createdAt: now(state),
        flavor,
        image: SERVER_IMAGES.find((i) => i.slug === imageSlug)!,
        volumeSizeGb: volumeSizeGb ?? 10,
        zone,
        tags: tags ?? {},
        status: 'running',
        changingUntil: state.now() + ctx.serverActionMs,
        interfaces: allocateInterfaces(state, zone, requests, useIpv6),
      };
      state.addServer(server);
      return created(state.renderServer(server));
    },
  },
  {
    method: 'PATCH',
    pattern: servers.item,
    handle: (ctx) => {
      const { state } = ctx;
      const server = servers.one(ctx);
      if (Object.keys(ctx.body).length > 1) throw badRequest('Only one attribute can be changed at a time.');
      const fields = new Fields(ctx.body);
      const name = readServerName(fields, false);
      const tags = fields.tags();
      const flavor = readFlavor(fields, false);
      if (fields.has('status')) fields.add('status', 'The status changes through the start, stop and reboot actions.');
      const requests = fields.has('interfaces') ? readInterfaces(state, fields, server.zone) : undefined;
      fields.check();
      if (flavor !== undefined) {
        if (state.serverStatus(server) !== 'stopped') {
          throw badRequest('The flavor of a server can only be changed if its status is "stopped".');
        }
        server.flavor = flavor;
      }
      if (requests !== undefined) {
        // A public interface added later gets IPv6 too; a kept one keeps what it had.
        state.setServerInterfaces(server, allocateInterfaces(state, server.zone, requests, true, server.interfaces));
      }
      if (name !== undefined) server.name = name;
      if (tags !== undefined) server.tags = tags;
      return noContent;
    },
  },
  ...(['start', 'stop', 'reboot'] as const).map(
    (action): Route => ({
      method: 'POST',
      pattern: `${servers.item}/${action}`,
      handle: (ctx) => {
        const server = servers.one(ctx);
        serverAction(ctx.state, server.uuid, action, ctx.serverActionMs);
        return noContent;
      },
    }),
  ),
  {
    method: 'GET',
    pattern: '/v1/flavors',
    handle: () =>
      ok(SERVER_FLAVORS.map((flavor) => ({ ...flavor, zones: ZONES.map((zone) => ({ slug: zone })) }))),
  },
];

/** Start, stop or reboot: the server shows `changing` for `durationMs`, then the target status. */
export function serverAction(state: SimState, uuid: string, action: 'start' | 'stop' | 'reboot', durationMs: number): void {
  const server = state.servers.get(uuid);
  if (server === undefined) throw notFound();
  if (state.serverStatus(server) === 'changing') {
    throw badRequest('The server is changing its state; try again once it has finished.');
  }
  state.changeServer(server, () => {
    server.status = action === 'stop' ? 'stopped' : 'running';
    server.changingUntil = state.now() + durationMs;
  });
}

/** A floating IP may point at `server` only while fewer than the maximum already do. */
export function checkFloatingIpRoom(state: SimState, server: ServerRecord, except?: string): void {
  const assigned = [...state.floatingIps.entries()].filter(([key, f]) => f.serverUuid === server.uuid && key !== except).length;
  if (assigned >= MAX_FLOATING_IPS_PER_SERVER) {
    throw new ApiError(400, { server: `The server already has ${MAX_FLOATING_IPS_PER_SERVER} floating IPs, the most it can have.` });
  }
}

