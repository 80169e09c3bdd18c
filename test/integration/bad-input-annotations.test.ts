// @kube-versions: all — Warning Events through the server's Events API, status with or without ipMode
// The corpus of bad annotation values, as a new user writes them: each one on its own Service,
// all in one sync-lb pass and one plan against the simulator and the real API server. Every
// value must be refused before the first write: its Service fails with the expected message
// (the same in plan), the simulator receives no write at all, the Service is not touched
// (resourceVersion unchanged: no finalizer, no annotation, no status), and the only Kubernetes
// writes are the Warning Events that report the problems.
import type { V1Service } from '@kubernetes/client-node';
import { beforeAll, describe, expect, test } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { hasUnprintable } from '../../src/core/text/untrusted.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import { FLOATING_IPS, SUBNET_A, SUBNET_B, failuresOf, key, passFails, readService, warningsOf, useLbWorld } from '../support/lb-scenarios.js';

const MISSING_SUBNET = 'eeee0001-0000-4000-8000-00000000000e';
const notJson = 'not valid JSON';
const unknownValue = 'unknown value';
const notInteger = 'not an integer';

/** [annotation suffix, value, a fragment of the expected message]. */
const cases: readonly (readonly [string, string, string])[] = [
  ['loadbalancer-name', '', 'the name must not be empty'],
  ['loadbalancer-name', '   ', 'the name must not be empty or blank'],
  ['loadbalancer-name', 'web\u0000lb', 'the name contains a control character (U+0000 at position 4)'],
  ['loadbalancer-name', 'web\nlb', 'the name contains a control character (U+000A at position 4)'],
  ['loadbalancer-name', 'web\u001b[31mlb', 'the name contains a control character (U+001B at position 4)'],
  ['loadbalancer-name', 'x'.repeat(300), 'the name is 300 characters long, at most 255 are accepted'],
  ['loadbalancer-flavor', 'LB-Standard', 'not a slug'],
  ['loadbalancer-flavor', 'lb standard', 'not a slug'],
  ['loadbalancer-flavor', '', 'not a slug'],
  ['loadbalancer-zone', 'RMA1', 'not a slug'],
  ['loadbalancer-zone', 'rma 1', 'not a slug'],
  ['loadbalancer-zone', 'lpg1', "the load balancer's zone is lpg1, but the servers of nodes"],
  ['loadbalancer-vip-addresses', '{', notJson],
  ['loadbalancer-vip-addresses', '{}', 'not a JSON list'],
  ['loadbalancer-vip-addresses', '[1]', 'item 0 is not an object'],
  ['loadbalancer-vip-addresses', '[{}]', 'item 0 has no "subnet" UUID'],
  ['loadbalancer-vip-addresses', '[{"subnet":"private"}]', 'item 0 has no "subnet" UUID'],
  ['loadbalancer-vip-addresses', `[{"subnet":"${SUBNET_A.uuid}","address":"ten"}]`, 'not an IP address'],
  ['loadbalancer-vip-addresses', `[{"subnet":"${MISSING_SUBNET}"}]`, `subnet ${MISSING_SUBNET} of annotation ${key('loadbalancer-vip-addresses')} does not exist`],
  ['loadbalancer-vip-addresses', `[{"subnet":"${SUBNET_A.uuid}","address":"10.30.0.50"}]`, `address 10.30.0.50 of annotation ${key('loadbalancer-vip-addresses')} is not in its subnet`],
  ['loadbalancer-floating-ips', '{', notJson],
  ['loadbalancer-floating-ips', `"${FLOATING_IPS[0]}"`, 'not a JSON list'],
  ['loadbalancer-floating-ips', '["5.102.150.11"]', 'is not an IP in CIDR notation'],
  ['loadbalancer-floating-ips', '[5]', 'item 0 is not a string'],
  ['loadbalancer-pool-algorithm', 'random', unknownValue],
  ['loadbalancer-pool-algorithm', 'ROUND_ROBIN', unknownValue],
  ['loadbalancer-pool-algorithm', '', unknownValue],
  ['loadbalancer-pool-protocol', 'udp', unknownValue],
  ['loadbalancer-pool-protocol', 'PROXY', unknownValue],
  ['loadbalancer-pool-protocol', 'http', unknownValue],
  ['loadbalancer-force-hostname', 'Not_A_Host', 'not a DNS hostname'],
  ['loadbalancer-force-hostname', '192.0.2.1', 'not a DNS hostname'],
  ['loadbalancer-force-hostname', '-bad.example.com', 'not a DNS hostname'],
  ['loadbalancer-force-hostname', 'a..b', 'not a DNS hostname'],
  ['loadbalancer-ip-mode', 'proxy', unknownValue],
  ['loadbalancer-ip-mode', '', unknownValue],
  ['loadbalancer-ip-mode', 'vip', unknownValue],
  ['loadbalancer-health-monitor-delay-s', 'a', notInteger],
  ['loadbalancer-health-monitor-delay-s', '1.5', notInteger],
  ['loadbalancer-health-monitor-delay-s', '0', 'must be at least 1'],
  ['loadbalancer-health-monitor-delay-s', '-1', 'must be at least 1'],
  ['loadbalancer-health-monitor-delay-s', '1e3', notInteger],
  ['loadbalancer-health-monitor-delay-s', '99999999999999999999', 'the number is too large'],
  ['loadbalancer-health-monitor-timeout-s', '', notInteger],
  ['loadbalancer-health-monitor-timeout-s', '0', 'must be at least 1'],
  ['loadbalancer-health-monitor-timeout-s', '2s', notInteger],
  ['loadbalancer-health-monitor-up-threshold', '100', 'must be at most 10'],
  ['loadbalancer-health-monitor-up-threshold', '11', 'must be at most 10'],
  ['loadbalancer-health-monitor-up-threshold', '0', 'must be at least 1'],
  ['loadbalancer-health-monitor-up-threshold', 'ten', notInteger],
  ['loadbalancer-health-monitor-down-threshold', '11', 'must be at most 10'],
  ['loadbalancer-health-monitor-down-threshold', '0', 'must be at least 1'],
  ['loadbalancer-health-monitor-down-threshold', '-3', 'must be at least 1'],
  ['loadbalancer-health-monitor-type', 'TCP', unknownValue],
  ['loadbalancer-health-monitor-type', 'icmp', unknownValue],
  ['loadbalancer-health-monitor-type', 'http2', unknownValue],
  ['loadbalancer-health-monitor-http', '{"method":', notJson],
  ['loadbalancer-health-monitor-http', '[]', 'not a JSON object'],
  ['loadbalancer-health-monitor-http', '"x"', 'not a JSON object'],
  ['loadbalancer-health-monitor-http', '{"method":"FETCH"}', '"method" "FETCH" is not one of'],
  ['loadbalancer-health-monitor-http', '{"version":"2"}', '"version" "2" is not'],
  ['loadbalancer-health-monitor-http', '{"version":"1.0","host":"a.b"}', '"host" requires "version" 1.1'],
  ['loadbalancer-health-monitor-http', '{"expected_codes":"200"}', '"expected_codes" is not a list of strings'],
  ['loadbalancer-health-monitor-http', '{"expected_codes":[200]}', '"expected_codes" is not a list of strings'],
  ['loadbalancer-health-monitor-http', '{"url_path":5}', '"url_path" is not a string'],
  ['loadbalancer-listener-protocol', 'udp', unknownValue],
  ['loadbalancer-listener-protocol', 'http', unknownValue],
  ['loadbalancer-listener-protocol', 'TCP', unknownValue],
  ['loadbalancer-listener-allowed-cidrs', '["10.0.0.1"]', 'is not a CIDR'],
  ['loadbalancer-listener-allowed-cidrs', '["10.0.0.0/33"]', 'is not a CIDR'],
  ['loadbalancer-listener-allowed-cidrs', '10.0.0.0/8', notJson],
  ['loadbalancer-listener-allowed-cidrs', '["::1/129"]', 'is not a CIDR'],
  ['loadbalancer-listener-allowed-cidrs', '[1]', 'item 0 is not a string'],
  ['loadbalancer-listener-allowed-cidrs', '{"a":1}', 'not a JSON list'],
  ['loadbalancer-timeout-client-data-ms', '99999999999', 'must be at most 86400000'],
  ['loadbalancer-timeout-client-data-ms', '86400001', 'must be at most 86400000'],
  ['loadbalancer-timeout-client-data-ms', '5s', notInteger],
  ['loadbalancer-timeout-client-data-ms', '0', 'must be at least 1'],
  ['loadbalancer-timeout-member-connect-ms', '0', 'must be at least 1'],
  ['loadbalancer-timeout-member-connect-ms', '-5', 'must be at least 1'],
  ['loadbalancer-timeout-member-connect-ms', '1.5', notInteger],
  ['loadbalancer-timeout-member-data-ms', 'x', notInteger],
  ['loadbalancer-timeout-member-data-ms', '86400001', 'must be at most 86400000'],
  ['loadbalancer-timeout-member-data-ms', '', notInteger],
  ['loadbalancer-listener-allowed-subnets', '"abc"', 'not a JSON list'],
  ['loadbalancer-listener-allowed-subnets', '[1]', 'item 0 is not a string'],
  ['loadbalancer-listener-allowed-subnets', '{', notJson],
  ['loadbalancer-listener-allowed-subnets', `["${MISSING_SUBNET}"]`, `subnet ${MISSING_SUBNET} of annotation ${key('loadbalancer-listener-allowed-subnets')} does not exist`],
  ['loadbalancer-listener-allowed-subnets', '["private"]', 'subnet private of annotation'],
  ['loadbalancer-listener-allowed-subnets', `["${SUBNET_B.uuid.toUpperCase()}"]`, 'does not exist in this cloudscale project'],
  ['loadbalancer-node-selector', 'invalid===syntax', 'expected'],
  ['loadbalancer-node-selector', 'env in prod', "expected '('"],
  ['loadbalancer-node-selector', 'Bad Key=x', 'expected'],
  ['loadbalancer-node-selector', 'a in (', 'expected'],
  ['loadbalancer-node-selector', '!', 'expected'],
];

describe('bad annotation values: refused before anything is written', () => {
  const namespace = uniqueName('bad-ann');
  const prefix = uniqueName('bad');
  const names = cases.map((_, index) => `bad-${index}`);
  const created: V1Service[] = [];
  let pass: Awaited<ReturnType<typeof passFails>>;
  let planned: PlanDocument;
  let eventsBefore: number;
  const { harness } = useLbWorld({ prefix, namespace });

  beforeAll(async () => {
    for (const [index, [suffix, value]] of cases.entries()) {
      created.push(await createLoadBalancerService(namespace, names[index]!, { annotations: { [key(suffix)]: value } }));
    }
    eventsBefore = (await eventsOfTheTool()).length;
    pass = await passFails(harness, names, { namespace });
    const ctx = harness.context({ output: 'json' });
    const result = await planCommand(names.map((n) => `service/${n}`), { namespace, detailedExitcode: false }, ctx);
    expect(result.exitCode).toBe(1);
    expect(ctx.err()).toMatch(/^error: the plan has \d+ problems; see above\n$/);
    planned = JSON.parse(ctx.out()) as PlanDocument;
  });
  /** Events written by the tool (as the service controller), not by the API server itself. */
  async function eventsOfTheTool() {
    const { items } = await testConnection().core.listNamespacedEvent({ namespace });
    return items.filter((e) => e.source?.component === 'service-controller');
  }

  test(`the corpus holds ${cases.length} values; the simulator received no write, and no load balancer exists`, async () => {
    expect(cases.length).toBeGreaterThanOrEqual(90);
    expect(pass.simWrites).toEqual([]);
    expect(await harness.cloud.loadBalancers.list()).toEqual([]);
    // The Kubernetes writes are the Warning Events that report the problems, one per Service.
    const events = await eventsOfTheTool();
    expect(events.length - eventsBefore).toBe(cases.length);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['Warning']));
  });

  test.each(cases.map(([suffix, value, message], index) => ({ suffix, value, message, index })))(
    '$suffix: $value',
    async ({ suffix, value, message, index }) => {
      const name = names[index]!;
      const failures = failuresOf(pass.error, namespace, name);
      expect(failures, `${suffix}=${JSON.stringify(value)}`).toHaveLength(1);
      expect(failures[0]).toContain(key(suffix));
      expect(failures[0]).toContain(message);
      // A value is quoted with its control characters escaped, in the error as in the Event.
      expect(hasUnprintable(failures[0]!)).toBe(false);
      // plan shows the same problem, for the same annotation.
      const plan = planned.services.find((s) => s.service.name === name)!;
      expect(plan.problems.map((p) => p.message)).toEqual([expect.stringContaining(message)]);
      expect(plan.actions.filter((a) => a.kind !== 'refuse')).toEqual([]);
      // Nothing on the Service changed: no finalizer, no annotation written back, no status.
      const stored = await readService(namespace, name);
      expect(stored.metadata!.resourceVersion).toBe(created[index]!.metadata!.resourceVersion);
      // (The API server's own warnings, such as ClusterIPNotAllocated from its repair loop, aside.)
      const warnings = (await warningsOf(stored)).filter((e) => e.reason === 'SyncLoadBalancerFailed');
      expect(warnings.map((e) => e.message)).toEqual([expect.stringContaining(message)]);
      expect(hasUnprintable(warnings[0]!.message!)).toBe(false);
    },
  );
});
