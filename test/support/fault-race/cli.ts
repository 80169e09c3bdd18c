// Running the tool's writers the way a user or the CronJob does: through the CLI's argv parsing
// (src/cli.ts runCli) in this process, which is fast, or as a process of the built CLI (dist/)
// when the schedule kills it with SIGKILL at a chosen moment.
import { Readable, Writable } from 'node:stream';
import { formatTopLevelError, runCli } from '../../../src/cli.js';
import type { Simulator } from '../../../src/sim/index.js';
import { TEST_TOKEN } from '../ccm.js';
import { testKubeconfig } from '../kube.js';
import { spawnBinary } from '../lb-scenarios.js';
import type { KillSpec, WriterCommand } from './scenario.js';

export interface CliResult {
  /** Exit code; null when killed. */
  readonly code: number | null;
  readonly killed: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** Flags the tool under test offers (it is changing while this suite is written). */
export interface Features {
  /** `--lease-seconds` and `--wait` on every writer (else `--wait` on `run` only and a 60 s Lease). */
  readonly writerLease: boolean;
}

export async function probeFeatures(apiUrl: string): Promise<{ inProcess: Features; binary: Features }> {
  const inProcess = await runInProcess(['cleanup', '--help'], apiUrl);
  const binary = await new Promise<string>((resolve, reject) => {
    const { done } = spawnBinary(['cleanup', '--help'], { apiUrl });
    done.then((result) => resolve(result.stdout), reject);
  });
  return {
    inProcess: { writerLease: inProcess.stdout.includes('--lease-seconds') },
    binary: { writerLease: binary.includes('--lease-seconds') },
  };
}

/**
 * A read-only pass (`plan`) of the built CLI against `apiUrl`: it loads what every command
 * loads. A dist/ that does not run (stale, or half rebuilt) would otherwise make every kill
 * miss quietly: the process would end before its moment.
 */
export async function requireRunnableBinary(apiUrl: string): Promise<void> {
  const { done } = spawnBinary(['--kubeconfig', testKubeconfig(), '--cluster-id', 'fault-race-probe', '-o', 'json', 'plan'], { apiUrl });
  const result = await done;
  if (result.code !== 0) {
    const line = result.stderr.split('\n').find((l) => l.trim() !== '') ?? '(no output)';
    throw new Error(`the built CLI (dist/) cannot run a pass: exit ${result.code}: ${line}; rebuild it with npm run build`);
  }
}

export interface WriterArgs {
  readonly clusterId: string;
  readonly wait: boolean;
  /** Lease duration when the tool takes one (`--lease-seconds`). */
  readonly leaseSeconds: number;
  readonly features: Features;
}

/** The argv of one writer pass, with test timing (no settle pause, fast polling) and JSON output. */
export function writerArgv(command: WriterCommand, options: WriterArgs): string[] {
  // --kubeconfig, not KUBECONFIG: in this process client-node would read process.env.
  const argv = ['--kubeconfig', testKubeconfig(), '--cluster-id', options.clusterId, '-o', 'json', command];
  if (command === 'sync-lb' || command === 'run') {
    argv.push('--settle-seconds', '0', '--poll-seconds', '0.05', '--wait-timeout', '20');
  }
  if (command === 'cleanup') argv.push('--yes');
  if (options.wait && (options.features.writerLease || command === 'run')) argv.push('--wait');
  if (options.features.writerLease) argv.push('--lease-seconds', String(options.leaseSeconds));
  return argv;
}

/**
 * One CLI invocation in this process: the real argv parsing, context and output, no process.
 * The API token is the harness's (TEST_TOKEN) unless `token` names another.
 */
export async function runInProcess(
  argv: readonly string[],
  apiUrl: string,
  options: { readonly signal?: AbortSignal; readonly token?: string } = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        append(chunk.toString());
        callback();
      },
    });
  const outcome = await runCli(argv, {
    stdin: Readable.from([]),
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: {
      KUBECONFIG: testKubeconfig(),
      CLOUDSCALE_API_TOKEN: options.token ?? TEST_TOKEN,
      CLOUDSCALE_API_URL: apiUrl,
      // A hanging request costs this long before the client gives up (the CLI's default is 20 s).
      CLOUDSCALE_API_TIMEOUT: '3',
      NO_COLOR: '1',
    },
    signal: options.signal ?? new AbortController().signal,
  });
  if ('error' in outcome) {
    return { code: 1, killed: false, stdout, stderr: stderr + formatTopLevelError(outcome.error, { verbose: false }) };
  }
  return { code: outcome.exitCode, killed: false, stdout, stderr };
}

export interface StartedProcess {
  readonly pid: number;
  /** Resolves once the process made its first cloudscale API request (or ended before). */
  readonly talking: Promise<void>;
  readonly done: Promise<CliResult>;
}

/**
 * Starts the built CLI and SIGKILLs it at the kill moment: after the `count`-th matching request
 * in the simulator's log (counted from the start), or `ms` after its first request. If the process
 * ends first, it was not killed.
 */
export function startKilledProcess(argv: readonly string[], sim: Simulator, kill: KillSpec): StartedProcess {
  const since = sim.admin.requests().length;
  const { child, done } = spawnBinary(argv, { apiUrl: sim.url });
  let exited = false;
  const finished = done.then((result) => {
    exited = true;
    return result;
  });
  const seen = (match: (method: string, route: string) => boolean) =>
    sim.admin
      .requests()
      .slice(since)
      .filter((r) => match(r.method, r.route)).length;
  const until = async (condition: () => boolean): Promise<boolean> => {
    while (!exited) {
      if (condition()) return true;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return false;
  };
  const talking = until(() => seen(() => true) > 0).then(() => undefined);
  const killed = (async () => {
    const reached =
      kill.after === 'request'
        ? await until(() => seen((m, r) => m === kill.method && r === kill.route) >= kill.count)
        : (await until(() => seen(() => true) > 0)) && (await sleepUnless(kill.ms, () => exited));
    if (reached && !exited) {
      child.kill('SIGKILL');
      return true;
    }
    return false;
  })();
  return {
    pid: child.pid!,
    talking,
    done: Promise.all([finished, killed]).then(([result, wasKilled]) => ({
      code: result.code,
      killed: wasKilled && result.signal === 'SIGKILL',
      stdout: result.stdout,
      stderr: result.stderr,
    })),
  };
}

async function sleepUnless(ms: number, stop: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (stop()) return false;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return true;
}

/** The parsed `-o json` document on stdout, or undefined (killed, or refused before printing). */
export function jsonDocument(result: CliResult): Record<string, unknown> | undefined {
  const start = result.stdout.indexOf('{');
  if (start < 0) return undefined;
  try {
    return JSON.parse(result.stdout.slice(start)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** One line about a writer's outcome, for the run's description. */
export function outcomeLine(result: CliResult): string {
  if (result.killed) return 'killed';
  const error = result.stderr
    .split('\n')
    .find((line) => line.startsWith('error: '))
    ?.slice('error: '.length);
  return error === undefined ? `exit ${result.code}` : `exit ${result.code}: ${error.slice(0, 200)}`;
}
