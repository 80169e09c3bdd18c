// A per-run record of every HTTP attempt the client makes, so commands can report what a pass
// cost ("12 requests, 1 retry") and benchmarks can compare it with the minimum the work needs.
import { isIP } from 'node:net';

export interface RequestRecord {
  readonly method: string;
  /** The path with identifiers replaced: `/v1/load-balancers/{uuid}`, `/v1/floating-ips/{ip}`. */
  readonly route: string;
  /** The HTTP status, or 'error' when no answer came (timeout, network failure, abort). */
  readonly status: number | 'error';
  readonly durationMs: number;
  /** 1 for the first try of a call, 2 for its first retry, and so on. */
  readonly attempt: number;
  /** True when this attempt was itself a retry (attempt > 1). */
  readonly retried: boolean;
  /** True for the attempt whose outcome the caller received (success or thrown error). */
  readonly final: boolean;
  /**
   * How long the call waited before this attempt: the retry delay after the previous attempt
   * (`Retry-After` or backoff) and the time queued for the client's limit on requests in flight.
   */
  readonly waitedMs?: number;
}

export interface RequestSummary {
  /** HTTP attempts sent, retries included. */
  readonly total: number;
  /** Attempts with GET. */
  readonly reads: number;
  /** Attempts with any other method (POST, PATCH, DELETE). */
  readonly writes: number;
  /** Attempts that repeated an earlier one. */
  readonly retries: number;
  /** Attempts the API answered 429 (too many requests). */
  readonly throttled: number;
  /**
   * Time calls spent waiting before their attempts (retry delays, the limit on requests in
   * flight), summed over calls: parallel calls wait at the same time, so it may exceed the pass.
   */
  readonly waitedMs: number;
  /** Attempts per `METHOD route`, most frequent first, ties in alphabetical order. */
  readonly byRoute: readonly { readonly route: string; readonly count: number }[];
}

export interface RequestCounter {
  entries(): readonly RequestRecord[];
  summary(): RequestSummary;
  /** Forgets everything recorded so far (e.g. between the passes of a benchmark). */
  reset(): void;
}

/** The counter's writing side; only the transport records. */
export interface RecordingRequestCounter extends RequestCounter {
  record(entry: RequestRecord): void;
}

export function createRequestCounter(): RecordingRequestCounter {
  let records: RequestRecord[] = [];
  return {
    record(entry) {
      records.push(entry);
    },
    entries() {
      return [...records];
    },
    reset() {
      records = [];
    },
    summary() {
      return summarise(records);
    },
  };
}

export function summarise(records: readonly RequestRecord[]): RequestSummary {
  const perRoute = new Map<string, number>();
  for (const entry of records) {
    const key = `${entry.method} ${entry.route}`;
    perRoute.set(key, (perRoute.get(key) ?? 0) + 1);
  }
  const byRoute = [...perRoute]
    .map(([route, count]) => ({ route, count }))
    .sort((a, b) => b.count - a.count || (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
  let reads = 0;
  let retries = 0;
  let throttled = 0;
  let waitedMs = 0;
  for (const entry of records) {
    if (entry.method === 'GET') reads += 1;
    if (entry.retried) retries += 1;
    if (entry.status === 429) throttled += 1;
    waitedMs += entry.waitedMs ?? 0;
  }
  return {
    total: records.length,
    reads,
    writes: records.length - reads,
    retries,
    throttled,
    waitedMs,
    byRoute,
  };
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The route of a URL path: identifiers become `{uuid}` and `{ip}`, the query string is dropped.
 * Percent-encoded segments (an IPv6 address sent as `2001%3Adb8%3A%3A1`) are decoded first.
 */
export function routePattern(path: string): string {
  const withoutQuery = path.split(/[?#]/, 1)[0] ?? '';
  return withoutQuery
    .split('/')
    .map((segment) => {
      const decoded = safeDecode(segment);
      if (uuidPattern.test(decoded)) return '{uuid}';
      if (isIP(decoded) !== 0) return '{ip}';
      return segment;
    })
    .join('/');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    // A malformed escape is not an identifier; the segment stays as it is.
    return segment;
  }
}

/**
 * The API budget of a pass for its summary line: `812 API requests (402 writes)`, and when the
 * API answered 429, how many and how long calls waited: `(402 writes; 61 answered 429, 75 s waited)`.
 */
export function budgetLine(requests: Pick<RequestSummary, 'total' | 'writes' | 'throttled' | 'waitedMs'>): string {
  const throttled = requests.throttled > 0 ? `; ${requests.throttled} answered 429, ${Math.round(requests.waitedMs / 1000)} s waited` : '';
  return `${requests.total} API requests (${requests.writes} writes${throttled})`;
}
