// A test harness for the tool's commands: a fresh simulator, the run's kube-apiserver, and a
// CommandContext wired to both with captured output — the same context the CLI builds, minus
// the process. `runBinary` runs the real built CLI (dist/, built by `npm test`) as a process.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { CommandContext, GlobalOptions } from '../../src/commands/context.js';
import { createCloudscaleClient, type CloudscaleClient } from '../../src/core/cloudscale/client.js';
import { createWriteFence } from '../../src/core/fence.js';
import { namespaceUid } from '../../src/core/kube/cluster.js';
import { parseSeed, startSimulator, type SimSeed, type Simulator, type WorldName } from '../../src/sim/index.js';
import { testConnection, testKubeconfig } from './kube.js';
import { testSimWorld } from './sim-world.js';

export const TEST_TOKEN = 'test-token-0123456789';

export interface TestContext extends CommandContext {
  /** Everything written to stdout / stderr so far. */
  out(): string;
  err(): string;
  /** The client this context hands out (its request counter shows what the command sent). */
  client(): Promise<CloudscaleClient>;
}

export interface Harness {
  readonly sim: Simulator;
  /** This harness's cluster identity (ownership tags); unique per harness. */
  readonly clusterId: string;
  /** A separate client for assertions, so its reads do not count against the command's. */
  readonly cloud: CloudscaleClient;
  context(globals?: Partial<GlobalOptions> & { stdin?: string; abort?: AbortSignal }): TestContext;
  stop(): Promise<void>;
}

/**
 * A harness on a fresh simulator in the tests' world (test/support/sim-world.ts), or in `world`
 * for a test that is about one world. `lbProvisionMs` (default 0) is how long a new load
 * balancer stays `changing` in the test's own milliseconds, whatever the world's time scale: a
 * test that needs a pass to last says how long in real time.
 */
export async function startHarness(options: { seed?: SimSeed | string; lbProvisionMs?: number; world?: WorldName } = {}): Promise<Harness> {
  const seed = typeof options.seed === 'string' ? parseSeed(options.seed, 'test seed') : options.seed;
  const world = testSimWorld(options.world);
  const sim = await startSimulator({
    ...(seed === undefined ? {} : { seed }),
    ...world,
    // The simulator scales what it is given; this undoes it.
    lbProvisionMs: (options.lbProvisionMs ?? 0) / world.timeScale,
    token: TEST_TOKEN,
  });
  const clusterId = `test-cluster-${randomBytes(4).toString('hex')}`;
  const newClient = () =>
    createCloudscaleClient({ baseUrl: sim.url, token: TEST_TOKEN, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
  const cloud = newClient();
  return {
    sim,
    clusterId,
    cloud,
    context(globals = {}) {
      let stdout = '';
      let stderr = '';
      let client: CloudscaleClient | undefined;
      let kubeSystemUid: Promise<string> | undefined;
      const { stdin, abort, ...rest } = globals;
      const writeFence = createWriteFence();
      const newFencedClient = () =>
        createCloudscaleClient({ baseUrl: sim.url, token: TEST_TOKEN, retry: { baseDelayMs: 5, maxDelayMs: 50 }, fence: writeFence });
      const ctx: TestContext = {
        globals: { output: 'text', color: false, verbose: false, clusterId, ...rest },
        stdout: { write: (text: string) => (stdout += text), isTTY: false },
        stderr: { write: (text: string) => (stderr += text), isTTY: false },
        env: {},
        signal: abort ?? new AbortController().signal,
        writeFence,
        kube: () => ({ ...testConnection(), fence: writeFence }),
        cloudscale: async () => (client ??= newFencedClient()),
        clusterId: async () => clusterId,
        kubeSystemUid: () => (kubeSystemUid ??= namespaceUid(testConnection(), 'kube-system')),
        readStdin: async () => stdin ?? '',
        interactive: false,
        confirm: async () => false,
        out: () => stdout,
        err: () => stderr,
        client: async () => (client ??= newFencedClient()),
      };
      return ctx;
    },
    stop: () => sim.stop(),
  };
}

/**
 * A seed of `count` servers named `<prefix>-1`, `<prefix>-2` … in rma1, each with a private
 * address `<privateNet>.<i>` in one /24 of the network `private` and, given `publicNet`, a public
 * IPv4 `<publicNet>.<i>`; plus the given Floating IPs (regional, rma). Tests create Nodes of the
 * same names.
 */
export function nodesSeed(options: {
  prefix: string;
  count: number;
  privateNet: string;
  publicNet?: string;
  floatingIps?: readonly string[];
}): string {
  const servers = Array.from({ length: options.count }, (_, k) => k + 1).map((i) =>
    [
      `  - name: ${options.prefix}-${i}`,
      '    flavor: flex-4-2',
      '    zone: rma1',
      '    interfaces:',
      ...(options.publicNet === undefined ? [] : [`      - {type: public, addresses: [${options.publicNet}.${i}]}`]),
      `      - {type: private, network: private, addresses: [${options.privateNet}.${i}]}`,
    ].join('\n'),
  );
  const fips = (options.floatingIps ?? []).map((network) => `  - {network: ${network}, type: regional, region: rma}`);
  return [
    'networks:',
    '  - name: private',
    '    zone: rma1',
    `    subnets: [{cidr: ${options.privateNet}.0/24}]`,
    'servers:',
    ...servers,
    ...(fips.length > 0 ? ['floating_ips:', ...fips] : []),
    '',
  ].join('\n');
}

export interface BinaryResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const binary = fileURLToPath(new URL('../../bin/cloudscale-ccm.js', import.meta.url));

/** The exit code and whole output of a spawned process, once it has closed. */
export function outputOf(child: ChildProcessByStdio<null | Writable, Readable, Readable>): Promise<BinaryResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs the built CLI as a process against the test cluster (and `apiUrl`, when given). `script`
 * runs another copy of it (an installed package's), `node` another Node.js, from `cwd`.
 */
export function runBinary(
  args: readonly string[],
  options: { apiUrl?: string; env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number; script?: string; node?: string; cwd?: string } = {},
): Promise<BinaryResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.node ?? process.execPath, [options.script ?? binary, ...args], {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG: testKubeconfig(),
        CLOUDSCALE_API_TOKEN: TEST_TOKEN,
        ...(options.apiUrl === undefined ? {} : { CLOUDSCALE_API_URL: options.apiUrl }),
        ...options.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    outputOf(child).then(resolve, reject);
    // A command that reads no input may exit before it is written: its pipe is then closed (EPIPE).
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.stdin ?? '');
  });
}
