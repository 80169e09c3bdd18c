// The reaction-time group: how long a new Node stays tainted uninitialized and a new Service waits
// for its ingress, for the CronJob as deployed (a `run --watch-for` process that watches after
// its pass) and for a plain `run` on a one-minute schedule. The watching run is the built CLI as
// a process of its own; Nodes and Services are created once its full pass has converged, one at
// a time, and the time to the taint's removal or the ingress is read by polling every 50 ms
// (so a figure can be up to 50 ms long). For a Service the simulator's provisioning time (load
// balancers `changing`) is subtracted: it is the cloud's, not the tool's. A plain `run` reacts on
// its next tick: the wait for the tick (0–60 s, 30 s on average for a change at a random time)
// plus the pass, whose time is measured here.
import { randomBytes } from 'node:crypto';
import { connectKube } from '../dist/core/kube/connection.js';
import { BENCH_TOKEN, TIMEOUT_ANNOTATION, UNINITIALIZED_TAINT, nodeName, startCloud } from './fixtures.js';
import { runCli } from './process.js';

const POLL_MS = 50;
const WATCH_SECONDS = 60;

/**
 * @param {{ kubeconfig: string, settings: import('./run.js').BenchSettings, log: (line: string) => void }} env
 * @param {ReturnType<typeof import('./fixtures.js').kubeFixtures>} kube
 */
export async function measureReaction(env, kube, { rounds = 5 } = {}) {
  const { settings, log } = env;
  const conn = connectKube({ kubeconfig: env.kubeconfig });
  // Nodes 1–3 serve the Services; then one new Node per round, and one for the plain run.
  const base = [1, 2, 3];
  const newNodes = Array.from({ length: rounds + 1 }, (_, i) => 4 + i);
  const sim = await startCloud({ servers: 4 + rounds, latencyMs: settings.latencyMs, lbProvisionMs: settings.lbProvisionMs });
  const namespace = `reaction-${randomBytes(3).toString('hex')}`;
  const cliEnv = { KUBECONFIG: env.kubeconfig, CLOUDSCALE_API_URL: sim.url, CLOUDSCALE_API_TOKEN: BENCH_TOKEN };
  const services = [];
  try {
    await kube.createNamespace(namespace);
    await kube.createUninitializedNodes(base);
    services.push(...(await kube.createServices(namespace, 1, { ports: 1 })).map((s) => s.name));

    log(`reaction: run --watch-for ${WATCH_SECONDS}s, ${rounds} new Nodes and ${rounds} new Services while it watches`);
    // The CronJob's arguments: the CLI's defaults (a load balancer is read every second while it provisions).
    const watching = runCli(['run', '--watch-for', `${WATCH_SECONDS}s`], cliEnv);
    await until(`the watching run's full pass`, () => ingressOf(conn, namespace, services[0]), WATCH_SECONDS * 1000);
    const nodeMs = [];
    for (const number of newNodes.slice(0, rounds)) {
      const started = performance.now();
      await kube.createUninitializedNodes([number]);
      await until(`node ${number} initialised`, () => untainted(conn, number), WATCH_SECONDS * 1000);
      nodeMs.push(Math.round(performance.now() - started));
    }
    const serviceMs = [];
    for (let round = 1; round <= rounds; round += 1) {
      const started = performance.now();
      const [created] = await kube.createServices(namespace, 1, { first: 1 + round, ports: 1 });
      services.push(created.name);
      await until(`service ${created.name} has its ingress`, () => ingressOf(conn, namespace, created.name), WATCH_SECONDS * 1000);
      serviceMs.push(Math.round(performance.now() - started - settings.lbProvisionMs));
    }
    const watched = await watching;
    if (watched.code !== 0) throw new Error(`run --watch-for: exit ${watched.code}\n${watched.stderr}`);

    // The plain run: one Node and one Service appeared since the last tick.
    await kube.createUninitializedNodes([newNodes[rounds]]);
    const [late] = await kube.createServices(namespace, 1, { first: 2 + rounds, ports: 1 });
    services.push(late.name);
    const plain = await runCli(['run'], cliEnv);
    if (plain.code !== 0) throw new Error(`run: exit ${plain.code}\n${plain.stderr}`);

    return {
      rounds,
      pollMs: POLL_MS,
      lbProvisionMs: settings.lbProvisionMs,
      watchFor: { seconds: WATCH_SECONDS, nodeMs, serviceMs, peakRssKb: watched.peakRssKb, wallMs: Math.round(watched.wallMs) },
      plainRun: { passMs: Math.round(plain.wallMs), meanMs: 30_000 + Math.round(plain.wallMs), worstMs: 60_000 + Math.round(plain.wallMs) },
    };
  } finally {
    await kube.deleteServices(namespace, services).catch(() => undefined);
    await kube.deleteNodes([...base, ...newNodes]).catch(() => undefined);
    await sim.stop();
  }
}

/** The results.md section of the group. */
export function reactionSection(reaction) {
  if (reaction === undefined) return [];
  const { watchFor, plainRun } = reaction;
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const stats = (values) => `median ${s(median(values))}, max ${s(Math.max(...values))}`;
  return [
    '## Reaction time',
    '',
    `From the creation of a Node (tainted uninitialized) to the taint's removal, and of a Service to its ingress ` +
      `(minus the simulator's ${reaction.lbProvisionMs / 1000} s of provisioning); ${reaction.rounds} of each, created one at a time ` +
      `after the full pass, state polled every ${reaction.pollMs} ms; both runs with the CronJob's arguments ` +
      '(the CLI\'s defaults: a provisioning load balancer is read every second).',
    '',
    '| deployment | new Node initialised | new Service has its ingress |',
    '|---|---|---|',
    `| CronJob as deployed: \`run --watch-for ${watchFor.seconds}s\` | ${stats(watchFor.nodeMs)} | ${stats(watchFor.serviceMs)} |`,
    `| plain \`run\` every minute: next tick + the pass (${s(plainRun.passMs)} measured) | ${s(plainRun.meanMs)} on average, ${s(plainRun.worstMs)} at worst | the same |`,
    '',
    `The watching run's peak RSS: ${Math.round(watchFor.peakRssKb / 1024)} MB over its ${Math.round(watchFor.wallMs / 1000)} s.`,
    '',
  ];
}

async function until(what, condition, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`reaction: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function untainted(conn, number) {
  const node = await conn.core.readNode({ name: nodeName(number) });
  return !(node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT);
}

async function ingressOf(conn, namespace, name) {
  const service = await conn.core.readNamespacedService({ namespace, name });
  return (service.status?.loadBalancer?.ingress ?? []).length > 0;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * A `run --watch-for 60s` over converged Services and Nodes (the memory group's): its full pass,
 * then a minute of watching in which one Service changes (a listener timeout), so one reaction
 * pass runs. Its peak RSS is what the CronJob's memory request must hold.
 */
export async function measureWatchingMinute(env, sim, kube, namespace, serviceName) {
  const cliEnv = { KUBECONFIG: env.kubeconfig, CLOUDSCALE_API_URL: sim.url, CLOUDSCALE_API_TOKEN: BENCH_TOKEN };
  const running = runCli(['run', '--watch-for', `${WATCH_SECONDS}s`, '-o', 'json'], cliEnv);
  // Halfway through the minute: after the full pass here, so the change makes a reaction pass.
  await new Promise((resolve) => setTimeout(resolve, (WATCH_SECONDS * 1000) / 2));
  await kube.annotateServices(namespace, [serviceName], { [TIMEOUT_ANNOTATION]: '90000' });
  const run = await running;
  if (run.code !== 0) throw new Error(`run --watch-for: exit ${run.code}\n${run.stderr}`);
  const document = JSON.parse(run.stdout);
  return {
    seconds: WATCH_SECONDS,
    wallMs: Math.round(run.wallMs),
    peakRssKb: run.peakRssKb,
    reactionPasses: document.watch?.reactionPasses?.length ?? 0,
  };
}
