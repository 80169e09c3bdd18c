// `simCommand`: prints CLOUDSCALE_API_URL first, serves the seeded cloud, stops on abort; bad
// seeds and flags are refused before anything listens.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { simCommand } from '../../src/commands/sim.js';
import { ConfigError, UsageError } from '../../src/core/errors.js';
import { requireBuiltBinary } from '../support/lb-scenarios.js';

function capture(): { stream: PassThrough; text: () => string; firstLine: () => Promise<string> } {
  const stream = new PassThrough();
  let text = '';
  const waiters: (() => void)[] = [];
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    stream,
    text: () => text,
    firstLine: async () => {
      while (!text.includes('\n')) await new Promise<void>((resolve) => waiters.push(resolve));
      return text.slice(0, text.indexOf('\n'));
    },
  };
}

describe('simCommand', () => {
  test('serves the seed at the URL of the first stdout line, until the signal aborts', async () => {
    const stdout = capture();
    const stderr = capture();
    const controller = new AbortController();
    const done = simCommand(
      { seed: 'examples/sim-seed.yaml', lbProvisionSeconds: 0, token: 't0ken' },
      { stdout: stdout.stream, stderr: stderr.stream, signal: controller.signal },
    );
    const first = await stdout.firstLine();
    expect(first).toMatch(/^CLOUDSCALE_API_URL=http:\/\/127\.0\.0\.1:\d+$/);
    const url = first.slice('CLOUDSCALE_API_URL='.length);

    const servers = await fetch(`${url}/v1/servers`, { headers: { Authorization: 'Bearer t0ken' } });
    expect(servers.status).toBe(200);
    expect(((await servers.json()) as { name: string }[]).map((s) => s.name)).toEqual(['node-1', 'node-2', 'node-3']);
    expect((await fetch(`${url}/v1/servers`)).status).toBe(401);
    const created = await fetch(`${url}/v1/load-balancers`, {
      method: 'POST',
      headers: { Authorization: 'Bearer t0ken', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'lb', flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] }),
    });
    expect(((await created.json()) as { status: string }).status).toBe('running');

    expect(stdout.text()).toContain('Loaded seed examples/sim-seed.yaml: 3 servers (node-1, node-2, node-3), 1 network with 1 subnet, 2 floating IPs.');
    expect(stdout.text()).toContain(`Admin API: ${url}/_sim/`);

    controller.abort();
    await done;
    await expect(fetch(`${url}/v1/servers`)).rejects.toThrow();
  });

  test('without a seed it serves an empty cloud on the given port', async () => {
    const stdout = capture();
    const controller = new AbortController();
    // Find a free port by asking for one, then reuse it.
    const probe = simCommand({}, { stdout: stdout.stream, stderr: new PassThrough(), signal: controller.signal });
    const url = (await stdout.firstLine()).slice('CLOUDSCALE_API_URL='.length);
    controller.abort();
    await probe;
    const port = Number(new URL(url).port);

    const again = capture();
    const second = new AbortController();
    const run = simCommand({ port }, { stdout: again.stream, stderr: new PassThrough(), signal: second.signal });
    expect(await again.firstLine()).toBe(`CLOUDSCALE_API_URL=http://127.0.0.1:${port}`);
    expect(await (await fetch(`http://127.0.0.1:${port}/v1/servers`)).json()).toEqual([]);
    expect(again.text()).toContain('Loaded no seed: an empty cloud: 0 servers, 0 networks with 0 subnets, 0 floating IPs.');
    second.abort();
    await run;
  });

  test('a bad seed is a ConfigError naming the file; bad flags are UsageErrors', async () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), signal: new AbortController().signal };
    await expect(simCommand({ seed: 'examples/does-not-exist.yaml' }, io)).rejects.toThrow(ConfigError);
    await expect(simCommand({ seed: 'examples/does-not-exist.yaml' }, io)).rejects.toThrow(/^examples\/does-not-exist\.yaml: cannot read the seed file/);
    await expect(simCommand({ port: 70000 }, io)).rejects.toThrow(UsageError);
    await expect(simCommand({ lbProvisionSeconds: -1 }, io)).rejects.toThrow(UsageError);
    await expect(simCommand({ latencyMs: -5 }, io)).rejects.toThrow(/^--latency-ms -5: expected a number of milliseconds/);
    await expect(simCommand({ world: 'real' }, io)).rejects.toThrow('--world real: expected one of strict, forgiving');
    await expect(simCommand({ timeScale: 0 }, io)).rejects.toThrow('--time-scale 0: expected a number from 0.001 to 100');
  });
});

describe('cloudscale-ccm sim (the built binary)', () => {
  test('--latency-ms delays every API request; --pool-delete-keeps-listeners sets that switch; --world and --time-scale', async () => {
    requireBuiltBinary();
    const child = spawn(
      process.execPath,
      [
        'bin/cloudscale-ccm.js',
        'sim',
        '--seed',
        'examples/sim-seed.yaml',
        '--latency-ms',
        '150',
        '--pool-delete-keeps-listeners',
        '--world',
        'strict',
        '--time-scale',
        '0.05',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const first = (await lines.next()).value as string;
      expect(first).toMatch(/^CLOUDSCALE_API_URL=http:\/\/127\.0\.0\.1:\d+$/);
      const url = first.slice('CLOUDSCALE_API_URL='.length);
      const banner: string[] = [];
      for (let line = await lines.next(); !line.done && line.value !== 'Press Ctrl-C to stop.'; line = await lines.next()) banner.push(line.value);
      expect(banner).toContain('Every API request is delayed by 150 ms.');
      expect(banner).toContain('A pool delete leaves its listeners behind (pool: null).');
      expect(banner.find((line) => line.startsWith('World '))).toMatch(/^World strict \(time scale 0\.05: every modelled duration × 0\.05\): the real API: /);
      expect(await (await fetch(`${url}/_sim/world`)).json()).toEqual({ world: 'strict', timeScale: 0.05 });
      expect(((await (await fetch(`${url}/_sim/data-plane`)).json()) as { healthChecks: boolean }).healthChecks).toBe(true);

      expect(await (await fetch(`${url}/_sim/faults`)).json()).toEqual({ latencyMs: 150, remaining: [] });
      expect(await (await fetch(`${url}/_sim/behaviour`)).json()).toEqual({ poolDeleteKeepsListeners: true, onePatchAttribute: false, refuseOverlappingWrites: false });
      expect((await fetch(`${url}/v1/servers`)).status).toBe(200);
      const [logged] = (await (await fetch(`${url}/_sim/requests`)).json()) as { durationMs: number }[];
      expect(logged!.durationMs).toBeGreaterThanOrEqual(150);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'close');
    }
  });
});
