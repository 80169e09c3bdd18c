// The simulator's switches and admin API over real HTTP: faults (count-based errors, 429 with
// Retry-After, latency, stuck LBs, lost answers), the request log, the LB lifecycle, per-LB
// serialisation, server actions and the bearer token.

import { afterEach, describe, expect, test } from 'vitest';
import type { LoadBalancer, Server } from '../../src/core/cloudscale/types.js';
import { loadSeedFile, SimAdminError, startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/index.js';
import { testSimWorld } from '../support/sim-world.js';

const running: Simulator[] = [];

async function start(options: Omit<SimulatorOptions, 'seed'> = {}): Promise<Simulator> {
  const sim = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), lbProvisionMs: 0, ...testSimWorld(), ...options });
  running.push(sim);
  return sim;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((sim) => sim.stop()));
});

async function call(
  sim: Simulator,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(path.startsWith('http') ? path : `${sim.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
}

const newLb = async (sim: Simulator, name = 'lb'): Promise<LoadBalancer> =>
  (await call(sim, 'POST', '/v1/load-balancers', { name, flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] })).body;

/** Polls until `check` holds, failing after `attempts` polls; no timing is asserted. */
async function eventually(check: () => Promise<boolean>, attempts = 200): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition not reached');
}

describe('faults', () => {
  test('the next N matching requests fail with the configured status, then requests succeed', async () => {
    const sim = await start();
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers', methods: ['GET'], status: 503, count: 2 } });
    const first = await call(sim, 'GET', '/v1/load-balancers');
    expect(first).toMatchObject({ status: 503, body: { detail: 'Service temporarily unavailable, try again later.' } });
    expect((await call(sim, 'GET', '/v1/load-balancers')).status).toBe(503);
    expect((await call(sim, 'GET', '/v1/load-balancers')).status).toBe(200);
    // Other methods and paths were never affected.
    expect((await call(sim, 'GET', '/v1/servers')).status).toBe(200);
    expect(sim.admin.requests().map((r) => r.status)).toEqual([503, 503, 200, 200]);
  });

  test('a failed request changes nothing', async () => {
    const sim = await start();
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers', methods: ['POST'], status: 500, count: 1 } });
    const failed = await call(sim, 'POST', '/v1/load-balancers', { name: 'x', flavor: 'lb-standard', vip_addresses: [] });
    expect(failed).toMatchObject({ status: 500, body: { detail: 'Server error.' } });
    expect((await call(sim, 'GET', '/v1/load-balancers')).body).toEqual([]);
  });

  test('afterApplying: the change happens but the answer is an error', async () => {
    const sim = await start();
    sim.admin.setFaults({
      errorRate: { pathPattern: '/v1/load-balancers', methods: ['POST'], status: 504, count: 1, afterApplying: true },
    });
    const lost = await call(sim, 'POST', '/v1/load-balancers', { name: 'lost', flavor: 'lb-standard', vip_addresses: [] });
    expect(lost).toMatchObject({ status: 504, body: { detail: 'Gateway timeout.' } });
    expect((await call(sim, 'GET', '/v1/load-balancers')).body.map((lb: LoadBalancer) => lb.name)).toEqual(['lost']);
  });

  test('rate limit: 429 with Retry-After for the next N requests matching a glob', async () => {
    const sim = await start();
    sim.admin.setFaults({ rateLimit: { pathPattern: '/v1/load-balancers/**', count: 1, retryAfterSeconds: 3 } });
    const limited = await call(sim, 'GET', '/v1/load-balancers/pools');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.body).toEqual({ detail: 'Request was throttled. Expected available in 3 seconds.' });
    expect((await call(sim, 'GET', '/v1/load-balancers/pools')).status).toBe(200);
  });

  test('a rule can name a route pattern; * stays within one segment', async () => {
    const sim = await start();
    const lb = await newLb(sim);
    const pool = (await call(sim, 'POST', '/v1/load-balancers/pools', { name: 'p', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' })).body;
    sim.admin.setFaults({
      errorRate: [
        { pathPattern: '/v1/load-balancers/pools/{uuid}/members', status: 502, count: 1 },
        { pathPattern: '/v1/*', status: 500, count: 5 },
      ],
    });
    expect((await call(sim, 'GET', `/v1/load-balancers/pools/${pool.uuid}`)).status).toBe(200);
    expect((await call(sim, 'GET', `/v1/load-balancers/pools/${pool.uuid}/members`)).status).toBe(502);
    expect((await call(sim, 'GET', `/v1/load-balancers/pools/${pool.uuid}/members`)).status).toBe(200);
    expect((await call(sim, 'GET', '/v1/servers')).status).toBe(500);
  });

  test('a pattern with colons matches percent-encoded floating IP paths', async () => {
    const sim = await start();
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/floating-ips/2a06:c01:ffff::123', status: 500, count: 1 } });
    expect((await call(sim, 'GET', '/v1/floating-ips/2a06%3Ac01%3Affff%3A%3A123/')).status).toBe(500);
    expect((await call(sim, 'GET', '/v1/floating-ips/2a06%3Ac01%3Affff%3A%3A123')).status).toBe(200);
  });

  test('latency delays every API request', async () => {
    const sim = await start();
    sim.admin.setFaults({ latencyMs: 60 });
    expect((await call(sim, 'GET', '/v1/servers')).status).toBe(200);
    expect(sim.admin.requests()[0]!.durationMs).toBeGreaterThanOrEqual(55);
    sim.admin.clearFaults();
    sim.admin.resetRequests();
    expect((await call(sim, 'GET', '/v1/servers')).status).toBe(200);
  });

  test('stuck LBs stay changing or error until the fault is cleared', async () => {
    const sim = await start();
    const byName = await newLb(sim, 'k8s-service-stuck');
    const byUuid = await newLb(sim, 'other');
    await call(sim, 'PUT', '/_sim/faults', { stuckLoadBalancers: { 'k8s-service-stuck': 'changing', [byUuid.uuid]: 'error' } });
    expect((await call(sim, 'GET', byName.href)).body.status).toBe('changing');
    expect((await call(sim, 'GET', byUuid.href)).body.status).toBe('error');
    // The name also catches an LB created later with that name.
    const later = await newLb(sim, 'k8s-service-stuck');
    expect(later.status).toBe('changing');
    expect((await call(sim, 'DELETE', '/_sim/faults')).status).toBe(204);
    expect((await call(sim, 'GET', byName.href)).body.status).toBe('running');
    expect((await call(sim, 'GET', byUuid.href)).body.status).toBe('running');
  });

  test('the admin API shows and rejects fault configurations', async () => {
    const sim = await start();
    expect(await call(sim, 'PUT', '/_sim/faults', { errorRate: { pathPattern: 'v1', status: 503 } })).toMatchObject({
      status: 400,
      body: { detail: 'faults.errorRate[0].pathPattern: expected a path pattern starting with / (e.g. /v1/load-balancers/**)' },
    });
    expect(await call(sim, 'PUT', '/_sim/faults', { errorRate: { pathPattern: '/v1/**', status: 200 } })).toMatchObject({
      status: 400,
      body: { detail: 'faults.errorRate[0].status: expected an HTTP error status (400–599)' },
    });
    expect(await call(sim, 'PUT', '/_sim/faults', { latency: 5 })).toMatchObject({ status: 400 });
    expect(() => sim.admin.setFaults({ stuckLoadBalancers: { x: 'broken' as 'error' } })).toThrow(SimAdminError);
    expect((await call(sim, 'PUT', '/_sim/faults', { errorRate: { pathPattern: '/v1/**', status: 503, count: 2 } })).status).toBe(204);
    await call(sim, 'GET', '/v1/servers');
    expect((await call(sim, 'GET', '/_sim/faults')).body).toEqual({
      errorRate: { pathPattern: '/v1/**', status: 503, count: 2 },
      remaining: [1],
    });
  });
});

describe('faults that leave the client unsure: wrong lists, resets, hangs', () => {
  const lbNames = async (sim: Simulator): Promise<string[]> =>
    (await call(sim, 'GET', '/v1/load-balancers')).body.map((lb: LoadBalancer) => lb.name);

  /** A fetch that fails without an answer; resolves to the error's cause code. */
  const failure = async (request: Promise<unknown>): Promise<string> => {
    const error = await request.then(
      () => expect.fail('expected the request to get no answer'),
      (caught: unknown) => caught as Error & { cause?: { code?: string } },
    );
    return error.cause?.code ?? error.name;
  };

  test('shortList empty: a list answers [] once, then the truth again', async () => {
    const sim = await start();
    await newLb(sim, 'a');
    await newLb(sim, 'b');
    expect((await call(sim, 'PUT', '/_sim/faults', { shortList: { pathPattern: '/v1/load-balancers', methods: ['GET'], count: 1, empty: true } })).status).toBe(204);
    expect(await call(sim, 'GET', '/v1/load-balancers')).toMatchObject({ status: 200, body: [] });
    expect(await lbNames(sim)).toEqual(['a', 'b']);
    expect(sim.admin.requests().slice(-2).map((r) => [r.status, r.fault])).toEqual([[200, 'shortList'], [200, undefined]]);
  });

  test('shortList drops an item by uuid, or the first or last N items', async () => {
    const sim = await start();
    const [a, b] = [await newLb(sim, 'a'), await newLb(sim, 'b'), await newLb(sim, 'c')];
    sim.admin.setFaults({
      shortList: [
        { pathPattern: '/v1/load-balancers', count: 1, dropUuid: b!.uuid },
        { pathPattern: '/v1/load-balancers', count: 1, dropFirst: 2 },
        { pathPattern: '/v1/load-balancers', count: 1, dropLast: 1 },
      ],
    });
    expect(await lbNames(sim)).toEqual(['a', 'c']);
    expect(await lbNames(sim)).toEqual(['c']);
    expect(await lbNames(sim)).toEqual(['a', 'b']);
    expect(await lbNames(sim)).toEqual(['a', 'b', 'c']);
    // A GET of one object is no list: it neither changes nor uses up a rule.
    sim.admin.setFaults({ shortList: { pathPattern: '/v1/load-balancers/**', count: 1, empty: true } });
    expect((await call(sim, 'GET', a!.href)).body.uuid).toBe(a!.uuid);
    expect((await call(sim, 'GET', '/_sim/faults')).body.remaining).toEqual([1]);
    expect((await call(sim, 'GET', '/v1/load-balancers/pools')).body).toEqual([]);
  });

  test('shortList names a floating IP by its address', async () => {
    const sim = await start();
    sim.admin.setFaults({ shortList: { pathPattern: '/v1/floating-ips', count: 1, dropUuid: '2a06:c01:ffff::123' } });
    expect((await call(sim, 'GET', '/v1/floating-ips')).body.map((f: { network: string }) => f.network)).toEqual(['5.102.150.123/32']);
  });

  test('connectionReset: no answer; the change is lost, or applied with afterApplying', async () => {
    const sim = await start();
    sim.admin.setFaults({ connectionReset: { pathPattern: '/v1/load-balancers', methods: ['POST'], count: 1 } });
    expect(await failure(newLb(sim, 'lost'))).toBe('ECONNRESET');
    expect(await lbNames(sim)).toEqual([]);
    await call(sim, 'PUT', '/_sim/faults', {
      connectionReset: { pathPattern: '/v1/load-balancers', methods: ['POST'], count: 1, afterApplying: true },
    });
    expect(await failure(newLb(sim, 'applied'))).toBe('ECONNRESET');
    expect(await lbNames(sim)).toEqual(['applied']);
    expect(sim.admin.requests().filter((r) => r.method === 'POST').map((r) => [r.status, r.fault])).toEqual([
      [0, 'connectionReset'],
      [0, 'connectionReset'],
    ]);
  });

  test('hang without forMs: no answer until the client gives up; applied only with afterApplying', async () => {
    const sim = await start();
    sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers', methods: ['POST'], count: 1 } });
    const body = JSON.stringify({ name: 'never', flavor: 'lb-standard', vip_addresses: [] });
    const post = (signal: AbortSignal): Promise<Response> =>
      fetch(`${sim.url}/v1/load-balancers`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal });
    expect(await failure(post(AbortSignal.timeout(200)))).toBe('TimeoutError');
    expect(await lbNames(sim)).toEqual([]);
    sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers', methods: ['POST'], count: 1, afterApplying: true } });
    expect(await failure(post(AbortSignal.timeout(200)))).toBe('TimeoutError');
    expect(await lbNames(sim)).toEqual(['never']);
    await eventually(async () => sim.admin.requests().filter((r) => r.method === 'POST').length === 2);
    expect(sim.admin.requests().filter((r) => r.method === 'POST').map((r) => [r.status, r.fault])).toEqual([
      [0, 'hang'],
      [0, 'hang'],
    ]);
  });

  test('hang with forMs: the request is applied late, even when the client has given up', async () => {
    const sim = await start();
    sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers', methods: ['POST'], count: 2, forMs: 300 } });
    const slow = await newLb(sim, 'slow');
    expect(slow.name).toBe('slow');
    const body = JSON.stringify({ name: 'late', flavor: 'lb-standard', vip_addresses: [] });
    const request = fetch(`${sim.url}/v1/load-balancers`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
      signal: AbortSignal.timeout(50),
    });
    expect(await failure(request)).toBe('TimeoutError');
    await eventually(async () => (await lbNames(sim)).includes('late'));
    expect(sim.admin.requests().filter((r) => r.method === 'POST').map((r) => [r.status, r.fault])).toEqual([
      [201, 'hang'],
      [0, 'hang'],
    ]);
  });

  test('a create applied, then answered 503 with Retry-After: errorRate with afterApplying', async () => {
    const sim = await start();
    await call(sim, 'PUT', '/_sim/faults', {
      errorRate: { pathPattern: '/v1/load-balancers/pools', methods: ['POST'], status: 503, count: 1, afterApplying: true, retryAfterSeconds: 7 },
    });
    const lb = await newLb(sim);
    const answer = await call(sim, 'POST', '/v1/load-balancers/pools', { name: 'p', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' });
    expect(answer).toMatchObject({ status: 503, body: { detail: 'Service temporarily unavailable, try again later.' } });
    expect(answer.headers.get('retry-after')).toBe('7');
    expect((await call(sim, 'GET', '/v1/load-balancers/pools')).body.map((p: { name: string }) => p.name)).toEqual(['p']);
  });

  test('the admin API refuses unclear rules and reports what is left of each, in order', async () => {
    const sim = await start();
    expect(await call(sim, 'PUT', '/_sim/faults', { shortList: { pathPattern: '/v1/**', empty: true, dropFirst: 1 } })).toMatchObject({
      status: 400,
      body: { detail: 'faults.shortList[0]: expected exactly one of empty, dropUuid, dropFirst, dropLast, got empty, dropFirst' },
    });
    expect(await call(sim, 'PUT', '/_sim/faults', { hang: { pathPattern: '/v1/**', forMS: 5 } })).toMatchObject({
      status: 400,
      body: { detail: 'faults.hang[0]: unknown field "forMS" (expected one of: pathPattern, methods, count, afterApplying, forMs)' },
    });
    expect(await call(sim, 'PUT', '/_sim/faults', { connectionReset: [{ pathPattern: '/v1/**', afterApplying: 'yes' }] })).toMatchObject({
      status: 400,
      body: { detail: 'faults.connectionReset[0].afterApplying: expected true or false' },
    });
    const config = {
      errorRate: { pathPattern: '/v1/servers', status: 500, count: 1 },
      connectionReset: { pathPattern: '/v1/networks', count: 2 },
      hang: { pathPattern: '/v1/subnets', count: 3, forMs: 0 },
      shortList: { pathPattern: '/v1/servers', dropLast: 1 },
    };
    expect((await call(sim, 'PUT', '/_sim/faults', config)).status).toBe(204);
    expect((await call(sim, 'GET', '/v1/subnets')).status).toBe(200);
    expect((await call(sim, 'GET', '/_sim/faults')).body).toEqual({ ...config, remaining: [1, 2, 2, null] });
  });
});

describe('request log', () => {
  test('records method, path, route, status, time and duration of API requests only', async () => {
    const sim = await start();
    const lb = await newLb(sim);
    await call(sim, 'GET', `/v1/load-balancers/${lb.uuid}`);
    await call(sim, 'GET', '/v1/load-balancers?tag:x=y');
    await call(sim, 'GET', `/v1/load-balancers/${lb.uuid}/`);
    await call(sim, 'GET', '/v1/nothing-here');
    const log = (await call(sim, 'GET', '/_sim/requests')).body;
    expect(log.map((e: any) => [e.method, e.path, e.route, e.status])).toEqual([
      ['POST', '/v1/load-balancers', '/v1/load-balancers', 201],
      ['GET', `/v1/load-balancers/${lb.uuid}`, '/v1/load-balancers/{uuid}', 200],
      ['GET', '/v1/load-balancers?tag:x=y', '/v1/load-balancers', 200],
      ['GET', `/v1/load-balancers/${lb.uuid}/`, '/v1/load-balancers/{uuid}', 200],
      ['GET', '/v1/nothing-here', '/v1/nothing-here', 404],
    ]);
    expect(Number.isNaN(Date.parse(log[0].time))).toBe(false);
    expect(typeof log[0].durationMs).toBe('number');
    const summary = (await call(sim, 'GET', '/_sim/requests/summary')).body;
    expect(summary).toEqual([
      { method: 'POST', route: '/v1/load-balancers', count: 1, statuses: { 201: 1 } },
      { method: 'GET', route: '/v1/load-balancers/{uuid}', count: 2, statuses: { 200: 2 } },
      { method: 'GET', route: '/v1/load-balancers', count: 1, statuses: { 200: 1 } },
      { method: 'GET', route: '/v1/nothing-here', count: 1, statuses: { 404: 1 } },
    ]);
    expect(sim.admin.requestSummary()).toEqual(summary);
    expect((await call(sim, 'DELETE', '/_sim/requests')).status).toBe(204);
    expect((await call(sim, 'GET', '/_sim/requests')).body).toEqual([]);
  });

  test('members routes are summarised under one pattern', async () => {
    const sim = await start();
    const lb = await newLb(sim);
    const pools = await Promise.all(
      ['a', 'b'].map(async (name) => (await call(sim, 'POST', '/v1/load-balancers/pools', { name, load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' })).body),
    );
    sim.admin.resetRequests();
    for (const pool of pools) await call(sim, 'GET', `/v1/load-balancers/pools/${pool.uuid}/members`);
    expect(sim.admin.requestSummary()).toEqual([
      { method: 'GET', route: '/v1/load-balancers/pools/{uuid}/members', count: 2, statuses: { 200: 2 } },
    ]);
  });
});

describe('load balancer lifecycle and serialisation', () => {
  test('a new LB is changing, then running after the provisioning delay', async () => {
    const sim = await start({ lbProvisionMs: 150 });
    const lb = await newLb(sim);
    expect(lb.status).toBe('changing');
    expect(lb.vip_addresses).toHaveLength(2);
    await eventually(async () => (await call(sim, 'GET', lb.href)).body.status === 'running');
    expect((await call(sim, 'GET', '/v1/load-balancers')).body[0].status).toBe('running');
  });

  test('a zone holds 1,000 public load balancers, each with its own VIPs', async () => {
    const sim = await start();
    const vips = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const lb = await newLb(sim, `lb-${i}`);
      expect(lb.vip_addresses, lb.name).toHaveLength(2);
      for (const vip of lb.vip_addresses) vips.add(vip.address);
    }
    expect(vips.size).toBe(2000);
    expect((await call(sim, 'GET', '/v1/load-balancers')).body).toHaveLength(1000);
    const other = await call(sim, 'POST', '/v1/load-balancers', { name: 'lpg', flavor: 'lb-standard', zone: 'lpg1', vip_addresses: [] });
    expect(other.body.vip_addresses[0].subnet.cidr).toBe('198.18.8.0/21');
  });

  test('mutations of one LB run one at a time', async () => {
    const sim = await start();
    const lb = await newLb(sim);
    const pool = (await call(sim, 'POST', '/v1/load-balancers/pools', { name: 'p', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' })).body;
    const latencyMs = 80;
    sim.admin.setFaults({ latencyMs });
    sim.admin.resetRequests();
    await Promise.all([
      call(sim, 'PATCH', lb.href, { name: 'renamed' }),
      call(sim, 'PATCH', pool.href, { name: 'p2' }),
      call(sim, 'POST', '/v1/load-balancers/listeners', { pool: pool.uuid, name: 'l', protocol: 'tcp', protocol_port: 80, allowed_cidrs: [] }),
    ]);
    // Each waited for the ones before it: the last to finish took about three latencies.
    const durations = sim.admin.requests().map((r) => r.durationMs).sort((a, b) => a - b);
    expect(durations[2]).toBeGreaterThanOrEqual(3 * latencyMs - 10);
    expect(durations[1]).toBeGreaterThanOrEqual(2 * latencyMs - 10);
  });

  test('refuseOverlappingWrites: a write to an LB while another is still handled answers 400; other LBs, reads and later writes pass', async () => {
    const sim = await start({ behaviour: { refuseOverlappingWrites: true } });
    const lb = await newLb(sim, 'busy');
    const other = await newLb(sim, 'other');
    const pool = (await call(sim, 'POST', '/v1/load-balancers/pools', { name: 'p', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' })).body;
    // The rename is held for 400 ms while it holds the LB's turn, as a slow request of the real API would.
    sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers/{uuid}', methods: ['PATCH'], count: 1, forMs: 400 } });
    const arrived = sim.admin.arrivals();
    const slow = call(sim, 'PATCH', lb.href, { name: 'renamed' });
    await eventually(async () => sim.admin.arrivals() > arrived);
    expect(await call(sim, 'POST', '/v1/load-balancers/listeners', { pool: pool.uuid, name: 'l', protocol: 'tcp', protocol_port: 80 })).toMatchObject({
      status: 400,
      body: { detail: 'Another change to this load balancer is still being processed; try again later.' },
    });
    expect((await call(sim, 'PATCH', pool.href, { name: 'p2' })).status).toBe(400);
    expect((await call(sim, 'PATCH', other.href, { name: 'other-renamed' })).status).toBe(204);
    expect((await call(sim, 'GET', lb.href)).status).toBe(200);
    expect((await slow).status).toBe(204);
    expect((await call(sim, 'POST', '/v1/load-balancers/listeners', { pool: pool.uuid, name: 'l', protocol: 'tcp', protocol_port: 80 })).status).toBe(201);
    expect((await call(sim, 'GET', '/v1/load-balancers/listeners')).body).toHaveLength(1);

    // Without the switch the overlapping write waits its turn and is applied.
    sim.admin.setBehaviour({ refuseOverlappingWrites: false });
    sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers/{uuid}', methods: ['PATCH'], count: 1, forMs: 200 } });
    const heldArrived = sim.admin.arrivals();
    const held = call(sim, 'PATCH', lb.href, { name: 'again' });
    await eventually(async () => sim.admin.arrivals() > heldArrived);
    expect((await call(sim, 'PATCH', pool.href, { name: 'p3' })).status).toBe(204);
    expect((await held).status).toBe(204);
  });
});

describe('servers: admin and API actions', () => {
  test('admin stop and start over HTTP and in-process; changing while the action runs', async () => {
    const sim = await start({ serverActionMs: 60_000 });
    const [server] = (await call(sim, 'GET', '/v1/servers')).body as Server[];
    expect((await call(sim, 'POST', `/_sim/servers/${server!.uuid}/stop`)).status).toBe(204);
    expect((await call(sim, 'GET', server!.href)).body.status).toBe('changing');
    expect(await call(sim, 'POST', `/v1/servers/${server!.uuid}/start`)).toMatchObject({
      status: 400,
      body: { detail: 'The server is changing its state; try again once it has finished.' },
    });
    expect(await call(sim, 'POST', '/_sim/servers/00000000-0000-4000-8000-000000000000/stop')).toMatchObject({ status: 404 });
    expect(() => sim.admin.deleteServer('00000000-0000-4000-8000-000000000000')).toThrow(SimAdminError);
  });

  test('in-process admin: stopped servers show stopped, deleted ones 404', async () => {
    const sim = await start();
    const [first, second] = (await call(sim, 'GET', '/v1/servers')).body as Server[];
    sim.admin.stopServer(first!.uuid);
    expect((await call(sim, 'GET', first!.href)).body.status).toBe('stopped');
    sim.admin.startServer(first!.uuid);
    expect((await call(sim, 'GET', first!.href)).body.status).toBe('running');
    sim.admin.deleteServer(second!.uuid);
    expect((await call(sim, 'GET', second!.href)).status).toBe(404);
    expect((await call(sim, 'GET', '/v1/servers')).body.map((s: Server) => s.name)).toEqual(['node-1', 'node-3']);
  });
});

describe('bearer token', () => {
  test('API requests need the token; admin requests do not', async () => {
    const sim = await start({ token: 's3cret' });
    const missing = await call(sim, 'GET', '/v1/servers');
    expect(missing).toMatchObject({ status: 401, body: { detail: 'Authentication credentials were not provided.' } });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    expect(await call(sim, 'GET', '/v1/servers', undefined, { Authorization: 'Bearer wrong' })).toMatchObject({
      status: 401,
      body: { detail: 'Invalid token.' },
    });
    expect((await call(sim, 'GET', '/v1/servers', undefined, { Authorization: 'Bearer s3cret' })).status).toBe(200);
    expect((await call(sim, 'GET', '/_sim/requests')).status).toBe(200);
  });

  test('CORS headers come with every answer, errors included', async () => {
    const sim = await start();
    const answer = await call(sim, 'GET', '/v1/load-balancers/00000000-0000-4000-8000-000000000000');
    expect(answer.status).toBe(404);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS, PUT, PATCH, DELETE');
  });
});
