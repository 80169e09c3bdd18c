// The downtime group of `npm run bench` (`npm run bench:downtime` runs it alone): for every impact
// class the planner can emit (bench/downtime-scenarios.js, checked against IMPACT_CLASSES before
// anything starts), one change made to a converged Service in the simulator's strict world (the
// real API's timings: health checks by the monitor's delay and thresholds, member changes within
// 20 s, a new listener 30 s, a re-created one 15 s, deletes that settle; docs/sim.md, "Worlds"),
// at time scale 1 unless `--time-scale` says otherwise. Per scenario: `plan -o json` gives the
// prediction, `sync-lb` passes apply the change as the CronJob's would (again until `plan` has
// nothing left, a drained member's deletion included), and the data plane is watched for the
// Service's ports: its serving history (a port serves while a listener on it has a pool with an
// enabled, up member) and a probe of a new connection every PROBE_MS. Each scenario has its own
// Service and load balancer; they share their passes, as Services share the CronJob's Jobs.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { connectKube } from '../dist/core/kube/connection.js';
import { IMPACT_CLASSES } from '../dist/core/lb/impact.js';
import { worstDowntime } from '../dist/core/lb/service-plan.js';
import { DRAIN_SECONDS, FAILED_REQUEST_SCENARIOS, NOT_PLANNED, SCENARIOS, scenarioProblems } from './downtime-scenarios.js';
import { BENCH_TOKEN, kubeFixtures, seedOf } from './fixtures.js';
import { runCli } from './process.js';
import { startSimulator } from '../dist/sim/index.js';

const NAMESPACE = 'bench-downtime';
const UUID_ANNOTATION = 'k8s.cloudscale.ch/loadbalancer-uuid';
/** How often each scenario's ports are probed with a new connection. */
const PROBE_MS = 250;
/** Passes per scenario at most: a drain needs two (disable, then delete once drained). */
const MAX_PASSES = 5;
/**
 * After the last pass, how long (in the API's seconds) the data plane is given before the history
 * is read: a new listener's 30 s and a member's checks, with room.
 */
const SETTLE_SECONDS = 45;
/** A watching run's duration, and when the change comes after its start (its own pass done). */
const WATCH_SECONDS = 90;
const WATCH_START_MS = 10_000;

/** Runs every scenario; returns one row per impact class. */
export async function measureDowntime(env, { nodes }) {
  const problems = scenarioProblems(IMPACT_CLASSES);
  if (problems.length > 0) throw new Error(`bench/downtime-scenarios.js does not cover the planner's impact classes:\n  ${problems.join('\n  ')}`);
  const { settings, log } = env;
  const timeScale = settings.timeScale;
  const conn = connectKube({ kubeconfig: env.kubeconfig });
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const sim = await startSimulator({ seed: seedOf(nodes.length), world: 'strict', timeScale, token: BENCH_TOKEN });
  const cliEnv = { KUBECONFIG: env.kubeconfig, CLOUDSCALE_API_URL: sim.url, CLOUDSCALE_API_TOKEN: BENCH_TOKEN };
  const cli = async (args) => {
    const run = await runCli([...args, '-o', 'json'], cliEnv);
    // 1 with a JSON answer: a refused change is a problem of the plan, reported, not a failure here.
    let document;
    try {
      document = JSON.parse(run.stdout);
    } catch {
      throw new Error(`cloudscale-ccm ${args.join(' ')}: exit ${run.code}\n${run.stderr}\n${run.stdout}`);
    }
    return { code: run.code, document, wallMs: run.wallMs };
  };
  const api = (method, path) =>
    fetch(`${sim.url}${path}`, { method, headers: { authorization: `Bearer ${BENCH_TOKEN}` } }).then(async (response) => {
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? null : response.json();
    });
  const names = SCENARIOS.map((s) => `dt-${s.impact}`);
  const failedNames = FAILED_REQUEST_SCENARIOS.map((_, i) => `dt-failed-request-${i + 1}`);
  const started = Date.now();
  try {
    await conn.core.createNamespace({ body: { metadata: { name: NAMESPACE } } }).catch((error) => {
      if (error.code !== 409) throw error;
    });
    // The drain scenario's selector keeps the first Node; the no-members one matches none.
    await conn.core.patchNode({ name: nodes[0], body: { metadata: { labels: { 'bench/keep': 'yes' } } } }, mergePatch);
    const everyName = [...names, ...failedNames];
    await Promise.all(
      [...SCENARIOS, ...FAILED_REQUEST_SCENARIOS].map((s, i) =>
        conn.core.createNamespacedService({
          namespace: NAMESPACE,
          body: {
            metadata: { name: everyName[i], namespace: NAMESPACE },
            spec: { type: 'LoadBalancer', selector: { app: everyName[i] }, ports: s.ports ?? [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
          },
        }),
      ),
    );
    log(`downtime: converging ${everyName.length} Services in the strict world, time scale ${timeScale}`);
    await cli(['sync-lb', '-n', NAMESPACE, ...everyName.map((n) => `service/${n}`), '--poll-seconds', '1', '--concurrency', String(everyName.length)]);
    const converged = Date.now();
    // The passes hold the cluster's Lease, as the CronJob's Jobs do: one pass at a time over every
    // Service, so the scenarios share their passes (one group per --drain-seconds, one after the other).
    const rows = [];
    for (const drainSeconds of [...new Set(SCENARIOS.map((s) => s.drainSeconds ?? DRAIN_SECONDS))]) {
      const group = SCENARIOS.map((scenario, i) => ({ scenario, name: names[i] })).filter(({ scenario }) => (scenario.drainSeconds ?? DRAIN_SECONDS) === drainSeconds);
      log(`downtime: ${group.map(({ scenario }) => scenario.impact).join(', ')} (--drain-seconds ${drainSeconds})`);
      rows.push(...(await measureGroup({ group, drainSeconds, sim, conn, mergePatch, cli, api, timeScale })));
    }
    // One failed request each, alone: a fault of the simulator hits whichever pass sends that request.
    const failedRequestRows = [];
    for (const [i, scenario] of FAILED_REQUEST_SCENARIOS.entries()) {
      log(`downtime: pool swap, its listener create answered ${scenario.failure} (${scenario.via})`);
      const [row] = await measureGroup({ group: [{ scenario, name: failedNames[i] }], drainSeconds: DRAIN_SECONDS, sim, conn, mergePatch, cli, api, timeScale });
      failedRequestRows.push({ ...row, failure: scenario.failure, via: scenario.via });
    }
    return {
      world: 'strict',
      timeScale,
      drainSeconds: DRAIN_SECONDS,
      probeMs: PROBE_MS,
      convergeSeconds: Math.round((converged - started) / 1000),
      scenariosSeconds: Math.round((Date.now() - converged) / 1000),
      rows: SCENARIOS.map((s) => rows.find((r) => r.impact === s.impact)),
      failedRequestRows,
      notPlanned: Object.entries(NOT_PLANNED).map(([impact, { reason, goCcm }]) => ({ impact, reason, goCcm })),
    };
  } finally {
    await kubeFixtures(env.kubeconfig).deleteServices(NAMESPACE, [...names, ...failedNames]).catch(() => undefined);
    await conn.core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
    await conn.core.patchNode({ name: nodes[0], body: { metadata: { labels: { 'bench/keep': null } } } }, mergePatch).catch(() => undefined);
    await sim.stop();
  }
}

/**
 * One group of scenarios: each Service converged and serving, then its change (and what happens
 * outside this tool before it); one plan over the group (the predictions), then `sync-lb` passes
 * over the group while the probes run, until `plan` has nothing left; then the data plane is given
 * SETTLE_SECONDS and every watched port is measured.
 */
async function measureGroup({ group, drainSeconds, sim, conn, mergePatch, cli, api, timeScale }) {
  const prepared = await Promise.all(
    group.map(async ({ scenario, name }) => {
      const service = await conn.core.readNamespacedService({ namespace: NAMESPACE, name });
      const lbUuid = service.metadata.annotations[UUID_ANNOTATION];
      const vip = service.status.loadBalancer.ingress[0].ip;
      await untilServing(sim, lbUuid, (scenario.ports ?? [{ port: 80 }]).map((p) => p.port), (150 * timeScale + 60) * 1000);
      const since = Date.now();
      if (scenario.before === 'delete-listener') {
        const listeners = await api('GET', '/v1/load-balancers/listeners');
        const listener = listeners.find((l) => l.load_balancer.uuid === lbUuid && l.protocol_port === 80);
        await api('DELETE', `/v1/load-balancers/listeners/${listener.uuid}`);
      }
      if (scenario.before === 'delete-lb') await api('DELETE', `/v1/load-balancers/${lbUuid}`);
      if (scenario.before !== undefined) await untilStopped(sim, lbUuid, 80, (10 * timeScale + 10) * 1000);
      const patch = scenario.patch(service);
      const applyChange = async () => {
        if (Object.keys(patch).length > 0) await conn.core.patchNamespacedService({ namespace: NAMESPACE, name, body: patch }, mergePatch);
      };
      // A watching run's change comes once it watches (below).
      if (scenario.via !== 'run --watch-for') await applyChange();
      return { scenario, name, lbUuid, vip, since, applyChange };
    }),
  );
  const args = ['-n', NAMESPACE, ...group.map(({ name }) => `service/${name}`), '--drain-seconds', String(drainSeconds)];
  // A scenario with a fault (FAILED_REQUEST_SCENARIOS, alone in its group) has it from its first pass on.
  const { fault, via } = group[0].scenario;
  const probes = prepared.map(({ scenario, vip }) => probeLoop(sim, vip, scenario.watch.filter((w) => !w.newLb).map((w) => w.port)));
  const passStart = Date.now();
  const passes = [];
  let plan;
  if (fault !== undefined) sim.admin.setFaults(fault);
  if (via === 'run --watch-for') {
    // The run's own pass finds nothing to do; the change comes while it watches, and its reaction
    // pass applies it. The prediction is planned right after the change, while the reaction
    // pass waits out its debounce.
    const watching = cli(['run', '--watch-for', `${WATCH_SECONDS}s`, '--drain-seconds', String(drainSeconds), '--poll-seconds', '1']);
    await sleep(WATCH_START_MS);
    await prepared[0].applyChange();
    plan = (await cli(['plan', ...args])).document;
    const run = await watching;
    passes.push(Math.round(run.wallMs / 100) / 10);
  } else {
    plan = (await cli(['plan', ...args])).document;
  }
  for (let pass = 1; pass <= MAX_PASSES; pass += 1) {
    const run = await cli(['sync-lb', ...args, '--poll-seconds', '1', '--concurrency', String(group.length)]);
    passes.push(Math.round(run.wallMs / 100) / 10);
    if (fault !== undefined) sim.admin.setFaults({});
    if (!(await cli(['plan', ...args])).document.summary.changes) break;
    // As the CronJob's next Job: a drained member waits out its drain before it leaves.
    await sleep(drainSeconds * 1000 + 1000);
  }
  await sleep(SETTLE_SECONDS * timeScale * 1000);
  return Promise.all(
    prepared.map(async ({ scenario, name, lbUuid, since }, index) => {
      const probed = probes[index].stop();
      const after = await conn.core.readNamespacedService({ namespace: NAMESPACE, name }).catch(() => undefined);
      const newLbUuid = after?.metadata.annotations?.[UUID_ANNOTATION];
      const own = plan.services.find((s) => s.service.name === name);
      const impacts = [...new Set((own?.actions ?? []).map((a) => a.impact))];
      // The planner's own choice of the worst action (what `plan` prints as the worst downtime).
      const worst = own === undefined ? null : worstDowntime([own]);
      return {
        impact: scenario.impact,
        change: scenario.change,
        goCcm: scenario.goCcm,
        planned: impacts.filter((c) => c !== 'none'),
        // The self-check that the scenario exercises its class: the plan shows it.
        classPlanned: scenario.impact === 'none' ? impacts.every((c) => c === 'none') : impacts.includes(scenario.impact),
        warnings: (own?.warnings ?? []).map((w) => w.reason),
        predicted: worst === null ? { impact: 'none', minSeconds: 0, maxSeconds: 0 } : { impact: worst.action.impact, minSeconds: worst.downtime.minSeconds, maxSeconds: worst.downtime.maxSeconds },
        measured: scenario.watch.map((w) => ({
          port: w.port,
          kind: w.kind,
          ...measure(sim, w.newLb ? newLbUuid : lbUuid, w, { since, passStart }),
          probeFailingSeconds: w.newLb ? null : seconds(probed.longestFailingMs(w.port)),
        })),
        passes,
      };
    }),
  );
}

/**
 * One watched port's figure in seconds, from the load balancer's serving history (see WatchKind
 * in bench/downtime-scenarios.js), null when the port never reached the state (never served
 * again, never stopped); and whether the port served nothing at the end.
 */
function measure(sim, lbUuid, watch, { since, passStart }) {
  if (lbUuid === undefined) return { seconds: null, downAtEnd: true };
  const port = sim.admin.serving(lbUuid, { since }).ports.find((p) => p.port === watch.port);
  // Whether the port served nothing when measured: a gap still open, a port never back.
  const downAtEnd = port?.intervals.at(-1)?.serving !== true;
  if (watch.kind === 'gap') return { seconds: port === undefined ? null : seconds(port.longestOutageMs), downAtEnd };
  const wanted = watch.kind === 'until-serving';
  const at = (interval) => Date.parse(interval.from);
  // Already in the wanted state when the pass began: 0.
  if (port?.intervals.some((i) => i.serving === wanted && at(i) <= passStart && (i.to === null || Date.parse(i.to) > passStart))) return { seconds: 0, downAtEnd };
  const reached = port?.intervals.find((i) => i.serving === wanted && at(i) >= passStart);
  return { seconds: reached === undefined ? null : seconds(at(reached) - passStart), downAtEnd };
}

/**
 * Probes a new connection to each port of `address` every PROBE_MS (the data plane's routing, as
 * `GET /_sim/probe` answers); `stop()` returns the longest run of failed probes per port, from the
 * first failure to the next success (or the stop).
 */
function probeLoop(sim, address, ports) {
  const state = new Map(ports.map((port) => [port, { failingSince: null, longestMs: 0 }]));
  const tick = () => {
    const now = Date.now();
    for (const [port, s] of state) {
      let served;
      try {
        served = sim.admin.probe({ address, port }).served;
      } catch {
        // The address belongs to no load balancer any more (deleted): no connection is served.
        served = false;
      }
      if (!served && s.failingSince === null) s.failingSince = now;
      if (served && s.failingSince !== null) {
        s.longestMs = Math.max(s.longestMs, now - s.failingSince);
        s.failingSince = null;
      }
    }
  };
  tick();
  const timer = setInterval(tick, PROBE_MS);
  return {
    stop() {
      clearInterval(timer);
      const now = Date.now();
      for (const s of state.values()) if (s.failingSince !== null) s.longestMs = Math.max(s.longestMs, now - s.failingSince);
      return { longestFailingMs: (port) => state.get(port)?.longestMs ?? 0 };
    },
  };
}

async function untilServing(sim, lbUuid, ports, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const serving = sim.admin.serving(lbUuid).ports;
    if (ports.every((port) => serving.find((p) => p.port === port)?.intervals.at(-1)?.serving === true)) return;
    await sleep(250);
  }
  throw new Error(`ports ${ports.join(', ')} of load balancer ${lbUuid} did not serve within ${timeoutMs / 1000} s`);
}

async function untilStopped(sim, lbUuid, port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (sim.admin.serving(lbUuid).ports.find((p) => p.port === port)?.intervals.at(-1)?.serving !== true) return;
    await sleep(250);
  }
  throw new Error(`port ${port} of load balancer ${lbUuid} still served ${timeoutMs / 1000} s after its delete`);
}

function seconds(ms) {
  return Math.round(ms / 100) / 10;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
