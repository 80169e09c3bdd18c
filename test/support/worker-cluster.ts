// vitest setupFile of the projects that talk to Kubernetes: the control plane of this test worker.
//
// A worker is one of vitest's pool slots (VITEST_POOL_ID, 1..maxWorkers). Files in one slot run
// one after another, files in different slots at the same time; so each slot gets a kube-apiserver
// + etcd of its own (helpers/test-cluster, in CCM_TEST_CLUSTER_ROOT/worker-N), started before the
// first file of that slot and kept for the next ones. A whole-cluster pass (every Node, every
// Service, the Lease and status ConfigMap in kube-system) thus never sees a file of another
// worker, and files within a worker share a cluster exactly as all files shared one before.
//
// The control plane outlives the worker process (vitest starts one per file): it runs in a
// process group of its own, and test/global-setup.ts stops it at the end of the run.
//
// This file sets, for the test file and every process it spawns:
//   CCM_TEST_KUBECONFIG, CCM_TEST_KUBECONFIG_NOACCESS, CCM_TEST_CLUSTER_DIR
// test/support/kube.ts reads them (testKubeconfig(), testNoAccessKubeconfig(), testClusterDir()).
// With TEST_KUBECONFIG, the global setup has set them already and this file starts nothing.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CCM_LEASE_NAME, CCM_NAMESPACE } from '../../src/core/deploy/manifests.js';
import { ignoreNotFound } from './kube.js';
import { TEST_CLUSTER_ENV } from './worker-cluster-paths.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const helper = join(repo, 'helpers', 'test-cluster');

const root = process.env[TEST_CLUSTER_ENV.root] ?? '';
if (root !== '') {
  const slot = process.env.VITEST_POOL_ID;
  if (slot === undefined || !/^\d+$/.test(slot)) {
    throw new Error(`VITEST_POOL_ID=${slot ?? '(unset)'}: test/support/worker-cluster.ts runs only in a vitest worker`);
  }
  const dir = join(root, `worker-${slot}`);
  if (!running(dir)) {
    // A directory left by a start that did not finish (its worker was stopped) goes first.
    if (existsSync(dir)) await helperCall('stop', dir);
    await helperCall('start', dir);
  }
  process.env[TEST_CLUSTER_ENV.kubeconfig] = join(dir, 'kubeconfig');
  process.env[TEST_CLUSTER_ENV.kubeconfigNoAccess] = join(dir, 'kubeconfig-noaccess');
  process.env[TEST_CLUSTER_ENV.clusterDir] = dir;
  await releaseWritersLease(join(dir, 'kubeconfig'));
}

/**
 * Each file starts without a writers' Lease, as on a fresh cluster: a writer an earlier file of
 * this worker killed (a CronJob pod's `run`, a SIGKILL test) leaves its Lease held, and the next
 * file's writers would wait up to 60 s for it to expire (bad-input-cli waited that long in 15
 * tests). Only a missing Lease (404) is expected here; any other error ends the file's setup.
 */
async function releaseWritersLease(kubeconfig: string): Promise<void> {
  const { CoordinationV1Api, KubeConfig } = await import('@kubernetes/client-node');
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  await ignoreNotFound(config.makeApiClient(CoordinationV1Api).deleteNamespacedLease({ name: CCM_LEASE_NAME, namespace: CCM_NAMESPACE }));
}

/** True when DIR holds a started cluster whose kube-apiserver still runs. */
function running(dir: string): boolean {
  const pidFile = join(dir, 'apiserver.pid');
  if (!existsSync(join(dir, 'kubeconfig')) || !existsSync(pidFile)) return false;
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * helpers/test-cluster COMMAND DIR in a process group of its own (detached), so that the
 * processes it starts survive this worker. Its output is kept for the error.
 */
function helperCall(command: 'start' | 'stop', dir: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [helper, command, dir], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`helpers/test-cluster ${command} ${dir} exited with ${signal ?? code}:\n${stderr}`));
    });
  });
}
