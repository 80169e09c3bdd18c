// The downtime group of `npm run bench`: every change class of the impact table, made on a
// converged Service while the simulator's data plane runs with realistic timings (propagation
// `downtimePropagationMs`, 15 s by default: "the data plane follows within about 15–20 s";
// health checks 2 s apart, 2 to be up: the Go CCM's defaults), then `plan -o json` (the
// prediction) and `sync-lb` (the built CLI, as a process). The measured outage is what the data
// plane shows for the port: the longest interval after the port first served in which it had no
// listener whose pool had an enabled, healthy member. Beside both: what the Go CCM does for the
// same change (docs/go-ccm-compatibility.md, as the annotation table records it).
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { connectKube } from '../dist/core/kube/connection.js';
import { downtimeOf } from '../dist/core/lb/impact.js';
import { BENCH_TOKEN, kubeFixtures, seedOf } from './fixtures.js';
import { runCli } from './process.js';
import { startSimulator } from '../dist/sim/index.js';

const NAMESPACE = 'bench-downtime';
const MONITOR = 'k8s.cloudscale.ch/loadbalancer-health-monitor-';

/**
 * The changes measured: each patches one Service and names the impact class this tool plans for
 * it and the one the Go CCM's behaviour falls into.
 */
const CHANGES = [
  { change: 'pool algorithm', goCcm: 'pool-recreation', patch: () => ({ metadata: { annotations: { 'k8s.cloudscale.ch/loadbalancer-pool-algorithm': 'least_connections' } } }) },
  { change: 'pool protocol', goCcm: 'pool-recreation', patch: () => ({ metadata: { annotations: { 'k8s.cloudscale.ch/loadbalancer-pool-protocol': 'proxy' } } }) },
  { change: 'port name', goCcm: 'pool-recreation', patch: (s) => ({ spec: { ports: [{ ...port(s), name: 'web' }] } }) },
  { change: 'health monitor type', goCcm: 'monitor-recreation', patch: () => ({ metadata: { annotations: { [`${MONITOR}type`]: 'http' } } }) },
  { change: 'externalTrafficPolicy', goCcm: 'member-recreation', patch: () => ({ spec: { externalTrafficPolicy: 'Local' } }) },
  { change: 'node port', goCcm: 'member-recreation', patch: (s) => ({ spec: { ports: [{ ...port(s), nodePort: port(s).nodePort === 32100 ? 32101 : 32100 }] } }) },
  { change: 'a node leaving (drain)', goCcm: 'minimal', patch: () => ({ metadata: { annotations: { 'k8s.cloudscale.ch/loadbalancer-node-selector': 'bench/keep=yes' } } }) },
];

function port(service) {
  const { name, protocol, port: number, targetPort, nodePort } = service.spec.ports[0];
  return { name, protocol, port: number, targetPort, nodePort };
}

/** Runs every change class; returns one row per class. */
export async function measureDowntime(env, { nodes }) {
  const { settings, log } = env;
  const propagationMs = settings.downtimePropagationMs;
  const conn = connectKube({ kubeconfig: env.kubeconfig });
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const sim = await startSimulator({
    seed: seedOf(nodes.length),
    lbProvisionMs: 0,
    token: BENCH_TOKEN,
    dataPlane: { propagationMs, healthChecks: true, deletesHoldUntilPropagated: true },
  });
  const cliEnv = { KUBECONFIG: env.kubeconfig, CLOUDSCALE_API_URL: sim.url, CLOUDSCALE_API_TOKEN: BENCH_TOKEN };
  const cli = async (args) => {
    const run = await runCli([...args, '-o', 'json'], cliEnv);
    if (run.code !== 0 && run.code !== 2) throw new Error(`cloudscale-ccm ${args.join(' ')}: exit ${run.code}\n${run.stderr}\n${run.stdout}`);
    return JSON.parse(run.stdout);
  };
  const rows = [];
  try {
    await conn.core.createNamespace({ body: { metadata: { name: NAMESPACE } } }).catch((error) => {
      if (error.code !== 409) throw error;
    });
    // The drain row keeps the first Node only.
    await conn.core.patchNode({ name: nodes[0], body: { metadata: { labels: { 'bench/keep': 'yes' } } } }, mergePatch);
    for (const [index, { change, goCcm, patch }] of CHANGES.entries()) {
      const name = `change-${index + 1}`;
      log(`downtime: ${change} (propagation ${propagationMs / 1000} s)`);
      await conn.core.createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name, namespace: NAMESPACE },
          spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
        },
      });
      const args = ['-n', NAMESPACE, `service/${name}`];
      await cli(['sync-lb', ...args, '--poll-seconds', '1']);
      const service = await conn.core.readNamespacedService({ namespace: NAMESPACE, name });
      const lbUuid = service.metadata.annotations['k8s.cloudscale.ch/loadbalancer-uuid'];
      await untilServing(sim, lbUuid, propagationMs * 3 + 30_000);

      const since = Date.now();
      await conn.core.patchNamespacedService({ namespace: NAMESPACE, name, body: patch(service) }, mergePatch);
      const plan = await cli(['plan', ...args]);
      const worst = plan.summary.worstDowntime;
      const impacts = [...new Set(plan.services.flatMap((s) => s.actions.map((a) => a.impact)))];
      const started = Date.now();
      await cli(['sync-lb', ...args, '--poll-seconds', '1']);
      const passMs = Date.now() - started;
      // Everything the pass sent reaches the data plane, and new members get their checks.
      await sleep(propagationMs + 10_000);
      const served = sim.admin.serving(lbUuid, { since }).ports.find((p) => p.port === 80);
      const documented = downtimeOf(goCcm);
      rows.push({
        change,
        goCcm: { impact: goCcm, minSeconds: documented.minSeconds, maxSeconds: documented.maxSeconds },
        predicted: {
          impacts: impacts.filter((i) => i !== 'none'),
          maxSeconds: worst === null ? 0 : worst.maxSeconds,
        },
        measuredSeconds: served === undefined ? null : Math.round(served.longestOutageMs / 100) / 10,
        passSeconds: Math.round(passMs / 100) / 10,
      });
    }
  } finally {
    await kubeFixtures(env.kubeconfig).deleteServices(NAMESPACE, CHANGES.map((_, index) => `change-${index + 1}`)).catch(() => undefined);
    await conn.core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
    await conn.core.patchNode({ name: nodes[0], body: { metadata: { labels: { 'bench/keep': null } } } }, mergePatch).catch(() => undefined);
    await sim.stop();
  }
  return { propagationMs, monitor: { delaySeconds: 2, upThreshold: 2 }, rows };
}

async function untilServing(sim, lbUuid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const last = sim.admin.serving(lbUuid).ports.find((p) => p.port === 80)?.intervals.at(-1);
    if (last?.serving === true && last.to === null) return;
    await sleep(250);
  }
  throw new Error(`port 80 of load balancer ${lbUuid} did not serve within ${timeoutMs / 1000} s`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
