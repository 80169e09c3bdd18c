// The simulator's log of API requests: one entry per request as it finished, numbered in the
// order they arrived, and the counts per route that `GET /_sim/requests/summary` answers.

export interface RequestLogEntry {
  /**
   * The order of arrival: 1 for the first API request since the simulator started, counting on
   * across `resetRequests`. The log itself is in the order requests finished; a request that
   * waited (latency, a hang, the LB queue) comes later in the log than its `seq` says.
   */
  seq: number;
  method: string;
  /** Path and query as received. */
  path: string;
  /** The route pattern, e.g. `/v1/load-balancers/pools/{uuid}/members`; the path if none matched. */
  route: string;
  /** The status answered; 0 when no answer was sent (connection reset, or the client gave up). */
  status: number;
  /** The fault that changed this request, if one did. */
  fault?: 'error' | 'rateLimit' | 'connectionReset' | 'hang' | 'shortList';
  /** When the request arrived (ISO-8601). */
  time: string;
  durationMs: number;
  /** The name of the accepted token it authenticated with (see setTokens); absent without one. */
  token?: string;
}

export interface RouteCount {
  method: string;
  route: string;
  count: number;
  /** Count per answered status code. */
  statuses: Record<string, number>;
}

/** The oldest entries go first once the log holds this many. */
const MAX_LOG_ENTRIES = 100_000;

export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private arrived = 0;

  /** Counts a request in as it arrives: its `seq`. */
  arrive(): number {
    return ++this.arrived;
  }

  /** How many API requests have arrived so far: the `seq` of the latest (finished or not). */
  get arrivals(): number {
    return this.arrived;
  }

  record(entry: RequestLogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > MAX_LOG_ENTRIES) this.entries.splice(0, this.entries.length - MAX_LOG_ENTRIES);
  }

  /** Copies of the entries, in the order their requests finished. */
  all(): RequestLogEntry[] {
    return this.entries.map((entry) => ({ ...entry }));
  }

  /** Empties the log; `seq` counts on. */
  reset(): void {
    this.entries = [];
  }

  summary(): RouteCount[] {
    const counts = new Map<string, RouteCount>();
    for (const entry of this.entries) {
      const key = `${entry.method} ${entry.route}`;
      let count = counts.get(key);
      if (count === undefined) {
        count = { method: entry.method, route: entry.route, count: 0, statuses: {} };
        counts.set(key, count);
      }
      count.count++;
      count.statuses[entry.status] = (count.statuses[entry.status] ?? 0) + 1;
    }
    return [...counts.values()];
  }
}
