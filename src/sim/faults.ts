// Injected faults: latency, error answers on matching requests, rate limiting, LBs pinned in
// `changing` or `error`. Count-based rules ("the next N matching requests fail") make tests
// deterministic; `rate` adds randomness for demos and benchmarks.

import { isDict } from './fields.js';

export interface FaultConfig {
  /** Added to every API request; for mutations of one LB it is spent while holding its lock. */
  latencyMs?: number;
  /** Error answers (500, 503, …) on matching requests. */
  errorRate?: ErrorFault | ErrorFault[];
  /** 429 answers with `Retry-After` on matching requests. */
  rateLimit?: RateLimitFault | RateLimitFault[];
  /** LB UUID or name → the status it shows regardless of provisioning. */
  stuckLoadBalancers?: Record<string, 'changing' | 'error'>;
}

export interface RequestMatcher {
  /**
   * Matched against the decoded request path without query or trailing slash (so
   * `/v1/floating-ips/2a06:c01::1` also matches a `%3A`-encoded request): `*` matches within
   * one segment, `**` across segments (`/v1/load-balancers/**`). A route pattern such as
   * `/v1/load-balancers/pools/{uuid}/members` matches every request of that route.
   */
  pathPattern: string;
  /** Upper-case HTTP methods; all when absent. */
  methods?: string[];
  /** The next `count` matching requests get the fault, then the rule is spent; unlimited when absent. */
  count?: number;
}

export interface ErrorFault extends RequestMatcher {
  status: number;
  /** Probability (0..1) that a matching request fails; 1 when absent. */
  rate?: number;
  /** Sets a `Retry-After` header (seconds). */
  retryAfterSeconds?: number;
  /**
   * Apply the request, then answer with the error: the client cannot tell whether its
   * change happened (a lost answer to a create, for example).
   */
  afterApplying?: boolean;
  /** The JSON answer; a DRF-style `{"detail": …}` for the status when absent. */
  body?: unknown;
}

export interface RateLimitFault extends RequestMatcher {
  retryAfterSeconds: number;
}

/** A rule in force, with its remaining count. */
interface ActiveRule {
  matcher: RequestMatcher;
  regex: RegExp;
  remaining: number;
  status: number;
  rate: number;
  retryAfterSeconds: number | undefined;
  afterApplying: boolean;
  body: unknown;
}

export interface FaultDecision {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  afterApplying: boolean;
}

const DEFAULT_DETAIL: Record<number, string> = {
  400: 'Bad request.',
  403: 'You do not have permission to perform this action.',
  404: 'Not found.',
  429: 'Request was throttled.',
  500: 'Server error.',
  502: 'Bad gateway.',
  503: 'Service temporarily unavailable, try again later.',
  504: 'Gateway timeout.',
};

/** Thrown for a fault configuration that makes no sense; the message names the field. */
export class FaultConfigError extends Error {}

export class Faults {
  private config: FaultConfig = {};
  private rules: ActiveRule[] = [];

  /** Replaces the whole configuration (validated first; an invalid one changes nothing). */
  set(config: unknown): void {
    const checked = checkFaultConfig(config);
    const rules: ActiveRule[] = [];
    for (const fault of asList(checked.errorRate)) {
      rules.push(activeRule(fault, fault.status, fault.rate ?? 1, fault.retryAfterSeconds, fault.afterApplying ?? false, fault.body));
    }
    for (const fault of asList(checked.rateLimit)) {
      rules.push(activeRule(fault, 429, 1, fault.retryAfterSeconds, false, undefined));
    }
    this.config = checked;
    this.rules = rules;
  }

  clear(): void {
    this.config = {};
    this.rules = [];
  }

  get latencyMs(): number {
    return this.config.latencyMs ?? 0;
  }

  get stuckLoadBalancers(): Record<string, 'changing' | 'error'> {
    return this.config.stuckLoadBalancers ?? {};
  }

  /** The configuration with the remaining count of each rule. */
  describe(): FaultConfig & { remaining: (number | null)[] } {
    return { ...this.config, remaining: this.rules.map((r) => (Number.isFinite(r.remaining) ? r.remaining : null)) };
  }

  /** The fault for this request, if any; consumes one count of the rule that fires. */
  decide(method: string, path: string, routePattern: string | undefined): FaultDecision | undefined {
    for (const rule of this.rules) {
      if (rule.remaining <= 0) continue;
      if (rule.matcher.methods !== undefined && !rule.matcher.methods.includes(method)) continue;
      if (!rule.regex.test(path) && rule.matcher.pathPattern !== routePattern) continue;
      if (rule.rate < 1 && Math.random() >= rule.rate) continue;
      rule.remaining -= 1;
      const headers: Record<string, string> = {};
      if (rule.retryAfterSeconds !== undefined) headers['Retry-After'] = String(rule.retryAfterSeconds);
      const detail =
        rule.status === 429 && rule.retryAfterSeconds !== undefined
          ? `Request was throttled. Expected available in ${rule.retryAfterSeconds} second${rule.retryAfterSeconds === 1 ? '' : 's'}.`
          : (DEFAULT_DETAIL[rule.status] ?? 'Simulated failure.');
      return { status: rule.status, body: rule.body ?? { detail }, headers, afterApplying: rule.afterApplying };
    }
    return undefined;
  }
}

function asList<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function activeRule(
  matcher: RequestMatcher,
  status: number,
  rate: number,
  retryAfterSeconds: number | undefined,
  afterApplying: boolean,
  body: unknown,
): ActiveRule {
  return {
    matcher,
    regex: globToRegex(matcher.pathPattern),
    remaining: matcher.count ?? Infinity,
    status,
    rate,
    retryAfterSeconds,
    afterApplying,
    body,
  };
}

export function globToRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (char === '*') {
      source += '[^/]*';
    } else {
      source += char.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}/?$`);
}

function checkFaultConfig(value: unknown): FaultConfig {
  if (!isDict(value)) throw new FaultConfigError('faults: expected a JSON object');
  const known = ['latencyMs', 'errorRate', 'rateLimit', 'stuckLoadBalancers'];
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new FaultConfigError(`faults: unknown field "${key}" (expected one of: ${known.join(', ')})`);
  }
  const config = value as FaultConfig;
  if (config.latencyMs !== undefined && !(isNonNegativeNumber(config.latencyMs))) {
    throw new FaultConfigError('faults.latencyMs: expected a number of milliseconds ≥ 0');
  }
  asList(config.errorRate).forEach((fault, index) => {
    const where = `faults.errorRate[${index}]`;
    checkMatcher(fault, where);
    if (!Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599) {
      throw new FaultConfigError(`${where}.status: expected an HTTP error status (400–599)`);
    }
    if (fault.rate !== undefined && !(typeof fault.rate === 'number' && fault.rate >= 0 && fault.rate <= 1)) {
      throw new FaultConfigError(`${where}.rate: expected a probability from 0 to 1`);
    }
    if (fault.retryAfterSeconds !== undefined && !isNonNegativeNumber(fault.retryAfterSeconds)) {
      throw new FaultConfigError(`${where}.retryAfterSeconds: expected a number of seconds ≥ 0`);
    }
  });
  asList(config.rateLimit).forEach((fault, index) => {
    const where = `faults.rateLimit[${index}]`;
    checkMatcher(fault, where);
    if (!Number.isInteger(fault.retryAfterSeconds) || fault.retryAfterSeconds < 0) {
      throw new FaultConfigError(`${where}.retryAfterSeconds: expected a whole number of seconds ≥ 0`);
    }
  });
  if (config.stuckLoadBalancers !== undefined) {
    if (!isDict(config.stuckLoadBalancers)) {
      throw new FaultConfigError('faults.stuckLoadBalancers: expected an object of LB UUID or name → "changing" | "error"');
    }
    for (const [key, status] of Object.entries(config.stuckLoadBalancers)) {
      if (status !== 'changing' && status !== 'error') {
        throw new FaultConfigError(`faults.stuckLoadBalancers.${key}: expected "changing" or "error"`);
      }
    }
  }
  return structuredClone(config);
}

function checkMatcher(fault: unknown, where: string): asserts fault is RequestMatcher {
  if (!isDict(fault)) throw new FaultConfigError(`${where}: expected an object`);
  if (typeof fault.pathPattern !== 'string' || !fault.pathPattern.startsWith('/')) {
    throw new FaultConfigError(`${where}.pathPattern: expected a path pattern starting with / (e.g. /v1/load-balancers/**)`);
  }
  if (fault.methods !== undefined && !(Array.isArray(fault.methods) && fault.methods.every((m) => typeof m === 'string' && m === m.toUpperCase()))) {
    throw new FaultConfigError(`${where}.methods: expected a list of upper-case HTTP methods`);
  }
  if (fault.count !== undefined && !(Number.isInteger(fault.count) && (fault.count as number) >= 0)) {
    throw new FaultConfigError(`${where}.count: expected a whole number ≥ 0`);
  }
}

function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
