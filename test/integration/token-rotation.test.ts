// A token rotated while a pass runs: the simulator changes its accepted token (PUT /_sim/tokens)
// after the pass's first load balancer was created, so every later request of that pass gets
// 401 "Invalid token.", as with a token revoked in the control panel. The pass must fail the
// Services it could not finish with an error that names the 401 and what to check, print
// neither token, and the next pass with the new token must converge without a second load
// balancer for any Service.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_TOKEN, startHarness, type Harness } from '../support/ccm.js';
import { jsonDocument, runInProcess, writerArgv } from '../support/fault-race/cli.js';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import { key, useLbWorld } from '../support/lb-scenarios.js';

const NEW_TOKEN = 'rotated-token-5d41402abc4b2a76b9719d911017c592';
const SERVICES = ['web-a', 'web-b', 'web-c', 'web-d'];

async function admin(harness: Harness, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${harness.sim.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function apiStatus(harness: Harness, token: string): Promise<number> {
  return (await fetch(`${harness.sim.url}/v1/load-balancers`, { headers: { authorization: `Bearer ${token}` } })).status;
}

describe('the simulator changes its accepted token while running (PUT /_sim/tokens)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.stop());

  test('a rotated token gets 401 from the next request on; the log names tokens, never their value', async () => {
    expect(await apiStatus(harness, TEST_TOKEN)).toBe(200);
    expect(await admin(harness, 'GET', '/_sim/tokens')).toEqual({ status: 200, body: { names: ['default'] } });
    expect((await admin(harness, 'PUT', '/_sim/tokens', { default: NEW_TOKEN, other: 'second-token' })).status).toBe(204);
    expect(await apiStatus(harness, TEST_TOKEN)).toBe(401);
    expect(await apiStatus(harness, NEW_TOKEN)).toBe(200);
    expect(await apiStatus(harness, 'second-token')).toBe(200);
    const log = harness.sim.admin.requests().slice(-4);
    expect(log.map((e) => [e.status, e.token])).toEqual([
      [200, 'default'],
      [401, undefined],
      [200, 'default'],
      [200, 'other'],
    ]);
    expect(JSON.stringify(log)).not.toContain(NEW_TOKEN);
    // Arrival order is kept apart from the log's (finishing) order.
    expect(log.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(harness.sim.admin.arrivals()).toBe(4);

    expect((await admin(harness, 'DELETE', '/_sim/tokens')).status).toBe(204);
    expect(await apiStatus(harness, 'anything')).toBe(200);
    expect(await admin(harness, 'GET', '/_sim/tokens')).toEqual({ status: 200, body: { names: null } });
    harness.sim.admin.setTokens({ default: TEST_TOKEN });
    expect(await apiStatus(harness, TEST_TOKEN)).toBe(200);
  });

  test.each([
    [{}, 'tokens: expected a JSON object of at least one name → token'],
    [{ default: 'has space' }, 'tokens.default: expected a non-empty token without whitespace'],
    [{ default: 7 }, 'tokens.default: expected a non-empty token without whitespace'],
    [{ a: 'same', b: 'same' }, 'tokens.b: the same token as tokens.a'],
  ])('PUT %j is refused with 400 naming the problem, and the tokens stay', async (body, detail) => {
    expect(await admin(harness, 'PUT', '/_sim/tokens', body)).toEqual({ status: 400, body: { detail: expect.stringContaining(detail) } });
    expect(await apiStatus(harness, TEST_TOKEN)).toBe(200);
  });
});

describe('sync-lb with its token rotated mid-pass', () => {
  const namespace = uniqueName('rotate');
  const prefix = uniqueName('rot');
  const { harness } = useLbWorld({ prefix, namespace });

  beforeAll(async () => {
    for (const name of SERVICES) await createLoadBalancerService(namespace, name);
  });

  test('the pass fails the Services it could not finish with a clear 401, prints no token; the next pass with the new token converges, no duplicate', async () => {
    const argv = (token: 'old' | 'new') => [
      ...writerArgv('sync-lb', { clusterId: harness.clusterId, wait: true, leaseSeconds: 15, features: { writerLease: true } }),
      '--namespace',
      namespace,
      ...(token === 'old' ? ['--concurrency', '2'] : []),
      ...SERVICES.map((name) => `service/${name}`),
    ];
    // Slow enough that the pass is still writing when the token changes.
    harness.sim.admin.setFaults({ latencyMs: 40 });
    const from = harness.sim.admin.arrivals();
    const pass = runInProcess(argv('old'), harness.sim.url);
    await until(() => harness.sim.admin.requests().some((e) => e.seq > from && e.method === 'POST' && e.route === '/v1/load-balancers' && e.status === 201));
    harness.sim.admin.setTokens({ default: NEW_TOKEN });
    const rotatedAt = harness.sim.admin.arrivals();
    const first = await pass;
    harness.sim.admin.clearFaults();

    const refused = harness.sim.admin.requests().filter((e) => e.seq > rotatedAt);
    expect(refused.length, 'the pass sent requests after the rotation').toBeGreaterThan(0);
    expect(refused.map((e) => e.status)).toEqual(refused.map(() => 401));
    expect(first.code, first.stdout + first.stderr).toBe(1);
    type ServiceResult = { service: string; status: string; errors?: { message: string; hint?: string }[] };
    const results = (jsonDocument(first)?.services ?? []) as ServiceResult[];
    expect(results.map((r) => r.service).sort(), first.stdout).toEqual(SERVICES.map((name) => `${namespace}/${name}`));
    const failed = results.filter((r) => r.status === 'failed');
    // Every Service still had writes to send when the token changed.
    expect(failed.map((r) => r.service).sort(), first.stdout).toEqual(SERVICES.map((name) => `${namespace}/${name}`));
    for (const { errors = [] } of failed) {
      expect(errors.length).toBeGreaterThan(0);
      for (const error of errors) {
        expect(error.message).toMatch(/answered 401: Invalid token\.$/);
        expect(error.hint).toContain('the API rejected the token: check CLOUDSCALE_API_TOKEN');
      }
    }
    for (const token of [TEST_TOKEN, NEW_TOKEN]) expect(first.stdout + first.stderr).not.toContain(token);

    const second = await runInProcess(argv('new'), harness.sim.url, { token: NEW_TOKEN });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const third = await runInProcess(argv('new'), harness.sim.url, { token: NEW_TOKEN });
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect((jsonDocument(third)?.requests as { writes: number } | undefined)?.writes).toBe(0);
    for (const output of [second, third]) for (const token of [TEST_TOKEN, NEW_TOKEN]) expect(output.stdout + output.stderr).not.toContain(token);

    harness.sim.admin.setTokens({ default: TEST_TOKEN });
    const lbs = await harness.cloud.loadBalancers.list();
    for (const name of SERVICES) {
      const service = await testConnection().core.readNamespacedService({ namespace, name });
      const uid = service.metadata!.uid!;
      const theirs = lbs.filter((lb) => lb.tags['k8s.cloudscale.ch/service-uid'] === uid || lb.name === `k8s-service-${uid}`);
      expect(theirs.map((lb) => lb.name), `load balancers of ${name}`).toEqual([`k8s-service-${uid}`]);
      expect(service.metadata?.annotations?.[key('loadbalancer-uuid')]).toBe(theirs[0]!.uuid);
      expect(service.status?.loadBalancer?.ingress?.length, `ingress of ${name}`).toBeGreaterThan(0);
    }
  });
});

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the pass to create its first load balancer');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
