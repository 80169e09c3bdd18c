// The README's first command: helpers/run-in-test-cluster sets up the sandbox and runs the tool;
// a second call reuses it; helpers/cleanup stops what it started and removes it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const parent = mkdtempSync(join(tmpdir(), 'ccm-sandbox-test-'));
const dir = join(parent, 'k8test');

function helper(name: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(repo, 'helpers', name)], {
      cwd: repo,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CCM_SANDBOX_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const alive = (pidFile: string) => {
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
};

describe('helpers/run-in-test-cluster and helpers/cleanup', () => {
  afterAll(async () => {
    if (existsSync(dir)) await helper('cleanup');
    rmSync(parent, { recursive: true, force: true });
  });

  it('sets up the sandbox, runs the tool, reuses it on a second call, and cleans up', async () => {
    const first = await helper('run-in-test-cluster');
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(/node\/node-1 initialized: providerID cloudscale:\/\/[0-9a-f-]{36}, zone rma1, 4 addresses/);
    expect(first.output).toMatch(/run: nodes 3 initialized, 0 refreshed, 0 deleted; load balancers 1 created/);
    const env = readFileSync(join(dir, 'env'), 'utf8');
    const kubeconfig = /^export KUBECONFIG=(.*\/cluster\/kubeconfig)$/m.exec(env)?.[1];
    expect(kubeconfig, env).toBeDefined();
    // Every kubeconfig the output names is the one `source k8test/env` exports.
    const named = [...first.output.matchAll(/KUBECONFIG=(\S+)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([kubeconfig]));
    expect(env).toMatch(/^export CLOUDSCALE_API_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(env).toMatch(/^export CLOUDSCALE_API_TOKEN=sandbox-[0-9a-f]{16}$/m);
    const simPid = readFileSync(join(dir, 'sim.pid'), 'utf8');

    const second = await helper('run-in-test-cluster');
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain('reusing the control plane');
    expect(second.output).toContain('reusing the simulator');
    expect(second.output).toMatch(/run: nodes 0 initialized, 0 refreshed, 0 deleted; load balancers 0 created, 0 updated, 0 deleted; 0 failures/);
    expect(readFileSync(join(dir, 'sim.pid'), 'utf8')).toBe(simPid);

    const pidFiles = [join(dir, 'sim.pid'), join(dir, 'cluster', 'apiserver.pid'), join(dir, 'cluster', 'etcd.pid')];
    const pids = pidFiles.map((f) => readFileSync(f, 'utf8'));
    const cleanup = await helper('cleanup');
    expect(cleanup.code, cleanup.output).toBe(0);
    expect(existsSync(dir)).toBe(false);
    for (const pid of pids) expect(() => process.kill(Number(pid), 0)).toThrow();
    expect(pidFiles.some(alive)).toBe(false);
  });
});
