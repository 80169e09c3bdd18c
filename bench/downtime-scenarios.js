// The scenarios of the downtime benchmark (bench/downtime.js): one per impact class the planner
// can emit (src/core/lb/impact.ts, IMPACT_CLASSES), each a change made to a converged Service and
// the ports whose serving is measured. Kept apart from the runner, without imports of dist/, so a
// unit test can check that every class has its scenario (test/unit/bench-downtime-scenarios.test.ts)
// and the benchmark checks the same before it starts.

const A = 'k8s.cloudscale.ch/loadbalancer-';
const HTTP = { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 };
const HTTPS = { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 };
/** The Service's one port, watched for its longest gap. */
const GAP_80 = [{ port: 80, kind: 'gap' }];
const annotate = (key, value) => () => ({ metadata: { annotations: { [`${A}${key}`]: value } } });

/**
 * How a watched port is measured, on the data plane's serving history of the load balancer:
 * - `gap`: the longest interval after the change began in which the port had no listener whose
 *   pool had an enabled, up member (the port served before the change);
 * - `until-serving`: from the start of the first pass until the port serves (a port that does not
 *   serve when the pass starts: a new number, a missing listener, a new load balancer);
 * - `until-stopped`: from the start of the first pass until the port stops serving (a port the
 *   change takes away: measured to show it goes, not as an outage).
 * @typedef {'gap' | 'until-serving' | 'until-stopped'} WatchKind
 */

/**
 * @typedef {object} Scenario
 * @property {string} impact            the class the plan must show for this change
 * @property {string} change            the example change, as the table says it
 * @property {string} goCcm             what the Go CCM does for the same change, with its documented figure
 * @property {object[]} [ports]         the Service's ports (default: http 80)
 * @property {string} [before]          done outside this tool before the change: `delete-listener`, `delete-lb`
 * @property {(service: object) => object} patch  the merge patch of the Service ({} for none)
 * @property {{ port: number, kind: WatchKind, newLb?: boolean }[]} watch  the ports measured
 * @property {number} [drainSeconds]    the passes' --drain-seconds (default DRAIN_SECONDS)
 */

/** The passes' --drain-seconds: short, so a drained member leaves within the run. */
export const DRAIN_SECONDS = 10;

/** @type {Scenario[]} */
export const SCENARIOS = [
  {
    impact: 'none',
    change: 'listener client-data timeout',
    goCcm: 'updated in place: "no impact"',
    patch: annotate('timeout-client-data-ms', '60000'),
    watch: GAP_80,
  },
  {
    impact: 'member-drain',
    change: 'node selector narrowed to one of the Nodes',
    goCcm: 'members deleted at once: "minimal", "generally safe"',
    patch: annotate('node-selector', 'bench/keep=yes'),
    watch: GAP_80,
  },
  {
    impact: 'member-rotation',
    change: 'node port',
    goCcm: 'members re-created (its README names no figure for node ports)',
    patch: (s) => ({ spec: { ports: [{ ...portOf(s, 0), nodePort: portOf(s, 0).nodePort === 32600 ? 32601 : 32600 }] } }),
    watch: GAP_80,
  },
  {
    impact: 'minimal',
    change: 'health-monitor delay 2 → 3 s',
    goCcm: '"minimal": new connections may time out until the change is done, no figure',
    patch: annotate('health-monitor-delay-s', '3'),
    watch: GAP_80,
  },
  {
    impact: 'port-move',
    change: 'port number 80 → 81, name kept',
    goCcm: 'listener re-created: ≤ 15 s',
    patch: (s) => ({ spec: { ports: [{ ...portOf(s, 0), port: 81 }] } }),
    watch: [{ port: 81, kind: 'until-serving' }],
  },
  {
    impact: 'listener-missing',
    change: 'listener deleted outside the tool',
    goCcm: 'listener created by the next reconcile, no figure (a new listener serves within 30 s)',
    before: 'delete-listener',
    patch: () => ({}),
    watch: [{ port: 80, kind: 'until-serving' }],
  },
  {
    impact: 'pool-swap',
    change: 'pool algorithm',
    goCcm: 'pool re-created: 60–120 s (README; its commit notes: 30–45 s)',
    patch: annotate('pool-algorithm', 'least_connections'),
    watch: GAP_80,
  },
  {
    impact: 'listener-recreation',
    change: 'two ports swap numbers (80 ↔ 443)',
    goCcm: 'listeners re-created: ≤ 15 s each',
    ports: [HTTP, HTTPS],
    patch: (s) => ({ spec: { ports: [{ ...portOf(s, 0), port: 443 }, { ...portOf(s, 1), port: 80 }] } }),
    watch: [{ port: 80, kind: 'gap' }, { port: 443, kind: 'gap' }],
  },
  {
    impact: 'monitor-recreation',
    change: 'monitor type, on a pool whose listener was deleted outside the tool',
    goCcm: 'monitor re-created, "minimal": new connections may time out, no figure',
    before: 'delete-listener',
    patch: annotate('health-monitor-type', 'http'),
    watch: [{ port: 80, kind: 'until-serving' }],
  },
  {
    impact: 'port-removal',
    change: 'a second port removed from the Service',
    goCcm: 'listener and pool deleted; other ports unaffected',
    ports: [HTTP, HTTPS],
    patch: (s) => ({ spec: { ports: [portOf(s, 0)] } }),
    watch: [{ port: 80, kind: 'gap' }, { port: 443, kind: 'until-stopped' }],
  },
  {
    impact: 'no-members',
    change: 'node selector matching no Node, --drain-seconds 0',
    goCcm: 'all members removed (Warning NoValidNodes): down until Nodes match',
    patch: annotate('node-selector', 'bench/none=yes'),
    drainSeconds: 0,
    watch: GAP_80,
  },
  {
    impact: 'lb-lost',
    change: 'load balancer deleted outside the tool',
    goCcm: 'a new load balancer, no figure (one is waited for up to 120 s, a new listener serves within 30 s)',
    before: 'delete-lb',
    patch: () => ({}),
    watch: [{ port: 80, kind: 'until-serving', newLb: true }],
  },
  {
    impact: 'lb-deletion',
    change: 'Service type LoadBalancer → ClusterIP',
    goCcm: 'load balancer deleted (intended)',
    patch: () => ({ spec: { type: 'ClusterIP' } }),
    watch: [{ port: 80, kind: 'until-stopped' }],
  },
  {
    impact: 'refused',
    change: 'load balancer flavor',
    goCcm: 'refused, nothing changed',
    patch: annotate('flavor', 'lb-standard-ha'),
    watch: GAP_80,
  },
];

/** The route of a listener create, where a failed request would strand a port between a move's delete and create. */
const LISTENER_CREATE = { pathPattern: '/v1/load-balancers/listeners', methods: ['POST'] };

/**
 * A pool swap whose listener create fails once, one scenario per kind of failure (the simulator's
 * faults, docs/sim.md), each with its own Service and passes: the pass sends the create again
 * (src/core/apply/pair-completion.ts), and the port's gap must stay within the prediction. `via`:
 * the change applied by `sync-lb` passes, or by the reaction pass of a `run --watch-for` that
 * was watching when the change came (the CronJob's mode).
 * @type {(Scenario & { fault: object, failure: string, via: 'sync-lb' | 'run --watch-for' })[]}
 */
export const FAILED_REQUEST_SCENARIOS = [
  ['a 500', { errorRate: { ...LISTENER_CREATE, status: 500, count: 1 } }, 'sync-lb'],
  ['a 503 with Retry-After: 5', { errorRate: { ...LISTENER_CREATE, status: 503, retryAfterSeconds: 5, count: 1 } }, 'sync-lb'],
  ['a reset before it was applied', { connectionReset: { ...LISTENER_CREATE, count: 1 } }, 'sync-lb'],
  ['no answer within the client timeout (20 s), not applied', { hang: { ...LISTENER_CREATE, count: 1 } }, 'sync-lb'],
  ['a 400 refusing an overlapping write', { errorRate: { ...LISTENER_CREATE, status: 400, count: 1, body: { detail: 'Another operation is in progress on this load balancer.' } } }, 'sync-lb'],
  ['a 500', { errorRate: { ...LISTENER_CREATE, status: 500, count: 1 } }, 'run --watch-for'],
].map(([failure, fault, via]) => ({
  impact: 'pool-swap',
  change: `pool algorithm; the listener create answered ${failure}`,
  failure,
  fault,
  via,
  goCcm: 'pool re-created; a failed request ends its reconcile, retried by the next one with backoff',
  patch: annotate('pool-algorithm', 'least_connections'),
  watch: GAP_80,
}));

/**
 * The classes the planner never emits: the Go CCM's, with what this tool plans instead and the
 * Go CCM's documented figure.
 */
export const NOT_PLANNED = {
  'member-recreation': {
    reason: 'the Go CCM re-creates members for node ports, allowed subnets and externalTrafficPolicy; this tool rotates them (member-rotation) or swaps the pool (pool-swap)',
    goCcm: 'allowed subnets, externalTrafficPolicy: 60–120 s ("considerable"); node ports: no figure',
  },
  'pool-recreation': {
    reason: 'the Go CCM re-creates the pool for the algorithm, the pool protocol and the port name; this tool swaps it (pool-swap)',
    goCcm: '60–120 s (README; its commit notes: 30–45 s)',
  },
};

/**
 * What keeps the scenarios from covering `classes` (the planner's IMPACT_CLASSES) one to one: a
 * class with neither a scenario nor a reason in NOT_PLANNED, a scenario or a reason naming a class
 * that does not exist, a class with two scenarios. Empty when they cover it.
 */
export function scenarioProblems(classes) {
  const named = SCENARIOS.map((s) => s.impact);
  return [
    ...classes.filter((c) => !named.includes(c) && !Object.hasOwn(NOT_PLANNED, c)).map((c) => `impact class ${c} has no scenario (add one to SCENARIOS, or its reason to NOT_PLANNED)`),
    ...[...named, ...Object.keys(NOT_PLANNED)].filter((c) => !classes.includes(c)).map((c) => `${c} is not an impact class of the planner`),
    ...named.filter((c, i) => named.indexOf(c) !== i || Object.hasOwn(NOT_PLANNED, c)).map((c) => `impact class ${c} is covered twice`),
  ];
}

function portOf(service, index) {
  const { name, protocol, port, targetPort, nodePort } = service.spec.ports[index];
  return { name, protocol, port, targetPort, nodePort };
}
