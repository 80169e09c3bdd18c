// Which server a Node is: by providerID, else by exact unique name (docs/go-ccm-compatibility.md,
// "Which server a Node is"). The one matcher: init-nodes plans with it, and the load balancers
// find their members' servers with it (src/core/lb/nodes.ts).
import type { Server } from '../cloudscale/types.js';
import { parseProviderId } from './provider-id.js';
import type { NodeSnapshot } from './types.js';
import { counted } from '../text/wording.js';

/** The answer of `GET /v1/servers/<uuid>` for one server. */
export type ServerLookup =
  | { state: 'found'; server: Server }
  | { state: 'not-found' }
  | { state: 'error'; message: string };

/**
 * What the pass knows of the cloud. `servers` is one successful full list; `lookups` holds
 * single GETs by canonical UUID and, where both exist, wins over the list. Absence from the list
 * is no evidence that a server is gone (a list may leave out an item once); only a 404 to its
 * own GET is.
 */
export interface CloudView {
  servers?: readonly Server[];
  lookups?: ReadonlyMap<string, ServerLookup>;
}

export type NodeMatch =
  | { kind: 'matched'; by: 'provider-id' | 'name'; server: Server }
  /**
   * A cloudscale providerID whose server the cloud did not show: `confirmed` when its GET
   * answered 404, not when it is only absent from the list.
   */
  | { kind: 'server-missing'; uuid: string; confirmed: boolean }
  | { kind: 'no-match'; text: string }
  | { kind: 'ambiguous'; servers: Server[]; text: string }
  | { kind: 'foreign'; text: string }
  | { kind: 'invalid'; text: string }
  | { kind: 'error'; text: string };

/** Servers by lower-case UUID and by name. */
interface ServerIndex {
  readonly byUuid: ReadonlyMap<string, Server>;
  readonly byName: ReadonlyMap<string, readonly Server[]>;
}

function indexServers(servers: readonly Server[]): ServerIndex {
  const byUuid = new Map<string, Server>();
  const byName = new Map<string, Server[]>();
  for (const server of servers) {
    byUuid.set(server.uuid.toLowerCase(), server);
    const named = byName.get(server.name);
    if (named === undefined) byName.set(server.name, [server]);
    else named.push(server);
  }
  return { byUuid, byName };
}

/** What a Node is matched by: its name and its providerID (empty or absent: none). */
export interface NodeIdentity {
  readonly name: string;
  readonly providerID?: string | undefined;
}

/**
 * A matcher over one cloud view, its server list indexed once for all the Nodes it matches (a
 * load balancer's pass matches hundreds of Nodes for every Service).
 */
export function nodeMatcher(cloud: CloudView): (node: NodeIdentity) => NodeMatch {
  const index = cloud.servers === undefined ? undefined : indexServers(cloud.servers);
  return (node) => {
    const providerId = parseProviderId(node.providerID);
    switch (providerId.kind) {
      case 'foreign':
        return {
          kind: 'foreign',
          text: `providerID ${node.providerID} belongs to provider "${providerId.scheme}", not cloudscale: left alone`,
        };
      case 'invalid':
        return { kind: 'invalid', text: `invalid providerID: ${providerId.why}` };
      case 'cloudscale':
        return matchByUuid(providerId.uuid, cloud.lookups, index);
      case 'empty':
        return matchByName(node.name, index, cloud.servers?.length ?? 0);
    }
  };
}

export function matchNode(node: NodeIdentity, cloud: CloudView): NodeMatch {
  return nodeMatcher(cloud)(node);
}

function matchByUuid(uuid: string, lookups: CloudView['lookups'], index: ServerIndex | undefined): NodeMatch {
  const lookup = lookups?.get(uuid);
  if (lookup === undefined) {
    if (index === undefined) {
      return { kind: 'error', text: `server ${uuid} was not looked up in this pass` };
    }
    const server = index.byUuid.get(uuid);
    return server === undefined
      ? { kind: 'server-missing', uuid, confirmed: false }
      : { kind: 'matched', by: 'provider-id', server };
  }
  switch (lookup.state) {
    case 'found':
      return { kind: 'matched', by: 'provider-id', server: lookup.server };
    case 'not-found':
      return { kind: 'server-missing', uuid, confirmed: true };
    case 'error':
      return { kind: 'error', text: `cannot read server ${uuid}: ${lookup.message}` };
  }
}

function matchByName(name: string, index: ServerIndex | undefined, serverCount: number): NodeMatch {
  if (index === undefined) {
    return { kind: 'error', text: `no server list in this pass to find a server named "${name}"` };
  }
  const named = index.byName.get(name) ?? [];
  if (named.length === 1 && named[0] !== undefined) {
    return { kind: 'matched', by: 'name', server: named[0] };
  }
  if (named.length === 0) {
    return {
      kind: 'no-match',
      text: `no providerID and no server named "${name}" among ${counted(serverCount, 'server')}`,
    };
  }
  return {
    kind: 'ambiguous',
    servers: [...named],
    text: `no providerID and ${counted(named.length, 'server')} named "${name}" (${named.map((s) => s.uuid).join(', ')}): set spec.providerID to pick one`,
  };
}
