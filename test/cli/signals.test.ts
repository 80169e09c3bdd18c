// Signals: `sim` runs until it is told to stop and then exits 0 (a demo or a CI job stops it
// with SIGTERM or Ctrl-C); its first stdout line is CLOUDSCALE_API_URL=…, so a script can read
// the address before anything else. A pass (sync-lb) stops between steps on SIGTERM, says what
// it did and exits 1; the next pass finishes the work.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, type Harness } from '../support/ccm.js';
import { createLoadBalancerService, createNode, deleteCreatedObjects, ensureNamespace, uniqueName } from '../support/kube.js';
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

async function exitOf(running: RunningBinary): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${exitGuardMs} ms after the signal`)), exitGuardMs);
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
