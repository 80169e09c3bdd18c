// Parsing and formatting of `spec.providerID`, as the Go CCM reads it
// (docs/go-ccm-compatibility.md): split on the first `://`, trim both parts, the scheme must be
// exactly `cloudscale`, the rest a UUID in any case, with or without hyphens.
import { PROVIDER_ID_SCHEME } from './well-known.js';

export type ParsedProviderId =
  | { kind: 'empty' }
  /** `uuid` is canonical: lowercase, hyphenated. */
  | { kind: 'cloudscale'; uuid: string }
  /** Another provider's node (`hcloud://…`, `aws:///…`): never touched. */
  | { kind: 'foreign'; scheme: string }
  /** Neither ours nor recognisably someone else's. */
  | { kind: 'invalid'; why: string };

const HEX32 = /^[0-9a-f]{32}$/;
const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SCHEME = /^[a-z][a-z0-9+.-]*$/i;

export function parseProviderId(raw: string | undefined): ParsedProviderId {
  if (raw === undefined || raw.trim() === '') return { kind: 'empty' };
  const separator = raw.indexOf('://');
  if (separator < 0) {
    return { kind: 'invalid', why: `"${raw}" has no "<provider>://" prefix` };
  }
  const scheme = raw.slice(0, separator).trim();
  const rest = raw.slice(separator + 3).trim();
  if (scheme !== PROVIDER_ID_SCHEME) {
    return SCHEME.test(scheme)
      ? { kind: 'foreign', scheme }
      : { kind: 'invalid', why: `"${raw}" has no valid provider prefix` };
  }
  const uuid = canonicalUuid(rest);
  if (uuid === undefined) {
    return { kind: 'invalid', why: `"${rest}" in "${raw}" is not a server UUID` };
  }
  return { kind: 'cloudscale', uuid };
}

/** The form written to `spec.providerID`. The Go CCM writes exactly this: it MUST NOT change. */
export function formatProviderId(serverUuid: string): string {
  const uuid = canonicalUuid(serverUuid);
  if (uuid === undefined) throw new TypeError(`"${serverUuid}" is not a UUID`);
  return `${PROVIDER_ID_SCHEME}://${uuid}`;
}

/** Lowercase hyphenated form of a UUID given in any case, with or without hyphens. */
export function canonicalUuid(text: string): string | undefined {
  const lower = text.toLowerCase();
  if (HYPHENATED.test(lower)) return lower;
  if (!HEX32.test(lower)) return undefined;
  return [
    lower.slice(0, 8),
    lower.slice(8, 12),
    lower.slice(12, 16),
    lower.slice(16, 20),
    lower.slice(20),
  ].join('-');
}
