// vitest globalSetup of the `integration` project: one Kubernetes control plane per test run.
//
// With TEST_KUBECONFIG set, that existing cluster is used as it is (TEST_KUBECONFIG_NOACCESS
// optionally names a kubeconfig of a user without rights). Otherwise helpers/test-cluster starts
// etcd + kube-apiserver in a temporary directory and stops them in teardown. Test files read the
// paths with inject('kubeconfig') (see test/support/kube.ts); spawned CLI processes get them from
// CCM_TEST_KUBECONFIG / CCM_TEST_KUBECONFIG_NOACCESS, which workers inherit.
//
// The apiserver and etcd logs of the last run are copied to .tmp/test-cluster-logs/ so that
// test/run-tests.sh can show their tails after a failure.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the test cluster. */
    kubeconfig: string;
    /** Kubeconfig of an authenticated user without any RBAC binding; '' if unavailable. */
    kubeconfigNoAccess: string;
    /** True when the cluster was started for this run (not TEST_KUBECONFIG). */
    kubeClusterOwned: boolean;
    /**
     * The helpers/test-cluster directory of that cluster ('' for TEST_KUBECONFIG): what
     * `helpers/test-cluster start-controllers` needs to add a kube-controller-manager.
     */
    kubeClusterDir: string;
  }
}

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const helper = join(repo, 'helpers', 'test-cluster');
const clusterLogsDir = join(repo, '.tmp', 'test-cluster-logs');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.TEST_KUBECONFIG;
  if (existing !== undefined && existing !== '') {
    if (!existsSync(existing)) throw new Error(`TEST_KUBECONFIG=${existing} does not exist`);
    const noAccess = process.env.TEST_KUBECONFIG_NOACCESS ?? '';
    publish(project, existing, noAccess, '');
    return async () => {};
  }

  const dir = mkdtempSync(join(tmpdir(), 'ccm-test-cluster-'));
  const stopSync = (): void => {
    spawnSync('bash', [helper, 'stop', dir], { stdio: 'inherit' });
  };
  // Last resort if the runner exits without teardown (e.g. an uncaught error in vitest itself).
  process.once('exit', stopSync);
  try {
    await run('bash', [helper, 'start', dir]);
  } catch (error) {
    keepLogs(dir);
    stopSync();
    process.removeListener('exit', stopSync);
    throw new Error(`could not start the test cluster (logs in ${clusterLogsDir}): ${String(error)}`, {
      cause: error,
    });
  }
  publish(project, join(dir, 'kubeconfig'), join(dir, 'kubeconfig-noaccess'), dir);

  return async () => {
    keepLogs(dir);
    await run('bash', [helper, 'stop', dir]);
    process.removeListener('exit', stopSync);
  };
}

function publish(project: TestProject, kubeconfig: string, noAccess: string, clusterDir: string): void {
  project.provide('kubeconfig', kubeconfig);
  project.provide('kubeconfigNoAccess', noAccess);
  project.provide('kubeClusterOwned', clusterDir !== '');
  project.provide('kubeClusterDir', clusterDir);
  process.env.CCM_TEST_KUBECONFIG = kubeconfig;
  process.env.CCM_TEST_KUBECONFIG_NOACCESS = noAccess;
}

function keepLogs(dir: string): void {
  rmSync(clusterLogsDir, { recursive: true, force: true });
  mkdirSync(clusterLogsDir, { recursive: true });
  for (const log of ['apiserver.log', 'etcd.log', 'controller-manager.log']) {
    if (existsSync(join(dir, log))) copyFileSync(join(dir, log), join(clusterLogsDir, log));
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
