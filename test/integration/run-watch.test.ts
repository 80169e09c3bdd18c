// @kube-versions: all — the watch API: reaction passes, a watch the server breaks and re-establishing it
// `run --watch-for` against the real kube-apiserver and the simulator: after its pass, `run`
// keeps the Lease and serves a Node and a Service created meanwhile by reaction passes (before
// the watch ends, not by the next run), ignores what it wrote itself, ends cleanly on SIGTERM,
// stops at once without a further write when its Lease is taken over, re-establishes a watch
// the API server broke, fails loudly when the API server stays away, and runs a reaction pass
// that failed again with backoff until it succeeds or the watch ends. No wall-time assertion:
// only order and outcome (served while the run still runs; ended before its deadline).
import { KubeConfig, PatchStrategy, V1MicroTime, setHeaderOptions } from '@kubernetes/client-node';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { RUN_LEASE, runCommand, type RunOptions, type RunReport } from '../../src/commands/run.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { WatchBrokenError } from '../../src/core/apply/watch-loop.js';
import { PartialFailureError } from '../../src/core/errors.js';
import { connectKube } from '../../src/core/kube/connection.js';
import { readStatus } from '../../src/core/kube/status-configmap.js';
import { listForWatch, startWatch, type WatchEnd } from '../../src/core/kube/watch.js';
import { killStarted, startBinary, type RunningBinary } from '../cli/cli-support.js';
import { nodesSeed, type TestContext } from '../support/ccm.js';
import { UNINITIALIZED_TAINT, UNINITIALIZED_TAINT_KEY, createLoadBalancerService, createNode, ignoreNotFound, testConnection, testKubeconfig, uniqueName, waitUntil } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';

const options: RunOptions = { ...FAST_PASS, wait: false, force: true, watchDebounceMs: 100 };

const prefix = uniqueName('rw');
const namespace = uniqueName('run-watch');
const started: RunningBinary[] = [];
const { harness } = useLbWorld({
  prefix,
  namespace,
  seed: nodesSeed({ prefix, count: 6, privateNet: '10.61.0', publicNet: '5.102.161' }),
  nodes: 1,
  node: () => ({ taints: [UNINITIALIZED_TAINT] }),
});

beforeAll(async () => {
  await createLoadBalancerService(namespace, 'first');
});
afterEach(async () => {
  await killStarted(started);
  await harness.sim.admin.clearFaults();
  await releaseLease();
});

/** The run, started and not awaited; `settled` tells whether it has ended (and how). */
function startRun(runOptions: RunOptions, ctx: TestContext) {
  let settled: { report?: RunReport; error?: unknown } | undefined;
  const done = runCommand(runOptions, ctx).then(
    (report) => (settled = { report }),
    (error: unknown) => (settled = { error }),
  );
  return { done, settled: () => settled };
}

/** Until the run's full pass is done and it watches. */
async function passDone(ctx: TestContext): Promise<void> {
  await waitUntil('the full pass', () => /^watch: watching Nodes and Services/m.test(ctx.err()));
}

async function tainted(name: string): Promise<boolean> {
  const node = await testConnection().core.readNode({ name });
  return (node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY);
}

async function ingressOf(name: string): Promise<string | undefined> {
  const service = await testConnection().core.readNamespacedService({ namespace, name });
  return service.status?.loadBalancer?.ingress?.[0]?.ip;
}

async function releaseLease(): Promise<void> {
  const lease = await ignoreNotFound(testConnection().coordination.readNamespacedLease({ namespace: 'kube-system', name: RUN_LEASE.name }));
  if (lease === undefined) return;
  await testConnection().coordination.patchNamespacedLease({
    namespace: 'kube-system',
    name: RUN_LEASE.name,
    body: [{ op: 'replace', path: '/spec/holderIdentity', value: '' }],
  });
}

describe('run --watch-for', () => {
  test('a Node and a Service created during the watch are served by reaction passes while the run still runs; its own writes cause none', async () => {
    const abort = new AbortController();
    const ctx = harness.context({ abort: abort.signal });
    const run = startRun({ ...options, watchForMs: 100_000 }, ctx);
    await passDone(ctx);

    await createNode(`${prefix}-2`, { ready: true, taints: [UNINITIALIZED_TAINT] });
    await createLoadBalancerService(namespace, 'late');
    await waitUntil('the new Node initialised', async () => !(await tainted(`${prefix}-2`)));
    await waitUntil('the new Service has its ingress', async () => (await ingressOf('late')) !== undefined);
    // Served by the watching run, not by a later one.
    expect(run.settled()).toBeUndefined();

    // A last change of each kind: once its pass has run, every earlier event was seen (a watch
    // delivers in order), so a pass caused by the tool's own writes would be in the list by now.
    await testConnection().core.patchNode(
      { name: `${prefix}-2`, body: { metadata: { labels: { marker: 'last' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await createLoadBalancerService(namespace, 'marker');
    await waitUntil('the marker Service served', async () => (await ingressOf('marker')) !== undefined);
    await waitUntil('the passes of both markers', () => /service\/[^ ]+\/marker/.test(ctx.out()) && ctx.out().split('\n').filter((l) => l.includes(`node/${prefix}-2`)).length >= 2);

    abort.abort(new Error('interrupted by SIGTERM'));
    await run.done;
    const { report } = run.settled()!;
    expect(report?.failures).toEqual([]);
    expect(report?.watch?.endedBy).toBe('signal');
    const passes = report!.watch!.reactionPasses.map((p) => p.changes);
    // Each change once: the Node on creation and on its label, each Service on creation.
    expect(passes.filter((c) => c.includes(`node/${prefix}-2`))).toHaveLength(2);
    expect(passes.filter((c) => c.includes(`service/${namespace}/late`))).toHaveLength(1);
    expect(passes.filter((c) => c.includes(`service/${namespace}/marker`))).toHaveLength(1);
    // The full pass gave Service first its load balancer: its own writes made no pass.
    expect(passes.filter((c) => c.includes(`service/${namespace}/first`))).toHaveLength(0);
    expect(passes.every((c) => /^(node\/|service\/)/.test(c) && !c.includes('re-established'))).toBe(true);
    expect(report?.watch?.reactionPasses.reduce((n, p) => n + p.summary.nodesInitialized, 0)).toBe(1);
    expect(ctx.out()).toMatch(new RegExp(`^watch: node/${prefix}-2.*1 node initialized`, 'm'));
  });

  test('a Lease taken over during the watch ends the run at once (exit 1, the Lease named) and nothing is written after', async () => {
    const ctx = harness.context();
    const run = startRun({ ...options, watchForMs: 300_000, leaseSeconds: 3 }, ctx);
    await passDone(ctx);
    // The reaction to the next Service is held in its first read while the Lease changes hands.
    await harness.sim.admin.setFaults({ hang: { pathPattern: '/v1/load-balancers', methods: ['GET'], count: 1, forMs: 4000 } });
    const orphan = await createLoadBalancerService(namespace, 'after-loss');
    await testConnection().coordination.patchNamespacedLease({
      namespace: 'kube-system',
      name: RUN_LEASE.name,
      body: [
        { op: 'replace', path: '/spec/holderIdentity', value: 'intruder' },
        { op: 'replace', path: '/spec/renewTime', value: new V1MicroTime(Date.now()) },
      ],
    });
    // Ends long before its 300 s: the test's timeout (120 s) would fail otherwise.
    await run.done;
    const { error } = run.settled()!;
    expect(error).toBeInstanceOf(PartialFailureError);
    const report = (error as PartialFailureError).result as RunReport;
    expect(report.failures).toContainEqual({ object: 'lease', message: expect.stringMatching(/taken over.*; the watch stopped$/) });
    const service = await testConnection().core.readNamespacedService({ namespace, name: 'after-loss' });
    expect(service.metadata?.finalizers ?? []).toEqual([]);
    expect(service.status?.loadBalancer?.ingress ?? []).toEqual([]);
    expect((await harness.cloud.loadBalancers.list()).map((lb) => lb.name)).not.toContain(`k8s-service-${orphan.metadata!.uid}`);
  });

  test('a watch the API server broke is re-established, and a Node created while it was away is initialised', async () => {
    const proxy = await startProxy();
    const abort = new AbortController();
    const ctx = proxiedContext(harness.context({ abort: abort.signal }), proxy.kubeconfig);
    try {
      const run = startRun({ ...options, watchForMs: 100_000 }, ctx);
      await passDone(ctx);
      proxy.down();
      await waitUntil('the watch noticed', () => /watch: watch of (nodes|services) broke/.test(ctx.err()));
      await createNode(`${prefix}-3`, { ready: true, taints: [UNINITIALIZED_TAINT] });
      await proxy.up();
      await waitUntil('the Node created while the API server was away initialised', async () => !(await tainted(`${prefix}-3`))).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\nthe run: ${String(run.settled()?.error)}\nstderr:\n${ctx.err()}`);
      });
      expect(run.settled()).toBeUndefined();
      // Either watch re-established starts the node pass: the Node may be initialised on the
      // services watch's return, before the nodes watch's own retry has come round.
      await waitUntil('the watch of nodes re-established', () => /watch: watch of nodes re-established after: /.test(ctx.err()));
      expect(run.settled()).toBeUndefined();
      // The reaction pass (the node pass, then every load balancer) prints its line when done.
      await waitUntil('the reaction pass done', () => new RegExp(`^watch: .*node/${prefix}-3`, 'm').test(ctx.out()));
      abort.abort(new Error('interrupted by SIGTERM'));
      await run.done;
      expect(run.settled()?.error, ctx.err()).toBeUndefined();
      expect(run.settled()?.report?.failures).toEqual([]);
      expect(run.settled()?.report?.watch?.reestablished).toBeGreaterThanOrEqual(2);
    } finally {
      await proxy.stop();
    }
  });

  test('an API server that stays away ends the run with an error naming the broken watch, never silently', async () => {
    const proxy = await startProxy();
    const ctx = proxiedContext(harness.context(), proxy.kubeconfig);
    try {
      const run = startRun({ ...options, watchForMs: 15_000 }, ctx);
      await passDone(ctx);
      proxy.down();
      await run.done;
      const { error } = run.settled()!;
      expect(error).toBeInstanceOf(WatchBrokenError);
      expect((error as Error).message).toMatch(/^the watch of (nodes|services) broke and could not be re-established before the watch was to end: /);
    } finally {
      await proxy.stop();
    }
  });

  test('a reaction pass the API fails is run again with backoff, without a new change, until the Service is served; the run ends in success', async () => {
    const abort = new AbortController();
    const ctx = harness.context({ abort: abort.signal });
    const run = startRun({ ...options, watchForMs: 100_000 }, ctx);
    await passDone(ctx);
    // A new Service's pool create is answered 500 by its first three passes; the load balancer
    // itself is created by the first one.
    await harness.sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/pools', methods: ['POST'], status: 500, count: 3 } });
    await createLoadBalancerService(namespace, 'retried');
    const lines = () => ctx.out().split('\n').filter((line) => line.startsWith(`watch: service/${namespace}/retried:`));
    await waitUntil('the first reaction pass failed', () => lines().length >= 1);
    // The record says so while the run watches on.
    expect((await readStatus(testConnection())).records.run?.result).toBe('partial');
    await waitUntil('the Service served by a retry', async () => (await ingressOf('retried')) !== undefined, 90_000);
    expect(run.settled()).toBeUndefined();
    await waitUntil('the last pass reported', () => lines().some((line) => / 0 failures /.test(line)));
    // The failed passes name what they wrote (the load balancer created, pool creates refused).
    expect(lines()[0]).toMatch(/^watch: service\/[^ ]+: 1 load balancer created, [1-9]\d* writes?, 1 failure after [1-9]\d* steps? \(/);
    expect(ctx.err()).toMatch(new RegExp(`^watch: retrying service/${namespace}/retried in 2 s after: .*500`, 'm'));
    expect(ctx.err()).toMatch(new RegExp(`^watch: retrying service/${namespace}/retried in 4 s after: `, 'm'));
    const record = (await readStatus(testConnection())).records.run;
    expect(record?.result).toBe('succeeded');
    expect(record?.failing.items).toEqual([]);

    abort.abort(new Error('interrupted by SIGTERM'));
    await run.done;
    const { report, error } = run.settled()!;
    expect(error, ctx.err()).toBeUndefined();
    expect(report?.failures).toEqual([]);
    expect(report?.watch?.retried).toBeGreaterThanOrEqual(3);
    const uid = (await testConnection().core.readNamespacedService({ namespace, name: 'retried' })).metadata!.uid;
    const [lb] = (await harness.cloud.loadBalancers.list()).filter((l) => l.name === `k8s-service-${uid}`);
    expect((await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb!.uuid)).toHaveLength(1);
  });

  test('a pool swap in a reaction pass whose listener create fails once completes within that pass: no failure, no retry, the port keeps its listener', async () => {
    await createLoadBalancerService(namespace, 'swapped');
    const abort = new AbortController();
    const ctx = harness.context({ abort: abort.signal });
    const run = startRun({ ...options, watchForMs: 100_000 }, ctx);
    await passDone(ctx);
    await waitUntil('the Service has its ingress', async () => (await ingressOf('swapped')) !== undefined);
    const uid = (await testConnection().core.readNamespacedService({ namespace, name: 'swapped' })).metadata!.uid;
    const lbUuid = (await harness.cloud.loadBalancers.list()).find((l) => l.name === `k8s-service-${uid}`)!.uuid;
    const poolsOf = async () => (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lbUuid);
    const [before] = await poolsOf();
    // The listener create that follows the old listener's delete is answered 500 once.
    await harness.sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/listeners', methods: ['POST'], status: 500, count: 1 } });
    await testConnection().core.patchNamespacedService(
      { namespace, name: 'swapped', body: { metadata: { annotations: { 'k8s.cloudscale.ch/loadbalancer-pool-algorithm': 'least_connections' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const lines = () => ctx.out().split('\n').filter((line) => line.startsWith(`watch: service/${namespace}/swapped:`));
    await waitUntil('the reaction pass reported', () => lines().length >= 1, 60_000);
    const listenerCreates = harness.sim.admin.requests().filter((r) => r.method === 'POST' && r.route === '/v1/load-balancers/listeners');
    expect(listenerCreates.map((r) => r.status)).toContain(500);
    expect(lines()[0]).toMatch(/ 0 failures /);
    expect(ctx.err()).not.toMatch(new RegExp(`watch: retrying service/${namespace}/swapped`));
    const after = await poolsOf();
    expect(after.map((p) => p.uuid)).not.toContain(before!.uuid);
    const listeners = (await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === lbUuid);
    expect(listeners.map((l) => [l.pool?.uuid, l.protocol_port])).toEqual([[after[0]!.uuid, 80]]);
    abort.abort(new Error('interrupted by SIGTERM'));
    await run.done;
    expect(run.settled()!.error, ctx.err()).toBeUndefined();
  });

  test('a reaction pass that fails to the end: retried until the deadline, no retry after it, and the run fails naming the Service', async () => {
    const ctx = harness.context();
    const run = startRun({ ...options, watchForMs: 20_000 }, ctx);
    await passDone(ctx);
    await harness.sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/pools', methods: ['POST'], status: 500 } });
    await createLoadBalancerService(namespace, 'never');
    await run.done;
    const { error } = run.settled()!;
    expect(error, ctx.err()).toBeInstanceOf(PartialFailureError);
    expect((error as PartialFailureError).failures.map((f) => f.object)).toEqual([`service/${namespace}/never`]);
    const report = (error as PartialFailureError).result as RunReport;
    expect(report.watch?.retried).toBeGreaterThanOrEqual(1);
    expect(ctx.err()).toMatch(new RegExp(`^watch: not retrying service/${namespace}/never: the watch ends before its next try`, 'm'));
    expect((await readStatus(testConnection())).records.run?.result).toBe('partial');
  });

  test('SIGTERM while watching: the process ends cleanly with exit 0, its summary printed and the Lease released', async () => {
    const binary = startBinary(
      ['run', '--force', '--cluster-id', harness.clusterId, '--watch-for', '100s', '--settle-seconds', '0', '--poll-seconds', '0.05'],
      { apiUrl: harness.sim.url },
    );
    started.push(binary);
    await waitUntil('the full pass', () => /^watch: watching Nodes and Services/m.test(binary.stderr()), 60_000);
    binary.child.kill('SIGTERM');
    const exit = await binary.exited;
    expect(exit, `stdout:\n${binary.stdout()}\nstderr:\n${binary.stderr()}`).toEqual({ code: 0, signal: null });
    expect(binary.stdout()).toMatch(/^run: nodes .* 0 failures; .*; then 0 reaction passes while watching$/m);
    const lease = await testConnection().coordination.readNamespacedLease({ namespace: 'kube-system', name: RUN_LEASE.name });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
  });
});

test('a reaction pass for a Service deleted since the watch reported it is no failure (a typed name still is)', async () => {
  const syncOptions = { ...FAST_PASS, namespace, concurrency: 1, dryRun: false };
  const report = await syncLbCommand(['service/gone-meanwhile'], { ...syncOptions, goneIsFine: true }, harness.context());
  expect(report.services).toEqual([]);
  const typo = await syncLbCommand(['service/gone-meanwhile'], syncOptions, harness.context()).catch((e: unknown) => e);
  expect(typo).toBeInstanceOf(PartialFailureError);
  expect((typo as PartialFailureError).failures.map((f) => f.error.message)).toEqual([`service ${namespace}/gone-meanwhile not found`]);
});

describe('the watch adapter', () => {
  test('a watch from a fresh list reports a change and ends closed at its timeout', async () => {
    const listed = await listForWatch(testConnection(), 'services');
    const seen: string[] = [];
    const ended = new Promise<WatchEnd>((resolve) => {
      void startWatch(testConnection(), 'services', listed.resourceVersion, 2, {
        onChange: (type, object) => seen.push(`${type} ${object.metadata?.name}`),
        onEnd: resolve,
      });
    });
    await createLoadBalancerService(namespace, 'watched');
    expect((await ended).how).toBe('closed');
    expect(seen).toContain('ADDED watched');
  });
});

/**
 * A TCP proxy in front of the test API server, with a kubeconfig pointing at it: `down` cuts
 * every connection and refuses new ones (what a restarting API server looks like), `up` serves
 * again on the same port.
 */
async function startProxy() {
  const config = new KubeConfig();
  config.loadFromFile(testKubeconfig());
  const target = new URL(config.getCurrentCluster()!.server);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = (port: number) =>
    new Promise<number>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve((server!.address() as { port: number }).port));
    });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (server === undefined) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  const port = await listen(0);
  const dir = mkdtempSync(join(tmpdir(), 'run-watch-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const cluster = config.getCurrentCluster()!;
  config.clusters = config.clusters.map((c) => (c.name === cluster.name ? { ...c, server: `https://127.0.0.1:${port}` } : c));
  writeFileSync(kubeconfig, config.exportConfig());
  return {
    kubeconfig,
    down: () => void close(),
    up: async () => void (await listen(port)),
    stop: async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The harness context, talking to the API server through the proxy's kubeconfig. */
function proxiedContext(ctx: TestContext, kubeconfig: string): TestContext {
  const conn = { ...connectKube({ kubeconfig }), fence: ctx.writeFence };
  return { ...ctx, kube: () => conn };
}
