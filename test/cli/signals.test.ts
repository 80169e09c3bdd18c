// Signals: `sim` runs until it is told to stop and then exits 0 (a demo or a CI job stops it
// with SIGTERM or Ctrl-C); its first stdout line is CLOUDSCALE_API_URL=…, so a script can read
// the address before anything else. A pass (sync-lb) stops between steps on SIGTERM, says what
// it did and exits 1; the next pass finishes the work. It never stops inside a step pair: after
// a pool swap's listener delete, the listener is re-created before the process exits, in a
// plain pass and in a reaction pass of `run --watch-for`; a member rotation stopped after any
// of its steps leaves the port served without a gap (the binary announces each step boundary
// with CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS, and the test signals at one). A second signal inside
// the pair exits 130 without finishing it, but releases the Lease, so the next pass starts at
// once and puts the listener back.
import type { V1Service } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, type Harness } from '../support/ccm.js';
import { createLoadBalancerService, createNode, deleteCreatedObjects, ensureNamespace, testConnection, uniqueName } from '../support/kube.js';
import { TEST_PASS, annotate, expectConverged, key, lbsNamed, passOk, patchService, readService, useLbWorld } from '../support/lb-scenarios.js';
import { RUN_LEASE } from '../../src/commands/writer.js';
import { killStarted, startBinary, type RunningBinary } from './cli-support.js';

/** A hang guard, not a speed assertion: a process that ignores its signal fails here, not at the test timeout. */
const exitGuardMs = 20_000;

const started: RunningBinary[] = [];
afterEach(() => killStarted(started));

function startSim(args: readonly string[] = []): RunningBinary {
  const sim = startBinary(['sim', ...args]);
  started.push(sim);
  return sim;
}

async function exitOf(running: RunningBinary, guardMs = exitGuardMs): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${guardMs} ms after the signal`)), guardMs);
  });
  try {
    return await Promise.race([running.exited, guard]);
  } finally {
    clearTimeout(timer);
  }
}

describe('sim and signals', () => {
  test.each(['SIGTERM', 'SIGINT'] as const)('%s: exit 0 after CLOUDSCALE_API_URL= as the first line; the port is closed', async (signal) => {
    const sim = startSim(['--seed', 'examples/sim-seed.yaml']);
    const first = await sim.firstLine();
    expect(first).toMatch(/^CLOUDSCALE_API_URL=http:\/\/127\.0\.0\.1:\d+$/);
    const url = first.slice('CLOUDSCALE_API_URL='.length);
    // It serves before the signal, so the signal ends a running server, not a starting one.
    const servers = await fetch(`${url}/v1/servers`, { headers: { Authorization: 'Bearer any' } });
    expect(servers.status).toBe(200);

    sim.child.kill(signal);
    const exit = await exitOf(sim);
    expect(exit, `stderr:\n${sim.stderr()}`).toEqual({ code: 0, signal: null });
    expect(sim.stdout().startsWith('CLOUDSCALE_API_URL=')).toBe(true);
    expect(sim.stderr()).not.toMatch(/^error:/m);
    await expect(fetch(`${url}/v1/servers`)).rejects.toThrow();
  });

  test('a bad seed: exit 1 with an error naming the file, and no URL printed', async () => {
    const sim = startSim(['--seed', 'examples/does-not-exist.yaml']);
    const exit = await exitOf(sim);
    expect(exit.code).toBe(1);
    expect(sim.stdout()).toBe('');
    expect(sim.stderr()).toMatch(/^error: .*examples\/does-not-exist\.yaml/m);
    expect(sim.stderr()).toMatch(/^hint: /m);
  });
});

describe('sync-lb and SIGTERM', () => {
  const prefix = uniqueName('sig');
  const namespace = uniqueName('sig');
  let harness: Harness;

  beforeAll(async () => {
    // New load balancers stay "changing" long enough for the signal to arrive while the pass waits.
    harness = await startHarness({
      lbProvisionMs: 3000,
      seed: `
servers:
  - name: ${prefix}-1
    flavor: flex-4-2
    zone: rma1
    interfaces: [{type: public, addresses: [5.102.151.1]}]
`,
    });
    await ensureNamespace(namespace);
    await createNode(`${prefix}-1`, { ready: true });
    await createLoadBalancerService(namespace, 'web');
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await harness.stop();
  });

  test('stops while waiting for a load balancer: exit 1, says what it did and what was interrupted; the next pass converges', async () => {
    const args = ['sync-lb', '--settle-seconds', '0', '--poll-seconds', '0.05', '-n', namespace, 'service/web'];
    const pass = startBinary(args, { apiUrl: harness.sim.url });
    started.push(pass);
    while (!pass.stdout().includes('waiting for')) {
      if (pass.child.exitCode !== null) throw new Error(`the pass ended before waiting:\n${pass.stdout()}\n${pass.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    pass.child.kill('SIGTERM');
    const exit = await exitOf(pass);
    expect(exit, `stdout:\n${pass.stdout()}\nstderr:\n${pass.stderr()}`).toEqual({ code: 1, signal: null });
    expect(pass.stdout()).toMatch(/create-lb/);
    expect(pass.stderr()).toMatch(/^error: /m);
    expect(pass.stderr()).toContain(`${namespace}/web`);
    expect(pass.stderr()).toContain('interrupted by SIGTERM');

    const next = await runBinary(args, { apiUrl: harness.sim.url });
    expect(next.code, `${next.stdout}\n${next.stderr}`).toBe(0);
    expect(await harness.cloud.loadBalancers.list()).toHaveLength(1);
    expect((await harness.cloud.listeners.list()).map((l) => l.name)).toEqual(['tcp/80']);
  });
});

/** Resolves once `running` wrote `text` to stderr; fails if it exits first (its output in the message). */
async function untilStderr(running: RunningBinary, matches: (stderr: string) => boolean): Promise<void> {
  while (!matches(running.stderr())) {
    if (running.child.exitCode !== null) throw new Error(`it exited first:\n${running.stdout()}\n${running.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The step boundaries the binary announced (CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS), in order. */
function boundaries(stderr: string): string[] {
  return [...stderr.matchAll(/^step-boundary: after (\S+)/gm)].map((m) => m[1]!);
}

/**
 * The ports of a Service's load balancer that serve: a listener whose pool has an enabled member.
 * Read pool by pool: midway through a swap two pools share a name.
 */
async function servingPorts(harness: Harness, service: V1Service): Promise<string[]> {
  const { cloud } = harness;
  const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
  const pools = (await cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb!.uuid);
  const listeners = await cloud.listeners.list();
  const ports: string[] = [];
  for (const pool of pools) {
    if (!(await cloud.poolMembers.list(pool.uuid)).some((m) => m.enabled)) continue;
    ports.push(...listeners.filter((l) => l.pool?.uuid === pool.uuid).map((l) => `${l.protocol}/${l.protocol_port}`));
  }
  return ports.sort();
}

describe('SIGTERM never strands a port: a pass finishes the step pair it is in', () => {
  const namespace = uniqueName('sigpair');
  const { harness } = useLbWorld({ prefix: uniqueName('sigpair'), namespace });
  const pass = { ...TEST_PASS, namespace };

  /** A converged Service whose next pass is a pool swap (the algorithm changed). */
  async function aboutToSwap(name: string): Promise<V1Service> {
    await createLoadBalancerService(namespace, name);
    await passOk(harness, [name], pass);
    await annotate(namespace, name, { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    return readService(namespace, name);
  }

  const passFlags = ['--settle-seconds', '0', '--poll-seconds', '0.05', '--drain-seconds', '0'];

  function startPass(args: readonly string[], stepPauseMs = 250): RunningBinary {
    const running = startBinary(
      ['--cluster-id', harness.clusterId, ...args, ...passFlags, '--wait'],
      { apiUrl: harness.sim.url, env: { CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS: String(stepPauseMs) } },
    );
    started.push(running);
    return running;
  }

  /** A converged Service whose next pass rotates its members onto node port `nodePort`. */
  async function aboutToRotate(name: string, nodePort: number): Promise<V1Service> {
    await createLoadBalancerService(namespace, name);
    await passOk(harness, [name], pass);
    return patchService(namespace, name, { spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort }] } });
  }

  /**
   * Each strategy: the change that makes a converged Service's next pass take it (`prepare`,
   * given a name and the case's number), its steps as the binary announces them, and whether it
   * promises no interruption (the data plane must then see none, stopped or not).
   */
  const STRATEGY_CASES = [
    {
      strategy: 'pool swap',
      slug: 'swap',
      prepare: (name: string) => aboutToSwap(name),
      steps: ['create-pool', 'create-member', 'create-member', 'create-monitor', 'await-members', 'delete-listener', 'create-listener', 'delete-monitor', 'delete-member', 'delete-member', 'delete-pool'],
      noInterruption: false,
    },
    {
      // The new members first, then the old ones go once the new are up.
      strategy: 'member rotation (node-port change)',
      slug: 'rotate',
      prepare: (name: string, index: number) => aboutToRotate(name, 32100 + index),
      steps: ['create-member', 'create-member', 'await-members', 'delete-member', 'delete-member'],
      noInterruption: true,
    },
  ];

  describe.each(STRATEGY_CASES)('$strategy', ({ slug, prepare, steps, noInterruption }) => {
    test('announces its steps in this order (the boundaries below)', async () => {
      const service = await prepare(`${slug}-steps`, 0);
      const run = startPass(['sync-lb', '-n', namespace, `service/${service.metadata!.name!}`]);
      const exit = await exitOf(run, 60_000);
      expect(exit.code, run.stderr()).toBe(0);
      expect(boundaries(run.stderr())).toEqual(steps);
    });

    // SIGTERM arrives after each step but the last.
    test.each(steps.slice(0, -1).map((step, index) => [index + 1, step] as const))(
      'SIGTERM after step %i (%s): the port serves when the process has exited 1; the next pass converges',
      async (after) => {
        const service = await prepare(`${slug}-${after}`, after);
        const since = Date.now();
        const run = startPass(['sync-lb', '-n', namespace, `service/${service.metadata!.name!}`]);
        await untilStderr(run, (stderr) => boundaries(stderr).length >= after);
        run.child.kill('SIGTERM');
        const exit = await exitOf(run);
        expect(exit, `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`).toEqual({ code: 1, signal: null });
        expect(run.stderr()).toContain('interrupted by SIGTERM');
        if (steps[after - 1] === 'delete-listener') {
          expect(run.stderr()).toMatch(/^stopping: SIGTERM: the listener or member being re-created is put back first/m);
          expect(boundaries(run.stderr())).toContain('create-listener');
        }
        expect(await servingPorts(harness, service)).toEqual(['tcp/80']);
        await passOk(harness, [service.metadata!.name!], pass);
        await expectConverged(harness, [service.metadata!.name!], pass);
        if (noInterruption) {
          const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
          const port80 = harness.sim.admin.serving(lb!.uuid, { since }).ports.find((p) => p.port === 80)!;
          expect(port80.longestOutageMs, JSON.stringify(port80.intervals)).toBe(0);
        }
      },
    );
  });

  test('run --watch-for: SIGTERM between the listener delete and create of a reaction pass; the port serves at exit', async () => {
    await createLoadBalancerService(namespace, 'watched');
    await passOk(harness, ['watched'], pass);
    const run = startPass(['run', '--force', '--watch-for', '120s']);
    await untilStderr(run, (stderr) => stderr.includes('watch: watching'));
    await annotate(namespace, 'watched', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    await untilStderr(run, (stderr) => boundaries(stderr).includes('delete-listener'));
    run.child.kill('SIGTERM');
    const exit = await exitOf(run);
    expect(exit.code, `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`).toBe(1);
    expect(boundaries(run.stderr()).slice(-2)).toEqual(['delete-listener', 'create-listener']);
    expect(await servingPorts(harness, await readService(namespace, 'watched'))).toEqual(['tcp/80']);
    await passOk(harness, ['watched'], pass);
    await expectConverged(harness, ['watched'], pass);
  });
  test('a second SIGTERM inside the pair: exit 130 at once with the pair half done, the Lease released; the next pass starts at once and the port serves again', async () => {
    const service = await aboutToSwap('twice');
    const name = service.metadata!.name!;
    // A long pause after each step: both signals arrive before the listener's re-creation.
    const run = startPass(['sync-lb', '-n', namespace, `service/${name}`], 1500);
    await untilStderr(run, (stderr) => boundaries(stderr).includes('delete-listener'));
    run.child.kill('SIGTERM');
    await untilStderr(run, (stderr) => /^stopping: SIGTERM: /m.test(stderr));
    run.child.kill('SIGTERM');
    const exit = await exitOf(run, 10_000);
    expect(exit, `stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`).toEqual({ code: 130, signal: null });
    const lease = await testConnection().coordination.readNamespacedLease({ ...RUN_LEASE });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
    expect(run.stderr()).toMatch(/^stopping now: SIGTERM again: the Lease is released, then the process exits/m);
    expect(run.stderr()).not.toMatch(/^warning: could not release/m);
    // The pair is half done: the old listener is gone, its successor not yet created.
    expect(boundaries(run.stderr()).at(-1)).toBe('delete-listener');
    expect(await servingPorts(harness, service)).toEqual([]);

    // Without --wait: a Lease still held would refuse this pass (exit 1), not make it wait.
    const next = await runBinary(['--cluster-id', harness.clusterId, 'sync-lb', '-n', namespace, `service/${name}`, ...passFlags], { apiUrl: harness.sim.url });
    expect(next.code, `${next.stdout}\n${next.stderr}`).toBe(0);
    expect(next.stderr).not.toMatch(/^waiting: /m);
    expect(await servingPorts(harness, await readService(namespace, name))).toEqual(['tcp/80']);
    await expectConverged(harness, [name], pass);
  });
});
