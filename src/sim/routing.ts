// Shared parts of the API handlers: the request context, results, lookups, tag filters, and
// `resource`, the list, get and delete routes of every kind of record written once.
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

export function find<T>(map: ReadonlyMap<string, T>, key: string | undefined): T {
  const found = key === undefined ? undefined : map.get(key.toLowerCase());
  if (found === undefined) throw notFound();
  return found;
}

// ---- list, get and delete, once for every kind of record ------------------------------------

/** What list, get and delete need to know of one kind of record. */
export interface ResourceSpec<R extends { tags: Tags }> {
  /** The collection's path, e.g. `/v1/load-balancers/pools/{pool}/members`: GET lists it. */
  path: string;
  /** The path parameter after `path` that names one record, and the map key its value is; default `uuid`, in lower case. */
  param?: { name: string; key(value: string): string | undefined };
  /** Every record of this kind, by key. */
  records(state: SimState): ReadonlyMap<string, R>;
  /**
   * Which records the path shows, decided once per request; it may throw notFound() (the pool
   * of a member's path). The others answer 404 as if they did not exist. Default: all.
   */
  visible?(ctx: RequestContext): (record: R) => boolean;
  render(state: SimState, record: R): unknown;
  /** Deletes the record the path names; throws an ApiError to refuse. */
  remove(ctx: RequestContext, record: R): void;
  /** The load balancer a write of one record touches (`Route.lockKey`): its DELETE and PATCH. */
  lockKey?(ctx: RequestContext): string | undefined;
}

export interface Resource<R> {
  /** The collection's path: POST creates there. */
  path: string;
  /** The path of one record: PATCH changes it. */
  item: string;
  /** The record the path names; throws notFound() when it shows none. */
  one(ctx: RequestContext): R;
  lockKey?(ctx: RequestContext): string | undefined;
  /** GET of the collection (with tag filters), GET and DELETE of one record. */
  routes: Route[];
}

const BY_UUID = { name: 'uuid', key: (value: string): string => value.toLowerCase() };
const SHOW_ALL = (): (() => boolean) => () => true;

/** The list, get and delete routes of one kind of record, and what its POST and PATCH share. */
export function resource<R extends { tags: Tags }>(spec: ResourceSpec<R>): Resource<R> {
  const param = spec.param ?? BY_UUID;
  const item = `${spec.path}/{${param.name}}`;
  const visible = spec.visible ?? SHOW_ALL;
  const one = (ctx: RequestContext): R => {
    const shown = visible(ctx);
    const value = ctx.params[param.name];
    const key = value === undefined ? undefined : param.key(value);
    const record = key === undefined ? undefined : spec.records(ctx.state).get(key);
    if (record === undefined || !shown(record)) throw notFound();
    return record;
  };
  const lock = spec.lockKey === undefined ? {} : { lockKey: spec.lockKey };
  const listed = (ctx: RequestContext): unknown[] => {
    const shown = visible(ctx);
    return [...spec.records(ctx.state).values()]
      .filter((record) => shown(record) && matchesTagFilters(ctx.query, record.tags))
      .map((record) => spec.render(ctx.state, record));
  };
  return {
    path: spec.path,
    item,
    one,
    ...lock,
    routes: [
      { method: 'GET', pattern: spec.path, handle: (ctx) => ok(listed(ctx)) },
      { method: 'GET', pattern: item, handle: (ctx) => ok(spec.render(ctx.state, one(ctx))) },
      {
        method: 'DELETE',
        pattern: item,
        ...lock,
        handle: (ctx) => {
          spec.remove(ctx, one(ctx));
          return noContent;
        },
      },
    ],
  };
}
