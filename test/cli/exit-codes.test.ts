// Exit codes as the README documents them, from the real binary against the test cluster and a
// simulator: 0 success or nothing to do; 1 an error, or a pass in which some objects failed
// while others succeeded (the good ones are still reconciled, the failed one is named); 2 for
// `plan --detailed-exitcode` with pending changes. Along the way, the -o json and -o yaml
// documents of init-nodes, sync-lb and plan parse.
//
// The tests of this file build on each other, in order: nodes initialised → a Service planned
// → synced → a broken Service next to a new good one.
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nodesSeed, runBinary, startHarness, type BinaryResult, type Harness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  testConnection,
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
} from '../support/kube.js';
import { expectUserError } from './cli-support.js';

const prefix = uniqueName('exit');
const namespace = uniqueName('exit');
const fastSync = ['--settle-seconds', '0', '--poll-seconds', '0.05'];
const uninitialized = { key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' };
const brokenAnnotation = 'k8s.cloudscale.ch/loadbalancer-health-monitor-delay-s';

const seed = nodesSeed({ prefix, count: 3, privateNet: '10.30.0', publicNet: '5.102.148' });

let harness: Harness;
const run = (args: readonly string[]): Promise<BinaryResult> => runBinary(args, { apiUrl: harness.sim.url });

function describeResult(result: BinaryResult): string {
  return `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
}

async function providerIdOf(node: string): Promise<string | undefined> {
  return (await testConnection().core.readNode({ name: node })).spec?.providerID;
}

/** The number of ingress addresses in the Service's status (a load balancer has an IPv4 and an IPv6 VIP). */
async function ingressCount(service: string): Promise<number> {
  const stored = await testConnection().core.readNamespacedService({ namespace, name: service });
  return stored.status?.loadBalancer?.ingress?.length ?? 0;
}

beforeAll(async () => {
  harness = await startHarness({ seed });
  await ensureNamespace(namespace);
  for (const i of [1, 2]) await createNode(`${prefix}-${i}`, { ready: true, taints: [uninitialized] });
});
afterAll(async () => {
  await deleteCreatedObjects();
  await harness.stop();
});

describe('exit codes', () => {
  test('init-nodes: 0 after initialising, 0 with nothing to do; -o json and -o yaml parse', async () => {
    const first = await run(['-o', 'json', 'init-nodes']);
    expect(first.code, describeResult(first)).toBe(0);
    const report = JSON.parse(first.stdout) as { nodes: { node: string }[] };
    expect(report.nodes.map((n) => n.node).sort()).toEqual([`${prefix}-1`, `${prefix}-2`]);
    for (const i of [1, 2]) expect(await providerIdOf(`${prefix}-${i}`)).toMatch(/^cloudscale:\/\//);

    const again = await run(['-o', 'yaml', 'init-nodes']);
    expect(again.code, describeResult(again)).toBe(0);
    expect(parseYaml(again.stdout)).toMatchObject({ kind: 'InitNodesResult' });
  });

  test('plan --detailed-exitcode: 2 while a Service waits for its load balancer; without the flag 0', async () => {
    await createLoadBalancerService(namespace, 'good');

    const detailed = await run(['plan', '--detailed-exitcode', '-n', namespace, 'service/good']);
    expect(detailed.code, describeResult(detailed)).toBe(2);
    expect(detailed.stdout).toContain('create-lb');
    expect(detailed.stderr).toBe('');

    const plain = await run(['plan', '-n', namespace, 'service/good']);
    expect(plain.code, describeResult(plain)).toBe(0);
    expect(plain.stdout).toBe(detailed.stdout);

    const json = await run(['-o', 'json', 'plan', '--detailed-exitcode']);
    expect(json.code, describeResult(json)).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'Plan' });
    const yaml = await run(['-o', 'yaml', 'plan']);
    expect(yaml.code, describeResult(yaml)).toBe(0);
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout));

    // Planning wrote nothing.
    expect(await harness.cloud.loadBalancers.list()).toEqual([]);
  });

  test('sync-lb: 0 when it reconciled; then plan --detailed-exitcode 0 and sync-lb 0 with nothing to do', async () => {
    const synced = await run(['-o', 'json', 'sync-lb', ...fastSync]);
    expect(synced.code, describeResult(synced)).toBe(0);
    const report = JSON.parse(synced.stdout) as { services: { service: string; status: string }[] };
    expect(report.services).toEqual([expect.objectContaining({ service: `${namespace}/good`, status: 'changed' })]);
    expect(await ingressCount('good')).toBeGreaterThan(0);

    const plan = await run(['plan', '--detailed-exitcode']);
    expect(plan.code, describeResult(plan)).toBe(0);
    expect(plan.stdout).toMatch(/No changes/);

    const again = await run(['sync-lb', ...fastSync]);
    expect(again.code, describeResult(again)).toBe(0);
    expect(again.stderr).not.toMatch(/^error/m);
  });

  test('sync-lb with one broken Service among good ones: the good ones are reconciled, exit 1 names the broken one', async () => {
    await createLoadBalancerService(namespace, 'broken', { annotations: { [brokenAnnotation]: 'soon' } });
    await createLoadBalancerService(namespace, 'fresh', { ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 }] });

    const result = await run(['sync-lb', ...fastSync]);
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stdout).toContain(`${namespace}/fresh`);
    const errorAndBelow = result.stderr.slice(result.stderr.search(/^error: /m));
    expect(errorAndBelow, describeResult(result)).toMatch(/^error: .*1 of 3/m);
    expect(errorAndBelow).toContain(`${namespace}/broken`);
    expect(errorAndBelow).toContain(brokenAnnotation);
    expect(errorAndBelow).not.toContain(`${namespace}/fresh`);
    expect(errorAndBelow).not.toContain(`${namespace}/good`);
    // The failure is said once, in the error at the end: the progress line says only that it failed.
    expect(result.stdout, describeResult(result)).toMatch(new RegExp(`^service/${namespace}/broken: failed after 0/0$`, 'm'));
    expect(result.stdout).not.toContain(brokenAnnotation);
    expect(result.stderr.split(brokenAnnotation).length - 1, describeResult(result)).toBe(1);

    // The good ones: the new Service got its load balancer, the old one is still in place.
    expect(await ingressCount('fresh')).toBeGreaterThan(0);
    expect(await ingressCount('good')).toBeGreaterThan(0);
    expect(await ingressCount('broken')).toBe(0);
    expect(await harness.cloud.loadBalancers.list()).toHaveLength(2);

    // The same pass as JSON: one document on stdout that names the failure, exit code 1.
    const json = await run(['-o', 'json', 'sync-lb', ...fastSync]);
    expect(json.code, describeResult(json)).toBe(1);
    const report = JSON.parse(json.stdout) as { services: { service: string; status: string }[] };
    expect(Object.fromEntries(report.services.map((s) => [s.service, s.status]))).toEqual({
      [`${namespace}/broken`]: 'failed',
      [`${namespace}/fresh`]: 'unchanged',
      [`${namespace}/good`]: 'unchanged',
    });
  });

  test('plan: a broken Service is an error (1), with or without --detailed-exitcode; the good ones plan 0', async () => {
    for (const args of [['plan'], ['plan', '--detailed-exitcode'], ['plan', '-n', namespace, 'service/broken']]) {
      const result = await run(args);
      expect(result.code, `${args.join(' ')}\n${describeResult(result)}`).toBe(1);
      expect(result.stdout + result.stderr).toContain(brokenAnnotation);
    }
    const good = await run(['plan', '--detailed-exitcode', '-n', namespace, 'service/good', 'service/fresh']);
    expect(good.code, describeResult(good)).toBe(0);
  });

  test('sync-lb --dry-run exits as plan does: 1 with the broken Service (nothing written), 0 for the good ones', async () => {
    const writesBefore = harness.sim.admin.requests().filter((r) => r.method !== 'GET').length;
    const broken = await run(['sync-lb', '--dry-run', '-n', namespace, 'service/broken']);
    expect(broken.code, describeResult(broken)).toBe(1);
    expect(broken.stdout + broken.stderr).toContain(brokenAnnotation);
    const good = await run(['sync-lb', '--dry-run', '-n', namespace, 'service/good']);
    expect(good.code, describeResult(good)).toBe(0);
    expect(harness.sim.admin.requests().filter((r) => r.method !== 'GET').length).toBe(writesBefore);
  });

  test('init-nodes --max-node-deletions 0 (never delete a Node) is accepted', async () => {
    const result = await run(['init-nodes', '--dry-run', '--max-node-deletions', '0']);
    expect(result.code, describeResult(result)).toBe(0);
    expect(result.stdout).toContain(`node/${prefix}-1`);
  });

  test('run (what the CronJob runs) with the broken Service: exit 1, its JSON names the failure; cleanup has nothing to do (0)', async () => {
    const result = await run(['-o', 'json', 'run', ...fastSync, '--max-node-deletions', '0']);
    expect(result.code, describeResult(result)).toBe(1);
    const report = JSON.parse(result.stdout) as { failures: { object: string }[] };
    expect(report.failures.map((f) => f.object)).toEqual([`service/${namespace}/broken`]);
    expect(result.stderr).toContain(`${namespace}/broken`);

    const cleanup = await run(['-o', 'json', 'cleanup', '--yes']);
    expect(cleanup.code, describeResult(cleanup)).toBe(0);
    expect(JSON.parse(cleanup.stdout)).toMatchObject({ candidates: [], deleted: [] });
  });

  test('init-nodes with one missing node among good ones: the good one is initialised, exit 1 names the missing one', async () => {
    await createNode(`${prefix}-3`, { ready: true, taints: [uninitialized] });
    const missing = `${prefix}-gone`;
    const result = await run(['init-nodes', `${prefix}-3`, missing]);
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr.slice(result.stderr.search(/^error: /m))).toContain(missing);
    expect(await providerIdOf(`${prefix}-3`)).toMatch(/^cloudscale:\/\//);
  });

  test('an API that refuses every request: exit 1 with one error, nothing half-printed on stdout', async () => {
    const result = await runBinary(['sync-lb', ...fastSync], {
      apiUrl: harness.sim.url,
      env: { CLOUDSCALE_API_TOKEN: 'not-the-token-of-this-simulator' },
    });
    expectUserError(result, '401');
  });
});
