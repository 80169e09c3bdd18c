// The impact model: what a change does to traffic, and how long it interrupts it.
// Classes follow the Go CCM's README "Impact of Service Changes" (docs/go-ccm-compatibility.md),
// corrected by what its code really recreates (same page): allowed subnets and
// externalTrafficPolicy recreate members and monitors, not pools.

/** What a planned action touches, from harmless to destructive. Ordered by severity. */
export const IMPACT_CLASSES = [
  'none',
  'member-drain',
  'member-rotation',
  'minimal',
  'port-move',
  'listener-missing',
  'pool-swap',
  'listener-recreation',
  'monitor-recreation',
  'member-recreation',
  'pool-recreation',
  'port-removal',
  'no-members',
  'lb-lost',
  'lb-deletion',
  'refused',
] as const;
export type ImpactClass = (typeof IMPACT_CLASSES)[number];

/** The README's coarse scale, for summaries: none < minimal < short < considerable < total. */
export type DowntimeClass = 'none' | 'minimal' | 'short' | 'considerable' | 'total';

export interface Downtime {
  readonly class: DowntimeClass;
  readonly minSeconds: number;
  /** `null`: unbounded (the load balancer is gone, or no member remains until nodes return). */
  readonly maxSeconds: number | null;
  /** One sentence for people: what is interrupted and for how long. */
  readonly text: string;
}

/** One-line explanation of each class, for legends and the README. */
export const IMPACT_DOC: { readonly [K in ImpactClass]: string } = {
  none: 'No effect on traffic.',
  'member-drain':
    'The member takes no new connections (disabled) and is deleted once the drain period has passed: no interruption while other members serve.',
  'member-rotation':
    'New members are added and checked healthy before the old ones leave: no interruption.',
  minimal: 'Generally safe; new connections may be affected briefly.',
  'port-move':
    "The Service port's number changed: its listener moves to the new number in place. The old number stops answering at once (the Service no longer has it); the new one answers once the change reaches the data plane (up to about 20 s).",
  'listener-missing':
    'A port of the Service has no listener (a pass stopped between the delete and the create of a listener move, or it was deleted outside this tool): it serves nothing now, and answers once the listener created for it reaches the data plane (up to about 25 s: the create may wait for deletes of the same pass to settle, then the listener serves within about 20 s; about 50 s if its create fails and is sent again, or the listener moved out of the way is put back). A downtime budget does not hold it back: holding would only prolong the outage.',
  'pool-swap':
    "A successor pool is built beside the old one and checked healthy; then the port's listener moves to it: the port is unreachable only while its listener is re-created (up to about 20 s: one propagation of the data plane). A failed request of the move is sent again for up to 25 s (up to about 45 s in all); if the create still fails, the listener is put back on the old pool, which still serves.",
  'listener-recreation':
    'The listener is recreated: its port is unreachable for up to about 20 s (the old one stops when its delete settles, its replacement is created right after it and reaches the data plane in 10–15 s; up to about 45 s when a request of the pair fails and is sent again, and if the create still fails the old listener is put back).',
  'monitor-recreation':
    'The health monitor is recreated: members are re-checked, new connections may fail for a few seconds.',
  'member-recreation':
    'Every member of the pool is replaced: no healthy backend until the new members pass their health checks.',
  'pool-recreation':
    'The pool is recreated with its members, listener and monitor: about 60–120 s of downtime on that port.',
  'port-removal':
    'A port that is no longer a Service port is removed with its pool: it stops serving.',
  'no-members': 'The pool is left without members: its port serves nothing until nodes match again.',
  'lb-lost':
    "The load balancer the Service records is gone from the cloud (deleted outside this tool): a new one is created, and the Service's addresses change to the new one's, known only once it exists. DNS records, firewalls and allow-lists that name the old addresses break until they are updated. Its ports serve nothing already, so a downtime budget does not hold it back.",
  'lb-deletion': 'The load balancer is deleted: the Service loses it and its addresses.',
  refused: 'Not applied: the change needs a new load balancer. Nothing is changed.',
};

const DOWNTIME_CLASS: { readonly [K in ImpactClass]: DowntimeClass } = {
  none: 'none',
  'member-drain': 'none',
  'member-rotation': 'none',
  minimal: 'minimal',
  'port-move': 'short',
  'listener-missing': 'short',
  'pool-swap': 'short',
  'listener-recreation': 'short',
  'monitor-recreation': 'short',
  'member-recreation': 'considerable',
  'pool-recreation': 'considerable',
  'port-removal': 'total',
  'no-members': 'total',
  'lb-lost': 'total',
  'lb-deletion': 'total',
  refused: 'none',
};

/** Health-check figures that bound how long fresh members or monitors take to report `up`. */
export interface MonitorTiming {
  readonly delay_s: number;
  readonly up_threshold: number;
}

/**
 * The expected downtime of an action of the given class. `monitor` refines the estimates that
 * depend on health checks (member and monitor recreation); without it the Go CCM defaults
 * (delay 2 s, up threshold 2) are assumed.
 */
export function downtimeOf(impact: ImpactClass, monitor?: MonitorTiming): Downtime {
  // One shared, frozen answer per class and timing: a large pass plans tens of thousands of
  // actions, each carrying its downtime.
  const key = `${impact}/${monitor?.delay_s ?? ''}/${monitor?.up_threshold ?? ''}`;
  let downtime = downtimes.get(key);
  if (downtime === undefined) {
    downtime = Object.freeze(computeDowntime(impact, monitor));
    downtimes.set(key, downtime);
  }
  return downtime;
}

const downtimes = new Map<string, Downtime>();

/** A listener's delete reaching the data plane, then its replacement's create propagating (10–15 s). */
const LISTENER_MOVE_S = 20;
/**
 * What a failed request inside a listener move may add: the create is sent again for up to 25 s
 * after its first attempt (src/core/apply/pair-completion.ts, PAIR_RETRY_MS; an attempt without
 * an answer costs the API timeout, 20 s by default, and fits in it once).
 */
const LISTENER_MOVE_RETRY_S = 25;

function computeDowntime(impact: ImpactClass, monitor?: MonitorTiming): Downtime {
  const checks = monitor ?? { delay_s: 2, up_threshold: 2 };
  const healthy = checks.delay_s * checks.up_threshold;
  const cls = DOWNTIME_CLASS[impact];
  switch (impact) {
    case 'none':
      return { class: cls, minSeconds: 0, maxSeconds: 0, text: 'no interruption' };
    case 'member-drain':
      return { class: cls, minSeconds: 0, maxSeconds: 0, text: 'no interruption: the member takes no new connections, its open ones may finish' };
    case 'member-rotation':
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: 0,
        text: `no interruption: the new members pass ${checks.up_threshold} checks ${checks.delay_s} s apart before the old ones leave`,
      };
    case 'pool-swap':
      return {
        class: cls,
        minSeconds: 0,
        // The old listener stops when its delete reaches the data plane, and the create is sent
        // at once (a refusal until the API frees the port is tried again at short intervals);
        // the new one serves one propagation (10–15 s) after it. LISTENER_MOVE_RETRY_S more
        // when one of the move's requests fails and is sent again.
        maxSeconds: LISTENER_MOVE_S + LISTENER_MOVE_RETRY_S,
        text:
          `the port is unreachable only while its listener moves to the new, already healthy pool (up to ~${LISTENER_MOVE_S} s; ` +
          `~${LISTENER_MOVE_S + LISTENER_MOVE_RETRY_S} s if a request of the move fails and is sent again)`,
      };
    case 'minimal':
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: 5,
        text: 'no interruption expected; new connections may be affected for a few seconds',
      };
    case 'port-move':
      return {
        class: cls,
        minSeconds: 0,
        // A listener PATCH reaches the data plane within about 15–20 s (docs/cloudscale-api.md).
        maxSeconds: 20,
        text: 'the old port number stops answering at once; the new one answers once the change reaches the data plane (up to ~20 s)',
      };
    case 'listener-missing':
      return {
        class: cls,
        minSeconds: 0,
        // Counted from the pass: the create may come after deletes in the same pool (it is sent
        // without the settle pause, a refusal while they settle tried again), then the listener
        // reaches the data plane in up to ~20 s (npm run bench:downtime measured 22 s for a
        // monitor re-created first); LISTENER_MOVE_RETRY_S more when the create fails and is
        // sent again.
        maxSeconds: 25 + LISTENER_MOVE_RETRY_S,
        text:
          `the port has no listener and serves nothing now: it answers once this one reaches the data plane (up to ~25 s; ` +
          `~${25 + LISTENER_MOVE_RETRY_S} s if its create fails and is sent again)`,
      };
    case 'listener-recreation':
      // The API re-creates a listener in 10–15 s, counted from the create, which the pass sends
      // right after the delete (a refusal until the delete settles tried again at short
      // intervals); LISTENER_MOVE_RETRY_S more when a request of the pair fails and is sent again.
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: LISTENER_MOVE_S + LISTENER_MOVE_RETRY_S,
        text: `the port is unreachable for up to ~${LISTENER_MOVE_S} s (~${LISTENER_MOVE_S + LISTENER_MOVE_RETRY_S} s if a request of the pair fails and is sent again)`,
      };
    case 'monitor-recreation':
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: healthy + 10,
        text: `new connections may fail until members pass ${checks.up_threshold} checks ${checks.delay_s} s apart (~${healthy + 10} s at most)`,
      };
    case 'member-recreation':
      return {
        class: cls,
        minSeconds: healthy,
        maxSeconds: healthy + 30,
        text: `no healthy member until the new ones pass ${checks.up_threshold} checks ${checks.delay_s} s apart (~${healthy}–${healthy + 30} s)`,
      };
    case 'pool-recreation':
      return { class: cls, minSeconds: 60, maxSeconds: 120, text: 'the port is down for ~60–120 s' };
    case 'port-removal':
      return { class: cls, minSeconds: 0, maxSeconds: null, text: 'the port stops serving' };
    case 'no-members':
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: null,
        text: 'the port serves nothing until nodes are selected again',
      };
    case 'lb-lost':
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: null,
        text: "the Service's addresses change: whatever reaches it by the old ones (DNS, firewalls, allow-lists) breaks until updated",
      };
    case 'lb-deletion':
      return {
        class: cls,
        minSeconds: 0,
        maxSeconds: null,
        text: 'the Service loses its load balancer and its addresses',
      };
    case 'refused':
      return { class: cls, minSeconds: 0, maxSeconds: 0, text: 'nothing is changed' };
  }
}

/** Severity order of impact classes; `refused` ranks lowest among changes because nothing happens. */
export function impactRank(impact: ImpactClass): number {
  return impact === 'refused' ? -1 : IMPACT_CLASSES.indexOf(impact);
}
