// Renders the benchmark's results: a Markdown document (bench/results.md, also readable in a
// terminal) from the same object that goes to bench/results.json.
import { CLOUD_LISTS } from './minimum.js';
import { reactionSection } from './reaction.js';

/** @param {ReturnType<typeof import('./run.js').resultsDocument>} results */
export function renderMarkdown(results) {
  const { settings, machine } = results;
  const lines = [
    '# Benchmark results',
    '',
    `Measured ${results.measuredAt} with \`npm run bench\` (${results.commit ?? 'uncommitted tree'}); see docs/benchmarks.md.`,
    '',
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ${machine.platform}, Node ${machine.node}; ` +
      `load average ${machine.loadAverage[0]} at the start, ${machine.loadAverage[1]} at the end (times stretch when other work shares the cores).`,
    // The downtime group runs its own simulator (its world, no added latency): its section says so.
    ...(settings.only.every((group) => group === 'downtime')
      ? [`Simulator: the strict world at time scale ${settings.timeScale}; ${settings.nodes} Nodes.`]
      : [
          `Simulator: ${settings.latencyMs} ms latency per request, load balancers \`changing\` for ${settings.lbProvisionMs} ms unless stated; ` +
            `poll interval ${settings.pollSeconds} s; ${settings.nodes} Nodes; every second Service has two ports.`,
        ]),
    '',
    'Every figure is one run of the built CLI as a process of its own (`node bin/cloudscale-ccm.js … -o json`): ' +
      'time is its wall time from spawn to exit, startup included; peak RSS is its VmHWM (/proc/<pid>/status). ' +
      'The simulator runs in the benchmark\'s process, so its memory is not counted.',
    '',
    ...startupSection(results.startup),
    ...completionSection(results.completion),
    ...reactionSection(results.reaction),
    ...syncLbSection(results.syncLb, settings),
    ...concurrencySection(results.concurrency),
    ...provisioningSection(results.provisioning, settings),
    ...memorySection(results.memory),
    ...scaleSection(results.scale, results.storm, settings),
    ...downtimeSection(results.downtime),
    ...initNodesSection(results.initNodes),
    `Whole run: ${seconds(results.totalMs)} including the control plane's start.`,
    '',
  ];
  return lines.join('\n');
}

function syncLbSection(rows, settings) {
  if (rows === undefined || rows.length === 0) return [];
  return [
    '## sync-lb',
    '',
    'Requests are cloudscale API requests of one pass as the simulator logged them (✓: the CLI\'s own counter agrees). ' +
      `"min" is the fewest the work needs: one list per resource kind (${CLOUD_LISTS.length}), one member list per existing pool, ` +
      'the creations or updates, and one more load-balancer list to see the new ones `running`.',
    '',
    `Concurrency ${settings.concurrency} (the default).`,
    '',
    '| Services | pools | full converge: requests (reads + writes) | min | time | peak RSS | no-op pass: requests | min | time (median of 3) | peak RSS | timeout change: requests (writes) | min | time |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => {
      const change = row.listenerChange;
      return `| ${row.services} | ${row.pools} | ${requests(row.converge)} | ${row.converge.minimum.total} | ${seconds(row.converge.wallMs)} | ${mb(row.converge)} ` +
        `| ${row.noop.requests.total}${agree(row.noop)} | ${row.noop.minimum.total} | ${seconds(row.noop.wallMs)} | ${mb(row.noop)} ` +
        `| ${change ? `${change.requests.total} (${change.requests.writes})${agree(change)}` : '–'} | ${change ? `${change.minimum.total} (${change.minimum.writes})` : '–'} | ${change ? seconds(change.wallMs) : '–'} |`;
    }),
    '',
    ...aboveMinimumNotes(rows),
    'Kubernetes API requests of the same passes (reads + writes; they share the wall time):',
    '',
    '| Services | full converge | no-op pass | timeout change |',
    '|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.services} | ${kube(row.converge)} | ${kube(row.noop)} | ${row.listenerChange ? kube(row.listenerChange) : '–'} |`,
    ),
    '',
    ...kubeRouteNotes(rows),
  ];
}

function concurrencySection(rows) {
  if (rows === undefined || rows.length === 0) return [];
  return [
    `## sync-lb concurrency, ${rows[0]?.services ?? 0} Services`,
    '',
    '| concurrency | full converge time | requests | peak RSS | no-op time |',
    '|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) => `| ${row.concurrency} | ${seconds(row.converge.wallMs)} | ${requests(row.converge)} | ${mb(row.converge)} | ${seconds(row.noop.wallMs)} |`,
    ),
    '',
  ];
}

function initNodesSection(init) {
  if (init === undefined) return [];
  return [
    `## init-nodes, ${init.nodes} Nodes`,
    '',
    '| pass | cloudscale requests | min | Kubernetes requests | time | peak RSS |',
    '|---|---:|---:|---:|---:|---:|',
    `| initialise every Node | ${requests(init.initialise)} | ${init.initialise.minimum.total} | ${kube(init.initialise)} | ${seconds(init.initialise.wallMs)} | ${mb(init.initialise)} |`,
    `| no-op (all in sync) | ${requests(init.noop)} | ${init.noop.minimum.total} | ${kube(init.noop)} | ${seconds(init.noop.wallMs)} | ${mb(init.noop)} |`,
    '',
  ];
}

function startupSection(startup) {
  if (startup === undefined) return [];
  const bare = startup.rows[0];
  return [
    '## Startup',
    '',
    `Each command ${startup.runs} times; medians. "× bare" compares with \`${bare.command}\` of the same Node. ` +
      'CPU is user + system time of the process, steadier than wall time on a shared machine. ' +
      'The compile-cache columns run with NODE_COMPILE_CACHE set (warmed by one run first).',
    '',
    '| command | time | (min–max) | × bare | CPU | × bare | peak RSS | requests (min) | compile cache: time | CPU | peak RSS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...startup.rows.map(
      (row) =>
        `| \`${row.command}\` | ${seconds(row.plain.wallMs)} | ${row.plain.wallMsRange.map((ms) => (ms / 1000).toFixed(2)).join('–')} | ${row.wallVsBare} | ` +
        `${row.plain.cpuMs} ms | ${row.cpuVsBare} | ${kbToMb(row.plain.peakRssKb)} | ${row.requests} (${row.minimum}) | ` +
        `${seconds(row.compileCache.wallMs)} | ${row.compileCache.cpuMs} ms | ${kbToMb(row.compileCache.peakRssKb)} |`,
    ),
    '',
  ];
}

function completionSection(completion) {
  if (completion === undefined) return [];
  const bare = completion.rows[0];
  return [
    '## Completion',
    '',
    `What a Tab that completes Service names costs: \`cloudscale-ccm __complete services\` (what the completion scripts run), ` +
      `${completion.runs} times each; medians. "× bare" compares with \`${bare.command}\`.`,
    '',
    '| lookup | time | (min–max) | × bare | CPU | × bare | peak RSS | requests | compile cache: time |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...completion.rows.map(
      (row) =>
        `| \`${row.command}\` | ${seconds(row.plain.wallMs)} | ${row.plain.wallMsRange.map((ms) => (ms / 1000).toFixed(2)).join('–')} | ${row.wallVsBare} | ` +
        `${row.plain.cpuMs} ms | ${row.cpuVsBare} | ${kbToMb(row.plain.peakRssKb)} | ${row.requests} | ${seconds(row.compileCache.wallMs)} |`,
    ),
    '',
  ];
}

function provisioningSection(rows, settings) {
  if (rows === undefined || rows.length === 0) return [];
  const one = (provisionMs) => rows.find((row) => row.provisionMs === provisionMs && row.services === 1);
  return [
    '## Converging while load balancers provision',
    '',
    `New Services from an empty cloud, concurrency ${settings.concurrency}, load balancers \`changing\` for the time shown; ` +
      '"× one" compares with one new Service under the same provisioning.',
    '',
    '| provisioning | new Services | pools | time | × one | requests | min | peak RSS |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => {
      const base = one(row.provisionMs);
      const times = base === undefined ? '–' : (row.converge.wallMs / base.converge.wallMs).toFixed(1);
      return `| ${row.provisionMs / 1000} s | ${row.services} | ${row.pools} | ${seconds(row.converge.wallMs)} | ${times} | ${requests(row.converge)} | ${row.converge.minimum.total} | ${mb(row.converge)} |`;
    }),
    '',
  ];
}

function memorySection(rows) {
  if (rows === undefined || rows.length === 0) return [];
  return [
    '## Memory: a pass with nothing to do over many Services and Nodes',
    '',
    'Single-port Services, one member per Node in each pool. The Services are converged first without simulated latency ' +
      '(setup, shown for completeness); the no-op pass then runs with the usual latency (median of 3).',
    '',
    '| Services × Nodes | pool members | no-op: time | requests | min | peak RSS | CPU | setup converge: time | peak RSS |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.services} × ${row.nodes} | ${row.members.toLocaleString('en-US')} | ${seconds(row.noop.wallMs)} | ${row.noop.requests.total}${agree(row.noop)} | ${row.noop.minimum.total} | ` +
        `${mb(row.noop)} | ${(row.noop.cpuMs / 1000).toFixed(1)} s | ${seconds(row.setupMs)} | ${kbToMb(row.setupPeakRssKb)} |`,
    ),
    '',
    ...rows
      .filter((row) => row.watch !== undefined)
      .map(
        (row) =>
          `\`run --watch-for ${row.watch.seconds}s\` over ${row.services} × ${row.nodes} (its full pass, then the minute's watch with ` +
          `${row.watch.reactionPasses} reaction pass(es) for one changed Service): peak RSS ${kbToMb(row.watch.peakRssKb)}, ${seconds(row.watch.wallMs)}.`,
      ),
    '',
    ...[...new Map(rows.map((row) => [row.nodes, row.initNodes])).values()].map(
      (init) =>
        `init-nodes over ${init.nodes} Nodes, initialising the new ones: ${seconds(init.initialise.wallMs)}, ${kube(init.initialise)} Kubernetes requests, peak RSS ${mb(init.initialise)}; ` +
        `the pass after it ${seconds(init.noop.wallMs)}, peak RSS ${mb(init.noop)}.`,
    ),
    '',
  ];
}

function scaleSection(scale, storm, settings) {
  if (scale === undefined && storm === undefined) return [];
  const row = (name, run, pass) =>
    `| ${name} | ${run.services} | ${run.pools} | ${run.concurrency} | ${seconds(pass.wallMs)} | ${requests(pass)} | ${pass.minimum.total} | ` +
    `${pass.requests.throttled > 0 ? `${pass.requests.throttled}, ${Math.round(pass.requests.waitedMs / 1000)} s waited` : '–'} | ${mb(pass)} |`;
  return [
    `## ${settings.scale} Services`,
    '',
    `New Services from an empty cloud (every second one with two ports, ${settings.nodes} Nodes); ` +
      'the no-op pass is the one after it (median of 3). The storm converges as many other new Services in a cloud of its own while ' +
      `the simulator answers ${settings.storm.rate * 100} % of all requests 429 with \`Retry-After: ${settings.storm.retryAfterSeconds}\`; ` +
      'it must end with every Service converged and nothing created twice. "429s" counts those answers and the waits of the calls ' +
      'before their attempts (Retry-After and the client\'s limit on requests in flight), summed over parallel calls. ' +
      'The storm runs more Services at once: the client\'s own limit bounds the requests in flight, and each Service waits out its Retry-After in turn.',
    '',
    '| pass | Services | pools | concurrency | time | requests (reads + writes) | min | 429s | peak RSS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...(scale === undefined ? [] : [row('cold (creates everything)', scale, scale.converge), row('no-op', scale, scale.noop)]),
    ...(storm === undefined ? [] : [row(`cold in the 429 storm`, storm, storm.converge)]),
    '',
  ];
}

function downtimeSection(downtime) {
  if (downtime === undefined) return [];
  const findings = downtime.rows.filter(abovePrediction);
  return [
    '## Downtime per change',
    '',
    `One Service per impact class the planner can emit, in the simulator's strict world (the real API's timings) at time scale ${downtime.timeScale}` +
      `${downtime.timeScale === 1 ? ' (real time)' : ' (every modelled delay × the scale; figures in real seconds)'}; ` +
      `the Services shared their passes, as the CronJob's Jobs would. "Predicted" is the worst downtime of \`plan -o json\`; the change is applied by \`sync-lb\` passes (--drain-seconds ${downtime.drainSeconds}) ` +
      'until `plan` has nothing left. "Measured", per watched port, from the data plane\'s serving history: **gap**, the longest interval after the change without a listener ' +
      'whose pool had an enabled, up member; **until serving**, from the first pass until the port served; **until stopped**, until it stopped serving. ' +
      `"Probe": the longest run of failed new connections, probed every ${downtime.probeMs} ms. "Go CCM": what it does for the same change, with its documented figure.`,
    '',
    '| class | example change | plan | predicted | measured | probe | Go CCM (documented) |',
    '|---|---|---|---:|---|---:|---|',
    ...downtime.rows.map(
      (r) =>
        `| ${r.impact} | ${r.change} | ${r.planned.join(', ') || 'none'} | ${r.predicted.maxSeconds === null ? 'until fixed' : `≤ ${r.predicted.maxSeconds} s`} | ` +
        `${r.measured.map(measuredCell).join('; ')}${abovePrediction(r) ? ' **(above the prediction)**' : ''} | ` +
        `${r.measured.filter((m) => m.kind !== 'until-stopped' && m.probeFailingSeconds !== null).map((m) => `${m.probeFailingSeconds} s`).join('; ') || '–'} | ` +
        `${r.goCcm} |`,
    ),
    ...downtime.notPlanned.map((n) => `| ${n.impact} | – | never planned: ${n.reason} | – | – | – | ${n.goCcm} |`),
    '',
    ...(findings.length === 0
      ? ['No measured outage exceeded its prediction.']
      : [`Measured above the prediction: ${findings.map((r) => r.impact).join(', ')}.`]),
    '',
    ...failedRequestSection(downtime.failedRequestRows ?? []),
    ...downtime.rows.filter((r) => !r.classPlanned).map((r) => `The plan of the ${r.impact} scenario did not show ${r.impact}: it planned ${r.planned.join(', ') || 'none'}.`),
    `Converging the ${downtime.rows.length + (downtime.failedRequestRows ?? []).length} Services took ${downtime.convergeSeconds} s, the scenarios ${downtime.scenariosSeconds} s. ` +
      `The passes (sync-lb wall times, shared by the Services of a --drain-seconds group): ${passGroups(downtime.rows)}.`,
    '',
  ];
}

/**
 * The pool swaps whose listener create failed once (FAILED_REQUEST_SCENARIOS): each alone, with
 * its own passes; the gap of its port against the same prediction.
 */
function failedRequestSection(rows) {
  if (rows.length === 0) return [];
  const findings = rows.filter(abovePrediction);
  return [
    '### A pool swap whose listener create fails once',
    '',
    'The same pool swap (pool algorithm), each time with one failure of the listener create that follows the old listener\'s delete, injected by the simulator; ' +
      'applied by `sync-lb` passes, or by the reaction pass of a `run --watch-for` that watched when the change came.',
    '',
    '| the create answered | applied by | predicted | measured | probe | passes |',
    '|---|---|---:|---|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.failure} | ${r.via} | ≤ ${r.predicted.maxSeconds} s | ${r.measured.map(measuredCell).join('; ')}${abovePrediction(r) ? ' **(above the prediction)**' : ''} | ` +
        `${r.measured.map((m) => (m.probeFailingSeconds === null ? '–' : `${m.probeFailingSeconds} s`)).join('; ')} | ${r.passes.map((p) => `${p} s`).join(' + ')} |`,
    ),
    '',
    findings.length === 0 ? 'No measured outage exceeded its prediction.' : `Measured above the prediction: ${findings.map((r) => `${r.failure} (${r.via})`).join(', ')}.`,
    '',
  ];
}

/** A measured outage (gap, or the wait for a port to serve) longer than the plan's worst prediction. */
export function abovePrediction(row) {
  const outages = row.measured.filter((m) => m.kind !== 'until-stopped');
  if (row.predicted.maxSeconds === null) return false;
  return outages.some((m) => m.seconds === null || m.seconds > row.predicted.maxSeconds || (m.kind === 'gap' && m.downAtEnd));
}

function passGroups(rows) {
  const groups = new Map();
  for (const r of rows) {
    const key = r.passes.map((p) => `${p} s`).join(' + ');
    groups.set(key, [...(groups.get(key) ?? []), r.impact]);
  }
  return [...groups].map(([passes, impacts]) => `${passes} (${impacts.length === 1 ? impacts[0] : `${impacts.length} scenarios`})`).join('; ');
}

function measuredCell(m) {
  const what = { gap: 'gap', 'until-serving': 'until serving', 'until-stopped': 'until stopped' }[m.kind];
  const figure = m.seconds === null ? (m.kind === 'until-stopped' ? 'never (still serving)' : 'never') : `${m.seconds} s`;
  const open = m.kind === 'gap' && m.downAtEnd ? ', still down at the end' : '';
  return `${m.port}: ${what} ${figure}${open}`;
}

function mb(pass) {
  return kbToMb(pass.peakRssKb);
}

function kbToMb(kb) {
  return `${Math.round(kb / 1024)} MB`;
}

function requests(pass) {
  return `${pass.requests.total} (${pass.requests.reads} + ${pass.requests.writes})${agree(pass)}${pass.requests.retries > 0 ? `, ${pass.requests.retries} retries` : ''}`;
}

function kube(pass) {
  return `${pass.kubernetes.total} (${pass.kubernetes.reads} + ${pass.kubernetes.writes})`;
}

/** The Kubernetes requests of the largest size's passes, by route, to show what they are. */
function kubeRouteNotes(rows) {
  const largest = rows.at(-1);
  if (largest === undefined) return [];
  const passes = [['full converge', largest.converge], ['no-op', largest.noop], ['timeout change', largest.listenerChange]];
  return [
    `By route, ${largest.services} Service(s):`,
    '',
    ...passes
      .filter(([, pass]) => pass !== undefined)
      .map(([name, pass]) => `- ${name}: ${Object.entries(pass.kubernetes.byRoute).map(([route, count]) => `${count} \`${route}\``).join(', ')}`),
    '',
  ];
}

function agree(pass) {
  return pass.countsAgree ? ' ✓' : ` (simulator saw ${pass.simulatorLog.total})`;
}

function seconds(ms) {
  return ms < 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** Where requests above the minimum came from, per route, for every pass that had any. */
function aboveMinimumNotes(rows) {
  const notes = [];
  for (const row of rows) {
    for (const [name, pass] of [['full converge', row.converge], ['no-op', row.noop], ['timeout change', row.listenerChange]]) {
      if (pass === undefined) continue;
      const entries = Object.entries(pass.aboveMinimum);
      if (entries.length === 0) continue;
      const listed = entries.map(([route, delta]) => `${delta > 0 ? '+' : ''}${delta} \`${route}\``).join(', ');
      const rounds = readBackRounds(pass.aboveMinimum, row.pools);
      const why = rounds === 0 ? '' : ` = ${rounds} read-back round${rounds === 1 ? '' : 's'} (${CLOUD_LISTS.length} lists + 1 member list per pool): sync-lb reads the state again after creating objects and plans once more to verify`;
      notes.push(`- ${row.services} Service(s), ${name}: ${listed}${why}`);
    }
  }
  if (notes.length === 0) return ['Every pass sent exactly the minimum.', ''];
  return ['Requests above (+) or below (−) the minimum, by route:', '', ...notes, ''];
}

/**
 * How many times a pass read the whole state again beyond the minimum: every cloud list and one
 * member list per pool, k times over and nothing else. 0 when the excess has another shape.
 */
function readBackRounds(aboveMinimum, pools) {
  const rounds = aboveMinimum[CLOUD_LISTS[0]] ?? 0;
  if (rounds <= 0) return 0;
  const expected = Object.fromEntries(CLOUD_LISTS.map((route) => [route, rounds]));
  expected['GET /v1/load-balancers/pools/{uuid}/members'] = rounds * pools;
  const sameRoutes = Object.keys(aboveMinimum).length === Object.keys(expected).length;
  return sameRoutes && Object.entries(expected).every(([route, count]) => aboveMinimum[route] === count) ? rounds : 0;
}
