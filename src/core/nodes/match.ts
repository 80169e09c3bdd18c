// Which server a Node is: by providerID, else by exact unique name (reference-ccm.md §2.1).
import type { Server } from '../cloudscale/types.js';
import { parseProviderId } from './provider-id.js';
import type { NodeSnapshot } from './types.js';

/** The answer of `GET /v1/servers/<uuid>` for one server. */
export type ServerLookup =
  | { state: 'found'; server: Server }
  | { state: 'not-found' }
  | { state: 'error'; message: string };

/**
 * What the pass knows of the cloud. `servers` is one successful full list (authoritative: a
 * server absent from it is gone); `lookups` holds single GETs by canonical UUID.
 */
export interface CloudView {
  servers?: readonly Server[];
  lookups?: ReadonlyMap<string, ServerLookup>;
}

export type NodeMatch =
  | { kind: 'matched'; by: 'provider-id' | 'name'; server: Server }
  /** A cloudscale providerID whose server does not exist: `confirmedByList` when a full list said so. */
  | { kind: 'server-missing'; uuid: string; confirmedByList: boolean }
  | { kind: 'no-match'; text: string }
  | { kind: 'ambiguous'; servers: Server[]; text: string }
  | { kind: 'foreign'; text: string }
  | { kind: 'invalid'; text: string }
  | { kind: 'error'; text: string };

export function matchNode(node: NodeSnapshot, cloud: CloudView): NodeMatch {
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
      return matchByUuid(providerId.uuid, cloud);
    case 'empty':
      return matchByName(node.name, cloud);
  }
}

function matchByUuid(uuid: string, cloud: CloudView): NodeMatch {
  if (cloud.servers !== undefined) {
    const server = cloud.servers.find((s) => s.uuid.toLowerCase() === uuid);
    return server === undefined
      ? { kind: 'server-missing', uuid, confirmedByList: true }
      : { kind: 'matched', by: 'provider-id', server };
  }
  const lookup = cloud.lookups?.get(uuid);
  if (lookup === undefined) {
    return { kind: 'error', text: `server ${uuid} was not looked up in this pass` };
  }
  switch (lookup.state) {
    case 'found':
      return { kind: 'matched', by: 'provider-id', server: lookup.server };
    case 'not-found':
      return { kind: 'server-missing', uuid, confirmedByList: false };
    case 'error':
      return { kind: 'error', text: `cannot read server ${uuid}: ${lookup.message}` };
  }
}

function matchByName(name: string, cloud: CloudView): NodeMatch {
  if (cloud.servers === undefined) {
    return { kind: 'error', text: `no server list in this pass to find a server named "${name}"` };
  }
  const named = cloud.servers.filter((s) => s.name === name);
  if (named.length === 1 && named[0] !== undefined) {
    return { kind: 'matched', by: 'name', server: named[0] };
  }
  if (named.length === 0) {
    return {
      kind: 'no-match',
      text: `no providerID and no server named "${name}" among ${cloud.servers.length} servers`,
    };
  }
  return {
    kind: 'ambiguous',
    servers: named,
    text: `no providerID and ${named.length} servers named "${name}" (${named.map((s) => s.uuid).join(', ')}): set spec.providerID to pick one`,
  };
}
