// @kube-versions: all — a sandbox of that version, its kubelet included: after a run, sync-lb and plan find nothing to do (ipMode)
// @test-tools: node
// One full pass of the commands through the built CLI in the README's sandbox
// (helpers/run-in-test-cluster: a control plane of its own with a real kubelet, the simulator,
// the example Service, and the CronJob's first Job on that kubelet). Then, with the CronJob
// suspended (its Jobs would hold the Lease for 50 s of every minute), init-nodes, sync-lb and
// plan must find nothing to do: a status the API server stores differently from what the tool
// wrote (for instance without ipMode) would show up here as a change on every pass. cleanup --all
// deletes the load balancer and run creates it again.
//
// TEST_CLUSTER_KUBE (e.g. v1.30) picks the Kubernetes of the sandbox's control plane:
// test/run-tests.sh runs this file against every supported version.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, VersionApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, type BinaryResult } from '../support/ccm.js';
import { waitUntil } from '../support/kube.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const parent = mkdtempSync(join(tmpdir(), 'ccm-sandbox-pass-'));
const sandbox = join(parent, 'k8test');
const requestedKube = process.env.TEST_CLUSTER_KUBE ?? '';

function sandboxHelper(name: 'run-in-test-cluster' | 'cleanup'): Promise<BinaryResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(repo, 'helpers', name)], {
      cwd: repo,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CCM_SANDBOX_DIR: sandbox, TEST_CLUSTER_KUBE: requestedKube, CCM_SANDBOX_NO_BUILD: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The variables of the sandbox's env file (`export NAME=value` lines). */
function sandboxEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const match of readFileSync(join(sandbox, 'env'), 'utf8').matchAll(/^export ([A-Z_]+)=(.*)$/gm)) {
    env[match[1]!] = match[2]!;
  }
  return env;
}

/** The CLI against the sandbox, with the settings of helpers/run-in-test-cluster's own run. */
async function cli(...args: string[]): Promise<BinaryResult> {
  const result = await runBinary(args, { env: sandboxEnv(), timeoutMs: 120_000 });
  console.log(`$ cloudscale-ccm ${args.join(' ')}  # exit ${result.code}\n${result.stdout}${result.stderr}`);
  return result;
}

const fast = ['--settle-seconds', '0', '--poll-seconds', '0.5'];

/** The CronJob suspended and its running Jobs ended (deleted: SIGTERM, the Lease released). */
async function suspendCronJob(): Promise<void> {
  const config = new KubeConfig();
  config.loadFromFile(sandboxEnv().KUBECONFIG!);
  const batch = config.makeApiClient(BatchV1Api);
  await batch.patchNamespacedCronJob(
    { namespace: 'kube-system', name: 'cloudscale-ccm', body: { spec: { suspend: true } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  for (const job of (await batch.listNamespacedJob({ namespace: 'kube-system' })).items) {
    if ((job.status?.active ?? 0) > 0) await batch.deleteNamespacedJob({ namespace: 'kube-system', name: job.metadata!.name!, propagationPolicy: 'Foreground' });
  }
  const core = config.makeApiClient(CoreV1Api);
  await waitUntil('the running Jobs of the CronJob ended', async () => (await core.listNamespacedPod({ namespace: 'kube-system', fieldSelector: 'status.phase=Running' })).items.length === 0, 120_000);
}

/** The sandbox runs a kubelet: where this machine cannot, helpers/test-cluster check-node says why. */
const nodeCheck = spawnSync('bash', [join(repo, 'helpers', 'test-cluster'), 'check-node'], { encoding: 'utf8' });
const unsupported = nodeCheck.status === 0 ? undefined : nodeCheck.stdout.trim();
if (unsupported !== undefined) console.warn(`${import.meta.url.split('/').pop()} is skipped: ${unsupported}`);

describe.skipIf(unsupported !== undefined)(`the sandbox, one pass of every command${requestedKube === '' ? '' : ` (Kubernetes ${requestedKube})`}`, () => {
  beforeAll(async () => {
    const setup = await sandboxHelper('run-in-test-cluster');
    expect(setup.code, setup.stdout + setup.stderr).toBe(0);
    expect(setup.stdout + setup.stderr).toMatch(/run: nodes 3 initialized, 0 refreshed, 0 deleted; load balancers 1 created/);
    await suspendCronJob();
  }, 360_000);

  afterAll(async () => {
    if (existsSync(sandbox)) await sandboxHelper('cleanup');
    rmSync(parent, { recursive: true, force: true });
  });

  test('the control plane is the requested Kubernetes', async () => {
    const config = new KubeConfig();
    config.loadFromFile(sandboxEnv().KUBECONFIG!);
    const version = await config.makeApiClient(VersionApi).getCode();
    console.log(`sandbox kube-apiserver ${version.gitVersion}`);
    const expectedMinor = /^v1\.(\d+)$/.exec(requestedKube)?.[1];
    if (expectedMinor !== undefined) expect(version.minor).toBe(expectedMinor);
    expect(version.major).toBe('1');
  });

  test('init-nodes, sync-lb and plan find nothing to do after the first run', async () => {
    const initNodes = await cli('init-nodes');
    expect(initNodes.code, initNodes.stderr).toBe(0);
    expect(initNodes.stdout.trim().split('\n')).toEqual(['node/node-1 in sync', 'node/node-2 in sync', 'node/node-3 in sync']);

    const syncLb = await cli('sync-lb', ...fast);
    expect(syncLb.code, syncLb.stderr).toBe(0);
    expect(syncLb.stdout + syncLb.stderr).toMatch(/0 changed, 1 in sync, 0 failed; \d+ API requests \(0 writes\)/);

    const plan = await cli('plan', '--detailed-exitcode');
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  });

  test('cleanup --all deletes the load balancer and run creates it again', async () => {
    const cleanup = await cli('cleanup', '--all', '--yes');
    expect(cleanup.code, cleanup.stderr).toBe(0);
    const env = sandboxEnv();
    const listLoadBalancers = async () =>
      (await (await fetch(`${env.CLOUDSCALE_API_URL}/v1/load-balancers`, { headers: { Authorization: `Bearer ${env.CLOUDSCALE_API_TOKEN}` } })).json()) as unknown[];
    expect(await listLoadBalancers()).toEqual([]);

    const run = await cli('run', ...fast);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/nodes 0 initialized, 0 refreshed, 0 deleted; load balancers 1 created, 0 updated, 0 deleted; 0 failures/);
    expect(await listLoadBalancers()).toHaveLength(1);

    const config = new KubeConfig();
    config.loadFromFile(env.KUBECONFIG!);
    const service = await config.makeApiClient(CoreV1Api).readNamespacedService({ namespace: 'default', name: 'hello' });
    expect(service.status?.loadBalancer?.ingress?.length).toBeGreaterThan(0);
  });
});
