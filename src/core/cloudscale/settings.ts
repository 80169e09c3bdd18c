// The checks and defaults shared by the client and the flag/environment resolution in
// ./token.ts: what a usable base URL and token look like.
import { isIP } from 'node:net';
import { ConfigError } from '../errors.js';
import { tokenRedactor } from './redaction.js';

export const defaultApiUrl = 'https://api.cloudscale.ch';

/** The Go CCM's default HTTP timeout (CLOUDSCALE_API_TIMEOUT overrides it). */
export const defaultApiTimeoutMs = 20_000;

/**
 * `https://api.cloudscale.ch/`, `.../v1` and `.../v1/` all become `https://api.cloudscale.ch`.
 * A path prefix in front of `/v1` (a proxy) is kept. Throws ConfigError for anything that is
 * not an http(s) URL without query or credentials, and for plain http to a host that is not
 * loopback: the token would cross the network in clear text (the simulator listens on
 * 127.0.0.1, so it stays reachable).
 */
export function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`cloudscale API URL ${JSON.stringify(raw)} is not a URL`, {
      hint: 'use a URL like https://api.cloudscale.ch or http://127.0.0.1:PORT',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`cloudscale API URL ${raw} must use http or https`, {
      hint: 'use a URL like https://api.cloudscale.ch or http://127.0.0.1:PORT',
    });
  }
  if (url.username !== '' || url.password !== '') {
    // Said without echoing the URL: the credentials are in it.
    throw new ConfigError('the cloudscale API URL must not contain a user name or password', {
      hint: 'pass the token with CLOUDSCALE_API_TOKEN or --token-file instead',
    });
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(`cloudscale API URL ${raw} must not have a query or fragment`, {
      hint: 'use a URL like https://api.cloudscale.ch or http://127.0.0.1:PORT',
    });
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new ConfigError(
      `refusing to send the cloudscale API token in clear text to ${url.origin}: plain http is allowed only to loopback addresses`,
      { hint: `use https://${url.host}; plain http is meant for a local simulator (http://127.0.0.1:PORT)` },
    );
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.origin}${path}`;
}

/** `localhost`, 127.0.0.0/8 and ::1 (URL hostnames keep IPv6 in brackets). */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * `text` with every form of `token` replaced (redaction.ts: raw, JSON-, URL- and HTML-escaped,
 * hex, base64, any case): for text that comes back from the API, which may repeat the request's
 * Authorization header (a proxy's error page, a debugging server). Applied before the text is
 * kept anywhere.
 */
export function redactToken<T>(text: T, token: string): T {
  if (typeof text !== 'string' || token === '') return text;
  let redactor = redactors.get(token);
  if (redactor === undefined) {
    redactor = tokenRedactor(token);
    // A process uses one token (two while it rotates): nothing to evict.
    redactors.set(token, redactor);
  }
  return redactor(text) as T;
}

const redactors = new Map<string, (text: string) => string>();

export { REDACTED } from './redaction.js';

/**
 * Throws ConfigError, naming `source` but not the token, unless the token is one run of
 * visible ASCII characters. A header value with a line break would otherwise make fetch throw
 * an error that quotes the whole header, token included.
 */
export function checkedToken(token: string, source: string): string {
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new ConfigError(
      `the cloudscale API token from ${source} contains spaces, line breaks or non-ASCII ` +
        'characters',
      { hint: 'a cloudscale API token is one word of letters and digits; check for a stray paste' },
    );
  }
  return token;
}

