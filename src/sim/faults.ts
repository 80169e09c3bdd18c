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
  /** Matching requests get no answer: the connection is reset. */
  connectionReset?: ConnectionResetFault | ConnectionResetFault[];
  /** Matching requests get no answer for a while, or until the client gives up. */
  hang?: HangFault | HangFault[];
  /** Matching list requests answer 200 with items left out: a one-off wrong answer. */
  shortList?: ShortListFault | ShortListFault[];
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

export interface ConnectionResetFault extends RequestMatcher {
  /** Apply the request first, then reset: the change happened, the client only sees the reset. */
  afterApplying?: boolean;
}

export interface HangFault extends RequestMatcher {
  /**
   * Without `afterApplying`, the request waits first and is applied afterwards (if at all);
   * with it, the request is applied first and the answer is what waits.
   */
  afterApplying?: boolean;
  /**
   * How long the answer is held back; then the request is answered as usual, whether or not
   * the client still listens (a server does not notice a client that gave up). Absent: until
   * the client closes the connection, and the request is then never answered (nor applied,
   * unless `afterApplying`).
   */
  forMs?: number;
}

/** Exactly one of `empty`, `dropUuid`, `dropFirst`, `dropLast`. Only 200 list answers count. */
export interface ShortListFault extends RequestMatcher {
  /** Answer `[]`. */
  empty?: true;
  /** Leave out the item with this `uuid` (for floating IPs: this address). */
  dropUuid?: string;
  /** Leave out the first N items. */
  dropFirst?: number;
  /** Leave out the last N items. */
  dropLast?: number;
}

type RuleEffect =
  | { kind: 'error'; status: number; rate: number; retryAfterSeconds: number | undefined; afterApplying: boolean; body: unknown }
  | { kind: 'reset'; afterApplying: boolean }
  | { kind: 'hang'; afterApplying: boolean; forMs: number | undefined };

/** A rule in force, with its remaining count. */
interface ActiveRule<E> {
  matcher: RequestMatcher;
  regex: RegExp;
  remaining: number;
  effect: E;
}

/** What happens to a request instead of (or after) being handled normally. */
export type FaultDecision =
  | { kind: 'error'; status: number; body: unknown; headers: Record<string, string>; afterApplying: boolean }
  | { kind: 'reset'; afterApplying: boolean }
  | { kind: 'hang'; afterApplying: boolean; forMs: number | undefined };

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
  private rules: ActiveRule<RuleEffect>[] = [];
  private listRules: ActiveRule<ShortListFault>[] = [];

  /** Replaces the whole configuration (validated first; an invalid one changes nothing). */
  set(config: unknown): void {
    const checked = checkFaultConfig(config);
    const rules: ActiveRule<RuleEffect>[] = [
      ...asList(checked.errorRate).map((fault) =>
        activeRule(fault, {
          kind: 'error' as const,
          status: fault.status,
          rate: fault.rate ?? 1,
          retryAfterSeconds: fault.retryAfterSeconds,
          afterApplying: fault.afterApplying ?? false,
          body: fault.body,
        }),
      ),
      ...asList(checked.rateLimit).map((fault) =>
        activeRule(fault, {
          kind: 'error' as const,
          status: 429,
          rate: 1,
          retryAfterSeconds: fault.retryAfterSeconds,
          afterApplying: false,
          body: undefined,
        }),
      ),
      ...asList(checked.connectionReset).map((fault) =>
        activeRule(fault, { kind: 'reset' as const, afterApplying: fault.afterApplying ?? false }),
      ),
      ...asList(checked.hang).map((fault) =>
        activeRule(fault, { kind: 'hang' as const, afterApplying: fault.afterApplying ?? false, forMs: fault.forMs }),
      ),
    ];
    this.config = checked;
    this.rules = rules;
    this.listRules = asList(checked.shortList).map((fault) => activeRule(fault, fault));
  }

  clear(): void {
    this.config = {};
    this.rules = [];
    this.listRules = [];
  }

  get latencyMs(): number {
    return this.config.latencyMs ?? 0;
  }

  get stuckLoadBalancers(): Record<string, 'changing' | 'error'> {
    return this.config.stuckLoadBalancers ?? {};
  }

  /**
   * The configuration with the remaining count of each rule, in the order errorRate,
   * rateLimit, connectionReset, hang, shortList (`null` = unlimited).
   */
  describe(): FaultConfig & { remaining: (number | null)[] } {
    const remaining = [...this.rules, ...this.listRules].map((r) => (Number.isFinite(r.remaining) ? r.remaining : null));
    return { ...this.config, remaining };
  }

  /** The fault for this request, if any; consumes one count of the rule that fires. */
  decide(method: string, path: string, routePattern: string | undefined): FaultDecision | undefined {
    const rule = this.rules.find(
      (candidate) =>
        matches(candidate, method, path, routePattern) &&
        !(candidate.effect.kind === 'error' && candidate.effect.rate < 1 && Math.random() >= candidate.effect.rate),
    );
    if (rule === undefined) return undefined;
    rule.remaining -= 1;
    const effect = rule.effect;
    if (effect.kind !== 'error') return effect;
    const headers: Record<string, string> = {};
    if (effect.retryAfterSeconds !== undefined) headers['Retry-After'] = String(effect.retryAfterSeconds);
    const detail =
      effect.status === 429 && effect.retryAfterSeconds !== undefined
        ? `Request was throttled. Expected available in ${effect.retryAfterSeconds} second${effect.retryAfterSeconds === 1 ? '' : 's'}.`
        : (DEFAULT_DETAIL[effect.status] ?? 'Simulated failure.');
    return { kind: 'error', status: effect.status, body: effect.body ?? { detail }, headers, afterApplying: effect.afterApplying };
  }

  /**
   * A 200 list answer with items left out, when a shortList rule matches (consuming one count);
   * `undefined` otherwise. Other answers are never changed and consume nothing.
   */
  shortenList(method: string, path: string, routePattern: string | undefined, status: number, body: unknown): unknown[] | undefined {
    if (status !== 200 || !Array.isArray(body)) return undefined;
    const rule = this.listRules.find((candidate) => matches(candidate, method, path, routePattern));
    if (rule === undefined) return undefined;
    rule.remaining -= 1;
    const { empty, dropUuid, dropFirst, dropLast } = rule.effect;
    if (empty === true) return [];
    if (dropFirst !== undefined) return body.slice(dropFirst);
    if (dropLast !== undefined) return body.slice(0, Math.max(0, body.length - dropLast));
    const wanted = dropUuid?.toLowerCase();
    return body.filter((item) => !(isDict(item) && (item.uuid === wanted || floatingIpAddress(item) === wanted)));
  }
}

function matches(rule: ActiveRule<unknown>, method: string, path: string, routePattern: string | undefined): boolean {
  if (rule.remaining <= 0) return false;
  if (rule.matcher.methods !== undefined && !rule.matcher.methods.includes(method)) return false;
  return rule.regex.test(path) || rule.matcher.pathPattern === routePattern;
}

/** `192.0.2.10/32` → `192.0.2.10`: how a floating IP (which has no uuid) is named. */
function floatingIpAddress(item: Record<string, unknown>): string | undefined {
  return typeof item.network === 'string' && item.uuid === undefined ? item.network.split('/')[0] : undefined;
}

function asList<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function activeRule<E>(matcher: RequestMatcher, effect: E): ActiveRule<E> {
  return { matcher, regex: globToRegex(matcher.pathPattern), remaining: matcher.count ?? Infinity, effect };
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
  const known = ['latencyMs', 'errorRate', 'rateLimit', 'connectionReset', 'hang', 'shortList', 'stuckLoadBalancers'];
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
  asList(config.connectionReset).forEach((fault, index) => {
    const where = `faults.connectionReset[${index}]`;
    checkMatcher(fault, where, ['afterApplying']);
    checkOptionalBoolean(fault.afterApplying, `${where}.afterApplying`);
  });
  asList(config.hang).forEach((fault, index) => {
    const where = `faults.hang[${index}]`;
    checkMatcher(fault, where, ['afterApplying', 'forMs']);
    checkOptionalBoolean(fault.afterApplying, `${where}.afterApplying`);
    if (fault.forMs !== undefined && !isNonNegativeNumber(fault.forMs)) {
      throw new FaultConfigError(`${where}.forMs: expected a number of milliseconds ≥ 0 (leave it out to hang until the client gives up)`);
    }
  });
  asList(config.shortList).forEach((fault, index) => {
    const where = `faults.shortList[${index}]`;
    const ways = ['empty', 'dropUuid', 'dropFirst', 'dropLast'] as const;
    checkMatcher(fault, where, ways);
    const given = ways.filter((way) => fault[way] !== undefined);
    if (given.length !== 1) {
      throw new FaultConfigError(`${where}: expected exactly one of ${ways.join(', ')}, got ${given.length === 0 ? 'none' : given.join(', ')}`);
    }
    if (fault.empty !== undefined && fault.empty !== true) throw new FaultConfigError(`${where}.empty: expected true`);
    if (fault.dropUuid !== undefined && (typeof fault.dropUuid !== 'string' || fault.dropUuid === '')) {
      throw new FaultConfigError(`${where}.dropUuid: expected the uuid of an item (or a floating IP's address)`);
    }
    for (const key of ['dropFirst', 'dropLast'] as const) {
      const n = fault[key];
      if (n !== undefined && !(Number.isInteger(n) && n >= 1)) throw new FaultConfigError(`${where}.${key}: expected a whole number ≥ 1`);
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

const MATCHER_FIELDS = ['pathPattern', 'methods', 'count'];

/** `ownFields`: the rule's other fields, when unknown ones are refused (to catch typos). */
function checkMatcher(fault: unknown, where: string, ownFields?: readonly string[]): asserts fault is RequestMatcher {
  if (!isDict(fault)) throw new FaultConfigError(`${where}: expected an object`);
  if (ownFields !== undefined) {
    const allowed = [...MATCHER_FIELDS, ...ownFields];
    const unknown = Object.keys(fault).find((key) => !allowed.includes(key));
    if (unknown !== undefined) throw new FaultConfigError(`${where}: unknown field "${unknown}" (expected one of: ${allowed.join(', ')})`);
  }
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

function checkOptionalBoolean(value: unknown, where: string): void {
  if (value !== undefined && typeof value !== 'boolean') throw new FaultConfigError(`${where}: expected true or false`);
}

function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
