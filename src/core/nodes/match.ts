// Which server a Node is: by providerID, else by exact unique name (docs/go-ccm-compatibility.md,
// "Which server a Node is").
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
  const lookup = cloud.lookups?.get(uuid);
  if (lookup === undefined) {
    if (cloud.servers === undefined) {
      return { kind: 'error', text: `server ${uuid} was not looked up in this pass` };
    }
    const server = cloud.servers.find((s) => s.uuid.toLowerCase() === uuid);
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
      text: `no providerID and no server named "${name}" among ${counted(cloud.servers.length, 'server')}`,
    };
  }
  return {
    kind: 'ambiguous',
    servers: named,
    text: `no providerID and ${counted(named.length, 'server')} named "${name}" (${named.map((s) => s.uuid).join(', ')}): set spec.providerID to pick one`,
  };
}
