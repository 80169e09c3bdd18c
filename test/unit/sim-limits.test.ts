// The API's numeric ranges, stated twice on purpose: the simulator's table (src/sim/limits.ts)
// models the API, the client's (src/core/cloudscale/limits.ts) is what the tool refuses before
// writing. Neither imports the other's; this file holds them equal and checks that the simulated
// API enforces every range of its table, driven through the route handlers without HTTP.
import { readFileSync, globSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { LB_LIMITS } from '../../src/core/cloudscale/limits.js';
import type { ApiResult } from '../../src/sim/api.js';
import type { Dict } from '../../src/sim/fields.js';
import { API_LIMITS } from '../../src/sim/limits.js';
import type { SimState } from '../../src/sim/state.js';
import { callRoute as call, emptyCloud } from '../support/sim-handlers.js';
import { relativeImports, resolveImport } from '../support/test-files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the two tables', () => {
  test.each(Object.keys(LB_LIMITS) as (keyof typeof LB_LIMITS)[])('the client refuses %s outside the range the simulated API accepts', (field) => {
    expect(LB_LIMITS[field]).toEqual(API_LIMITS[field]);
  });

  test('no file of the simulator reads the client’s table', () => {
    const readers = globSync('src/sim/**/*.ts', { cwd: ROOT }).filter((file) =>
      relativeImports(readFileSync(`${ROOT}/${file}`, 'utf8')).some(
        (specifier) => resolveImport(`${ROOT}/${file}`, specifier) === `${ROOT}src/core/cloudscale/limits.ts`,
      ),
    );
    expect(readers).toEqual([]);
  });
});

function uuidOf(answer: ApiResult): string {
  expect(answer.status).toBe(201);
  return (answer.body as { uuid: string }).uuid;
}

/** A cloud with a load balancer and a pool, in rma1. */
function cloud(): { state: SimState; pool: string } {
  const state = emptyCloud();
  const lb = uuidOf(call(state, 'POST', '/v1/load-balancers', { name: 'lb', flavor: 'lb-standard', zone: 'rma1' }));
  const pool = uuidOf(call(state, 'POST', '/v1/load-balancers/pools', { name: 'pool', load_balancer: lb, algorithm: 'round_robin', protocol: 'tcp' }));
  return { state, pool };
}

type Cloud = ReturnType<typeof cloud>;

const listener = ({ state, pool }: Cloud, fields: Dict): ApiResult =>
  call(state, 'POST', '/v1/load-balancers/listeners', { name: 'l', pool, protocol: 'tcp', protocol_port: 80, ...fields });
const monitor = ({ state, pool }: Cloud, fields: Dict): ApiResult =>
  call(state, 'POST', '/v1/load-balancers/health-monitors', { pool, type: 'tcp', ...fields });

/** Per field of the simulator's table, a create that carries it, with everything else valid. */
const CREATES: Record<keyof typeof API_LIMITS, (c: Cloud, value: number) => ApiResult> = {
  mtu: ({ state }, mtu) => call(state, 'POST', '/v1/networks', { name: 'n', mtu }),
  volume_size_gb: ({ state }, size) =>
    call(state, 'POST', '/v1/servers', { name: 's', flavor: 'flex-4-1', image: 'debian-12', volume_size_gb: size }),
  protocol_port: (c, port) => listener(c, { protocol_port: port }),
  timeout_client_data_ms: (c, ms) => listener(c, { timeout_client_data_ms: ms }),
  timeout_member_connect_ms: (c, ms) => listener(c, { timeout_member_connect_ms: ms }),
  timeout_member_data_ms: (c, ms) => listener(c, { timeout_member_data_ms: ms }),
  delay_s: (c, s) => monitor(c, { delay_s: s }),
  timeout_s: (c, s) => monitor(c, { timeout_s: s }),
  up_threshold: (c, n) => monitor(c, { up_threshold: n }),
  down_threshold: (c, n) => monitor(c, { down_threshold: n }),
};

describe('the simulated API enforces its table', () => {
  const fields = Object.entries(API_LIMITS) as [keyof typeof API_LIMITS, { min: number; max?: number }][];

  test.each(fields)('%s: its bounds are taken, one beyond is refused with 400 naming the field', (field, range) => {
    const bounds = range.max === undefined ? [range.min] : [range.min, range.max];
    for (const value of bounds) expect(CREATES[field](cloud(), value).status, `${field} ${value}`).toBe(201);
    const beyond = range.max === undefined ? [range.min - 1] : [range.min - 1, range.max + 1];
    for (const value of beyond) {
      const answer = CREATES[field](cloud(), value);
      expect(answer.status, `${field} ${value}`).toBe(400);
      expect(Object.keys(answer.body as Dict), `${field} ${value}`).toEqual([field]);
    }
  });
});
