// A throw-away Kubernetes control plane for the benchmark: helpers/test-cluster (etcd +
// kube-apiserver on 127.0.0.1) in a fresh temporary directory. `stop` is safe to call more than
// once, synchronously from a signal handler, and while `start` is still running.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const helper = fileURLToPath(new URL('../helpers/test-cluster', import.meta.url));

/** @returns {{ kubeconfig: string, start: () => Promise<void>, stop: () => void }} */
export function createControlPlane() {
  const dir = mkdtempSync(join(tmpdir(), 'ccm-bench-'));
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let starting;
  let stopped = false;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    // Interrupted during start: the helper and what it launched so far share its process group.
    if (starting !== undefined && starting.exitCode === null && starting.pid !== undefined) {
      try {
        process.kill(-starting.pid, 'SIGTERM');
      } catch (error) {
        if (error.code !== 'ESRCH') throw error;
      }
    }
    // Synchronous, so it also completes inside a signal handler or on the way out of a crash.
    const result = spawnSync('bash', [helper, 'stop', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) process.stderr.write(`bench: helpers/test-cluster stop ${dir} failed; stop its processes by the pids in ${dir}/*.pid\n`);
  };

  const start = async () => {
    // Own process group: a Ctrl-C in the terminal reaches this process, which then stops the
    // control plane in order, instead of killing etcd and the apiserver underneath a running pass.
    starting = spawn('bash', [helper, 'start', dir], { stdio: ['ignore', 'inherit', 'pipe'], detached: true });
    let stderr = '';
    starting.stderr.on('data', (chunk) => (stderr += chunk.toString()));
    const code = await new Promise((resolve, reject) => {
      starting.on('error', reject);
      starting.on('close', resolve);
    });
    if (code !== 0) {
      stop();
      throw new Error(`helpers/test-cluster start failed (exit ${code}):\n${stderr.trim()}`);
    }
  };

  return { kubeconfig: join(dir, 'kubeconfig'), start, stop };
}
