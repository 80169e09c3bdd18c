// Shared parts of the API handlers: the request context, results, lookups and tag filters.
// Handlers run synchronously on the state (the HTTP layer serialises those that touch one load
// balancer) and either return a result or throw an ApiError with a DRF-shaped body.

import type { Tags } from '../core/cloudscale/types.js';
import { notFound, type Dict } from './fields.js';
import { apiTimestamp, type SimState } from './state.js';

export interface RequestContext {
  state: SimState;
  params: Record<string, string>;
  body: Dict;
  /** Decoded query parameters in order; a bare `?key` has value `undefined`. */
  query: [string, string | undefined][];
  /** How long a new load balancer stays `changing`. */
  lbProvisionMs: number;
  /** How long a server start/stop/reboot stays `changing`. */
  serverActionMs: number;
}

export interface ApiResult {
  status: number;
  body?: unknown;
}

export interface Route {
  method: string;
  /** e.g. `/v1/load-balancers/pools/{uuid}/members`; also the route's name in the request log. */
  pattern: string;
  handle(ctx: RequestContext): ApiResult;
  /** The UUID of the load balancer a mutation touches: such requests run one at a time per LB. */
  lockKey?(ctx: RequestContext): string | undefined;
}

export const created = (body: unknown): ApiResult => ({ status: 201, body });
export const ok = (body: unknown): ApiResult => ({ status: 200, body });
export const noContent: ApiResult = { status: 204 };

export function now(state: SimState): string {
  return apiTimestamp(state.now());
}

// ---- tag filters ---------------------------------------------------------------------------

/**
 * `tag:key=value` matches exactly; `tag:key` and `tag:key=` match any value of `key`; several
 * filters must all match. Other query parameters are ignored.
 */
export function matchesTagFilters(query: RequestContext['query'], tags: Tags): boolean {
  for (const [name, value] of query) {
    if (!name.startsWith('tag:')) continue;
    const key = name.slice('tag:'.length);
    if (!Object.hasOwn(tags, key)) return false;
    if (value !== undefined && value !== '' && tags[key] !== value) return false;
  }
  return true;
}

export function list<R extends { tags: Tags }>(ctx: RequestContext, records: Iterable<R>, render: (r: R) => unknown): ApiResult {
  return ok([...records].filter((r) => matchesTagFilters(ctx.query, r.tags)).map(render));
}

export function find<T>(map: ReadonlyMap<string, T>, key: string | undefined): T {
  const found = key === undefined ? undefined : map.get(key.toLowerCase());
  if (found === undefined) throw notFound();
  return found;
}
