// The one table of every `k8s.cloudscale.ch/loadbalancer-*` annotation of cloudscale's Go CCM
// (docs/go-ccm-compatibility.md) and of this tool's own `cloudscale-ccm/*` annotations (the
// downtime budget's approval and its record), with typed parsers. The README's annotation reference is generated from this table.
//
// Compatibility rule: accept every value the Go CCM accepts; reject up front what it only fails
// on later (at the API or at status time), naming the annotation and the expected format.
import type {
  HealthMonitorHttp,
  HealthMonitorType,
  HttpMethod,
  PoolAlgorithm,
} from '../cloudscale/types.js';
import { LB_LIMITS, type IntegerRange, type LbLimitField } from '../cloudscale/limits.js';
import { AnnotationError } from '../errors.js';
import { escapeUnprintable, firstUnprintable, quoteUntrusted } from '../text/untrusted.js';
import { IMPACT_DOC, downtimeOf, type ImpactClass } from './impact.js';
import { isCidr, isDnsSubdomain, isIpAddress, isUuid } from './net.js';
import { parseLabelSelector, SelectorSyntaxError, type LabelSelector } from './selector.js';

export const ANNOTATION_PREFIX = 'k8s.cloudscale.ch/';

/** Where a parser reports something it accepted but that will likely not do what was meant. */
export interface AnnotationParseContext {
  warn(message: string): void;
}

export interface AnnotationDefinition<T> {
  /** The full key. MUST not change: Services in the wild carry these keys (Go CCM compatibility). */
  readonly key: string;
  /** The expected format, in words; used in error messages and the README. */
  readonly format: string;
  /** The value when the annotation is absent. */
  readonly default: T;
  /** The default as the README shows it. */
  readonly defaultText: string;
  /** What changing the annotation on an existing load balancer does here (worst case). */
  readonly impact: ImpactClass;
  /** What the same change does under the Go CCM, where that differs (it rebuilds instead). */
  readonly goCcmImpact?: ImpactClass;
  /** `tool`: written back by this tool (as by the Go CCM); users do not set it. */
  readonly writtenBy: 'user' | 'tool';
  /** One line for the README. */
  readonly doc: string;
  /** Throws `AnnotationError` naming the annotation, the bad value and `format`. */
  readonly parse: (raw: string, context: AnnotationParseContext) => T;
}

/** Thrown by the inner value parsers; `define` turns it into an `AnnotationError`. */
class InvalidValue extends Error {}

/**
 * What the value parsers say is wrong with a value. The admission policy
 * (src/core/deploy/admission-policy.ts) says the same in CEL, from these texts.
 */
export const VALUE_PROBLEMS = {
  notInteger: 'not an integer',
  tooLarge: 'the number is too large',
  atLeast: (min: number) => `must be at least ${min} (the API refuses less)`,
  atMost: (max: number) => `must be at most ${max} (the API refuses more)`,
  unknownValue: 'unknown value',
  notSlug: 'not a slug (lower-case letters, digits and "-")',
  notHostname: 'not a DNS hostname',
  blankName: 'the name must not be empty or blank',
  controlCharacter: (where: string) => `the name contains a control character (${where})`,
  nameTooLong: (length: number) => `the name is ${length} characters long, at most ${LB_NAME_MAX_CHARACTERS} are accepted`,
  notChangeId: 'not a change id',
} as const;

interface AnnotationSpec<T> extends Omit<AnnotationDefinition<T>, 'key' | 'parse'> {
  readonly parse: (raw: string, context: AnnotationParseContext) => T;
}

/**
 * The prefix of this tool's own annotations, which the Go CCM does not have: a single DNS
 * label, so none of them can collide with a `k8s.cloudscale.ch/` key.
 */
export const OWN_ANNOTATION_PREFIX = 'cloudscale-ccm/';

function define<T>(name: string, spec: AnnotationSpec<T>, prefix: string = ANNOTATION_PREFIX): AnnotationDefinition<T> {
  const key = `${prefix}${name}`;
  return {
    ...spec,
    key,
    parse: (raw, context) => {
      try {
        return spec.parse(raw, context);
      } catch (error) {
        if (!(error instanceof InvalidValue)) throw error;
        throw new AnnotationError(
          key,
          // The inner message may quote parts of the value (JSON and selector errors do).
          `invalid value ${quoteUntrusted(raw)}: ${escapeUnprintable(error.message)}; expected ${spec.format}`,
          { hint: `Fix the annotation ${key} (expected ${spec.format}), or remove it to use the default.` },
        );
      }
    },
  };
}

// ---- value parsers ---------------------------------------------------------------------------

/** An integer in the API's range for `field` (./limits: the table the simulator enforces too). */
function parseInteger(raw: string, field: LbLimitField): number {
  const range: IntegerRange = LB_LIMITS[field];
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw new InvalidValue(VALUE_PROBLEMS.notInteger);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new InvalidValue(VALUE_PROBLEMS.tooLarge);
  if (value < range.min) throw new InvalidValue(VALUE_PROBLEMS.atLeast(range.min));
  if (range.max !== undefined && value > range.max) throw new InvalidValue(VALUE_PROBLEMS.atMost(range.max));
  return value;
}

/** `an integer number of seconds from 1 to 10`, from the limits table. */
function integerFormat(field: LbLimitField, unit: string): string {
  const range: IntegerRange = LB_LIMITS[field];
  const of = unit === '' ? '' : ` number of ${unit}`;
  return range.max === undefined
    ? `an integer${of} ≥ ${range.min}`
    : `an integer${of} from ${range.min} to ${range.max}`;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new InvalidValue(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** A JSON list of strings; empty text and `null` mean the empty list (as the Go CCM). */
function parseStringList(raw: string): string[] {
  if (raw.trim() === '') return [];
  const value = parseJson(raw);
  if (value === null) return [];
  if (!Array.isArray(value)) throw new InvalidValue('not a JSON list');
  return value.map((item, index) => {
    if (typeof item !== 'string') throw new InvalidValue(`item ${index} is not a string`);
    return item;
  });
}

function parseEnum<const V extends string>(raw: string, values: readonly V[]): V {
  if ((values as readonly string[]).includes(raw)) return raw as V;
  throw new InvalidValue(VALUE_PROBLEMS.unknownValue);
}

function enumFormat(values: readonly string[]): string {
  const quoted = values.map((v) => `\`${v}\``);
  return quoted.length === 1 ? quoted[0]! : `one of ${quoted.join(', ')}`;
}

export const SLUG = /^[a-z0-9][a-z0-9-]*$/;

function parseSlug(raw: string): string {
  if (!SLUG.test(raw)) throw new InvalidValue(VALUE_PROBLEMS.notSlug);
  return raw;
}

/** Finds `name` among the keys of a JSON object case-insensitively, as Go's encoding/json does. */
function field(object: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(object).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : object[key];
}

function warnUnknownFields(
  object: Record<string, unknown>,
  known: readonly string[],
  where: string,
  context: AnnotationParseContext,
): void {
  const unknown = Object.keys(object).filter((k) => !known.includes(k.toLowerCase()));
  if (unknown.length > 0) {
    context.warn(
      `${where}: ignoring unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map(quoteUntrusted).join(', ')} (known: ${known.join(', ')})`,
    );
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One requested VIP address: a subnet, optionally a fixed address in it. */
export interface VipAddressRequest {
  readonly subnet: string;
  readonly address?: string;
}

function parseVipAddresses(raw: string, context: AnnotationParseContext): VipAddressRequest[] {
  if (raw.trim() === '') return [];
  const value = parseJson(raw);
  if (value === null) return [];
  if (!Array.isArray(value)) throw new InvalidValue('not a JSON list');
  return value.map((item: unknown, index) => {
    if (!isPlainObject(item)) throw new InvalidValue(`item ${index} is not an object`);
    warnUnknownFields(item, ['subnet', 'address'], `item ${index}`, context);
    const subnet = field(item, 'subnet');
    const address = field(item, 'address');
    if (typeof subnet !== 'string' || !isUuid(subnet)) {
      throw new InvalidValue(`item ${index} has no "subnet" UUID`);
    }
    if (address === undefined || address === null || address === '') return { subnet };
    if (typeof address !== 'string' || !isIpAddress(address)) {
      throw new InvalidValue(`item ${index} has an "address" that is not an IP address`);
    }
    return { subnet, address };
  });
}

function parseCidrList(raw: string, what: string): string[] {
  const list = parseStringList(raw);
  for (const [index, item] of list.entries()) {
    if (!isCidr(item)) {
      throw new InvalidValue(`item ${index} (${quoteUntrusted(item)}) is not ${what}`);
    }
  }
  return list;
}

/** A change id as `plan` prints it: ten lower-case hex digits (changeId in src/core/plan/budget.ts). */
export const CHANGE_ID = /^[0-9a-f]{10}$/;

/**
 * The longest load balancer name this tool sends. The API documents no limit and the simulator
 * enforces none; 255 characters is a guess (the usual limit of a name column), recorded in
 * docs/cloudscale-api.md. The default name `k8s-service-<uid>` has 48.
 */
export const LB_NAME_MAX_CHARACTERS = 255;

/**
 * A load balancer name as the API accepts it: not blank (the API refuses it with 400, after the
 * finalizer is written), no control characters (they would reach the control panel, logs and
 * Events), at most LB_NAME_MAX_CHARACTERS characters.
 */
function parseLbName(raw: string): string {
  if (raw.trim() === '') throw new InvalidValue(VALUE_PROBLEMS.blankName);
  const unprintable = firstUnprintable(raw);
  if (unprintable !== null) throw new InvalidValue(VALUE_PROBLEMS.controlCharacter(unprintable));
  const length = [...raw].length;
  if (length > LB_NAME_MAX_CHARACTERS) throw new InvalidValue(VALUE_PROBLEMS.nameTooLong(length));
  return raw;
}

export const POOL_ALGORITHMS = ['round_robin', 'least_connections', 'source_ip'] as const satisfies readonly PoolAlgorithm[];
/** Pool protocols for TCP ports; UDP ports always get `udp`. */
export const TCP_POOL_PROTOCOLS = ['tcp', 'proxy', 'proxyv2'] as const;
export type TcpPoolProtocol = (typeof TCP_POOL_PROTOCOLS)[number];
export const IP_MODES = ['Proxy', 'VIP'] as const;
export type IpMode = (typeof IP_MODES)[number];
export const HEALTH_MONITOR_TYPES = [
  'ping',
  'tcp',
  'http',
  'https',
  'tls-hello',
  'udp-connect',
] as const satisfies readonly HealthMonitorType[];
export const HTTP_METHODS = [
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
] as const satisfies readonly HttpMethod[];
/** Listener protocols for TCP ports; UDP ports always get `udp`. */
export const TCP_LISTENER_PROTOCOLS = ['tcp'] as const;
export type TcpListenerProtocol = (typeof TCP_LISTENER_PROTOCOLS)[number];

const HTTP_FIELDS = ['expected_codes', 'method', 'url_path', 'version', 'host'] as const;

/**
 * The http options of health monitors. `null`: not set (`{}`, empty or absent). A set value has
 * the API's defaults filled in for missing fields (GET, `/`, `["200"]`, HTTP 1.1), as the Go CCM.
 */
function parseMonitorHttp(raw: string, context: AnnotationParseContext): HealthMonitorHttp | null {
  if (raw.trim() === '') return null;
  const value = parseJson(raw);
  if (value === null) return null;
  if (!isPlainObject(value)) throw new InvalidValue('not a JSON object');
  if (Object.keys(value).length === 0) return null;
  warnUnknownFields(value, HTTP_FIELDS, 'health monitor http options', context);

  const codes = field(value, 'expected_codes');
  let expectedCodes = ['200'];
  if (codes !== undefined && codes !== null) {
    if (!Array.isArray(codes) || codes.some((c) => typeof c !== 'string')) {
      throw new InvalidValue('"expected_codes" is not a list of strings');
    }
    if (codes.length > 0) expectedCodes = codes as string[];
  }

  const method = optionalString(value, 'method');
  if (method !== undefined && !(HTTP_METHODS as readonly string[]).includes(method)) {
    throw new InvalidValue(`"method" ${quoteUntrusted(method)} is not ${enumFormat(HTTP_METHODS)}`);
  }
  const version = optionalString(value, 'version');
  if (version !== undefined && version !== '1.0' && version !== '1.1') {
    throw new InvalidValue(`"version" ${quoteUntrusted(version)} is not \`1.0\` or \`1.1\``);
  }
  const host = optionalString(value, 'host');
  if (host !== undefined && version === '1.0') {
    throw new InvalidValue('"host" requires "version" 1.1');
  }
  return {
    expected_codes: expectedCodes,
    method: (method ?? 'GET') as HttpMethod,
    url_path: optionalString(value, 'url_path') ?? '/',
    version: version ?? '1.1',
    host: host ?? null,
  };
}

/** A string field; absent, `null` and `""` all mean "use the default" (Go omits empty fields). */
function optionalString(object: Record<string, unknown>, name: string): string | undefined {
  const value = field(object, name);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidValue(`"${name}" is not a string`);
  return value;
}

// ---- the table -------------------------------------------------------------------------------

/**
 * Every annotation of the Go CCM, in README order. The record keys are this tool's names for
 * them; `key` is the annotation itself.
 */
export const LB_ANNOTATIONS = {
  uuid: define('loadbalancer-uuid', {
    format: 'the UUID of the load balancer',
    default: null as string | null,
    defaultText: '(none)',
    impact: 'none',
    writtenBy: 'tool',
    doc: 'Written by the tool after a load balancer is created or adopted; used to find it again (together with the name).',
    parse: (raw) => (raw === '' ? null : raw),
  }),
  configVersion: define('loadbalancer-config-version', {
    format: '`1`',
    default: '1',
    defaultText: '`1`',
    impact: 'none',
    writtenBy: 'tool',
    doc: 'Written by the tool (always `1`), reserved for future migrations; its value is not read.',
    parse: () => '1',
  }),
  name: define('loadbalancer-name', {
    format: `a load balancer name: 1 to ${LB_NAME_MAX_CHARACTERS} characters, not only spaces, no control characters`,
    default: null as string | null,
    defaultText: '`k8s-service-<Service UID>`',
    impact: 'none',
    writtenBy: 'user',
    doc: 'Name of the load balancer. Changing it renames the load balancer in place (not recommended).',
    parse: parseLbName,
  }),
  flavor: define('loadbalancer-flavor', {
    format: 'a load balancer flavor slug, e.g. `lb-standard`',
    default: 'lb-standard',
    defaultText: '`lb-standard`',
    impact: 'refused',
    writtenBy: 'user',
    doc: 'Flavor of the load balancer. Fixed after creation: a change is refused.',
    parse: parseSlug,
  }),
  zone: define('loadbalancer-zone', {
    format: 'a zone slug, e.g. `rma1` or `lpg1`',
    default: null as string | null,
    defaultText: 'the zone of the selected nodes',
    impact: 'refused',
    writtenBy: 'user',
    doc: 'Zone of the load balancer; when unset, the single zone of the nodes\' servers. Refused when the selected nodes\' private addresses are in another zone. Written back after creation. Fixed after creation: a change is refused.',
    parse: (raw) => (raw === '' ? null : parseSlug(raw)),
  }),
  vipAddresses: define('loadbalancer-vip-addresses', {
    format: 'a JSON list of objects `{"subnet": "<subnet UUID>", "address": "<IP>"}` (address optional)',
    default: [] as VipAddressRequest[],
    defaultText: '`[]` (a public IPv4 and IPv6 address)',
    impact: 'refused',
    writtenBy: 'user',
    doc: 'Binds the load balancer to private subnets, optionally to fixed addresses (a subnet that does not exist, or an address outside it, is refused). Fixed after creation: a change is refused.',
    parse: parseVipAddresses,
  }),
  floatingIps: define('loadbalancer-floating-ips', {
    format: 'a JSON list of Floating IPs in CIDR notation, e.g. `["192.0.2.123/32", "2001:db8::1/128"]`',
    default: [] as string[],
    defaultText: '`[]`',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Floating IPs to assign to the load balancer. Never unassigned; two Services claiming one IP are refused. One found on a server or another load balancer (moved by hand) is assigned back, with a Warning Event `FloatingIPReassigned`.',
    parse: (raw) => parseCidrList(raw, 'an IP in CIDR notation (e.g. "192.0.2.1/32")'),
  }),
  poolAlgorithm: define('loadbalancer-pool-algorithm', {
    format: enumFormat(POOL_ALGORITHMS),
    default: 'round_robin' as PoolAlgorithm,
    defaultText: '`round_robin`',
    impact: 'pool-swap',
    goCcmImpact: 'pool-recreation',
    writtenBy: 'user',
    doc: 'Balancing algorithm of every pool. It cannot change in place: a change swaps each pool for a new one, built and checked healthy beside it.',
    parse: (raw) => parseEnum(raw, POOL_ALGORITHMS),
  }),
  poolProtocol: define('loadbalancer-pool-protocol', {
    format: enumFormat(TCP_POOL_PROTOCOLS),
    default: 'tcp' as TcpPoolProtocol,
    defaultText: '`tcp`',
    impact: 'pool-swap',
    goCcmImpact: 'pool-recreation',
    writtenBy: 'user',
    doc: 'Protocol of the pools of TCP ports (`proxy`, `proxyv2`: PROXY protocol). UDP ports always use `udp`. It cannot change in place: a change swaps each pool for a new one, built and checked healthy beside it.',
    parse: (raw) => parseEnum(raw, TCP_POOL_PROTOCOLS),
  }),
  forceHostname: define('loadbalancer-force-hostname', {
    format: 'a DNS hostname (lower case), e.g. `lb.example.com`',
    default: null as string | null,
    defaultText: '(none)',
    impact: 'none',
    writtenBy: 'user',
    doc: 'Publishes this hostname as the only ingress entry instead of the IPs (PROXY protocol on clusters without `ipMode`). Status only.',
    parse: (raw) => {
      if (raw === '') return null;
      if (isIpAddress(raw) || !isDnsSubdomain(raw)) throw new InvalidValue(VALUE_PROBLEMS.notHostname);
      return raw;
    },
  }),
  ipMode: define('loadbalancer-ip-mode', {
    format: enumFormat(IP_MODES),
    default: 'Proxy' as IpMode,
    defaultText: '`Proxy`',
    impact: 'none',
    writtenBy: 'user',
    doc: '`ipMode` of the ingress entries (Kubernetes ≥ 1.30): `Proxy` sends in-cluster clients through the load balancer, `VIP` lets kube-proxy short-circuit. Status only.',
    parse: (raw) => parseEnum(raw, IP_MODES),
  }),
  healthMonitorDelayS: define('loadbalancer-health-monitor-delay-s', {
    format: integerFormat('delay_s', 'seconds'),
    default: 2,
    defaultText: '`2`',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Seconds between health checks. Updated in place.',
    parse: (raw) => parseInteger(raw, 'delay_s'),
  }),
  healthMonitorTimeoutS: define('loadbalancer-health-monitor-timeout-s', {
    format: integerFormat('timeout_s', 'seconds'),
    default: 1,
    defaultText: '`1`',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Seconds a health check may take. Updated in place.',
    parse: (raw) => parseInteger(raw, 'timeout_s'),
  }),
  healthMonitorUpThreshold: define('loadbalancer-health-monitor-up-threshold', {
    format: integerFormat('up_threshold', ''),
    default: 2,
    defaultText: '`2`',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Successful checks before a member is considered up. Updated in place.',
    parse: (raw) => parseInteger(raw, 'up_threshold'),
  }),
  healthMonitorDownThreshold: define('loadbalancer-health-monitor-down-threshold', {
    format: integerFormat('down_threshold', ''),
    default: 3,
    defaultText: '`3`',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Failed checks before a member is considered down. Updated in place.',
    parse: (raw) => parseInteger(raw, 'down_threshold'),
  }),
  healthMonitorType: define('loadbalancer-health-monitor-type', {
    format: enumFormat(HEALTH_MONITOR_TYPES),
    default: 'tcp' as HealthMonitorType,
    defaultText: '`tcp` (`http` under `externalTrafficPolicy: Local`)',
    impact: 'pool-swap',
    goCcmImpact: 'monitor-recreation',
    writtenBy: 'user',
    doc: 'Health check type of every pool (use `udp-connect` for UDP-only Services). It cannot change in place: a change swaps each pool for one with the new monitor, checked healthy before it serves.',
    parse: (raw) => parseEnum(raw, HEALTH_MONITOR_TYPES),
  }),
  healthMonitorHttp: define('loadbalancer-health-monitor-http', {
    format: `a JSON object with optional fields \`expected_codes\` (list of strings), \`method\` (${HTTP_METHODS.join(', ')}), \`url_path\`, \`version\` (\`1.0\` or \`1.1\`), \`host\` (needs 1.1)`,
    default: null as HealthMonitorHttp | null,
    defaultText: '`{}`',
    impact: 'pool-swap',
    goCcmImpact: 'monitor-recreation',
    writtenBy: 'user',
    doc: 'HTTP options of `http`/`https` health checks. Host, path, method and codes are updated in place; a version change swaps each pool for one with the new monitor.',
    parse: parseMonitorHttp,
  }),
  listenerProtocol: define('loadbalancer-listener-protocol', {
    format: enumFormat(TCP_LISTENER_PROTOCOLS),
    default: 'tcp' as TcpListenerProtocol,
    defaultText: '`tcp`',
    impact: 'listener-recreation',
    writtenBy: 'user',
    doc: 'Protocol of the listeners of TCP ports (only `tcp` exists). UDP ports always use `udp`.',
    parse: (raw) => parseEnum(raw, TCP_LISTENER_PROTOCOLS),
  }),
  listenerAllowedCidrs: define('loadbalancer-listener-allowed-cidrs', {
    format: 'a JSON list of CIDRs, e.g. `["192.0.2.0/24", "2001:db8::/32"]`',
    default: [] as string[],
    defaultText: '`[]` (everyone)',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Client networks allowed to connect, on every listener. Updated in place; `[]` allows everyone. `spec.loadBalancerSourceRanges` says the same: whichever is set applies; both set must list the same CIDRs (in any order), otherwise the Service is refused and nothing is written.',
    parse: (raw) => parseCidrList(raw, 'a CIDR (e.g. "192.0.2.0/24"; a single address is "192.0.2.1/32")'),
  }),
  timeoutClientDataMs: define('loadbalancer-timeout-client-data-ms', {
    format: integerFormat('timeout_client_data_ms', 'milliseconds'),
    default: 50000,
    defaultText: '`50000`',
    impact: 'none',
    writtenBy: 'user',
    doc: 'Idle timeout on the client side of every listener. Updated in place.',
    parse: (raw) => parseInteger(raw, 'timeout_client_data_ms'),
  }),
  timeoutMemberConnectMs: define('loadbalancer-timeout-member-connect-ms', {
    format: integerFormat('timeout_member_connect_ms', 'milliseconds'),
    default: 5000,
    defaultText: '`5000`',
    impact: 'none',
    writtenBy: 'user',
    doc: 'Timeout for connecting to a member, on every listener. Updated in place.',
    parse: (raw) => parseInteger(raw, 'timeout_member_connect_ms'),
  }),
  timeoutMemberDataMs: define('loadbalancer-timeout-member-data-ms', {
    format: integerFormat('timeout_member_data_ms', 'milliseconds'),
    default: 50000,
    defaultText: '`50000`',
    impact: 'none',
    writtenBy: 'user',
    doc: 'Idle timeout on the member side of every listener. Updated in place.',
    parse: (raw) => parseInteger(raw, 'timeout_member_data_ms'),
  }),
  listenerAllowedSubnets: define('loadbalancer-listener-allowed-subnets', {
    format: 'a JSON list of subnet UUIDs',
    default: [] as string[],
    defaultText: '`[]` (every private subnet)',
    impact: 'member-rotation',
    goCcmImpact: 'member-recreation',
    writtenBy: 'user',
    doc: 'Limits pool members to node addresses in these subnets; nodes without one contribute no member. A subnet that does not exist is refused. A change adds the new members and removes the old ones once the new ones are healthy.',
    // Entries are checked against the project's subnets by the planner (desired.ts): one that
    // does not exist (a typo, another case) is a problem, not a load balancer without members.
    parse: parseStringList,
  }),
  nodeSelector: define('loadbalancer-node-selector', {
    format: 'a Kubernetes label selector, e.g. `env=prod,tier in (web,api),!spot`',
    default: null as LabelSelector | null,
    defaultText: '(all nodes)',
    impact: 'minimal',
    writtenBy: 'user',
    doc: 'Only nodes matching this selector become pool members (applied after the exclusion label). Members of nodes no longer matched are drained (see `--drain-seconds`); when none matches, the last members keep serving with a Warning `MembersKept` (with `--drain-seconds 0` they are removed).',
    parse: (raw) => {
      if (raw.trim() === '') return null;
      try {
        return parseLabelSelector(raw);
      } catch (error) {
        if (error instanceof SelectorSyntaxError) throw new InvalidValue(error.message);
        throw error;
      }
    },
  }),
  approveChange: define(
    'approve-change',
    {
      format: 'the id of a held change, as `plan` prints it (10 hex digits)',
      default: null as string | null,
      defaultText: '(none)',
      impact: 'none',
      writtenBy: 'user',
      doc: 'Approves the change of this Service that the downtime budget (`--max-downtime`) holds back, if its id is this one: the next pass applies it. An id that no longer matches the pending change approves nothing (Warning `ApprovalMismatch`). See "Changes with downtime".',
      parse: (raw) => {
        const id = raw.trim();
        if (id === '') return null;
        if (!CHANGE_ID.test(id)) throw new InvalidValue(VALUE_PROBLEMS.notChangeId);
        return id;
      },
    },
    OWN_ANNOTATION_PREFIX,
  ),
  announcedChanges: define(
    'announced-changes',
    {
      format: 'held change ids, comma-separated',
      default: [] as readonly string[],
      defaultText: '(none)',
      impact: 'none',
      writtenBy: 'tool',
      doc: 'Written by the tool: the held changes (and mismatched approvals) it has announced with a Warning Event, so each is announced once, not every pass.',
      parse: (raw) => raw.split(',').map((id) => id.trim()).filter((id) => id !== ''),
    },
    OWN_ANNOTATION_PREFIX,
  ),
} as const;

export type LbAnnotationName = keyof typeof LB_ANNOTATIONS;

/**
 * The approval a Service carries; null when it has none or a malformed one (not a change id:
 * the planner reports that as the Service's problem, so no pass stops for it here).
 */
export function approvalOf(annotations: Annotations): string | null {
  try {
    return readLbAnnotation(annotations, 'approveChange');
  } catch (error) {
    if (error instanceof AnnotationError) return null;
    throw error;
  }
}
type ValueOf<D> = D extends AnnotationDefinition<infer T> ? T : never;
/** The parsed value of every annotation, defaults filled in. */
export type LbAnnotationValues = {
  readonly [K in LbAnnotationName]: ValueOf<(typeof LB_ANNOTATIONS)[K]>;
};

export interface AnnotationWarning {
  readonly annotation: string;
  readonly message: string;
}

export type LbAnnotationsResult =
  | { readonly ok: true; readonly values: LbAnnotationValues; readonly warnings: readonly AnnotationWarning[] }
  | { readonly ok: false; readonly errors: readonly AnnotationError[]; readonly warnings: readonly AnnotationWarning[] };

/** A Service's `metadata.annotations` (absent means none). */
export type Annotations = Readonly<Record<string, string>> | undefined;

/**
 * Parses every load-balancer annotation of a Service (or of an annotation map). Collects all
 * errors instead of stopping at the first. A bad `ip-mode` is not an error while
 * `force-hostname` is set, because the Go CCM never reads it then.
 */
export function parseLbAnnotations(annotations: Annotations): LbAnnotationsResult {
  const values: Record<string, unknown> = {};
  const errors: AnnotationError[] = [];
  const warnings: AnnotationWarning[] = [];
  for (const [name, definition] of Object.entries(LB_ANNOTATIONS) as [
    LbAnnotationName,
    AnnotationDefinition<unknown>,
  ][]) {
    const raw = annotations?.[definition.key];
    if (raw === undefined) {
      values[name] = definition.default;
      continue;
    }
    const context: AnnotationParseContext = {
      warn: (message) => warnings.push({ annotation: definition.key, message }),
    };
    try {
      values[name] = definition.parse(raw, context);
    } catch (error) {
      if (!(error instanceof AnnotationError)) throw error;
      errors.push(error);
      values[name] = definition.default;
    }
  }
  if (values.forceHostname !== null) {
    const ipModeError = errors.findIndex((e) => e.annotation === LB_ANNOTATIONS.ipMode.key);
    if (ipModeError !== -1) {
      warnings.push({
        annotation: LB_ANNOTATIONS.ipMode.key,
        message: `ignored while ${LB_ANNOTATIONS.forceHostname.key} is set (${errors[ipModeError]!.message})`,
      });
      errors.splice(ipModeError, 1);
    }
  }
  return errors.length > 0
    ? { ok: false, errors, warnings }
    : { ok: true, values: values as LbAnnotationValues, warnings };
}

/** One annotation's value, the default when absent. Throws `AnnotationError` when invalid. */
export function readLbAnnotation<K extends LbAnnotationName>(
  annotations: Annotations,
  name: K,
): LbAnnotationValues[K] {
  const definition = LB_ANNOTATIONS[name] as AnnotationDefinition<LbAnnotationValues[K]>;
  const raw = annotations?.[definition.key];
  if (raw === undefined) return definition.default;
  return definition.parse(raw, { warn: () => undefined });
}

/** The README's annotation reference: a Markdown table generated from `LB_ANNOTATIONS`. */
export function renderAnnotationReference(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    '| Annotation | Default | Format | Impact of a change | Description |',
    '|---|---|---|---|---|',
  ];
  for (const definition of Object.values(LB_ANNOTATIONS) as AnnotationDefinition<unknown>[]) {
    const goCcm =
      definition.goCcmImpact === undefined
        ? ''
        : ` The Go CCM: ${definition.goCcmImpact}, ${downtimeOf(definition.goCcmImpact).text}.`;
    const impact =
      definition.writtenBy === 'tool'
        ? 'written by the tool'
        : `${definition.impact}: ${IMPACT_DOC[definition.impact]}${goCcm}`;
    lines.push(
      `| \`${definition.key}\` | ${cell(definition.defaultText)} | ${cell(definition.format)} | ${cell(impact)} | ${cell(definition.doc)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
