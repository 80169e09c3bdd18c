import { describe, expect, test } from 'vitest';
import { AnnotationError } from '../../src/core/errors.js';
import {
  approvalOf,
  LB_ANNOTATIONS,
  LB_NAME_MAX_CHARACTERS,
  parseLbAnnotations,
  readLbAnnotation,
  renderAnnotationReference,
  type LbAnnotationName,
} from '../../src/core/lb/annotations.js';
import { hasUnprintable, quoteUntrusted } from '../../src/core/text/untrusted.js';

const P = 'k8s.cloudscale.ch/';

function valuesOf(annotations: Record<string, string>) {
  const result = parseLbAnnotations(annotations);
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result;
}

describe('defaults (no annotations)', () => {
  const expected: { [K in LbAnnotationName]: unknown } = {
    uuid: null,
    configVersion: '1',
    name: null,
    flavor: 'lb-standard',
    zone: null,
    vipAddresses: [],
    floatingIps: [],
    poolAlgorithm: 'round_robin',
    poolProtocol: 'tcp',
    forceHostname: null,
    ipMode: 'Proxy',
    healthMonitorDelayS: 2,
    healthMonitorTimeoutS: 1,
    healthMonitorUpThreshold: 2,
    healthMonitorDownThreshold: 3,
    healthMonitorType: 'tcp',
    healthMonitorHttp: null,
    listenerProtocol: 'tcp',
    listenerAllowedCidrs: [],
    timeoutClientDataMs: 50000,
    timeoutMemberConnectMs: 5000,
    timeoutMemberDataMs: 50000,
    listenerAllowedSubnets: [],
    nodeSelector: null,
    approveChange: null,
    announcedChanges: [],
  };
  test.each(Object.entries(expected))('%s', (name, value) => {
    expect(valuesOf({}).values[name as LbAnnotationName]).toEqual(value);
    expect(parseLbAnnotations(undefined)).toMatchObject({ ok: true });
  });
});

const SUBNET = '11111111-2222-3333-4444-555555555555';

describe('valid values', () => {
  test.each<[string, string, LbAnnotationName, unknown]>([
    ['loadbalancer-uuid', 'c3f3e0e4-0000-4000-8000-000000000001', 'uuid', 'c3f3e0e4-0000-4000-8000-000000000001'],
    ['loadbalancer-config-version', '7', 'configVersion', '1'],
    ['loadbalancer-name', 'my-lb', 'name', 'my-lb'],
    ['loadbalancer-name', ' my lb ', 'name', ' my lb '],
    ['loadbalancer-name', 'Zürich – web 🌐', 'name', 'Zürich – web 🌐'],
    ['loadbalancer-name', '🌐'.repeat(LB_NAME_MAX_CHARACTERS), 'name', '🌐'.repeat(LB_NAME_MAX_CHARACTERS)],
    ['loadbalancer-flavor', 'lb-standard', 'flavor', 'lb-standard'],
    ['loadbalancer-zone', 'rma1', 'zone', 'rma1'],
    ['loadbalancer-zone', '', 'zone', null],
    ['loadbalancer-vip-addresses', '[]', 'vipAddresses', []],
    ['loadbalancer-vip-addresses', '', 'vipAddresses', []],
    ['loadbalancer-vip-addresses', `[{"subnet":"${SUBNET}"}]`, 'vipAddresses', [{ subnet: SUBNET }]],
    [
      'loadbalancer-vip-addresses',
      `[{"subnet":"${SUBNET}","address":"10.0.0.5"}]`,
      'vipAddresses',
      [{ subnet: SUBNET, address: '10.0.0.5' }],
    ],
    // Go's encoding/json matches field names case-insensitively.
    ['loadbalancer-vip-addresses', `[{"Subnet":"${SUBNET}"}]`, 'vipAddresses', [{ subnet: SUBNET }]],
    ['loadbalancer-floating-ips', '["192.0.2.1/32","2001:db8::1/128"]', 'floatingIps', ['192.0.2.1/32', '2001:db8::1/128']],
    ['loadbalancer-floating-ips', 'null', 'floatingIps', []],
    ['loadbalancer-pool-algorithm', 'source_ip', 'poolAlgorithm', 'source_ip'],
    ['loadbalancer-pool-algorithm', 'least_connections', 'poolAlgorithm', 'least_connections'],
    ['loadbalancer-pool-protocol', 'proxy', 'poolProtocol', 'proxy'],
    ['loadbalancer-pool-protocol', 'proxyv2', 'poolProtocol', 'proxyv2'],
    ['loadbalancer-force-hostname', '192-0-2-1.cust.cloudscale.ch', 'forceHostname', '192-0-2-1.cust.cloudscale.ch'],
    ['loadbalancer-force-hostname', '', 'forceHostname', null],
    ['loadbalancer-ip-mode', 'VIP', 'ipMode', 'VIP'],
    ['loadbalancer-ip-mode', 'Proxy', 'ipMode', 'Proxy'],
    ['loadbalancer-health-monitor-delay-s', '5', 'healthMonitorDelayS', 5],
    ['loadbalancer-health-monitor-delay-s', '+3', 'healthMonitorDelayS', 3],
    ['loadbalancer-health-monitor-timeout-s', '2', 'healthMonitorTimeoutS', 2],
    ['loadbalancer-health-monitor-up-threshold', '4', 'healthMonitorUpThreshold', 4],
    ['loadbalancer-health-monitor-down-threshold', '10', 'healthMonitorDownThreshold', 10],
    ['loadbalancer-health-monitor-type', 'udp-connect', 'healthMonitorType', 'udp-connect'],
    ['loadbalancer-health-monitor-type', 'https', 'healthMonitorType', 'https'],
    ['loadbalancer-health-monitor-http', '{}', 'healthMonitorHttp', null],
    [
      'loadbalancer-health-monitor-http',
      '{"url_path":"/healthz"}',
      'healthMonitorHttp',
      { expected_codes: ['200'], method: 'GET', url_path: '/healthz', version: '1.1', host: null },
    ],
    [
      'loadbalancer-health-monitor-http',
      '{"expected_codes":["200","204"],"method":"HEAD","url_path":"/","version":"1.1","host":"example.com"}',
      'healthMonitorHttp',
      { expected_codes: ['200', '204'], method: 'HEAD', url_path: '/', version: '1.1', host: 'example.com' },
    ],
    [
      'loadbalancer-health-monitor-http',
      '{"version":"1.0"}',
      'healthMonitorHttp',
      { expected_codes: ['200'], method: 'GET', url_path: '/', version: '1.0', host: null },
    ],
    ['loadbalancer-listener-protocol', 'tcp', 'listenerProtocol', 'tcp'],
    ['loadbalancer-listener-allowed-cidrs', '["10.0.0.0/8","2001:db8::/32"]', 'listenerAllowedCidrs', ['10.0.0.0/8', '2001:db8::/32']],
    ['loadbalancer-listener-allowed-cidrs', '[]', 'listenerAllowedCidrs', []],
    ['loadbalancer-timeout-client-data-ms', '1000', 'timeoutClientDataMs', 1000],
    ['loadbalancer-timeout-member-connect-ms', '1', 'timeoutMemberConnectMs', 1],
    ['loadbalancer-timeout-client-data-ms', '86400000', 'timeoutClientDataMs', 86_400_000],
    ['loadbalancer-health-monitor-up-threshold', '10', 'healthMonitorUpThreshold', 10],
    ['loadbalancer-timeout-member-data-ms', ' 60000 ', 'timeoutMemberDataMs', 60000],
    ['loadbalancer-listener-allowed-subnets', `["${SUBNET}"]`, 'listenerAllowedSubnets', [SUBNET]],
    [
      'loadbalancer-node-selector',
      'env=prod',
      'nodeSelector',
      { source: 'env=prod', requirements: [{ key: 'env', operator: '=', values: ['prod'] }] },
    ],
    ['loadbalancer-node-selector', '', 'nodeSelector', null],
  ])('%s: %j', (suffix, raw, name, value) => {
    const result = valuesOf({ [P + suffix]: raw });
    expect(result.values[name]).toEqual(value);
    expect(result.warnings).toEqual([]);
  });
});

describe('invalid values name the annotation, the value and the expected format', () => {
  test.each<[string, string, string]>([
    ['loadbalancer-name', '', 'must not be empty'],
    ['loadbalancer-name', '   ', 'must not be empty or blank'],
    ['loadbalancer-name', '\t\n', 'must not be empty or blank'],
    ['loadbalancer-name', 'web\u0000lb', 'contains a control character (U+0000 at position 4)'],
    ['loadbalancer-name', 'web\nlb', 'contains a control character (U+000A at position 4)'],
    ['loadbalancer-name', 'web\u007f', 'contains a control character (U+007F at position 4)'],
    ['loadbalancer-name', 'x'.repeat(LB_NAME_MAX_CHARACTERS + 1), `is ${LB_NAME_MAX_CHARACTERS + 1} characters long, at most ${LB_NAME_MAX_CHARACTERS}`],
    ['loadbalancer-flavor', 'LB Standard', 'not a slug'],
    ['loadbalancer-zone', 'RMA1', 'not a slug'],
    ['loadbalancer-vip-addresses', '{', 'not valid JSON'],
    ['loadbalancer-vip-addresses', '{"subnet":"x"}', 'not a JSON list'],
    ['loadbalancer-vip-addresses', '["x"]', 'item 0 is not an object'],
    ['loadbalancer-vip-addresses', '[{"address":"10.0.0.1"}]', 'item 0 has no "subnet" UUID'],
    ['loadbalancer-vip-addresses', '[{"subnet":"not-a-uuid"}]', 'item 0 has no "subnet" UUID'],
    ['loadbalancer-vip-addresses', `[{"subnet":"${SUBNET}","address":"10.0.0"}]`, 'not an IP address'],
    ['loadbalancer-floating-ips', '192.0.2.1/32', 'not valid JSON'],
    ['loadbalancer-floating-ips', '["192.0.2.1"]', 'item 0 ("192.0.2.1") is not an IP in CIDR notation'],
    ['loadbalancer-floating-ips', '[1]', 'item 0 is not a string'],
    ['loadbalancer-floating-ips', '{"a":1}', 'not a JSON list'],
    ['loadbalancer-pool-algorithm', 'random', 'unknown value'],
    ['loadbalancer-pool-protocol', 'udp', 'unknown value'],
    ['loadbalancer-pool-protocol', 'PROXY', 'unknown value'],
    ['loadbalancer-force-hostname', 'Not_A_Host', 'not a DNS hostname'],
    ['loadbalancer-force-hostname', '192.0.2.1', 'not a DNS hostname'],
    ['loadbalancer-ip-mode', 'proxy', 'unknown value'],
    ['loadbalancer-ip-mode', '', 'unknown value'],
    ['loadbalancer-health-monitor-delay-s', 'a', 'not an integer'],
    ['loadbalancer-health-monitor-delay-s', '1.5', 'not an integer'],
    ['loadbalancer-health-monitor-delay-s', '0', 'must be at least 1'],
    ['loadbalancer-health-monitor-timeout-s', '', 'not an integer'],
    ['loadbalancer-health-monitor-up-threshold', '-1', 'must be at least 1'],
    ['loadbalancer-health-monitor-down-threshold', '99999999999999999999', 'too large'],
    ['loadbalancer-health-monitor-type', 'TCP', 'unknown value'],
    ['loadbalancer-health-monitor-http', '{"method":', 'not valid JSON'],
    ['loadbalancer-health-monitor-http', '[]', 'not a JSON object'],
    ['loadbalancer-health-monitor-http', '{"method":"FETCH"}', '"method" "FETCH" is not one of'],
    ['loadbalancer-health-monitor-http', '{"version":"2"}', '"version" "2" is not'],
    ['loadbalancer-health-monitor-http', '{"version":"1.0","host":"a.b"}', '"host" requires "version" 1.1'],
    ['loadbalancer-health-monitor-http', '{"expected_codes":"200"}', '"expected_codes" is not a list of strings'],
    ['loadbalancer-health-monitor-http', '{"url_path":5}', '"url_path" is not a string'],
    ['loadbalancer-listener-protocol', 'udp', 'unknown value'],
    ['loadbalancer-listener-allowed-cidrs', '["10.0.0.1"]', 'is not a CIDR'],
    ['loadbalancer-listener-allowed-cidrs', '["10.0.0.0/33"]', 'is not a CIDR'],
    ['loadbalancer-listener-allowed-cidrs', '10.0.0.0/8', 'not valid JSON'],
    ['loadbalancer-timeout-client-data-ms', '5s', 'not an integer'],
    ['loadbalancer-timeout-member-connect-ms', '-5', 'must be at least 1'],
    ['loadbalancer-timeout-member-data-ms', 'x', 'not an integer'],
    ['loadbalancer-listener-allowed-subnets', '"abc"', 'not a JSON list'],
    ['loadbalancer-node-selector', 'invalid===syntax', 'expected'],
    ['loadbalancer-node-selector', 'env in prod', "expected '('"],
    ['loadbalancer-node-selector', 'Bad Key=x', 'expected'],
  ])('%s: %j', (suffix, raw, detail) => {
    const key = P + suffix;
    const result = parseLbAnnotations({ [key]: raw });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    const error = result.errors[0]!;
    expect(error).toBeInstanceOf(AnnotationError);
    expect(error.annotation).toBe(key);
    expect(error.message.startsWith(`${key}: invalid value ${quoteUntrusted(raw)}: `)).toBe(true);
    expect(hasUnprintable(error.message)).toBe(false);
    expect(error.message).toContain(detail);
    const definition = Object.values(LB_ANNOTATIONS).find((d) => d.key === key)!;
    expect(error.message).toContain(`expected ${definition.format}`);
    expect(error.hint).toContain(key);
  });
});

describe('the approval (cloudscale-ccm/approve-change)', () => {
  const key = LB_ANNOTATIONS.approveChange.key;
  test.each([
    ['0123456789', '0123456789'],
    [' 0123456789\n', '0123456789'],
    ['', null],
    ['  ', null],
  ])('%j approves %j', (raw, id) => {
    expect(readLbAnnotation({ [key]: raw }, 'approveChange')).toBe(id);
    expect(approvalOf({ [key]: raw })).toBe(id);
  });

  // A value that is no change id can never approve anything: refused like any malformed
  // annotation (and at kubectl apply by the admission policy), not left to a mismatch Warning.
  test.each(['abc', '0123456789a', 'ABCDEF0123', 'abc,def', '01234 56789'])('%j is refused, naming the format', (raw) => {
    const result = parseLbAnnotations({ [key]: raw });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.message)).toEqual([
      `${key}: invalid value ${quoteUntrusted(raw)}: not a change id; expected ${LB_ANNOTATIONS.approveChange.format}`,
    ]);
    expect(approvalOf({ [key]: raw })).toBeNull();
  });
});

test('collects every annotation error of a Service at once', () => {
  const result = parseLbAnnotations({
    [`${P}loadbalancer-health-monitor-delay-s`]: 'a',
    [`${P}loadbalancer-floating-ips`]: '{',
    [`${P}loadbalancer-pool-algorithm`]: 'random',
    [`${P}loadbalancer-flavor`]: 'lb-standard',
  });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.errors.map((e) => e.annotation)).toEqual([
    `${P}loadbalancer-floating-ips`,
    `${P}loadbalancer-pool-algorithm`,
    `${P}loadbalancer-health-monitor-delay-s`,
  ]);
});

test('a bad ip-mode is only a warning while force-hostname is set (the Go CCM never reads it then)', () => {
  const result = parseLbAnnotations({
    [`${P}loadbalancer-force-hostname`]: 'lb.example.com',
    [`${P}loadbalancer-ip-mode`]: 'bogus',
  });
  expect(result.ok).toBe(true);
  expect(result.warnings).toHaveLength(1);
  expect(result.warnings[0]!.annotation).toBe(`${P}loadbalancer-ip-mode`);
  expect(result.warnings[0]!.message).toContain('ignored while k8s.cloudscale.ch/loadbalancer-force-hostname is set');
});

describe('warnings for accepted but suspicious values', () => {
  test.each<[string, string, string]>([
    ['loadbalancer-health-monitor-http', '{"url-path":"/x"}', 'ignoring unknown field "url-path"'],
    ['loadbalancer-vip-addresses', `[{"subnet":"${SUBNET}","adress":"10.0.0.1"}]`, 'item 0: ignoring unknown field "adress"'],
  ])('%s: %j', (suffix, raw, message) => {
    const result = parseLbAnnotations({ [P + suffix]: raw });
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([{ annotation: P + suffix, message: expect.stringContaining(message) }]);
  });
});

test('readLbAnnotation returns the default when unset and throws AnnotationError when invalid', () => {
  expect(readLbAnnotation(undefined, 'ipMode')).toBe('Proxy');
  expect(readLbAnnotation({ [`${P}loadbalancer-ip-mode`]: 'VIP' }, 'ipMode')).toBe('VIP');
  expect(() => readLbAnnotation({ [`${P}loadbalancer-ip-mode`]: 'vip' }, 'ipMode')).toThrow(
    /^k8s\.cloudscale\.ch\/loadbalancer-ip-mode: invalid value "vip": unknown value; expected one of `Proxy`, `VIP`$/,
  );
});

test('the annotation reference lists every annotation once, in table order', () => {
  const text = renderAnnotationReference();
  const rows = text.trimEnd().split('\n');
  expect(rows[0]).toBe('| Annotation | Default | Format | Impact of a change | Description |');
  expect(rows).toHaveLength(2 + Object.keys(LB_ANNOTATIONS).length);
  expect(rows.slice(2).map((r) => /^\| `([^`]+)`/.exec(r)?.[1])).toEqual(
    Object.values(LB_ANNOTATIONS).map((d) => d.key),
  );
  expect(rows[2]).toContain('written by the tool');
  expect(text).toContain('| `k8s.cloudscale.ch/loadbalancer-pool-algorithm` | `round_robin` | one of `round_robin`, `least_connections`, `source_ip` | pool-swap:');
  // The Go CCM's impact is named beside this tool's where they differ.
  expect(text).toMatch(/loadbalancer-pool-algorithm` .*\| pool-swap: .*The Go CCM: pool-recreation, the port is down for ~60–120 s\. \|/);
  // Every row has exactly 5 cells: no unescaped pipe inside a cell.
  for (const row of rows) expect(row.split(/(?<!\\)\|/).length).toBe(7);
});
