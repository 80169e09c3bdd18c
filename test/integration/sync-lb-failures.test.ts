// @kube-versions: all — status read back with or without ipMode (test/support/ip-mode.ts) after failed passes
// Failures that must stay local and recoverable: a malformed annotation fails only its Service
// (an event and an error line naming the annotation and the expected format, no cloud write),
// and a create or assignment whose answer is lost (applied, then 500) leaves nothing the next
// pass does not converge: no duplicate load balancer, pool, member, listener or monitor.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { LB_FINALIZER } from '../../src/core/lb/service-plan.js';
import { formatTopLevelError } from '../../src/core/render/error.js';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import {
  FLOATING_IPS,
  expectConverged,
  expectWellFormed,
  failuresOf,
  key,
  lbsNamed,
  memberNames,
  passFails,
  passOk,
  poolOf,
  runPass,
  readService,
  theLb,
  warningsOf,
  useLbWorld,
} from '../support/lb-scenarios.js';

describe('sync-lb: failures', () => {
  const namespace = uniqueName('lb-fail');
  const prefix = uniqueName('fail');
  const pass = { namespace };
  const { harness } = useLbWorld({ prefix, namespace });

  describe('malformed annotations', () => {
    // [Service name, annotation, bad value, what the message says, words of the expected format]
    const cases = [
      ['bad-json', 'loadbalancer-floating-ips', '["5.102.150.11/32"', 'not valid JSON', 'JSON list of Floating IPs in CIDR notation'],
      ['not-a-list', 'loadbalancer-listener-allowed-cidrs', '"10.0.0.0/8"', 'not a JSON list', 'JSON list of CIDRs'],
      ['bad-cidr', 'loadbalancer-listener-allowed-cidrs', '["10.0.0.1"]', 'is not a CIDR', 'JSON list of CIDRs'],
      ['fip-no-prefix', 'loadbalancer-floating-ips', '["5.102.150.11"]', 'is not an IP in CIDR notation', 'CIDR notation'],
      ['not-integer', 'loadbalancer-health-monitor-delay-s', 'two', 'not an integer', 'an integer number of seconds'],
      ['negative', 'loadbalancer-timeout-client-data-ms', '-1', 'must be at least 1', 'an integer number of milliseconds'],
      ['unknown-algorithm', 'loadbalancer-pool-algorithm', 'random', 'unknown value', '`round_robin`, `least_connections`, `source_ip`'],
      ['unknown-protocol', 'loadbalancer-pool-protocol', 'http', 'unknown value', '`tcp`, `proxy`, `proxyv2`'],
      ['unknown-ip-mode', 'loadbalancer-ip-mode', 'proxy', 'unknown value', '`Proxy`, `VIP`'],
      ['unknown-monitor', 'loadbalancer-health-monitor-type', 'icmp', 'unknown value', '`udp-connect`'],
      ['bad-http', 'loadbalancer-health-monitor-http', '{"version": "2.0"}', '"version" "2.0"', 'JSON object with optional fields'],
      ['bad-selector', 'loadbalancer-node-selector', 'env in (prod', '', 'a Kubernetes label selector'],
      ['bad-vip', 'loadbalancer-vip-addresses', '[{"address": "10.20.0.9"}]', 'has no "subnet" UUID', '{"subnet": "<subnet UUID>"'],
      ['empty-name', 'loadbalancer-name', '', 'must not be empty', 'a load balancer name: 1 to 255 characters'],
      ['bad-hostname', 'loadbalancer-force-hostname', 'not a host', 'not a DNS hostname', 'a DNS hostname'],
    ] as const;

    it('each fails only its own Service: an error line and a Warning event naming the annotation and the format, no cloud write; the good Service is reconciled', async () => {
      const bad = new Map<string, V1Service>();
      for (const [name, annotation, value] of cases) {
        bad.set(name, await createLoadBalancerService(namespace, name, { annotations: { [key(annotation)]: value } }));
      }
      const good = await createLoadBalancerService(namespace, 'good');
      const names = [...bad.keys(), 'good'];

      const { error, simWrites, ctx, report } = await passFails(harness, names, pass);
      expect(error.message).toContain(`${cases.length} of ${names.length} Services failed`);

      // The only cloud writes are the good Service's load balancer.
      const goodLb = await theLb(harness, good);
      expectWellFormed(goodLb);
      expect(simWrites.filter((w) => w.method === 'POST' && w.route === '/v1/load-balancers')).toHaveLength(1);
      expect((await harness.cloud.loadBalancers.list()).map((lb) => lb.uuid)).toEqual([goodLb.lb.uuid]);
      expect((await readService(namespace, 'good')).metadata!.finalizers).toContain(LB_FINALIZER);

      for (const [name, annotation, , says, format] of cases) {
        const messages = failuresOf(error, namespace, name);
        expect(messages, name).toHaveLength(1);
        expect(messages[0], name).toContain(key(annotation));
        expect(messages[0]!.split(key(annotation)).length - 1, `${name}: the annotation is named once`).toBe(1);
        expect(messages[0], name).toContain(says);
        expect(messages[0], name).toContain(`expected ${format.startsWith('`') ? 'one of ' : ''}`);
        expect(messages[0], name).toContain(format);
        const reported = report!.services.find((r) => r.service === `${namespace}/${name}`);
        expect(reported?.status, name).toBe('failed');
        expect(reported?.errors[0]?.hint, `the hint of ${name}`).toContain(`Fix the annotation ${key(annotation)}`);
        // Said once: in the pass's error as the command line prints it, not in the progress lines.
        expect(formatTopLevelError(error, { verbose: false }), `the error line of ${name}`).toContain(
          `  service/${namespace}/${name}: ${messages[0]!.slice(0, 120)}`,
        );
        expect(ctx.out(), `the progress line of ${name}`).toContain(`service/${namespace}/${name}: failed`);
        expect(ctx.out(), `the progress line of ${name}`).not.toContain(messages[0]!.slice(0, 120));

        const service = bad.get(name)!;
        const warnings = await warningsOf(service);
        expect(warnings, name).toContainEqual(
          expect.objectContaining({ reason: 'SyncLoadBalancerFailed', message: expect.stringContaining(key(annotation)) }),
        );
        const stored = await readService(namespace, name);
        expect(stored.metadata!.finalizers ?? [], name).toEqual([]);
        expect(stored.status?.loadBalancer?.ingress ?? [], name).toEqual([]);
      }

      // The next pass: the good one is in sync, the bad ones still fail, nothing is written.
      const again = await passFails(harness, names, pass);
      expect(again.simWrites).toEqual([]);
      expect(again.error.failures.map((f) => f.object).sort()).toEqual(
        cases.map(([name]) => `service/${namespace}/${name}`).sort(),
      );
      await expectConverged(harness, ['good'], pass);
    });

    it('an invalid ip-mode is ignored while force-hostname is set (the Go CCM never reads it then)', async () => {
      const service = await createLoadBalancerService(namespace, 'ip-mode-ignored', {
        annotations: { [key('loadbalancer-force-hostname')]: 'lb.example.com', [key('loadbalancer-ip-mode')]: 'bogus' },
      });
      await passOk(harness, ['ip-mode-ignored'], pass);
      expect((await readService(namespace, 'ip-mode-ignored')).status!.loadBalancer!.ingress).toEqual([
        { hostname: 'lb.example.com' },
      ]);
      expectWellFormed(await theLb(harness, service));
      await expectConverged(harness, ['ip-mode-ignored'], pass);
    });
  });

  describe('a write applied by the API whose answer is lost (500 after applying)', () => {
    it.each([
      ['POST', '/v1/load-balancers'],
      ['POST', '/v1/load-balancers/pools'],
      ['POST', '/v1/load-balancers/pools/*/members'],
      ['POST', '/v1/load-balancers/listeners'],
      ['POST', '/v1/load-balancers/health-monitors'],
      ['PATCH', '/v1/floating-ips/*'],
    ])('%s %s: a create is looked up and found (no failure, no duplicate), an idempotent PATCH is retried; the next pass converges without duplicates', async (method, pathPattern) => {
      const name = uniqueName(`lost-${method}-${pathPattern.split('/').filter((s) => s && s !== '*').pop()}`);
      const floatingIp = FLOATING_IPS[2];
      const service = await createLoadBalancerService(namespace, name, {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
        annotations: { [key('loadbalancer-floating-ips')]: JSON.stringify([floatingIp]) },
      });
      harness.sim.admin.setFaults({ errorRate: { pathPattern, methods: [method], status: 500, count: 1, afterApplying: true } });
      try {
        const first = await runPass(harness, [name], pass);
        // Exactly one attempt hit the fault; a create is never blindly repeated.
        expect(first.simRequests.filter((r) => r.status === 500)).toHaveLength(1);
        if (method === 'POST') {
          // A lost create is looked up at once (a load balancer by name and tags, the others by
          // what identifies them in their parent) and found: the pass carries on with it.
          expect(first.error).toBeUndefined();
        } else {
          expect(first.error).toBeUndefined();
          expect(first.report!.requests.retries).toBe(1);
        }
      } finally {
        harness.sim.admin.clearFaults();
      }

      await passOk(harness, [name], pass);
      const state = await theLb(harness, service);
      expectWellFormed(state);
      expect(Object.keys(state.pools).sort()).toEqual(['tcp/http', 'tcp/https']);
      for (const [index, pool] of ['tcp/http', 'tcp/https'].entries()) {
        const nodePort = service.spec!.ports![index]!.nodePort!;
        expect(memberNames(poolOf(state, pool))).toEqual([`10.20.0.1:${nodePort}`, `10.30.0.2:${nodePort}`]);
      }
      expect(state.floatingIps.map((f) => f.network)).toEqual([floatingIp]);
      const stored = await readService(namespace, name);
      expect(stored.metadata!.annotations![key('loadbalancer-uuid')]).toBe(state.lb.uuid);
      expect(stored.status!.loadBalancer!.ingress).toHaveLength(2);
      await expectConverged(harness, [name], pass);

      // Deleted through a pass, so that the next case can claim the same Floating IP.
      await testConnection().core.deleteNamespacedService({ namespace, name });
      await passOk(harness, [name], pass);
      expect(await lbsNamed(harness, state.lb.name)).toEqual([]);
    });
  });
});
