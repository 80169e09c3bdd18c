// @test-tools: node
// The README's first command: helpers/run-in-test-cluster sets up the sandbox (a control plane with
// a real kubelet on containerd) and runs the CronJob's Job on that kubelet; a second call reuses
// it and runs another Job; helpers/cleanup stops every process it started (by their pid files),
// unmounts what the kubelet mounted and removes it.
import { spawn, spawnSync } from 'node:child_process';
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
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CCM_SANDBOX_DIR: dir, CCM_SANDBOX_NO_BUILD: '1' },
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

/** The sandbox runs a kubelet: where this machine cannot, helpers/test-cluster check-node says why. */
const nodeCheck = spawnSync('bash', [join(repo, 'helpers', 'test-cluster'), 'check-node'], { encoding: 'utf8' });
const unsupported = nodeCheck.status === 0 ? undefined : nodeCheck.stdout.trim();
if (unsupported !== undefined) console.warn(`${import.meta.url.split('/').pop()} is skipped: ${unsupported}`);

describe.skipIf(unsupported !== undefined)('helpers/run-in-test-cluster and helpers/cleanup', () => {
  afterAll(async () => {
    if (existsSync(dir)) await helper('cleanup');
    rmSync(parent, { recursive: true, force: true });
  });

  it('sets up the sandbox, runs the tool, reuses it on a second call, and cleans up', { timeout: 420_000 }, async () => {
    const first = await helper('run-in-test-cluster');
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(/node\/node-1 initialized: providerID cloudscale:\/\/[0-9a-f-]{36}, zone rma1, 4 addresses/);
    expect(first.output).toMatch(/run: nodes 3 initialized, 0 refreshed, 0 deleted; load balancers 1 created/);
    // The pass ran in the CronJob's Pod on the kubelet's own Node, and the Job completed.
    expect(first.output).toMatch(/^pod cloudscale-ccm-sandbox-\d+-\w+ on node-1: Running$/m);
    expect(first.output).toMatch(/^---- kubectl -n kube-system logs cloudscale-ccm-sandbox-\d+-\w+ \(Succeeded, exit code 0 \(Completed\)\) ----$/m);
    expect(first.output).toMatch(/^job kube-system\/cloudscale-ccm-sandbox-\d+ complete$/m);
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

    const node = join(dir, 'cluster', 'node');
    const pidFiles = [
      join(dir, 'sim.pid'),
      join(dir, 'cluster', 'apiserver.pid'),
      join(dir, 'cluster', 'etcd.pid'),
      join(dir, 'cluster', 'controller-manager.pid'),
      join(node, 'kubelet.pid'),
      join(node, 'containerd.pid'),
      join(node, 'scheduler.pid'),
    ];
    const pids = pidFiles.map((f) => readFileSync(f, 'utf8'));
    const cleanup = await helper('cleanup');
    expect(cleanup.code, cleanup.output).toBe(0);
    expect(existsSync(dir)).toBe(false);
    for (const pid of pids) expect(() => process.kill(Number(pid), 0)).toThrow();
    expect(pidFiles.some(alive)).toBe(false);
    // Nothing the kubelet or containerd mounted is left, nor a shim of that containerd.
    expect(readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((line) => line.includes(dir))).toEqual([]);
    expect(spawnSync('pgrep', ['-f', `containerd-shim.*${node}`]).status).toBe(1);
  });
});
