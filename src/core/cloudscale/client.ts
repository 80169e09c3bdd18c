// The typed cloudscale API v1 client: one method per call this tool makes
// (docs/cloudscale-api.md). Retries, error mapping and counting live in
// ./transport.ts; this module builds URLs and bodies and names the resources.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { InternalError, RefusedError } from '../errors.js';
import { createRequestCounter, type RequestCounter } from './request-counter.js';
import { defaultRetryPolicy, type RetryPolicy } from './retry.js';
import { checkedToken, defaultApiTimeoutMs, normaliseBaseUrl } from './settings.js';
import { isOutcomeUnknown } from './errors.js';
import { createdBy, onlyMatch } from './reread.js';
import { createTransport } from './transport.js';
import type { WriteFence } from '../fence.js';
import type {
  FloatingIp,
  FloatingIpPatch,
  HealthMonitor,
  HealthMonitorCreate,
  HealthMonitorPatch,
  Listener,
  ListenerCreate,
  ListenerPatch,
  LoadBalancer,
  LoadBalancerCreate,
  LoadBalancerPatch,
  Network,
  Pool,
  PoolCreate,
  PoolMember,
  PoolMemberCreate,
  PoolMemberPatch,
  Server,
  Subnet,
} from './types.js';

export interface CloudscaleClientOptions {
  /**
   * The API's root, e.g. `https://api.cloudscale.ch` or `http://127.0.0.1:PORT`. A trailing
   * slash and a trailing `/v1` are accepted and removed.
   */
  baseUrl: string;
  token: string;
  /** Per attempt, until the whole answer is read. Default 20 000 (the Go CCM's 20 s). */
  timeoutMs?: number;
  /** Default: 4 retries, 500 ms doubling backoff with jitter, waits capped at 30 s. */
  retry?: { limit?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Aborts the request in flight and any retry wait; the abort reason is thrown as it is. */
  signal?: AbortSignal;
  /** Default `cloudscale-ccm/<package version>`. */
  userAgent?: string;
  /** Asked before every attempt of a write; see src/core/fence.ts. */
  fence?: WriteFence;
}

/**
 * `{key: 'value'}` matches objects whose tag `key` equals `value`; `{key: true}` matches objects
 * that have the tag `key` at all. Several entries must all match. The API reads an empty value
 * (`tag:key=`) as "has the key", so `{key: ''}` behaves like `{key: true}`.
 */
export type TagFilter = Record<string, string | true>;

/**
 * Every method throws CloudscaleRequestError (a CloudscaleApiError: `isNotFound` for 404,
 * `detail` and `fieldErrors` as the API sent them) or CloudscaleNoAnswerError (a
 * CloudscaleUnavailableError), both with `outcomeUnknown` for creates that may have happened.
 * Updates send exactly the one attribute they are given and resolve once the API answered 204.
 * A write that got no answer is read back before it is sent again or reported (reread.ts): a
 * create of a pool, member, listener or monitor that the API applied all the same answers with
 * the object it made; an update or delete found done resolves.
 */
export interface CloudscaleClient {
  /** The API root without `/v1` and without a trailing slash. */
  readonly baseUrl: string;
  readonly requests: RequestCounter;
  servers: {
    list(tags?: TagFilter): Promise<Server[]>;
    get(uuid: string): Promise<Server>;
  };
  networks: { list(tags?: TagFilter): Promise<Network[]> };
  subnets: { list(tags?: TagFilter): Promise<Subnet[]> };
  floatingIps: {
    list(tags?: TagFilter): Promise<FloatingIp[]>;
    /** `ip`: an address, or a floating IP's `network` (`192.0.2.1/32`; prefix dropped). */
    get(ip: string): Promise<FloatingIp>;
    update(ip: string, patch: FloatingIpPatch): Promise<void>;
  };
  loadBalancers: {
    list(tags?: TagFilter): Promise<LoadBalancer[]>;
    get(uuid: string): Promise<LoadBalancer>;
    create(body: LoadBalancerCreate): Promise<LoadBalancer>;
    update(uuid: string, patch: LoadBalancerPatch): Promise<void>;
  };
  pools: {
    list(tags?: TagFilter): Promise<Pool[]>;
    get(uuid: string): Promise<Pool>;
    create(body: PoolCreate): Promise<Pool>;
  };
  poolMembers: {
    /** A pool that does not exist gives a 404 error. */
    list(poolUuid: string, tags?: TagFilter): Promise<PoolMember[]>;
    create(poolUuid: string, body: PoolMemberCreate): Promise<PoolMember>;
    update(poolUuid: string, memberUuid: string, patch: PoolMemberPatch): Promise<void>;
  };
  listeners: {
    list(tags?: TagFilter): Promise<Listener[]>;
    create(body: ListenerCreate): Promise<Listener>;
    update(uuid: string, patch: ListenerPatch): Promise<void>;
  };
  healthMonitors: {
    list(tags?: TagFilter): Promise<HealthMonitor[]>;
    create(body: HealthMonitorCreate): Promise<HealthMonitor>;
    update(uuid: string, patch: HealthMonitorPatch): Promise<void>;
  };
  /**
   * DELETE an object by the absolute `href` the API gave it (a relative `/v1/...` href is
   * resolved against the base URL). Deleting a load balancer deletes its pools, members,
   * listeners and monitors. Refuses an href on another origin than the base URL, so the token
   * is never sent elsewhere.
   */
  deleteByHref(href: string): Promise<void>;
}

export function createCloudscaleClient(options: CloudscaleClientOptions): CloudscaleClient {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const counter = createRequestCounter();
  const send = createTransport({
    baseUrl,
    token: checkedToken(options.token, 'the client options'),
    userAgent: options.userAgent ?? defaultUserAgent(),
    timeoutMs: options.timeoutMs ?? defaultApiTimeoutMs,
    retry: retryPolicy(options.retry),
    counter,
    signal: options.signal,
    fence: options.fence,
  });
  const apiUrl = (path: string, tags?: TagFilter): URL => {
    const url = new URL(`${baseUrl}/v1/${path}`);
    url.search = tags === undefined ? '' : tagQuery(tags);
    return url;
  };
  const list = async <T>(path: string, tags?: TagFilter): Promise<T[]> =>
    expectList<T>(await send({ method: 'GET', url: apiUrl(path, tags) }), path);
  const get = async <T>(path: string): Promise<T> =>
    (await send({ method: 'GET', url: apiUrl(path) })) as T;
  /**
   * A create whose outcome is unknown (no answer, a lost one, a 5xx) is never sent again: the
   * objects are read back, and the one it made (`made`: what identifies it in its parent, see
   * reread.ts) is its answer. Not found, or not readable, the error stands.
   */
  const create = async <T>(path: string, body: unknown, made?: { readonly list: () => Promise<T[]>; readonly is: (object: T) => boolean }): Promise<T> => {
    try {
      return (await send({ method: 'POST', url: apiUrl(path), json: body })) as T;
    } catch (error) {
      if (made === undefined || !isOutcomeUnknown(error)) throw error;
      const found = await made.list().then((objects) => onlyMatch(objects, made.is), () => undefined);
      if (found === undefined) throw error;
      return found;
    }
  };
  const update = async (path: string, patch: object): Promise<void> => {
    await send({ method: 'PATCH', url: apiUrl(path), json: patch });
  };

  return {
    baseUrl,
    requests: counter,
    servers: {
      list: (tags) => list('servers', tags),
      get: (uuid) => get(`servers/${checkedUuid(uuid)}`),
    },
    networks: { list: (tags) => list('networks', tags) },
    subnets: { list: (tags) => list('subnets', tags) },
    floatingIps: {
      list: (tags) => list('floating-ips', tags),
      get: (ip) => get(`floating-ips/${checkedIp(ip)}`),
      update: (ip, patch) => update(`floating-ips/${checkedIp(ip)}`, patch),
    },
    loadBalancers: {
      list: (tags) => list('load-balancers', tags),
      get: (uuid) => get(`load-balancers/${checkedUuid(uuid)}`),
      // A lost create of a load balancer is looked for by its caller, which knows its ownership tags.
      create: (body) => create('load-balancers', body),
      update: (uuid, patch) => update(`load-balancers/${checkedUuid(uuid)}`, patch),
    },
    pools: {
      list: (tags) => list('load-balancers/pools', tags),
      get: (uuid) => get(`load-balancers/pools/${checkedUuid(uuid)}`),
      create: (body) => create('load-balancers/pools', body, { list: () => list<Pool>('load-balancers/pools'), is: createdBy.pool(body) }),
    },
    poolMembers: {
      list: (poolUuid, tags) => list(`load-balancers/pools/${checkedUuid(poolUuid)}/members`, tags),
      create: (poolUuid, body) => {
        const members = `load-balancers/pools/${checkedUuid(poolUuid)}/members`;
        return create(members, body, { list: () => list<PoolMember>(members), is: createdBy.member(body) });
      },
      update: (poolUuid, memberUuid, patch) =>
        update(`load-balancers/pools/${checkedUuid(poolUuid)}/members/${checkedUuid(memberUuid)}`, patch),
    },
    listeners: {
      list: (tags) => list('load-balancers/listeners', tags),
      create: (body) => create('load-balancers/listeners', body, { list: () => list<Listener>('load-balancers/listeners'), is: createdBy.listener(body) }),
      update: (uuid, patch) => update(`load-balancers/listeners/${checkedUuid(uuid)}`, patch),
    },
    healthMonitors: {
      list: (tags) => list('load-balancers/health-monitors', tags),
      create: (body) =>
        create('load-balancers/health-monitors', body, { list: () => list<HealthMonitor>('load-balancers/health-monitors'), is: createdBy.monitor(body) }),
      update: (uuid, patch) => update(`load-balancers/health-monitors/${checkedUuid(uuid)}`, patch),
    },
    deleteByHref: async (href) => {
      await send({ method: 'DELETE', url: hrefUrl(href, baseUrl) });
    },
  };
}

/** The query string of a tag filter: `tag:env=prod&tag:owner` (keys and values encoded). */
export function tagQuery(tags: TagFilter): string {
  const parts = Object.entries(tags).map(([key, value]) =>
    value === true
      ? `tag:${encodeURIComponent(key)}`
      : `tag:${encodeURIComponent(key)}=${encodeURIComponent(value)}`,
  );
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

function hrefUrl(href: string, baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(href, `${baseUrl}/`);
  } catch {
    throw new InternalError(`not an object href: ${JSON.stringify(href)}`);
  }
  const base = new URL(`${baseUrl}/v1/`);
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) {
    throw new RefusedError(
      `refusing to send the API token to ${url.origin}${url.pathname}: ` +
        `it is not under ${base.href}`,
      {
        hint:
          'the API returned hrefs for another address than the one configured: set ' +
          'CLOUDSCALE_API_URL (or --api-url) to the address the API calls itself',
      },
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new InternalError(`not an object href: ${JSON.stringify(href)}`);
  }
  return url;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Identifiers come from API objects or validated input; anything else is a bug upstream. */
function checkedUuid(uuid: string): string {
  if (!uuidPattern.test(uuid)) throw new InternalError(`not a UUID: ${JSON.stringify(uuid)}`);
  return uuid.toLowerCase();
}

function checkedIp(ipOrNetwork: string): string {
  const ip = ipOrNetwork.split('/', 1)[0] ?? '';
  if (isIP(ip) === 0) {
    throw new InternalError(`not an IP address: ${JSON.stringify(ipOrNetwork)}`);
  }
  return ip;
}

function expectList<T>(body: unknown, path: string): T[] {
  if (!Array.isArray(body)) {
    throw new InternalError(`cloudscale API GET /v1/${path} did not answer with a list`);
  }
  return body as T[];
}

function retryPolicy(overrides: CloudscaleClientOptions['retry']): RetryPolicy {
  const policy = { ...defaultRetryPolicy, ...stripUndefined(overrides ?? {}) };
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new InternalError(`retry.${name} must be a whole number >= 0, got ${value}`);
    }
  }
  return policy;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

let cachedUserAgent: string | undefined;

/** `cloudscale-ccm/<version>`, the version read from package.json (src/ and dist/ alike). */
function defaultUserAgent(): string {
  if (cachedUserAgent === undefined) {
    const packageJson = new URL('../../../package.json', import.meta.url);
    const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
    cachedUserAgent = `cloudscale-ccm/${version}`;
  }
  return cachedUserAgent;
}
