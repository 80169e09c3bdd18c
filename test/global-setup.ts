// vitest globalSetup of the projects that talk to Kubernetes (`integration`, `fault-race`): the
// run's directory of control planes, one per test worker (test/support/worker-cluster.ts starts
// each when its worker's first file begins).
//
// With TEST_KUBECONFIG set, that existing cluster is used as it is (TEST_KUBECONFIG_NOACCESS
// optionally names a kubeconfig of a user without rights), and vitest.config.ts runs those
// projects in a single worker. Otherwise this setup builds the binaries the workers start (once,
// here, so that no two workers build at the same time), and in teardown stops every worker's
// control plane and copies its logs to .tmp/test-cluster-logs/worker-N/ (or $TEST_CLUSTER_LOGS/worker-N/),
// where test/run-tests.sh shows their tails after a failure.
//
// Both projects call this setup; they share one directory (named after this process), so a worker
// that runs files of both uses one control plane. The first teardown stops them all; the second
// finds nothing left.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterRootOf, TEST_CLUSTER_ENV } from './support/worker-cluster-paths.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const helper = join(repo, 'helpers', 'test-cluster');
/** Where teardown copies the logs; test/run-tests.sh names one per Kubernetes version. */
const clusterLogsDir = process.env.TEST_CLUSTER_LOGS ?? join(repo, '.tmp', 'test-cluster-logs');

export default async function setup(): Promise<() => Promise<void>> {
  const existing = process.env.TEST_KUBECONFIG;
  if (existing !== undefined && existing !== '') {
    if (!existsSync(existing)) throw new Error(`TEST_KUBECONFIG=${existing} does not exist; name an admin kubeconfig of a throw-away cluster`);
    // Workers inherit these; test/support/worker-cluster.ts then starts nothing.
    process.env[TEST_CLUSTER_ENV.kubeconfig] = existing;
    process.env[TEST_CLUSTER_ENV.kubeconfigNoAccess] = process.env.TEST_KUBECONFIG_NOACCESS ?? '';
    process.env[TEST_CLUSTER_ENV.clusterDir] = '';
    return async () => {};
  }

  const root = clusterRootOf(process.pid);
  mkdirSync(root, { recursive: true });
  process.env[TEST_CLUSTER_ENV.root] = root;
  const kube = process.env.TEST_CLUSTER_KUBE ?? '';
  try {
    await run('bash', [join(repo, 'test', 'cluster', 'build.sh'), ...(kube === '' ? [] : [kube])]);
  } catch (error) {
    throw new Error(`could not build the test control plane (test/cluster/build.sh ${kube}): ${String(error)}`, { cause: error });
  }
  // Last resort if the runner exits without teardown (e.g. an uncaught error in vitest itself).
  const stopSync = (): void => {
    for (const dir of workerDirs(root)) spawnSync('bash', [helper, 'stop', dir], { stdio: 'inherit' });
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', stopSync);

  return async () => {
    const dirs = workerDirs(root);
    if (dirs.length > 0) keepLogs(dirs);
    await Promise.all(dirs.map((dir) => run('bash', [helper, 'stop', dir])));
    rmSync(root, { recursive: true, force: true });
    process.removeListener('exit', stopSync);
  };
}

function workerDirs(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => name.startsWith('worker-'))
    .map((name) => join(root, name));
}

function keepLogs(dirs: readonly string[]): void {
  rmSync(clusterLogsDir, { recursive: true, force: true });
  for (const dir of dirs) {
    const target = join(clusterLogsDir, dir.slice(dir.lastIndexOf('/') + 1));
    mkdirSync(target, { recursive: true });
    for (const log of ['apiserver.log', 'etcd.log', 'controller-manager.log']) {
      if (existsSync(join(dir, log))) copyFileSync(join(dir, log), join(target, log));
    }
  }
}

/** Runs a command with the runner's stderr, so build progress and failures show up live. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}`));
    });
  });
}
