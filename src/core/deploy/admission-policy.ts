// The ValidatingAdmissionPolicy that refuses a Service with a malformed load-balancer annotation
// at `kubectl apply`, with the message the tool's own parser gives (without the value, which the
// user just wrote). Generated from the annotation table (src/core/lb/annotations.ts): each
// annotation maps to one kind of value below, and the CEL, the messages and the formats come
// from the table and the parsers' own texts, so the policy cannot drift from the tool's checks.
// test/integration/kube-admission-policy.test.ts proves both agree, value by value, on a real
// kube-apiserver of every tested version.
import type { KubernetesObject } from '@kubernetes/client-node';
import { LB_LIMITS, type LbLimitField } from '../cloudscale/limits.js';
import {
  CHANGE_ID,
  IP_MODES,
  HEALTH_MONITOR_TYPES,
  LB_ANNOTATIONS,
  LB_NAME_MAX_CHARACTERS,
  POOL_ALGORITHMS,
  SLUG,
  TCP_LISTENER_PROTOCOLS,
  TCP_POOL_PROTOCOLS,
  VALUE_PROBLEMS,
  type LbAnnotationName,
} from '../lb/annotations.js';
import { DNS_SUBDOMAIN, DNS_SUBDOMAIN_MAX_LENGTH } from '../lb/net.js';
import { hasUnprintable } from '../text/untrusted.js';

/** Name of the policy and of its binding. */
export const ADMISSION_POLICY_NAME = 'cloudscale-ccm-annotations';

/** `deny`: a malformed annotation is refused; `warn`: accepted with a warning; `none`: no policy. */
export const ADMISSION_MODES = ['deny', 'warn', 'none'] as const;
export type AdmissionMode = (typeof ADMISSION_MODES)[number];
export const DEFAULT_ADMISSION_MODE: AdmissionMode = 'deny';

/** How the policy checks one annotation's value. */
export type AdmissionRule =
  /** An integer in the API's range for the field (parseInteger). */
  | { readonly kind: 'integer'; readonly field: LbLimitField }
  /** One of `values`; `ignoredWhileSet`: not checked while that annotation holds a valid value. */
  | { readonly kind: 'enum'; readonly values: readonly string[]; readonly ignoredWhileSet?: LbAnnotationName }
  /** A slug (parseSlug); `emptyIsDefault`: the empty value means the default. */
  | { readonly kind: 'slug'; readonly emptyIsDefault: boolean }
  /** A DNS hostname, not an IP address; empty means none. */
  | { readonly kind: 'hostname' }
  /** A load balancer name (parseLbName). */
  | { readonly kind: 'lb-name' }
  /** A change id, blank meaning none (the approval). */
  | { readonly kind: 'change-id' }
  /** The tool accepts every value: nothing to check. */
  | { readonly kind: 'any' }
  /** Not expressible in CEL: only the tool checks it (the docs list these with the reason). */
  | { readonly kind: 'tool-only'; readonly reason: string };

const JSON_VALUE = 'a JSON value: the CEL of Kubernetes has no JSON parser';

/** Every annotation of the table with its rule; a new annotation does not compile without one. */
export const ADMISSION_RULES: { readonly [K in LbAnnotationName]: AdmissionRule } = {
  uuid: { kind: 'any' },
  configVersion: { kind: 'any' },
  name: { kind: 'lb-name' },
  flavor: { kind: 'slug', emptyIsDefault: false },
  zone: { kind: 'slug', emptyIsDefault: true },
  vipAddresses: { kind: 'tool-only', reason: JSON_VALUE },
  floatingIps: { kind: 'tool-only', reason: JSON_VALUE },
  poolAlgorithm: { kind: 'enum', values: POOL_ALGORITHMS },
  poolProtocol: { kind: 'enum', values: TCP_POOL_PROTOCOLS },
  forceHostname: { kind: 'hostname' },
  // parseLbAnnotations: the Go CCM never reads ip-mode while force-hostname is set.
  ipMode: { kind: 'enum', values: IP_MODES, ignoredWhileSet: 'forceHostname' },
  healthMonitorDelayS: { kind: 'integer', field: 'delay_s' },
  healthMonitorTimeoutS: { kind: 'integer', field: 'timeout_s' },
  healthMonitorUpThreshold: { kind: 'integer', field: 'up_threshold' },
  healthMonitorDownThreshold: { kind: 'integer', field: 'down_threshold' },
  healthMonitorType: { kind: 'enum', values: HEALTH_MONITOR_TYPES },
  healthMonitorHttp: { kind: 'tool-only', reason: JSON_VALUE },
  listenerProtocol: { kind: 'enum', values: TCP_LISTENER_PROTOCOLS },
  listenerAllowedCidrs: { kind: 'tool-only', reason: JSON_VALUE },
  timeoutClientDataMs: { kind: 'integer', field: 'timeout_client_data_ms' },
  timeoutMemberConnectMs: { kind: 'integer', field: 'timeout_member_connect_ms' },
  timeoutMemberDataMs: { kind: 'integer', field: 'timeout_member_data_ms' },
  listenerAllowedSubnets: { kind: 'tool-only', reason: JSON_VALUE },
  nodeSelector: {
    kind: 'tool-only',
    reason: "a label selector: its grammar and the parser's messages (which name the position of an error) need the tool's parser",
  },
  approveChange: { kind: 'change-id' },
  announcedChanges: { kind: 'any' },
};

// ---- CEL text --------------------------------------------------------------------------------

/** A CEL string literal; unprintable characters escaped, so the YAML stays readable text. */
function celString(text: string): string {
  let body = '';
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (character === '\\' || character === '"') body += `\\${character}`;
    else if (hasUnprintable(character)) body += code > 0xffff ? `\\U${hex(code, 8)}` : `\\u${hex(code, 4)}`;
    else body += character;
  }
  return `"${body}"`;
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0');
}

/** An RE2 character class of the BMP characters `test` accepts, as ranges. */
function characterClass(test: (character: string) => boolean): string {
  const ranges: string[] = [];
  let start = -1;
  for (let code = 0; code <= 0x10000; code += 1) {
    const member = code < 0x10000 && !(code >= 0xd800 && code <= 0xdfff) && test(String.fromCharCode(code));
    if (member && start === -1) start = code;
    if (!member && start !== -1) {
      const last = code - 1;
      ranges.push(start === last ? `\\x{${hex(start, 1)}}` : `\\x{${hex(start, 1)}}-\\x{${hex(last, 1)}}`);
      start = -1;
    }
  }
  return `[${ranges.join('')}]`;
}

/** What String.prototype.trim removes: the tool trims integers, names and approvals with it. */
const JS_WHITESPACE = characterClass((c) => c.trim() === '');
/** What the tool calls unprintable (src/core/text/untrusted.ts), all in the BMP. */
const UNPRINTABLE = characterClass(hasUnprintable);
/** Node's net.isIPv4: four decimal parts 0-255 without leading zeros. */
const IPV4 = '^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])$';
/** Largest integer the tool's Number() holds exactly (Number.isSafeInteger). */
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** The CEL names of each unprintable character (`U+000A`), for the position message. */
function unprintableNames(): string {
  const entries: string[] = [];
  for (let code = 0; code < 0x10000; code += 1) {
    const character = String.fromCharCode(code);
    if (hasUnprintable(character)) entries.push(`${celString(character)}: ${celString(`U+${hex(code, 4).toUpperCase()}`)}`);
  }
  return `{${entries.join(', ')}}`;
}

/** Source of a JS regular expression anchored at both ends, without the anchors. */
function unanchored(pattern: RegExp): string {
  const source = pattern.source;
  if (!source.startsWith('^') || !source.endsWith('$')) throw new Error(`${source} is not anchored`);
  return source.slice(1, -1);
}

/**
 * A CEL string expression for a message function of VALUE_PROBLEMS: its text with each
 * argument replaced by a CEL expression, so the wording stays the parser's.
 */
function celMessage<A extends unknown[]>(message: (...args: A) => string, ...expressions: string[]): string {
  const markers = expressions.map((_, index) => `\u0000${index}\u0000`);
  const parts = message(...(markers as unknown as A)).split(/\u0000(\d+)\u0000/);
  return parts.map((part, index) => (index % 2 === 1 ? expressions[Number(part)]! : celString(part))).filter((p) => p !== '""').join(' + ');
}

/** `condition ? problem : next`, read top to bottom; the last `next` is '' (no problem). */
function firstProblem(checks: readonly (readonly [condition: string, problem: string])[]): string {
  return checks.reduceRight((next, [condition, problem]) => `${condition} ? ${problem} : ${next}`, '""');
}

/** The CEL expression of the problem of value `v` under `rule`, '' when valid; null: not checked. */
function problemExpression(rule: AdmissionRule, v: string): string | null {
  switch (rule.kind) {
    case 'integer': {
      const range = LB_LIMITS[rule.field] as { min: number; max?: number };
      const number = `int(${v}.find("[+-]?[0-9]+"))`;
      return firstProblem([
        [`!${v}.matches(${celString(`^${JS_WHITESPACE}*[+-]?[0-9]+${JS_WHITESPACE}*$`)})`, celString(VALUE_PROBLEMS.notInteger)],
        // 18 digits always fit CEL's int; more cannot be safe integers.
        [`!${v}.find("[0-9]+").matches("^0*[0-9]{1,18}$") || ${number} > ${SAFE_INTEGER} || ${number} < -${SAFE_INTEGER}`, celString(VALUE_PROBLEMS.tooLarge)],
        [`${number} < ${range.min}`, celString(VALUE_PROBLEMS.atLeast(range.min))],
        ...(range.max === undefined ? [] : [[`${number} > ${range.max}`, celString(VALUE_PROBLEMS.atMost(range.max))] as const]),
      ]);
    }
    case 'enum':
      return firstProblem([[`!(${v} in [${rule.values.map(celString).join(', ')}])`, celString(VALUE_PROBLEMS.unknownValue)]]);
    case 'slug':
      return firstProblem([
        [`${rule.emptyIsDefault ? `${v} != "" && ` : ''}!${v}.matches(${celString(SLUG.source)})`, celString(VALUE_PROBLEMS.notSlug)],
      ]);
    case 'hostname':
      return firstProblem([
        [
          `${v} != "" && (size(${v}) > ${DNS_SUBDOMAIN_MAX_LENGTH} || !${v}.matches(${celString(DNS_SUBDOMAIN.source)}) || ${v}.matches(${celString(IPV4)}))`,
          celString(VALUE_PROBLEMS.notHostname),
        ],
      ]);
    case 'lb-name': {
      const first = `${v}.find(${celString(UNPRINTABLE)})`;
      return firstProblem([
        [`${v}.matches(${celString(`^${JS_WHITESPACE}*$`)})`, celString(VALUE_PROBLEMS.blankName)],
        [
          `${v}.matches(${celString(UNPRINTABLE)})`,
          celMessage(VALUE_PROBLEMS.controlCharacter, `variables.unprintableNames[${first}] + " at position " + string(${v}.indexOf(${first}) + 1)`),
        ],
        [`size(${v}) > ${LB_NAME_MAX_CHARACTERS}`, celMessage(VALUE_PROBLEMS.nameTooLong, `string(size(${v}))`)],
      ]);
    }
    case 'change-id':
      return firstProblem([
        [
          `!${v}.matches(${celString(`^${JS_WHITESPACE}*(${unanchored(CHANGE_ID)})?${JS_WHITESPACE}*$`)})`,
          celString(VALUE_PROBLEMS.notChangeId),
        ],
      ]);
    case 'any':
    case 'tool-only':
      return null;
  }
}

/** The annotations the policy checks, with the CEL of each one's problem. */
function checkedAnnotations(): { name: LbAnnotationName; key: string; format: string; problem: string }[] {
  return (Object.keys(ADMISSION_RULES) as LbAnnotationName[]).flatMap((name) => {
    const { key, format } = LB_ANNOTATIONS[name];
    const value = `variables.annotations[${celString(key)}]`;
    const rule = ADMISSION_RULES[name];
    const problem = problemExpression(rule, value);
    if (problem === null) return [];
    const skipped = [`!(${celString(key)} in variables.changed)`];
    if (rule.kind === 'enum' && rule.ignoredWhileSet !== undefined) {
      const other = LB_ANNOTATIONS[rule.ignoredWhileSet].key;
      const otherValue = `variables.annotations[${celString(other)}]`;
      skipped.push(`(${celString(other)} in variables.annotations && ${otherValue} != "" && (${problemExpression(ADMISSION_RULES[rule.ignoredWhileSet], otherValue)}) == "")`);
    }
    return [{ name, key, format, problem: `${skipped.join(' || ')} ? "" : ${problem}` }];
  });
}

/** The annotations only the tool checks, with the reason, for the docs and the policy's comment. */
export function toolOnlyAnnotations(): { key: string; reason: string }[] {
  return (Object.keys(ADMISSION_RULES) as LbAnnotationName[]).flatMap((name) => {
    const rule = ADMISSION_RULES[name];
    return rule.kind === 'tool-only' ? [{ key: LB_ANNOTATIONS[name].key, reason: rule.reason }] : [];
  });
}

/** The message of a refused value: the tool's, without the quoted value. */
export function admissionMessage(key: string, problem: string, format: string): string {
  return `${key}: ${problem}; expected ${format}`;
}

/** CEL: `object` (the request's `object` or `oldObject`) is a Service the tool reconciles. */
function loadBalancerOfThisTool(object: 'object' | 'oldObject'): string {
  return `${object}.spec.type == "LoadBalancer" && (!has(${object}.spec.loadBalancerClass) || ${object}.spec.loadBalancerClass == "")`;
}

export function buildAdmissionPolicy(labels: Readonly<Record<string, string>>): KubernetesObject & { spec: unknown } {
  const checked = checkedAnnotations();
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: ADMISSION_POLICY_NAME, labels: { ...labels } },
    spec: {
      failurePolicy: 'Fail',
      // Written out with the API server's defaults: matchConstraints is atomic, so a second
      // server-side apply (helm taking over what kubectl applied) would otherwise conflict.
      matchConstraints: {
        namespaceSelector: {},
        objectSelector: {},
        matchPolicy: 'Equivalent',
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services'], scope: '*' }],
      },
      matchConditions: [{ name: 'load-balancer-of-this-tool', expression: loadBalancerOfThisTool('object') }],
      variables: [
        { name: 'annotations', expression: 'has(object.metadata.annotations) ? object.metadata.annotations : {}' },
        // What the Service had while it already was one of the tool's load balancers; a Service
        // that becomes one (created so, or changed from another type or class) had nothing yet,
        // so every value it carries is judged.
        {
          name: 'oldAnnotations',
          expression: `request.operation == "UPDATE" && ${loadBalancerOfThisTool('oldObject')} && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}`,
        },
        // A value the load balancer already had is left to the tool: the API server must keep
        // accepting the tool's own writes (finalizer, uuid) to a Service created before the policy.
        {
          name: 'changed',
          expression: 'variables.annotations.filter(key, !(key in variables.oldAnnotations) || variables.oldAnnotations[key] != variables.annotations[key])',
        },
        { name: 'unprintableNames', expression: unprintableNames() },
        ...checked.map(({ name, problem }) => ({ name, expression: problem })),
      ],
      validations: checked.map(({ name, key, format }) => ({
        expression: `variables.${name} == ""`,
        messageExpression: celMessage((problem: string) => admissionMessage(key, problem, format), `variables.${name}`),
        reason: 'Invalid',
      })),
    },
  };
}

const VALIDATION_ACTION = { deny: 'Deny', warn: 'Warn' } as const satisfies Record<Exclude<AdmissionMode, 'none'>, string>;

/** The binding of the policy to every namespace; `mode` is not `none`. */
export function buildAdmissionPolicyBinding(
  mode: Exclude<AdmissionMode, 'none'>,
  labels: Readonly<Record<string, string>>,
): KubernetesObject & { spec: { policyName: string; validationActions: string[] } } {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: ADMISSION_POLICY_NAME, labels: { ...labels } },
    spec: { policyName: ADMISSION_POLICY_NAME, validationActions: [VALIDATION_ACTION[mode]] },
  };
}
