// The simulator's list, get and delete routes, written once (src/sim/routing.ts, `resource`) for
// every kind of record: what each route answers, over a small kind of record of the test's own,
// and that every kind the simulated API serves gets all three from it.
import { describe, expect, test } from 'vitest';
import type { Tags } from '../../src/core/cloudscale/types.js';
import { API_ROUTES, type ApiResult, type RequestContext } from '../../src/sim/api.js';
import { ApiError, notFound } from '../../src/sim/fields.js';
import { resource } from '../../src/sim/routing.js';
import { emptyCloud } from '../support/sim-handlers.js';

interface Thing {
  uuid: string;
  shelf: string;
  tags: Tags;
}

const THINGS = new Map<string, Thing>([
  ['a1', { uuid: 'a1', shelf: 'top', tags: { env: 'prod' } }],
  ['b2', { uuid: 'b2', shelf: 'top', tags: { env: 'test' } }],
  ['c3', { uuid: 'c3', shelf: 'bottom', tags: { env: 'prod' } }],
]);

function things(removed: string[] = []) {
  return resource<Thing>({
    path: '/v1/shelves/{shelf}/things',
    records: () => THINGS,
    visible: (ctx) => {
      if (ctx.params.shelf === 'none') throw notFound();
      return (thing) => thing.shelf === ctx.params.shelf;
    },
    render: (_state, thing) => thing.uuid,
    remove: (_ctx, thing) => {
      if (thing.uuid === 'b2') throw new ApiError(400, { detail: 'b2 stays.' });
      removed.push(thing.uuid);
    },
    lockKey: (ctx) => `lb-of-${ctx.params.shelf}`,
  });
}

function answer(things: ReturnType<typeof resource<Thing>>, method: string, pattern: string, params: Record<string, string>, query: RequestContext['query'] = []): ApiResult {
  const route = things.routes.find((r) => r.method === method && r.pattern === pattern)!;
  try {
    return route.handle({ state: emptyCloud(), params, body: {}, query, lbProvisionMs: 0, serverActionMs: 0 });
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, body: error.body };
    throw error;
  }
}

describe('resource: the three routes of one kind', () => {
  const LIST = '/v1/shelves/{shelf}/things';
  const ITEM = '/v1/shelves/{shelf}/things/{uuid}';

  test('its paths: the collection, and one record under the uuid parameter', () => {
    const built = things();
    expect([built.path, built.item]).toEqual([LIST, ITEM]);
    expect(built.routes.map((r) => `${r.method} ${r.pattern}`)).toEqual([`GET ${LIST}`, `GET ${ITEM}`, `DELETE ${ITEM}`]);
  });

  test.each<[string, Record<string, string>, RequestContext['query'], ApiResult]>([
    ['the visible records', { shelf: 'top' }, [], { status: 200, body: ['a1', 'b2'] }],
    ['filtered by tag value', { shelf: 'top' }, [['tag:env', 'prod']], { status: 200, body: ['a1'] }],
    ['filtered by tag key', { shelf: 'bottom' }, [['tag:env', undefined]], { status: 200, body: ['c3'] }],
    ['none with an unknown tag', { shelf: 'top' }, [['tag:team', undefined]], { status: 200, body: [] }],
    ['404 when the path shows nothing', { shelf: 'none' }, [], { status: 404, body: { detail: 'Not found.' } }],
  ])('list: %s', (_name, params, query, expected) => {
    expect(answer(things(), 'GET', LIST, params, query)).toEqual(expected);
  });

  test.each<[string, Record<string, string>, ApiResult]>([
    ['a visible record', { shelf: 'top', uuid: 'a1' }, { status: 200, body: 'a1' }],
    ['its UUID in any case', { shelf: 'top', uuid: 'A1' }, { status: 200, body: 'a1' }],
    ['404 for one the path does not show', { shelf: 'top', uuid: 'c3' }, { status: 404, body: { detail: 'Not found.' } }],
    ['404 for an unknown one', { shelf: 'top', uuid: 'z9' }, { status: 404, body: { detail: 'Not found.' } }],
    ['404 when the path shows nothing', { shelf: 'none', uuid: 'a1' }, { status: 404, body: { detail: 'Not found.' } }],
  ])('get: %s', (_name, params, expected) => {
    expect(answer(things(), 'GET', ITEM, params)).toEqual(expected);
  });

  test.each<[string, Record<string, string>, ApiResult, string[]]>([
    ['removes a visible record: 204', { shelf: 'top', uuid: 'a1' }, { status: 204 }, ['a1']],
    ['404 for one the path does not show, nothing removed', { shelf: 'top', uuid: 'c3' }, { status: 404, body: { detail: 'Not found.' } }, []],
    ['a refusal of `remove` is the answer', { shelf: 'top', uuid: 'b2' }, { status: 400, body: { detail: 'b2 stays.' } }, []],
  ])('delete: %s', (_name, params, expected, removedAfter) => {
    const removed: string[] = [];
    expect(answer(things(removed), 'DELETE', ITEM, params)).toEqual(expected);
    expect(removed).toEqual(removedAfter);
  });

  test('the delete, not the reads, names the load balancer it writes to', () => {
    const [list, get, remove] = things().routes;
    expect([list!.lockKey, get!.lockKey]).toEqual([undefined, undefined]);
    const ctx = { state: emptyCloud(), params: { shelf: 'top', uuid: 'a1' }, body: {}, query: [], lbProvisionMs: 0, serverActionMs: 0 };
    expect(remove!.lockKey?.(ctx)).toBe('lb-of-top');
  });

  test('a parameter of its own: the key its value stands for', () => {
    const byName = resource<Thing>({
      path: '/v1/things',
      param: { name: 'name', key: (text) => (text === 'first' ? 'a1' : undefined) },
      records: () => THINGS,
      render: (_state, thing) => thing.uuid,
      remove: () => {},
    });
    expect(byName.item).toBe('/v1/things/{name}');
    expect(answer(byName, 'GET', '/v1/things/{name}', { name: 'first' })).toEqual({ status: 200, body: 'a1' });
    expect(answer(byName, 'GET', '/v1/things/{name}', { name: 'second' }).status).toBe(404);
  });
});

describe('every kind the simulated API serves', () => {
  // The collections that list records with tags, and so have a get and a delete of one.
  const KINDS = [
    '/v1/servers',
    '/v1/networks',
    '/v1/subnets',
    '/v1/floating-ips',
    '/v1/load-balancers',
    '/v1/load-balancers/pools',
    '/v1/load-balancers/pools/{pool}/members',
    '/v1/load-balancers/listeners',
    '/v1/load-balancers/health-monitors',
  ];

  test.each(KINDS)('%s: list, get, delete, create and change, the writes of one load balancer named alike', (path) => {
    const routes = API_ROUTES.filter((r) => r.pattern === path || r.pattern === `${path}/{uuid}` || r.pattern === `${path}/{ip}`);
    expect(routes.map((r) => `${r.method} ${r.pattern.slice(path.length) || '/'}`).sort()).toEqual(
      ['GET /', 'POST /', 'GET /{x}', 'PATCH /{x}', 'DELETE /{x}'].map((r) => r.replace('{x}', path === '/v1/floating-ips' ? '{ip}' : '{uuid}')).sort(),
    );
    const patch = routes.find((r) => r.method === 'PATCH')!;
    const remove = routes.find((r) => r.method === 'DELETE')!;
    expect(patch.lockKey).toBe(remove.lockKey);
  });
});
