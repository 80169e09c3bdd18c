// Runs the built CLI (or a bare `node -e 0`) as a process of its own, the way a user or a CronJob
// runs it, with bench/probe.js preloaded: the figures are the process's wall time from spawn to
// exit, its CPU time, its peak resident set size and the HTTP requests it sent. The simulator and
// the benchmark's fixtures live in the benchmark's process, so their memory is not counted.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const probe = fileURLToPath(new URL('./probe.js', import.meta.url));
const binary = fileURLToPath(new URL('../bin/cloudscale-ccm.js', import.meta.url));
let scratch;
let runs = 0;

/**
 * @typedef {object} ProcessRun
 * @property {number | null} code
 * @property {string} stdout
 * @property {string} stderr
 * @property {number} wallMs      spawn to exit, as the user waits for it
 * @property {number} cpuMs       user + system CPU time of the process
 * @property {number} peakRssKb   VmHWM of the process
 * @property {{ origin: string, method: string, path: string }[]} requests  every HTTP request it sent
 */

/**
 * `cloudscale-ccm ARGS…` with only the given environment (and PATH, HOME).
 * @param {readonly string[]} args
 * @param {Record<string, string>} env
 * @returns {Promise<ProcessRun>}
 */
export function runCli(args, env = {}) {
  return runNode([binary, ...args], env);
}

/**
 * `node NODE_ARGS…` (the Node running the benchmark) with the probe preloaded.
 * @param {readonly string[]} nodeArgs
 * @param {Record<string, string>} env
 * @returns {Promise<ProcessRun>}
 */
export async function runNode(nodeArgs, env = {}) {
  const out = scratchPath(`run-${(runs += 1)}.json`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', probe, ...nodeArgs], {
    // NODE_OPTIONS passes through, so a V8 setting (such as the --max-semi-space-size=2 the CronJob
    // once set, docs/benchmarks.md) can be measured against the CLI as it starts by itself.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...(process.env.NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: process.env.NODE_OPTIONS }),
      ...env,
      BENCH_PROBE_OUT: out,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
  const code = await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const wallMs = performance.now() - started;
  let probed;
  try {
    probed = JSON.parse(readFileSync(out, 'utf8'));
  } catch (error) {
    throw new Error(`node ${nodeArgs.join(' ')} (exit ${code}) left no probe record: ${error.message}\n${stderr}`);
  } finally {
    rmSync(out, { force: true });
  }
  return { code, stdout, stderr, wallMs, cpuMs: probed.cpuMs, peakRssKb: probed.peakRssKb, requests: probed.requests };
}

/** A path in the benchmark's scratch directory. */
export function scratchPath(name) {
  scratch ??= mkdtempSync(join(tmpdir(), 'ccm-bench-probe-'));
  return join(scratch, name);
}

/** Removes the probe's scratch directory (at the end of the run). */
export function removeScratch() {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
}
