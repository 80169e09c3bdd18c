// Renders the benchmark's results: a Markdown document (bench/results.md, also readable in a
// terminal) from the same object that goes to bench/results.json.
import { CLOUD_LISTS } from './minimum.js';

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
    `Simulator: ${settings.latencyMs} ms latency per request, load balancers \`changing\` for ${settings.lbProvisionMs} ms; ` +
      `poll interval ${settings.pollSeconds} s; ${settings.nodes} Nodes; every second Service has two ports.`,
    '',
    '## sync-lb',
    '',
    'Requests are cloudscale API requests of one pass (client counter; the simulator log agrees where marked ✓). ' +
      '"min" is the fewest the work needs: one list per resource kind (6), one member list per existing pool, ' +
      'the creations or updates, and one read per new load balancer to see it `running`.',
    '',
    `Concurrency ${settings.concurrency} (the default).`,
    '',
    '| Services | pools | full converge: requests (reads + writes) | min | time | no-op pass: requests | min | time (median of 3) | timeout change: requests (writes) | min | time |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.syncLb.map((row) => {
      const change = row.listenerChange;
      return `| ${row.services} | ${row.pools} | ${requests(row.converge)} | ${row.converge.minimum.total} | ${seconds(row.converge.wallMs)} ` +
        `| ${row.noop.requests.total}${agree(row.noop)} | ${row.noop.minimum.total} | ${seconds(row.noop.wallMs)} ` +
        `| ${change ? `${change.requests.total} (${change.requests.writes})${agree(change)}` : '–'} | ${change ? `${change.minimum.total} (${change.minimum.writes})` : '–'} | ${change ? seconds(change.wallMs) : '–'} |`;
    }),
    '',
    ...aboveMinimumNotes(results.syncLb),
    'Kubernetes API requests of the same passes (reads + writes; they share the wall time):',
    '',
    '| Services | full converge | no-op pass | timeout change |',
    '|---:|---:|---:|---:|',
    ...results.syncLb.map(
      (row) =>
        `| ${row.services} | ${kube(row.converge)} | ${kube(row.noop)} | ${row.listenerChange ? kube(row.listenerChange) : '–'} |`,
    ),
    '',
    ...kubeRouteNotes(results.syncLb),
    `## sync-lb concurrency, ${results.concurrency[0]?.services ?? 0} Services`,
    '',
    '| concurrency | full converge time | requests | no-op time |',
    '|---:|---:|---:|---:|',
    ...results.concurrency.map(
      (row) => `| ${row.concurrency} | ${seconds(row.converge.wallMs)} | ${requests(row.converge)} | ${seconds(row.noop.wallMs)} |`,
    ),
    '',
    `## init-nodes, ${results.initNodes.nodes} Nodes`,
    '',
    '| pass | cloudscale requests | min | Kubernetes requests | time |',
    '|---|---:|---:|---:|---:|',
    `| initialise every Node | ${requests(results.initNodes.initialise)} | ${results.initNodes.initialise.minimum.total} | ${kube(results.initNodes.initialise)} | ${seconds(results.initNodes.initialise.wallMs)} |`,
    `| no-op (all in sync) | ${requests(results.initNodes.noop)} | ${results.initNodes.noop.minimum.total} | ${kube(results.initNodes.noop)} | ${seconds(results.initNodes.noop.wallMs)} |`,
    '',
    `Whole run: ${seconds(results.totalMs)} including the control plane's start.`,
    '',
  ];
  return lines.join('\n');
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
