// Assertions and process helpers shared by the CLI tests (test/cli/*.test.ts), which run the
// built binary (bin/cloudscale-ccm.js → dist/) as a separate process, as a user or a CronJob
// would. runBinary (test/support/ccm.ts) covers plain runs; this file adds a terminal (for the
// colour tests) and a handle on a long-running process (for signals).
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { BinaryResult } from '../support/ccm.js';
import { TEST_TOKEN } from '../support/ccm.js';
import { testKubeconfig } from '../support/kube.js';

export const binaryPath = fileURLToPath(new URL('../../bin/cloudscale-ccm.js', import.meta.url));

/** Matches a line of a JavaScript stack trace ("    at fn (file:1:2)"). */
const stackFrame = /^\s+at .+[:(]/m;
/** Any ANSI escape sequence (colour, cursor movement). */
export const ansiEscape = /\u001b\[/;

/**
 * The contract for every failure the user can fix: exit 1, nothing on stdout, the first stderr
 * line `error: …` with each of `fragments`, a `hint: …` line, and no stack trace.
 */
export function expectUserError(result: BinaryResult, ...fragments: readonly (string | RegExp)[]): void {
  const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.code, context).toBe(1);
  expect(result.stdout, context).toBe('');
  expect(result.stderr, context).toMatch(/^error: /m);
  expect(result.stderr, context).toMatch(/^hint: \S/m);
  expect(result.stderr, context).not.toMatch(stackFrame);
  expect(result.stderr, context).not.toContain('node:internal');
  const errorAndBelow = result.stderr.slice(result.stderr.search(/^error: /m));
  for (const fragment of fragments) {
    if (typeof fragment === 'string') expect(errorAndBelow, context).toContain(fragment);
    else expect(errorAndBelow, context).toMatch(fragment);
  }
}

/** Asserts that `secret` occurs nowhere in the process's output (stdout and stderr). */
export function expectNoSecret(result: BinaryResult, secret: string, what: string): void {
  expect(secret.length, 'a secret this short could occur by chance').toBeGreaterThanOrEqual(12);
  expect(result.stdout.includes(secret), `${what}: the token appears on stdout:\n${result.stdout}`).toBe(false);
  expect(result.stderr.includes(secret), `${what}: the token appears on stderr:\n${result.stderr}`).toBe(false);
}

/** The environment runBinary gives the process, for helpers that spawn it themselves. */
function binaryEnv(options: { apiUrl?: string; env?: NodeJS.ProcessEnv }): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: testKubeconfig(),
    CLOUDSCALE_API_TOKEN: TEST_TOKEN,
    ...(options.apiUrl === undefined ? {} : { CLOUDSCALE_API_URL: options.apiUrl }),
    ...options.env,
  };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export const hasScriptCommand = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/**
 * Runs the binary with a pseudo-terminal as stdin, stdout and stderr (util-linux `script`), so
 * that it behaves as in an interactive shell. The output is the terminal's: stdout and stderr
 * interleaved, with CRLF line ends.
 */
export function runInTerminal(
  args: readonly string[],
  options: { apiUrl?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, binaryPath, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
      env: { TERM: 'xterm-256color', ...binaryEnv(options) },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end();
  });
}

export interface RunningBinary {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first complete stdout line. */
  firstLine(): Promise<string>;
  /** Resolves with the exit code (or the signal that ended it) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Ends every process of `started` still running (continued first, should a test have stopped it) and empties the list. */
export async function killStarted(started: RunningBinary[]): Promise<void> {
  for (const running of started.splice(0)) {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGCONT');
      running.child.kill('SIGKILL');
      await running.exited;
    }
  }
}

/** Starts the binary and leaves it running; the caller ends it (and must, in afterEach). */
export function startBinary(
  args: readonly string[],
  options: {
    apiUrl?: string;
    env?: NodeJS.ProcessEnv;
    /** A command that runs the binary, e.g. ['faketime', '-f', '+70s']. */
    wrapper?: readonly string[];
  } = {},
): RunningBinary {
  const [command, ...prefix] = [...(options.wrapper ?? []), process.execPath];
  const child = spawn(command!, [...prefix, binaryPath, ...args], {
    env: binaryEnv(options),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, signal });
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async firstLine() {
      while (!stdout.includes('\n')) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`the process ended before printing a line; stderr:\n${stderr}`);
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      return stdout.slice(0, stdout.indexOf('\n'));
    },
    exited,
  };
}

/**
 * A loopback port nothing listens on (bound, then released). Not a fixed port: fetch refuses
 * some low ports outright ("bad port"), which is not what "nobody answers" should test.
 */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
