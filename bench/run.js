// `npm run bench`: measures what a user waits for with the built CLI, run as a process of its own
// against a real kube-apiserver and the simulator with latency: startup beside a bare Node,
// converge time and API requests per pass for many Services (and init-nodes for many Nodes),
// converging under long provisioning, and peak memory over many Services and Nodes. It records
// the figures in bench/results.json and bench/results.md; docs/benchmarks.md explains them.
//
// Settings come from flags or BENCH_* variables (flags win); `--help` lists them.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createControlPlane } from './control-plane.js';
import { removeScratch } from './process.js';

const repo = fileURLToPath(new URL('..', import.meta.url));

/**
 * @typedef {object} BenchSettings
 * @property {number} latencyMs      added to every simulated API request
 * @property {number} lbProvisionMs  how long a new load balancer stays `changing`
 * @property {number} pollSeconds    sync-lb's --poll-seconds
 * @property {number[]} sizes        numbers of Services
 * @property {number} concurrency    sync-lb's --concurrency for the size runs
 * @property {number[]} sweep        concurrencies tried at the largest size
 * @property {number} nodes          Nodes behind every load balancer
 * @property {number} initNodes      Nodes initialised by the init-nodes run
 * @property {number} startupRuns    runs per command in the startup scenario
 * @property {{ provisionMs: number, counts: number[] }[]} provisioning  new Services converged per provisioning time
 * @property {{ services: number, nodes: number }[]} memory  no-op passes measured for peak memory
 * @property {number} scale          Services of the scale and storm groups
 * @property {{ rate: number, retryAfterSeconds: number }} storm  the storm group's share of 429 answers and their Retry-After
 * @property {number} stormConcurrency  sync-lb's --concurrency in the storm
 * @property {number} timeScale     the downtime group's time scale of the strict world (1: real time)
 * @property {string[]} only         scenario groups to run
 * @property {string} out            directory for results.json and results.md
 */

/** The scenario groups, in the order they run. */
const GROUPS = ['startup', 'completion', 'reaction', 'init-nodes', 'sync-lb', 'concurrency', 'provisioning', 'memory', 'scale', 'storm', 'downtime'];

const SETTINGS = [
  { flag: 'latency-ms', env: 'BENCH_LATENCY_MS', default: '50', parse: number, doc: 'simulated API latency per request' },
  { flag: 'lb-provision-ms', env: 'BENCH_LB_PROVISION_MS', default: '1000', parse: number, doc: 'how long a new load balancer is "changing"' },
  { flag: 'poll-seconds', env: 'BENCH_POLL_SECONDS', default: '1', parse: number, doc: "sync-lb's --poll-seconds (the CLI's default is 2)" },
  { flag: 'sizes', env: 'BENCH_SIZES', default: '1,10,50', parse: numbers, doc: 'numbers of Services' },
  { flag: 'concurrency', env: 'BENCH_CONCURRENCY', default: '4', parse: number, doc: "sync-lb's --concurrency (its default)" },
  { flag: 'sweep', env: 'BENCH_SWEEP', default: '1,4,8', parse: numbers, doc: 'concurrencies compared at the largest size' },
  { flag: 'nodes', env: 'BENCH_NODES', default: '3', parse: number, doc: 'Nodes behind every load balancer' },
  { flag: 'init-nodes', env: 'BENCH_INIT_NODES', default: '50', parse: number, doc: 'Nodes for the init-nodes run' },
  { flag: 'startup-runs', env: 'BENCH_STARTUP_RUNS', default: '10', parse: number, doc: 'runs per command in the startup scenario (median)' },
  { flag: 'provisioning', env: 'BENCH_PROVISIONING', default: '5000:1,16', parse: provisioningList, doc: 'MS:N,N;… new Services converged with load balancers changing MS ms (bench:long adds 60000:1,50)' },
  { flag: 'memory', env: 'BENCH_MEMORY', default: '200x300,300x300', parse: memoryList, doc: 'SERVICESxNODES,… no-op passes measured for peak memory ("none" skips)' },
  { flag: 'scale', env: 'BENCH_SCALE', default: '1000', parse: number, doc: 'Services of the scale group (cold and no-op pass) and the storm group' },
  { flag: 'storm', env: 'BENCH_STORM', default: '0.3:1', parse: stormSetting, doc: "RATE:SECONDS: the storm group's share of requests answered 429, with Retry-After SECONDS" },
  { flag: 'storm-concurrency', env: 'BENCH_STORM_CONCURRENCY', default: '16', parse: number, doc: "sync-lb's --concurrency in the storm (the client's limit bounds requests in flight; more Services at once overlap their waits)" },
  { flag: 'time-scale', env: 'BENCH_TIME_SCALE', default: '1', parse: timeScale, doc: "the downtime group's time scale of the simulator's strict world (1: the real API's timings; 0.1 for a quick check)" },
  { flag: 'only', env: 'BENCH_ONLY', default: GROUPS.join(','), parse: groupList, doc: 'scenario groups to run' },
  { flag: 'out', env: 'BENCH_OUT', default: 'bench', parse: (v) => v, doc: 'directory for results.json and results.md' },
];

async function main() {
  const settings = readSettings();
  if (settings === undefined) return 0;
  ensureBuilt();
  // dist/ exists only now, so everything that imports it is loaded late.
  const { runSuite } = await import('./suite.js');
  const { renderMarkdown } = await import('./report.js');

  const started = Date.now();
  const loadBefore = loadavg()[0];
  const abort = new AbortController();
  const controlPlane = createControlPlane();
  const onSignal = (signal) => {
    process.stderr.write(`\nbench: ${signal}, stopping the control plane\n`);
    abort.abort(new Error(`interrupted by ${signal}`));
    controlPlane.stop();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    log(`starting the control plane (helpers/test-cluster)`);
    await controlPlane.start();
    const measured = await runSuite({ kubeconfig: controlPlane.kubeconfig, signal: abort.signal, settings, log });
    const results = resultsDocument(settings, measured, Date.now() - started, [loadBefore, loadavg()[0]]);
    const markdown = renderMarkdown(results);
    mkdirSync(resolve(repo, settings.out), { recursive: true });
    writeFileSync(resolve(repo, settings.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(resolve(repo, settings.out, 'results.md'), markdown);
    process.stdout.write(`\n${markdown}\nWritten: ${join(settings.out, 'results.json')}, ${join(settings.out, 'results.md')}\n`);
    return 0;
  } finally {
    controlPlane.stop();
    removeScratch();
  }
}

/** @returns {BenchSettings | undefined} undefined after --help */
function readSettings() {
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(SETTINGS.map((s) => [s.flag, { type: 'string' }])),
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      ['usage: npm run bench -- [options]   (each option also as the variable shown)', '']
        .concat(SETTINGS.map((s) => `  --${s.flag.padEnd(16)} ${s.env.padEnd(22)} ${s.doc} (default ${s.default})`))
        .join('\n') + '\n',
    );
    return undefined;
  }
  const settings = {};
  for (const s of SETTINGS) {
    const raw = values[s.flag] ?? process.env[s.env] ?? s.default;
    const key = s.flag.replace(/-(.)/g, (_, c) => c.toUpperCase());
    settings[key] = s.parse(raw, `--${s.flag}`);
  }
  if (settings.nodes > settings.initNodes) throw new Error('--nodes must not exceed --init-nodes (the LB runs keep the first Nodes of the init-nodes run)');
  if (settings.memory.some((m) => m.nodes <= settings.nodes)) throw new Error('--memory: the Node count must exceed --nodes (the extra Nodes are registered for it)');
  if (settings.startupRuns < 1) throw new Error('--startup-runs: at least 1');
  return /** @type {BenchSettings} */ (settings);
}

function number(raw, name) {
  const value = Number(raw);
  if (raw === '' || !Number.isFinite(value) || value < 0) throw new Error(`${name}: expected a number ≥ 0, got "${raw}"`);
  return value;
}

function timeScale(raw, name) {
  const value = number(raw, name);
  // The simulator's own range (src/sim/world-names.ts, TIME_SCALE_RANGE); it would refuse the rest later.
  if (value < 0.001 || value > 100) throw new Error(`${name}: expected a time scale from 0.001 to 100, got "${raw}"`);
  return value;
}

function numbers(raw, name) {
  const list = raw.split(',').map((part) => number(part.trim(), name));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${name}: expected whole numbers ≥ 1, got "${raw}"`);
  return list;
}

function groupList(raw, name) {
  const list = raw.split(',').map((part) => part.trim());
  const unknown = list.filter((group) => !GROUPS.includes(group));
  if (unknown.length > 0) throw new Error(`${name}: unknown group(s) ${unknown.join(', ')}; known: ${GROUPS.join(', ')}`);
  return list;
}

function provisioningList(raw, name) {
  return raw.split(';').filter(Boolean).map((part) => {
    const [ms, counts = ''] = part.split(':');
    return { provisionMs: number(ms, name), counts: numbers(counts, name) };
  });
}

function stormSetting(raw, name) {
  const match = /^(0(?:\.\d+)?|1):(\d+)$/.exec(raw.trim());
  if (match === null) throw new Error(`${name}: expected RATE:SECONDS (a share from 0 to 1, whole seconds), got "${raw}"`);
  return { rate: Number(match[1]), retryAfterSeconds: Number(match[2]) };
}

function memoryList(raw, name) {
  if (raw === 'none') return [];
  return raw.split(',').map((part) => {
    const match = /^(\d+)x(\d+)$/.exec(part.trim());
    if (match === null) throw new Error(`${name}: expected SERVICESxNODES,…, got "${raw}"`);
    return { services: Number(match[1]), nodes: Number(match[2]) };
  });
}

/** Builds dist/ with `npm run build` when it is missing or older than a file under src/. */
function ensureBuilt() {
  const marker = join(repo, 'dist', 'cli.js');
  const builtAt = existsSync(marker) ? statSync(marker).mtimeMs : 0;
  if (builtAt >= newestMtime(join(repo, 'src'))) {
    // Up to date, but perhaps built by tsc alone: the second step of the build is cheap when done.
    const vendored = spawnSync(process.execPath, [join(repo, 'scripts', 'vendor.js')], { cwd: repo, stdio: 'inherit' });
    if (vendored.status !== 0) throw new Error('scripts/vendor.js failed; the benchmark measures the built code');
    return;
  }
  log('building dist/ (npm run build)');
  const result = spawnSync('npm', ['run', 'build'], { cwd: repo, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('npm run build failed; the benchmark measures the built code');
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** The document written to results.json; results.md is rendered from it. */
export function resultsDocument(settings, measured, totalMs, load) {
  const cpu = cpus();
  return {
    version: 2,
    measuredAt: new Date().toISOString(),
    commit: gitCommit(),
    totalMs,
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model.trim() ?? 'unknown',
      memoryGb: Math.round(totalmem() / 2 ** 30),
      platform: `${platform()} ${release()}`,
      node: process.versions.node,
      /** One-minute load average at the start and the end: other work on the machine shows here. */
      loadAverage: load.map((l) => Math.round(l * 10) / 10),
    },
    settings: { ...settings, out: undefined },
    ...measured,
  };
}

function gitCommit() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    return `commit ${head}`;
  } catch {
    // Not a git checkout (e.g. an unpacked release): the figures stand without a commit.
    return null;
  }
}

function log(line) {
  process.stderr.write(`bench: ${line}\n`);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
