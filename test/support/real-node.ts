// A real node for the test files that need one (docs/real-node.md): kube-scheduler and a kubelet
// of the control plane's release on containerd + runc, started by helpers/test-cluster in this
// worker's cluster directory (one node per worker: files of one worker run one after another),
// and kube-controller-manager with the controllers a file names. The file stops what it started;
// the run's teardown (helpers/test-cluster stop) stops anything a crashed worker left.
//
// Files using it declare `// @test-tools: node` in their first lines, so that test/run-tests.sh
// installs containerd and runc and builds kubelet, kube-scheduler and kube-controller-manager.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testClusterDir } from './kube.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const helper = join(repo, 'helpers', 'test-cluster');
const VERSION = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
/** The name `cloudscale-ccm manifests` gives the image by default. */
export const PROJECT_IMAGE = `localhost/cloudscale-ccm:${VERSION}`;

/** Undefined when this run can start a real node, else why not (for the skip message). */
export function realNodeSupport(): string | undefined {
  if ((testClusterDir() ?? '') === '') {
    return 'needs the cluster of this run (helpers/test-cluster), not TEST_KUBECONFIG: it adds a kubelet, kube-scheduler and kube-controller-manager';
  }
  const check = spawnSync('bash', [helper, 'check-node'], { encoding: 'utf8' });
  return check.status === 0 ? undefined : check.stdout.trim() || check.stderr.trim();
}

function clusterDir(): string {
  const dir = testClusterDir() ?? '';
  if (dir === '') throw new Error('real node: this run has no cluster directory of its own (TEST_KUBECONFIG)');
  return dir;
}

/**
 * helpers/test-cluster COMMAND DIR ARGS… in a process group of its own (the processes it starts
 * outlive this worker's signals until stopped); its stderr goes into the error.
 */
function helperCall(command: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [helper, command, clusterDir(), ...args], {
      detached: true,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`helpers/test-cluster ${command} ${args.join(' ')} exited with ${signal ?? code}:\n${stderr}`));
    });
  });
}

export interface NodeImage {
  /** An OCI image layout directory. */
  readonly layout: string;
  /** REPOSITORY:TAG, TAG being the layout's own name for it. */
  readonly name: string;
}

/** Starts kube-scheduler and a kubelet registering `name` (with `--node-ip` when given). */
export function startNode(name: string, options: { nodeIp?: string; images?: readonly NodeImage[] } = {}): Promise<void> {
  const images = (options.images ?? []).map((image) => `${image.layout}=${image.name}`).join(' ');
  return helperCall('start-node', [name, ...(options.nodeIp === undefined ? [] : [options.nodeIp])], { TEST_NODE_IMAGES: images });
}

/** Stops the kubelet, its containers, containerd and kube-scheduler; unmounts what they left. */
export const stopNode = (): Promise<void> => helperCall('stop-node');
/** The kubelet alone, as when its machine goes down; containerd keeps its containers. */
export const stopKubelet = (): Promise<void> => helperCall('stop-kubelet');
/** The kubelet again, with the same arguments; resolves once it answers and its Node exists. */
export const startKubelet = (): Promise<void> => helperCall('start-kubelet');
/** A pod network configuration for containerd: the kubelet then reports its Node Ready. */
export const nodeNetworkReady = (): Promise<void> => helperCall('node-network-ready');
export const startControllers = (controllers: readonly string[]): Promise<void> => helperCall('start-controllers', [controllers.join(',')]);
export const stopControllers = (): Promise<void> => helperCall('stop-controllers');

/** Where the node's logs are, for a failure message. */
export function nodeLogDir(): string {
  return join(clusterDir(), 'node');
}

/**
 * The project's image as `npm run image` builds it, from the dist/ of this run (built by
 * test/run-tests.sh), in a directory of its own; `remove` deletes it.
 */
export function buildProjectImage(): NodeImage & { remove(): void } {
  const out = mkdtempSync(join(tmpdir(), 'ccm-test-image-'));
  const built = spawnSync(process.execPath, [join(repo, 'scripts', 'build-image.js'), '--no-build', '--out', out], { encoding: 'utf8', cwd: repo });
  if (built.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    throw new Error(`npm run image -- --no-build failed (${built.status}): ${built.stderr}`);
  }
  return { layout: join(out, 'oci'), name: PROJECT_IMAGE, remove: () => rmSync(out, { recursive: true, force: true }) };
}
