// Running the tool's writers the way a user or the CronJob does: through the CLI's argv parsing
// (src/cli.ts runCli) in this process, which is fast, or as a process of the built CLI (dist/)
// when the schedule kills it (SIGKILL), pauses it (SIGSTOP, then SIGCONT) or skews its clock.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
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
  /** --drain-seconds of sync-lb and run (their default when absent). */
  readonly drainSeconds?: number;
}

/**
 * The argv of one writer pass, with test timing (no settle pause, fast polling) and JSON
 * output. `drainSeconds` 0 (the harness's own passes): a member a rotation or a selector drained
 * is deleted at once, so the final passes finish what a writer of the schedule left draining.
 */
export function writerArgv(command: WriterCommand, options: WriterArgs): string[] {
  // --kubeconfig, not KUBECONFIG: in this process client-node would read process.env.
  const argv = ['--kubeconfig', testKubeconfig(), '--cluster-id', options.clusterId, '-o', 'json', command];
  if (command === 'sync-lb' || command === 'run') {
    argv.push('--settle-seconds', '0', '--poll-seconds', '0.05', '--wait-timeout', '20');
    if (options.drainSeconds !== undefined) argv.push('--drain-seconds', String(options.drainSeconds));
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
  /** With a pause: resolves once the process is stopped (true), or ended before its moment (false). */
  readonly paused: Promise<boolean>;
  readonly done: Promise<CliResult & { readonly pause?: PauseOutcome }>;
}

/** What a pause did: when the process was stopped and continued, by the simulator's arrival count. */
export interface PauseOutcome {
  readonly forMs: number;
  /** The arrival count when SIGSTOP was sent and when SIGCONT was. */
  readonly stoppedAt: number;
  readonly continuedAt: number;
}

export interface ProcessOptions {
  /** Its own API token, so that the simulator's log names its requests (see Simulator.setTokens). */
  readonly token: { readonly name: string; readonly value: string };
  /** SIGKILL at this moment (a step boundary's moment may send SIGTERM instead). */
  readonly kill?: KillSpec;
  /** SIGSTOP at `at`, SIGCONT `forMs` later; `whilePaused` runs meanwhile (it must not throw). */
  readonly pause?: { readonly at: KillSpec; readonly forMs: number; readonly whilePaused?: (until: Promise<void>) => Promise<void> };
  /** Its wall clock this many seconds off (libfaketime; the monotonic clock stays true). */
  readonly skewSeconds?: number;
}

/**
 * Starts the built CLI as a process with its own token. A moment (`kill.at`, `pause.at`) is
 * after the `count`-th matching request of this process in the simulator's log, `ms` after its
 * first request, or after the `count`-th boundary following step `step` that the process
 * announced (STEP_PAUSE_MS: it pauses there, so the signal lands between that step and the
 * next); if the process ends first, the moment never comes.
 */
export function startProcess(argv: readonly string[], sim: Simulator, options: ProcessOptions): StartedProcess {
  const { child, done, stderr } = spawnWriterProcess(argv, sim.url, options);
  let exited = false;
  const finished = done.then((result) => {
    exited = true;
    return result;
  });
  const own = options.token.name;
  const seen = (match: (method: string, route: string) => boolean) =>
    sim.admin.requests().filter((r) => r.token === own && match(r.method, r.route)).length;
  const until = async (condition: () => boolean): Promise<boolean> => {
    while (!exited) {
      if (condition()) return true;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return false;
  };
  const reached = async (moment: KillSpec): Promise<boolean> => {
    if (moment.after === 'request') return until(() => seen((m, r) => m === moment.method && r === moment.route) >= moment.count);
    if (moment.after === 'step') return until(() => stepBoundaries(stderr()).filter((step) => step === moment.step).length >= moment.count);
    return (await until(() => seen(() => true) > 0)) && (await sleepUnless(moment.ms, () => exited));
  };
  const talking = until(() => seen(() => true) > 0).then(() => undefined);

  let pauseOutcome: PauseOutcome | undefined;
  let markPaused: (stopped: boolean) => void = () => {};
  const paused = new Promise<boolean>((resolve) => (markPaused = resolve));
  const pausing = (async () => {
    const pause = options.pause;
    if (pause === undefined) return markPaused(false);
    if (!(await reached(pause.at)) || exited) return markPaused(false);
    child.kill('SIGSTOP');
    const stoppedAt = sim.admin.arrivals();
    markPaused(true);
    const over = new Promise<void>((resolve) => setTimeout(resolve, pause.forMs));
    await Promise.all([over, pause.whilePaused?.(over)]);
    child.kill('SIGCONT');
    pauseOutcome = { forMs: pause.forMs, stoppedAt, continuedAt: sim.admin.arrivals() };
  })();
  const killing = (async () => {
    if (options.kill === undefined || !(await reached(options.kill)) || exited) return false;
    child.kill(options.kill.after === 'step' ? options.kill.signal : 'SIGKILL');
    return true;
  })();
  return {
    pid: child.pid!,
    talking,
    paused,
    done: Promise.all([finished, killing, pausing]).then(([result, wasKilled]) => ({
      code: result.code,
      // SIGTERM: the process ends on its own (it finishes the step pair it is in), by exit code.
      killed: wasKilled && (result.signal === 'SIGKILL' || options.kill?.after === 'step'),
      stdout: result.stdout,
      stderr: result.stderr,
      ...(pauseOutcome === undefined ? {} : { pause: pauseOutcome }),
    })),
  };
}

/** How long the built CLI pauses after each step when a signal aims at a step boundary. */
export const STEP_PAUSE_MS = 150;

/** The steps a process announced it finished (CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS), in order. */
export function stepBoundaries(stderr: string): string[] {
  return [...stderr.matchAll(/^step-boundary: after (\S+)/gm)].map((m) => m[1]!);
}

/** Where Debian's faketime package puts the library that `faketime` preloads. */
const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'];

/**
 * The built CLI as a child process of node itself (not of a `faketime` wrapper, which forks:
 * signals and the Lease's holder identity must reach the CLI's own process). A skewed clock is
 * what `faketime -f +Ns` sets up: libfaketime preloaded, FAKETIME, and the monotonic clock left
 * true (FAKETIME_DONT_FAKE_MONOTONIC=1), as on a host whose wall clock is off.
 */
function spawnWriterProcess(
  argv: readonly string[],
  apiUrl: string,
  options: ProcessOptions,
): { child: ChildProcess; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>; stderr: () => string } {
  const skew = options.skewSeconds ?? 0;
  const library = LIBFAKETIME.find((path) => existsSync(path));
  if (skew !== 0 && library === undefined) {
    throw new Error(`libfaketime is not installed (looked for ${LIBFAKETIME.join(', ')}): apt-get install faketime, as test/run-tests.sh does`);
  }
  const child = spawn(process.execPath, [binaryPath, ...argv], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: testKubeconfig(),
      CLOUDSCALE_API_TOKEN: options.token.value,
      CLOUDSCALE_API_URL: apiUrl,
      CLOUDSCALE_API_TIMEOUT: '3',
      NO_COLOR: '1',
      ...(options.kill?.after === 'step' ? { CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS: String(STEP_PAUSE_MS) } : {}),
      ...(skew === 0
        ? {}
        : { LD_PRELOAD: library, FAKETIME: `${skew > 0 ? '+' : ''}${skew}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

const binaryPath = fileURLToPath(new URL('../../../bin/cloudscale-ccm.js', import.meta.url));

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
