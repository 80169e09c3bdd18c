// A throw-away Kubernetes control plane for the benchmark: helpers/test-cluster (etcd +
// kube-apiserver on 127.0.0.1) in a fresh temporary directory. `stop` is safe to call more than
// once and from a signal handler: it stops exactly the processes the helper recorded.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const helper = fileURLToPath(new URL('../helpers/test-cluster', import.meta.url));

/**
 * Starts the control plane and resolves once it accepts Services.
 * @returns {Promise<{ kubeconfig: string, dir: string, stop: () => void }>}
 */
export async function startControlPlane() {
  const dir = mkdtempSync(join(tmpdir(), 'ccm-bench-'));
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    // Synchronous, so it also completes inside a signal handler or on the way out of a crash.
    const result = spawnSync('bash', [helper, 'stop', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) process.stderr.write(`bench: helpers/test-cluster stop ${dir} failed; stop its processes by the pids in ${dir}/*.pid\n`);
  };
  // Own process group: a Ctrl-C in the terminal reaches this process, which then stops the
  // control plane in order, instead of killing etcd and the apiserver underneath a running pass.
  const child = spawn('bash', [helper, 'start', dir], { stdio: ['ignore', 'inherit', 'pipe'], detached: true });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
  const code = await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) {
    stop();
    throw new Error(`helpers/test-cluster start failed (exit ${code}):\n${stderr.trim()}`);
  }
  return { kubeconfig: join(dir, 'kubeconfig'), dir, stop };
}
