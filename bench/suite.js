// The measured scenarios. Every pass runs the real command code (syncLbCommand, initNodesCommand)
// with the CLI's context against the real kube-apiserver and the simulator; requests are counted
// twice, by the client's counter and by the simulator's log, and compared with the minimum.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { initNodesCommand } from '../dist/commands/init-nodes.js';
import { syncLbCommand } from '../dist/commands/sync-lb.js';
import { createCloudscaleClient } from '../dist/core/cloudscale/client.js';
import { BENCH_TOKEN, TIMEOUT_ANNOTATION, countKubeRequests, kubeFixtures, passContext, startCloud } from './fixtures.js';
import {
  convergeMinimum,
  differenceByRoute,
  initNodesMinimum,
  listenerChangeMinimum,
  noopMinimum,
  shapeOf,
} from './minimum.js';

/**
 * @param {{ kubeconfig: string, signal: AbortSignal, settings: import('./run.js').BenchSettings, log: (line: string) => void }} env
 */
export async function runSuite(env) {
  const { settings, log } = env;
  const kube = kubeFixtures(env.kubeconfig);

  log(`init-nodes: ${settings.initNodes} Nodes`);
  const initNodes = await measureInitNodes(env, kube);
  // The load-balancer scenarios run with the first few of these Nodes, initialised as above.
  const extra = range(settings.nodes + 1, settings.initNodes);
  await kube.deleteNodes(extra);

  const services = [];
  for (const count of settings.sizes) {
    log(`sync-lb: ${count} Service(s), concurrency ${settings.concurrency}`);
    services.push(await measureServices(env, kube, { count, concurrency: settings.concurrency, listenerChange: true }));
  }

  const sweepSize = Math.max(...settings.sizes);
  const concurrency = [];
  for (const limit of settings.sweep) {
    const reused = limit === settings.concurrency ? services.find((s) => s.services === sweepSize) : undefined;
    if (reused === undefined) log(`sync-lb: ${sweepSize} Service(s), concurrency ${limit}`);
    const run = reused ?? (await measureServices(env, kube, { count: sweepSize, concurrency: limit, listenerChange: false }));
    concurrency.push({ services: sweepSize, concurrency: limit, converge: run.converge, noop: run.noop });
  }
  return { initNodes, services, concurrency };
}

async function measureInitNodes(env, kube) {
  const { settings } = env;
  const sim = await startCloud({ servers: settings.initNodes, latencyMs: settings.latencyMs, lbProvisionMs: settings.lbProvisionMs });
  try {
    await kube.createUninitializedNodes(range(1, settings.initNodes));
    const runPass = async (expected) => {
      sim.admin.resetRequests();
      const { ctx, output } = await passContext({ kubeconfig: env.kubeconfig, apiUrl: sim.url, signal: env.signal });
      const kubeRequests = countKubeRequests(ctx.kube());
      const started = performance.now();
      const result = await initNodesCommand([], { dryRun: false }, ctx);
      const wallMs = performance.now() - started;
      const outcomes = countBy(result.nodes.map((n) => n.outcome));
      if (outcomes[expected] !== settings.initNodes) {
        throw new Error(`init-nodes: expected ${settings.initNodes} nodes "${expected}", got ${JSON.stringify(outcomes)}\n${output()}`);
      }
      return measured(wallMs, await ctx.cloudscale(), sim, initNodesMinimum(), kubeRequests);
    };
    const initialise = await runPass('initialized');
    const noop = await runPass('in-sync');
    return { nodes: settings.initNodes, initialise, noop };
  } finally {
    await sim.stop();
  }
}

async function measureServices(env, kube, { count, concurrency, listenerChange }) {
  const { settings } = env;
  const sim = await startCloud({ servers: settings.nodes, latencyMs: settings.latencyMs, lbProvisionMs: settings.lbProvisionMs });
  const namespace = `bench-${count}-c${concurrency}-${randomBytes(3).toString('hex')}`;
  let names = [];
  try {
    await kube.createNamespace(namespace);
    const created = await kube.createServices(namespace, count);
    names = created.map((s) => s.name);
    const shape = shapeOf(created, settings.nodes);
    const pass = (expected, minimum) => measureSyncPass(env, sim, { concurrency, expected, count, minimum });

    const converge = await pass('changed', convergeMinimum(shape));
    await verifyCloud(sim, shape);
    const noop = await repeatedNoop(() => pass('unchanged', noopMinimum(shape)));
    let change;
    if (listenerChange) {
      await kube.annotateServices(namespace, names, { [TIMEOUT_ANNOTATION]: '120000' });
      change = await pass('changed', listenerChangeMinimum(shape));
    }
    return { ...shape, concurrency, converge, noop, ...(change === undefined ? {} : { listenerChange: change }) };
  } finally {
    await kube.deleteServices(namespace, names);
    await sim.stop();
  }
}

async function measureSyncPass(env, sim, { concurrency, expected, count, minimum }) {
  const { settings } = env;
  sim.admin.resetRequests();
  const { ctx, output } = await passContext({ kubeconfig: env.kubeconfig, apiUrl: sim.url, signal: env.signal });
  const kubeRequests = countKubeRequests(ctx.kube());
  const options = {
    namespace: 'default',
    concurrency,
    waitTimeout: 600,
    settleSeconds: 5,
    pollSeconds: settings.pollSeconds,
    dryRun: false,
  };
  const started = performance.now();
  const report = await syncLbCommand([], options, ctx);
  const wallMs = performance.now() - started;
  const statuses = countBy(report.services.map((s) => s.status));
  if (statuses[expected] !== count) {
    throw new Error(`sync-lb: expected ${count} Service(s) "${expected}", got ${JSON.stringify(statuses)}\n${output()}`);
  }
  return measured(wallMs, await ctx.cloudscale(), sim, minimum, kubeRequests);
}

/**
 * One pass's figures: the client's counter, the simulator's log, the minimum beside them, and
 * the Kubernetes requests of the pass (they share its wall time).
 */
function measured(wallMs, client, sim, minimum, kubeRequests) {
  const counted = client.requests.summary();
  const logged = sim.admin.requests();
  const simByRoute = countBy(logged.map((entry) => `${entry.method} ${entry.route}`));
  const simReads = logged.filter((entry) => entry.method === 'GET').length;
  const requests = { total: counted.total, reads: counted.reads, writes: counted.writes, retries: counted.retries };
  return {
    wallMs: Math.round(wallMs),
    requests,
    simulatorLog: { total: logged.length, reads: simReads, writes: logged.length - simReads },
    minimum: { total: minimum.total, reads: minimum.reads, writes: minimum.writes },
    aboveMinimum: differenceByRoute(simByRoute, minimum),
    countsAgree: counted.total === logged.length,
    kubernetes: kubeRequests.summary(),
  };
}

/**
 * A no-op pass is short, so one run is at the mercy of a garbage collection or a busy neighbour:
 * it runs NOOP_RUNS times and reports the median time. The requests must be the same every time.
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
  const median = [...times].sort((a, b) => a - b)[Math.floor(NOOP_RUNS / 2)];
  return { ...runs[0], wallMs: median, wallMsRuns: times };
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

function countBy(values) {
  const counts = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function range(from, to) {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
