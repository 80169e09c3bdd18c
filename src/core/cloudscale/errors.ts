// The errors the cloudscale client throws, refined from the shared vocabulary in ../errors.ts:
// each also says how many attempts were made and whether a create may have happened anyway.
import { CloudscaleApiError, CloudscaleUnavailableError } from '../errors.js';

/** The API answered with an error status (after retries, where those apply). */
export class CloudscaleRequestError extends CloudscaleApiError {
  /**
   * True when this was a create whose effect is unknown (a 5xx answer): re-read the state before
   * creating again. Never true for GET, PATCH or DELETE, which are safe to repeat.
   */
  readonly outcomeUnknown: boolean;
  readonly attempts: number;
  /** The wait the last answer's `Retry-After` asked for, if it had one. */
  readonly retryAfterMs: number | undefined;
  override readonly hint: string | undefined;
  constructor(init: {
    status: number;
    method: string;
    path: string;
    body: unknown;
    attempts: number;
    outcomeUnknown: boolean;
    retryAfterMs?: number | undefined;
    /** Instead of the status's hint, when the transport knows better. */
    hint?: string;
  }) {
    super({ ...init, body: normaliseErrorBody(init.body) });
    this.outcomeUnknown = init.outcomeUnknown;
    this.attempts = init.attempts;
    this.retryAfterMs = init.retryAfterMs;
    this.hint = init.hint ?? hintForStatus(init.status, init.outcomeUnknown);
  }
}

/** No answer came (network failure or timeout) on the last of `attempts` attempts. */
export class CloudscaleNoAnswerError extends CloudscaleUnavailableError {
  readonly method: string;
  readonly path: string;
  readonly attempts: number;
  /** As on CloudscaleRequestError: a create that may have happened. */
  readonly outcomeUnknown: boolean;
  constructor(init: {
    method: string;
    path: string;
    reason: string;
    attempts: number;
    outcomeUnknown: boolean;
    baseUrl: string;
    cause?: unknown;
    /** What to check instead of reachability (a TLS failure, say). */
    hint?: string;
  }) {
    const tries = init.attempts === 1 ? '1 attempt' : `${init.attempts} attempts`;
    super(`cloudscale API ${init.method} ${init.path}: ${init.reason} (${tries})`, {
      cause: init.cause,
      hint: init.outcomeUnknown
        ? outcomeUnknownHint
        : (init.hint ??
          `check that ${init.baseUrl} is reachable from here (CLOUDSCALE_API_URL, --api-url); ` +
            'raise CLOUDSCALE_API_TIMEOUT (seconds) if the API is only slow'),
    });
    this.method = init.method;
    this.path = init.path;
    this.attempts = init.attempts;
    this.outcomeUnknown = init.outcomeUnknown;
  }
}

/** True for an error of a create that may have taken effect: re-read before creating again. */
export function isOutcomeUnknown(error: unknown): boolean {
  return (
    (error instanceof CloudscaleRequestError || error instanceof CloudscaleNoAnswerError) &&
    error.outcomeUnknown
  );
}

const outcomeUnknownHint =
  'the object may or may not have been created: read the current state before creating it ' +
  'again (the next run does this by itself)';

function hintForStatus(status: number, outcomeUnknown: boolean): string | undefined {
  if (outcomeUnknown) return outcomeUnknownHint;
  if (status === 401) {
    return 'the API rejected the token: check CLOUDSCALE_API_TOKEN, --token-file or the ' +
      'kube-system/cloudscale Secret (key access-token)';
  }
  if (status === 403) return 'the token is not allowed to do this: use a read/write API token';
  if (status === 429 || status >= 500) {
    return 'the API is overloaded or under maintenance: try again later';
  }
  if (status === 404) {
    return 'the object is gone, or this is not the cloudscale API: check CLOUDSCALE_API_URL (--api-url); ' +
      'an object deleted meanwhile is read again on the next run';
  }
  if (status >= 400 && status < 500) {
    return 'the API refused the request as sent: where the message names a value of an annotation, fix the ' +
      'annotation; otherwise report it (with the output of -v) as a bug of cloudscale-ccm';
  }
  return undefined;
}

/**
 * The API's error body in the shape CloudscaleApiError reads: Django REST Framework answers
 * `{"detail": "..."}`, `{"field": ["msg", ...]}` or a bare list of messages; proxies in front of
 * it may answer HTML or plain text. Text that holds JSON is parsed; a list becomes the detail.
 */
export function normaliseErrorBody(body: unknown): unknown {
  let value = body;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return undefined;
    try {
      value = JSON.parse(text);
    } catch {
      // Not JSON (an HTML error page of a proxy, say): the text itself is the detail.
      return text;
    }
  }
  if (Array.isArray(value)) {
    const messages = value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
    return messages.length === 0 ? undefined : { detail: messages.join(' ') };
  }
  if (value === null || value === undefined) return undefined;
  return typeof value === 'object' ? value : String(value);
}

/**
 * Per-field messages as flat `path: message` pairs, following DRF's nesting:
 * `{"vip_addresses": [{"subnet": ["Must be a valid UUID."]}]}` gives
 * `{field: 'vip_addresses[0].subnet', message: 'Must be a valid UUID.'}`.
 */
export function fieldMessages(
  fieldErrors: Record<string, unknown>,
): { field: string; message: string }[] {
  const found: { field: string; message: string }[] = [];
  const walk = (field: string, value: unknown): void => {
    if (typeof value === 'string') {
      found.push({ field, message: value });
    } else if (Array.isArray(value)) {
      if (value.every((item) => typeof item === 'string')) {
        for (const message of value) found.push({ field, message });
      } else {
        value.forEach((item, index) => {
          // DRF puts `{}` in a nested list for items without errors.
          walk(`${field}[${index}]`, item);
        });
      }
    } else if (value !== null && typeof value === 'object') {
      for (const [key, nested] of Object.entries(value)) walk(`${field}.${key}`, nested);
    } else if (value !== null && value !== undefined) {
      found.push({ field, message: String(value) });
    }
  };
  for (const [field, value] of Object.entries(fieldErrors)) walk(field, value);
  return found;
}
