// The measured scenarios. Every pass runs the built CLI as a process of its own (bench/process.js)
// against the real kube-apiserver and the simulator, which runs in the benchmark's process: the
// figures are what a user waits for (wall time from spawn to exit, startup included), the
// requests the process sent (the simulator's log, checked against the CLI's own counter) beside
// the minimum the work needs, and the process's peak resident set size.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createCloudscaleClient } from '../dist/core/cloudscale/client.js';
import { BENCH_TOKEN, TIMEOUT_ANNOTATION, kubeFixtures, kubeRoute, nodeName, startCloud } from './fixtures.js';
import {
  convergeMinimum,
  differenceByRoute,
  initNodesMinimum,
  listenerChangeMinimum,
  noopMinimum,
  shapeOf,
} from './minimum.js';
import { runCli, runNode, scratchPath } from './process.js';
import { measureDowntime } from './downtime.js';
import { measureReaction, measureWatchingMinute } from './reaction.js';

/**
 * @param {{ kubeconfig: string, signal: AbortSignal, settings: import('./run.js').BenchSettings, log: (line: string) => void }} env
 */
export async function runSuite(env) {
  const { settings, log } = env;
  const kube = kubeFixtures(env.kubeconfig);
  const wanted = (group) => settings.only.includes(group);
  const results = {};

  if (wanted('startup')) {
    log(`startup: ${settings.startupRuns} runs per command`);
    results.startup = await measureStartup(env, kube);
  }
  if (wanted('completion')) {
    log(`completion: ${settings.startupRuns} runs per lookup`);
    results.completion = await measureCompletion(env, kube);
  }
  if (wanted('reaction')) results.reaction = await measureReaction(env, kube);
  if (!['init-nodes', 'sync-lb', 'concurrency', 'provisioning', 'memory', 'scale', 'storm', 'downtime'].some(wanted)) return results;

  // The load-balancer scenarios run with the first few Nodes of the init-nodes run, initialised by it.
  const initNodes = wanted('init-nodes') ? settings.initNodes : settings.nodes;
  log(`init-nodes: ${initNodes} Nodes`);
  const init = await measureInitNodes(env, kube, { from: 1, to: initNodes });
  if (wanted('init-nodes')) results.initNodes = init;
  await kube.deleteNodes(range(settings.nodes + 1, initNodes));

  const services = [];
  const sizes = wanted('sync-lb') ? settings.sizes : [];
  for (const count of sizes) {
    log(`sync-lb: ${count} Service(s), concurrency ${settings.concurrency}`);
    services.push(await measureServices(env, kube, { count, concurrency: settings.concurrency, listenerChange: true }));
  }
  if (wanted('sync-lb')) results.syncLb = services;

  if (wanted('concurrency')) {
    const sweepSize = Math.max(...settings.sizes);
    results.concurrency = [];
    for (const limit of settings.sweep) {
      const reused = limit === settings.concurrency ? services.find((s) => s.services === sweepSize) : undefined;
      if (reused === undefined) log(`sync-lb: ${sweepSize} Service(s), concurrency ${limit}`);
      const run = reused ?? (await measureServices(env, kube, { count: sweepSize, concurrency: limit, listenerChange: false }));
      results.concurrency.push({ services: sweepSize, concurrency: limit, converge: run.converge, noop: run.noop });
    }
  }

  if (wanted('provisioning')) {
    results.provisioning = [];
    for (const { provisionMs, counts } of settings.provisioning) {
      for (const count of counts) {
        log(`sync-lb: ${count} new Service(s), provisioning ${provisionMs / 1000} s`);
        const run = await measureServices(env, kube, { count, concurrency: settings.concurrency, listenerChange: false, noop: false, lbProvisionMs: provisionMs });
        results.provisioning.push({ provisionMs, services: count, pools: run.pools, converge: run.converge });
      }
    }
  }

  if (wanted('memory')) results.memory = await measureMemory(env, kube);
  if (wanted('scale')) {
    log(`scale: ${settings.scale} Services, a cold pass and a no-op pass, concurrency ${settings.concurrency}`);
    results.scale = await measureServices(env, kube, { count: settings.scale, concurrency: settings.concurrency, listenerChange: false });
  }
  if (wanted('storm')) {
    const { rate, retryAfterSeconds } = settings.storm;
    log(`storm: ${settings.scale} new Services, ${rate * 100} % of requests answered 429 with Retry-After ${retryAfterSeconds}`);
    const storm = { pathPattern: '/**', status: 429, rate, retryAfterSeconds };
    const run = await measureServices(env, kube, { count: settings.scale, concurrency: settings.stormConcurrency, listenerChange: false, noop: false, storm });
    results.storm = { ...run, rate, retryAfterSeconds };
  }
  if (wanted('downtime')) results.downtime = await measureDowntime(env, { nodes: range(1, settings.nodes).map(nodeName) });
  return results;
}

/**
 * Commands that need no cloud, each run `startupRuns` times beside a bare `node -e 0`, without and
 * with Node's compile cache (NODE_COMPILE_CACHE, warmed by one run first); medians.
 */
async function measureStartup(env, kube) {
  const { settings } = env;
  const namespace = `bench-startup-${randomBytes(3).toString('hex')}`;
  await kube.createNamespace(namespace);
  const created = await kube.createServices(namespace, 10);
  const cacheDir = scratchPath('compile-cache');
  const commands = [
    { name: 'node -e 0 (bare Node)', nodeArgs: ['-e', '0'], kubeMinimum: 0 },
    { name: '--help', args: ['--help'], kubeMinimum: 0 },
    { name: 'completion bash', args: ['completion', 'bash'], kubeMinimum: 0 },
    { name: 'manifests', args: ['manifests'], kubeMinimum: 0 },
    { name: '__complete services (10 Services)', args: ['__complete', 'services', '-n', namespace], kubeMinimum: 1, lines: 10 },
  ];
  try {
    return await measureCommands(settings, commands, { KUBECONFIG: env.kubeconfig }, cacheDir);
  } finally {
    await kube.deleteServices(namespace, created.map((s) => s.name));
  }
}

/**
 * What a Tab costs that completes Service names: `__complete services` (what the completion
 * scripts run) beside a bare `node -e 0`, answered with one GET of its own (the test cluster's
 * kubeconfig: a bearer token and a CA file) and by the full Kubernetes client (the fallback, forced here by two files
 * in KUBECONFIG, which only the full client merges). Medians of `startupRuns` runs each.
 */
async function measureCompletion(env, kube) {
  const { settings } = env;
  const namespace = `bench-completion-${randomBytes(3).toString('hex')}`;
  await kube.createNamespace(namespace);
  const created = await kube.createServices(namespace, 10);
  const second = scratchPath('second-kubeconfig');
  writeFileSync(second, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
  const lookup = ['__complete', 'services', '-n', namespace];
  const commands = [
    { name: 'node -e 0 (bare Node)', nodeArgs: ['-e', '0'], kubeMinimum: 0 },
    { name: '__complete services: one GET (bearer token)', args: lookup, kubeMinimum: 1, lines: 10 },
    { name: '__complete services: full client (two KUBECONFIG files)', args: lookup, kubeMinimum: 1, lines: 10, env: { KUBECONFIG: `${env.kubeconfig}:${second}` } },
  ];
  try {
    return await measureCommands(settings, commands, { KUBECONFIG: env.kubeconfig }, scratchPath('compile-cache-completion'));
  } finally {
    await kube.deleteServices(namespace, created.map((s) => s.name));
  }
}

/**
 * Runs each command `startupRuns` times without and with Node's compile cache (warmed by one run
 * first); medians, and the ratio to the first command (the bare Node).
 */
async function measureCommands(settings, commands, env0, cacheDir) {
  const rows = [];
  for (const command of commands) {
    const once = (extraEnv) =>
      command.nodeArgs === undefined
        ? runCli(command.args, { ...env0, ...command.env, ...extraEnv })
        : runNode(command.nodeArgs, extraEnv);
    const series = async (extraEnv) => {
      const runs = [];
      for (let i = 0; i < settings.startupRuns; i += 1) {
        const run = await once(extraEnv);
        if (run.code !== 0) throw new Error(`${command.name}: exit ${run.code}\n${run.stderr}`);
        if (command.lines !== undefined && run.stdout.trim().split('\n').length !== command.lines) {
          throw new Error(`${command.name}: expected ${command.lines} candidates, got:\n${run.stdout}`);
        }
        runs.push(run);
      }
      return {
        wallMs: median(runs.map((r) => r.wallMs)),
        cpuMs: median(runs.map((r) => r.cpuMs)),
        peakRssKb: median(runs.map((r) => r.peakRssKb)),
        wallMsRange: [Math.min(...runs.map((r) => r.wallMs)), Math.max(...runs.map((r) => r.wallMs))].map(Math.round),
        requests: runs[0].requests.length,
      };
    };
    const plain = await series({});
    await once({ NODE_COMPILE_CACHE: cacheDir });
    const compileCache = await series({ NODE_COMPILE_CACHE: cacheDir });
    rows.push({ command: command.name, requests: plain.requests, minimum: command.kubeMinimum, plain, compileCache });
  }
  const bare = rows[0].plain;
  return {
    runs: settings.startupRuns,
    rows: rows.map((row) => ({ ...row, wallVsBare: ratio(row.plain.wallMs, bare.wallMs), cpuVsBare: ratio(row.plain.cpuMs, bare.cpuMs) })),
  };
}

/**
 * Registers Nodes `from`…`to` uninitialised (those before `from` exist, initialised) and runs
 * init-nodes twice: initialise them, then a pass with nothing to do.
 */
async function measureInitNodes(env, kube, { from, to }) {
  const { settings } = env;
  const sim = await startCloud({ servers: to, latencyMs: settings.latencyMs, lbProvisionMs: settings.lbProvisionMs });
  try {
    await kube.createUninitializedNodes(range(from, to));
    const runPass = async (expected) => {
      const { run, document } = await cliPass(env, sim, ['init-nodes']);
      const outcomes = countBy(document.nodes.map((n) => n.outcome));
      // The Nodes initialised before stay in sync.
      const wanted = expected === 'in-sync' ? { 'in-sync': to } : { ...(from > 1 ? { 'in-sync': from - 1 } : {}), initialized: to - from + 1 };
      if (JSON.stringify(sorted(outcomes)) !== JSON.stringify(sorted(wanted))) {
        throw new Error(`init-nodes: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(outcomes)}`);
      }
      return measured(run, sim, initNodesMinimum());
    };
    const initialise = await runPass('initialized');
    const noop = await runPass('in-sync');
    return { nodes: to, initialise, noop };
  } finally {
    await sim.stop();
  }
}

/**
 * `count` new Services: a converge, checked against the cloud, then (unless `noop` is false) the
 * pass after it with nothing to do. With `storm` (an errorRate fault) the converge runs while the
 * simulator answers that share of requests 429; the check of the cloud (nothing created twice)
 * runs without it.
 */
async function measureServices(env, kube, { count, concurrency, listenerChange, noop = true, lbProvisionMs = env.settings.lbProvisionMs, storm }) {
  const { settings } = env;
  const sim = await startCloud({ servers: settings.nodes, latencyMs: settings.latencyMs, lbProvisionMs });
  if (storm !== undefined) sim.admin.setFaults({ latencyMs: settings.latencyMs, errorRate: storm });
  const namespace = `bench-${count}-c${concurrency}-${randomBytes(3).toString('hex')}`;
  let names = [];
  try {
    await kube.createNamespace(namespace);
    const created = await kube.createServices(namespace, count);
    names = created.map((s) => s.name);
    const shape = shapeOf(created, settings.nodes);
    const pass = (expected, minimum) => measureSyncPass(env, sim, { concurrency, expected, count, minimum });

    const converge = await pass('changed', convergeMinimum(shape));
    sim.admin.setFaults({ latencyMs: settings.latencyMs });
    await verifyCloud(sim, shape);
    const result = { ...shape, concurrency, converge };
    if (noop) result.noop = await repeatedNoop(() => pass('unchanged', noopMinimum(shape)));
    if (listenerChange) {
      await kube.annotateServices(namespace, names, { [TIMEOUT_ANNOTATION]: '120000' });
      result.listenerChange = await pass('changed', listenerChangeMinimum(shape));
    }
    return result;
  } finally {
    await kube.deleteServices(namespace, names);
    await sim.stop();
  }
}

/**
 * A no-op pass over many Services with many Nodes each, for the CLI's peak memory: the Nodes are
 * registered and initialised, the Services converged with no simulated latency (setup, not
 * measured), then the no-op pass runs with the usual latency. Sizes of the same Node count grow
 * one namespace and one cloud, so 300 Services add 100 to the 200 before.
 */
async function measureMemory(env, kube) {
  const { settings, log } = env;
  const rows = [];
  const byNodes = new Map();
  for (const size of settings.memory) byNodes.set(size.nodes, [...(byNodes.get(size.nodes) ?? []), size.services].sort((a, b) => a - b));
  for (const [nodes, serviceCounts] of byNodes) {
    log(`memory: registering and initialising ${nodes} Nodes`);
    const init = await measureInitNodes(env, kube, { from: settings.nodes + 1, to: nodes });
    const sim = await startCloud({ servers: nodes, latencyMs: 0, lbProvisionMs: 0 });
    const namespace = `bench-memory-${nodes}-${randomBytes(3).toString('hex')}`;
    let names = [];
    try {
      await kube.createNamespace(namespace);
      for (const count of serviceCounts) {
        log(`memory: ${count} Services × ${nodes} Nodes (converging without latency first)`);
        const created = await kube.createServices(namespace, count - names.length, { first: names.length + 1, ports: 1 });
        names = [...names, ...created.map((s) => s.name)];
        const shape = shapeOf(names.map(() => ({ ports: 1 })), nodes);
        sim.admin.setFaults({ latencyMs: 0 });
        const setup = await measureSyncPass(env, sim, { concurrency: 8, expected: 'changed', count: created.length, minimum: convergeMinimum(shape), total: count });
        sim.admin.setFaults({ latencyMs: settings.latencyMs });
        const noop = await repeatedNoop(() => measureSyncPass(env, sim, { concurrency: settings.concurrency, expected: 'unchanged', count, minimum: noopMinimum(shape) }));
        log(`memory: run --watch-for over ${count} Services × ${nodes} Nodes, one Service changed while it watches`);
        const watch = await measureWatchingMinute(env, sim, kube, namespace, names[0]);
        rows.push({ services: count, nodes, members: shape.members, setupMs: setup.wallMs, setupPeakRssKb: setup.peakRssKb, noop, watch });
      }
    } finally {
      await kube.deleteServices(namespace, names);
      await sim.stop();
      await kube.deleteNodes(range(settings.nodes + 1, nodes));
    }
    rows.filter((row) => row.nodes === nodes).forEach((row) => (row.initNodes = init));
  }
  return rows;
}

/** One sync-lb pass; `count` Services must end `expected` (of `total` in the pass, default `count`). */
async function measureSyncPass(env, sim, { concurrency, expected, count, minimum, total = count }) {
  const { settings } = env;
  const args = ['sync-lb', '--concurrency', String(concurrency), '--wait-timeout', '600', '--settle-seconds', '5', '--poll-seconds', String(settings.pollSeconds)];
  const { run, document } = await cliPass(env, sim, args);
  const statuses = countBy(document.services.map((s) => s.status));
  if (statuses[expected] !== count || document.services.length !== total) {
    throw new Error(`sync-lb: expected ${count} of ${total} Service(s) "${expected}", got ${JSON.stringify(statuses)}`);
  }
  return measured(run, sim, minimum, document.requests);
}

/** Runs `cloudscale-ccm ARGS -o json` against the control plane and `sim`; fails on a non-zero exit. */
async function cliPass(env, sim, args) {
  sim.admin.resetRequests();
  const run = await runCli([...args, '-o', 'json'], {
    KUBECONFIG: env.kubeconfig,
    CLOUDSCALE_API_URL: sim.url,
    CLOUDSCALE_API_TOKEN: BENCH_TOKEN,
  });
  if (run.code !== 0) throw new Error(`cloudscale-ccm ${args.join(' ')}: exit ${run.code}\n${run.stderr}\n${run.stdout}`);
  return { run, document: JSON.parse(run.stdout) };
}

/**
 * One pass's figures: the simulator's log beside the minimum, the process's own count (the CLI's
 * request counter where its document has one, else the requests the probe saw go to the
 * simulator), the Kubernetes requests of the pass, and the process's time and peak memory.
 */
function measured(run, sim, minimum, clientCounter) {
  const cloudOrigin = new URL(sim.url).origin;
  const toCloud = run.requests.filter((r) => r.origin === cloudOrigin);
  const toKube = run.requests.filter((r) => r.origin !== cloudOrigin).map((r) => `${r.method} ${kubeRoute(r.origin + r.path)}`);
  const logged = sim.admin.requests();
  const simByRoute = countBy(logged.map((entry) => `${entry.method} ${entry.route}`));
  const simReads = logged.filter((entry) => entry.method === 'GET').length;
  const counted = clientCounter ?? { total: toCloud.length, reads: toCloud.filter((r) => r.method === 'GET').length, retries: 0 };
  return {
    wallMs: Math.round(run.wallMs),
    cpuMs: run.cpuMs,
    peakRssKb: run.peakRssKb,
    requests: {
      total: logged.length,
      reads: simReads,
      writes: logged.length - simReads,
      retries: counted.retries ?? 0,
      throttled: logged.filter((entry) => entry.status === 429).length,
      waitedMs: counted.waitedMs ?? 0,
    },
    clientCount: counted.total,
    minimum: { total: minimum.total, reads: minimum.reads, writes: minimum.writes },
    aboveMinimum: differenceByRoute(simByRoute, minimum),
    countsAgree: counted.total === logged.length,
    kubernetes: summariseRoutes(toKube),
  };
}

function summariseRoutes(records) {
  const reads = records.filter((r) => r.startsWith('GET ')).length;
  const byRoute = {};
  for (const route of [...records].sort()) byRoute[route] = (byRoute[route] ?? 0) + 1;
  return { total: records.length, reads, writes: records.length - reads, byRoute };
}

/**
 * A no-op pass is short, so one run is at the mercy of a garbage collection or a busy neighbour:
 * it runs NOOP_RUNS times and reports the median time and memory. The requests must be the same
 * every time.
 */
const NOOP_RUNS = 3;

async function repeatedNoop(runPass) {
  const runs = [];
  for (let i = 0; i < NOOP_RUNS; i += 1) runs.push(await runPass());
  const differing = runs.find((run) => JSON.stringify(run.aboveMinimum) !== JSON.stringify(runs[0].aboveMinimum) || run.requests.total !== runs[0].requests.total);
  if (differing !== undefined) {
    throw new Error(`no-op passes differ in their requests: ${runs.map((run) => run.requests.total).join(', ')}`);
  }
  const times = runs.map((run) => run.wallMs);
  return {
    ...runs[0],
    wallMs: median(times),
    cpuMs: median(runs.map((run) => run.cpuMs)),
    peakRssKb: median(runs.map((run) => run.peakRssKb)),
    wallMsRuns: times,
  };
}

/** The converge pass must have built exactly the objects the Services need. */
async function verifyCloud(sim, shape) {
  const cloud = createCloudscaleClient({ baseUrl: sim.url, token: BENCH_TOKEN });
  const [lbs, pools, listeners, monitors] = await Promise.all([
    cloud.loadBalancers.list(),
    cloud.pools.list(),
    cloud.listeners.list(),
    cloud.healthMonitors.list(),
  ]);
  const members = (await Promise.all(pools.map((p) => cloud.poolMembers.list(p.uuid)))).flat();
  const found = { services: lbs.length, pools: pools.length, members: members.length, listeners: listeners.length, monitors: monitors.length };
  const running = lbs.filter((lb) => lb.status === 'running').length;
  if (JSON.stringify(found) !== JSON.stringify(shape) || running !== lbs.length) {
    throw new Error(`after converging, the cloud holds ${JSON.stringify(found)} (${running} running), expected ${JSON.stringify(shape)}`);
  }
}

function sorted(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function ratio(value, base) {
  return Math.round((value / Math.max(base, 1)) * 10) / 10;
}

function countBy(values) {
  const counts = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function range(from, to) {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
