// The data plane's timings: how long a change of each kind takes to reach the load balancers,
// and which parts of the real platform's behaviour the data plane plays (health checks,
// deletes that hold their slot, `error` while a pool is down). Read from a seed, from
// `startSimulator` and from the admin API; docs/sim.md ("Data plane") describes each.

/**
 * Per kind of configuration change, how long after the API answered it reaches the data plane
 * (docs/sim.md, "Data plane"; the real API's figures: docs/cloudscale-api.md).
 */
export interface PropagationTable {
  /** A listener created on a port (and protocol) the load balancer never had a listener on. */
  newListener: number;
  /** A listener re-created on a port the load balancer had one on, or a PATCH of its port or protocol. */
  listener: number;
  /**
   * A listener created on a port the load balancer had one on, for a pool created after that
   * port's last listener went (deleted, moved, or with its pool): the port's pool re-created,
   * as cloudscale's Go CCM does for an algorithm change.
   */
  newPool: number;
  /** A PATCH of a listener's `allowed_cidrs`. */
  allowedCidrs: number;
  /** A member created, enabled, disabled or deleted. */
  member: number;
  /** A health monitor created, PATCHed or deleted. */
  monitor: number;
  /** A listener, pool or load balancer deleted. */
  delete: number;
}

export type PropagationKind = keyof PropagationTable;
export const PROPAGATION_KINDS: readonly PropagationKind[] = ['newListener', 'listener', 'newPool', 'allowedCidrs', 'member', 'monitor', 'delete'];
const MAX_PROPAGATION_MS = 3_600_000;

/** The delay of one kind of change: a number is the same delay for every kind. */
export function propagationOf(propagation: number | PropagationTable, kind: PropagationKind): number {
  return typeof propagation === 'number' ? propagation : propagation[kind];
}

export interface DataPlaneTimings {
  /**
   * How long after the API answered a configuration change reaches the data plane: one delay
   * for every change, or one per kind of change.
   */
  propagationMs: number | PropagationTable;
  /**
   * false: a monitored, enabled member is `up` while its server runs, at once (the simulator's
   * behaviour before it had a data plane). true: health monitors check members every `delay_s`.
   */
  healthChecks: boolean;
  /**
   * true: a listener port, a member's address and port in a pool, or a pool's monitor stays
   * taken until its delete (or port change) reached the data plane; a create that needs it
   * meanwhile is refused (400). false: free as soon as the API answered the delete.
   */
  deletesHoldUntilPropagated: boolean;
  /**
   * true: a running load balancer shows status `error` while one of its pools has a health
   * monitor and every enabled member of it is `down` (seen on the real platform).
   */
  errorWhilePoolDown: boolean;
}

/** Timings as a seed, `startSimulator` or the admin API give them: some fields, some kinds of propagation. */
export type DataPlaneChanges = Partial<Omit<DataPlaneTimings, 'propagationMs'>> & {
  propagationMs?: number | Partial<PropagationTable>;
};

export const DEFAULT_DATA_PLANE: DataPlaneTimings = {
  propagationMs: 0,
  healthChecks: false,
  deletesHoldUntilPropagated: false,
  errorWhilePoolDown: false,
};
const TIMING_NAMES = Object.keys(DEFAULT_DATA_PLANE).join(', ');

/**
 * `base` with the timings of `value` (the seed's `dataPlane`, the admin API's body) applied;
 * `problems` names each bad field under `where`, and is empty when all are fine.
 */
export function readDataPlaneTimings(
  value: unknown,
  base: DataPlaneTimings,
  where: string,
): { timings: DataPlaneTimings; problems: string[] } {
  const timings = { ...base };
  const problems: string[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { timings, problems: [`${where}: expected a mapping with any of ${TIMING_NAMES}`] };
  }
  for (const [key, field] of Object.entries(value)) {
    if (key === 'propagationMs') {
      const read = readPropagation(field, timings.propagationMs, `${where}.propagationMs`);
      timings.propagationMs = read.propagation;
      problems.push(...read.problems);
    } else if (key === 'healthChecks' || key === 'deletesHoldUntilPropagated' || key === 'errorWhilePoolDown') {
      if (typeof field === 'boolean') timings[key] = field;
      else problems.push(`${where}.${key}: expected true or false, got ${JSON.stringify(field)}`);
    } else {
      problems.push(`${where}: unknown field "${key}" (expected one of: ${TIMING_NAMES})`);
    }
  }
  return { timings, problems };
}

const isMilliseconds = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_PROPAGATION_MS;

/**
 * `propagationMs` as given: milliseconds for every kind, or a mapping of some kinds (the others
 * keep their delay from `current`).
 */
function readPropagation(
  value: unknown,
  current: number | PropagationTable,
  where: string,
): { propagation: number | PropagationTable; problems: string[] } {
  const expected = `expected milliseconds from 0 to ${MAX_PROPAGATION_MS}`;
  if (isMilliseconds(value)) return { propagation: value, problems: [] };
  if (typeof value === 'number') return { propagation: current, problems: [`${where}: ${expected}, got ${JSON.stringify(value)}`] };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { propagation: current, problems: [`${where}: ${expected}, or a mapping of ${PROPAGATION_KINDS.join(', ')} to them, got ${JSON.stringify(value)}`] };
  }
  const table = Object.fromEntries(PROPAGATION_KINDS.map((kind) => [kind, propagationOf(current, kind)])) as unknown as PropagationTable;
  const problems: string[] = [];
  for (const [kind, ms] of Object.entries(value)) {
    if (!(PROPAGATION_KINDS as readonly string[]).includes(kind)) {
      problems.push(`${where}: unknown kind "${kind}" (expected one of: ${PROPAGATION_KINDS.join(', ')})`);
    } else if (isMilliseconds(ms)) table[kind as PropagationKind] = ms;
    else problems.push(`${where}.${kind}: ${expected}, got ${JSON.stringify(ms)}`);
  }
  return { propagation: problems.length > 0 ? current : table, problems };
}
