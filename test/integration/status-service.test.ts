// `status service/NAME` against the real apiserver and the simulator's data plane with health
// checks on: the load balancer as it serves (listeners, pools, members with their Node,
// `enabled`, monitor status), a member draining and until when, and, once every member left is
// down, which health check fails on which port of which Node. Text, -o json, the built CLI and
// the kubectl plugin. Read-only: no Lease, no write on either side.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { statusServiceCommand } from '../../src/commands/status.js';
import { UsageError } from '../../src/core/errors.js';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import type { ServiceLbView } from '../../src/core/status/service-view.js';
import { runBinary } from '../support/ccm.js';
import { createLoadBalancerService, testConnection, uniqueName, waitUntil } from '../support/kube.js';
import { kubeState } from '../support/kube-state.js';
import { TEST_PASS, key, passOk, privateAddress, readService, theLb, useLbWorld } from '../support/lb-scenarios.js';

/** Checks 1 s apart; one result flips a member. */
const MONITOR = {
  [key('loadbalancer-health-monitor-delay-s')]: '1',
  [key('loadbalancer-health-monitor-timeout-s')]: '1',
  [key('loadbalancer-health-monitor-up-threshold')]: '1',
  [key('loadbalancer-health-monitor-down-threshold')]: '1',
};
const plugin = fileURLToPath(new URL('../../bin/kubectl-cloudscale.js', import.meta.url));

describe('status service/NAME', () => {
  const namespace = uniqueName('status-svc');
  const prefix = uniqueName('ss');
  const pass = { ...TEST_PASS, namespace, drainSeconds: 600 };
  const { harness, nodes } = useLbWorld({ prefix, namespace, servers: 3, dataPlane: { healthChecks: true } });

  /** The members of the Service's one pool, as the API shows them now. */
  async function members() {
    const state = await theLb(harness, await readService(namespace, 'web'));
    const pool = Object.values(state.pools)[0]!;
    return harness.cloud.poolMembers.list(pool.pool.uuid);
  }

  it('shows each member with its Node and health, a drain and until when, and why the port does not serve; writes nothing', async () => {
    await createLoadBalancerService(namespace, 'web', { annotations: MONITOR });
    await passOk(harness, ['web'], pass);
    await waitUntil('every member up', async () => (await members()).every((m) => m.monitor_status === 'up'), 20_000);

    const up = harness.context();
    await statusServiceCommand(['service/web'], { namespace, drainSeconds: 600 }, up);
    expect(up.out()).toMatch(/^listeners:\n {2}tcp\/80 → pool \S+: serving \(3 taking traffic\)$/m);

    // Node 3 leaves the load balancers: its member drains (disabled, tagged), kept 600 s.
    await testConnection().core.patchNode(
      { name: `${prefix}-3`, body: { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await passOk(harness, ['web'], pass);
    const drained = (await members()).find((m) => m.address === privateAddress(3))!;
    expect(drained).toMatchObject({ enabled: false, tags: { [MEMBER_DRAINING_TAG]: expect.any(String) } });
    const since = drained.tags[MEMBER_DRAINING_TAG]!;
    const until = new Date(Date.parse(since) + 600_000).toISOString();

    // The health checks of nodes 1 and 2 fail on the port they probe.
    const checked = (await members()).filter((m) => m.enabled);
    const checkedPort = checked[0]!.monitor_port ?? checked[0]!.protocol_port;
    for (const member of checked) harness.sim.admin.setEndpointHealth(member.address, member.monitor_port ?? member.protocol_port, false);
    await waitUntil('the enabled members down', async () => (await members()).filter((m) => m.enabled).every((m) => m.monitor_status === 'down'), 20_000);

    const before = await kubeState(namespace, nodes);
    const arrivals = harness.sim.admin.arrivals();
    const ctx = harness.context();
    const view = await statusServiceCommand(['service/web'], { namespace, drainSeconds: 600 }, ctx);
    const text = ctx.out();
    const who = (i: number) => `${prefix}-${i} (${privateAddress(i)})`;
    const [n1, n2, n3] = [who(1), who(2), who(3)];
    expect(text).toMatch(new RegExp(`^service ${namespace}/web: load balancer k8s-service-\\S+ \\(\\S+\\), running, rma1, VIP \\S+`));
    expect(text).toMatch(
      new RegExp(`^  tcp/80 → pool \\S+: NOT serving: 1 member disabled \\(1 draining\\): ${esc(n3)}; the tcp check on port ${checkedPort} fails on ${esc(n1)}, ${esc(n2)}$`, 'm'),
    );
    expect(text).toMatch(/^pool \S+ \(tcp, round_robin; health check tcp every 1 s, up after 1, down after 1\):$/m);
    for (const i of [1, 2]) expect(text).toMatch(new RegExp(`^  ${prefix}-${i} +${esc(privateAddress(i))}:\\d+ +enabled +down\\b`, 'm'));
    expect(text).toMatch(
      new RegExp(`^  ${prefix}-3 +${esc(privateAddress(3))}:\\d+ +disabled +\\S+ .*draining since ${esc(since)}, removed by the first pass after ${esc(until)} \\(--drain-seconds 600\\)$`, 'm'),
    );
    expect(view.listeners[0]).toMatchObject({ protocol: 'tcp', port: 80, serving: false, membersUp: 0 });

    // Read-only: GETs only to cloudscale, and nothing changed on the Kubernetes side (no Lease, no Event, no write).
    const sent = harness.sim.admin.requests().filter((r) => r.seq > arrivals);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await kubeState(namespace, nodes)).toEqual(before);

    const json = harness.context({ output: 'json' });
    await statusServiceCommand(['service/web'], { namespace, drainSeconds: 600 }, json);
    const document = JSON.parse(json.out()) as { kind: string } & ServiceLbView;
    expect(document.kind).toBe('ServiceStatus');
    expect(document.pools[0]!.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ node: `${prefix}-1`, enabled: true, monitorStatus: 'down', checkedPort, draining: null, takesTraffic: false }),
        expect.objectContaining({ node: `${prefix}-3`, enabled: false, draining: { since, until } }),
      ]),
    );
    expect(document.listeners[0]!.why).toHaveLength(2);

    // The built CLI and the kubectl plugin (-n before the subcommand, as kubectl users write it).
    const env = { apiUrl: harness.sim.url };
    const cli = await runBinary(['status', '-n', namespace, 'service/web'], env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`NOT serving: 1 member disabled (1 draining): ${n3}; the tcp check on port ${checkedPort} fails on ${n1}, ${n2}\n`);
    const viaKubectl = await runBinary(['-n', namespace, 'status', 'service/web', '-o', 'json'], { ...env, script: plugin });
    expect(viaKubectl.code, viaKubectl.stderr).toBe(0);
    expect(JSON.parse(viaKubectl.stdout)).toMatchObject({ kind: 'ServiceStatus', service: `${namespace}/web` });
    expect(await kubeState(namespace, nodes)).toEqual(before);
  });

  it('a Service that does not exist, or is no LoadBalancer, is named with the fix; --fail-if-older-than with a Service is refused', async () => {
    await expect(statusServiceCommand(['service/nope'], { namespace, drainSeconds: 60 }, harness.context())).rejects.toMatchObject({
      constructor: UsageError,
      message: `service ${namespace}/nope not found`,
      hint: `check the name and the namespace (-n): kubectl -n ${namespace} get services`,
    });
    await createLoadBalancerService(namespace, 'internal', { spec: { type: 'ClusterIP' } });
    await expect(statusServiceCommand(['service/internal'], { namespace, drainSeconds: 60 }, harness.context())).rejects.toMatchObject({
      constructor: UsageError,
      message: `service ${namespace}/internal is of type ClusterIP, not LoadBalancer: it has no load balancer`,
    });
    const cli = await runBinary(['status', '-n', namespace, 'service/web', '--fail-if-older-than', '5m'], { apiUrl: harness.sim.url });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^error: --fail-if-older-than is about the recorded passes, not a Service/m);
  });
});

function esc(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
