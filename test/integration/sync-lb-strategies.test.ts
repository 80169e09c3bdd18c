// Make-before-break, measured: every change class runs `plan` (the prediction) and then sync-lb
// against the simulator's data plane, whose health checks and propagation delay are on; the
// outage is what the data plane shows for the port (the longest interval without a listener
// whose pool has an enabled, healthy member), and it must not exceed the prediction. Also: a
// swap stopped midway is finished by the next pass, not built twice; members that never come
// up leave the old pool serving; leaving members are drained, then deleted.
//
// Timings are compressed so the file stays fast (propagation 0.5 s, checks 1 s apart, a settle
// pause of 1 s); `npm run bench -- --only downtime` measures the same classes with the
// realistic figures of docs/sim.md.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import { uniqueName } from '../support/kube.js';
import { TEST_PASS, key, memberNames, passFails, passOk, patchService, poolOf, privateAddress, readService, runPass, theLb, warningsOf } from '../support/lb-scenarios.js';
import { PROPAGATION_MS, dataPlaneProbes, useDataPlaneWorld } from '../support/make-before-break.js';
import { writesTaken } from '../support/strict-world.js';


describe('make-before-break against the data plane', () => {
  const namespace = uniqueName('mbb');
  const prefix = uniqueName('mbb');
  const pass = { ...TEST_PASS, namespace, settleSeconds: 1, pollSeconds: 0.2, drainSeconds: 0 };
  const { harness } = useDataPlaneWorld(prefix, namespace, 'mbb/slot');

  const { serving, untilServing, measure } = dataPlaneProbes(harness, namespace, pass);

  it.each([
    ['pool algorithm', 'pool-swap', { [key('loadbalancer-pool-algorithm')]: 'least_connections' }],
    ['pool protocol', 'pool-swap', { [key('loadbalancer-pool-protocol')]: 'proxy' }],
    ['health monitor type', 'pool-swap', { [key('loadbalancer-health-monitor-type')]: 'http' }],
  ] as const)('%s: a pool swap; the outage measured stays within the prediction', async (title, impact, annotations) => {
    const name = uniqueName(title.replaceAll(' ', '-').slice(0, 10));
    const service = await serving(name);
    const before = poolOf(await theLb(harness, service), 'tcp/http').pool.uuid;
    const { predicted, measuredMs, intervals } = await measure(name, service, () =>
      patchService(namespace, name, { metadata: { annotations } }),
    );
    expect(predicted.impacts).toContain(impact);
    expect(predicted.seconds).toBe(45);
    expect(measuredMs, JSON.stringify(intervals)).toBeLessThanOrEqual(predicted.seconds * 1000);
    // The successor replaced the old pool: one pool, a new one.
    const after = await theLb(harness, service);
    expect(Object.keys(after.pools)).toEqual(['tcp/http']);
    expect(poolOf(after, 'tcp/http').pool.uuid).not.toBe(before);
  });

  it('port name: the renamed pool is swapped in; the port keeps serving but for the listener move', async () => {
    const name = uniqueName('rename');
    const service = await serving(name);
    const { predicted, measuredMs, intervals } = await measure(name, service, () =>
      patchService(namespace, name, { spec: { ports: [{ name: 'web', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: service.spec!.ports![0]!.nodePort }] } }),
    );
    expect(predicted.impacts).toContain('pool-swap');
    expect(measuredMs, JSON.stringify(intervals)).toBeLessThanOrEqual(predicted.seconds * 1000);
    expect(Object.keys((await theLb(harness, service)).pools)).toEqual(['tcp/web']);
  });

  it('node port: new members are added and healthy before the old ones go: no outage at all', async () => {
    const name = uniqueName('nodeport');
    const service = await serving(name);
    const oldPort = service.spec!.ports![0]!.nodePort!;
    const newPort = oldPort === 32000 ? 32001 : 32000;
    const { predicted, measuredMs, intervals, writes } = await measure(name, service, () =>
      patchService(namespace, name, { spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: newPort }] } }),
    );
    expect(predicted).toEqual({ seconds: 0, impacts: ['member-rotation'] });
    expect(measuredMs, JSON.stringify(intervals)).toBe(0);
    // Both new members were created before the first old one was deleted.
    const order = writes.map((w) => `${w.method} ${w.route}`);
    expect(order.lastIndexOf('POST /v1/load-balancers/pools/{uuid}/members')).toBeLessThan(order.indexOf('DELETE /v1/load-balancers/pools/{uuid}/members/{uuid}'));
    expect(memberNames(poolOf(await theLb(harness, service), 'tcp/http'))).toEqual([1, 2].map((i) => `${privateAddress(i)}:${newPort}`).sort());
  });

  it('externalTrafficPolicy Cluster → Local: a pool swap to members checked on the health-check port', async () => {
    const name = uniqueName('etp');
    const service = await serving(name);
    const { predicted, measuredMs, intervals } = await measure(name, service, () =>
      patchService(namespace, name, { spec: { externalTrafficPolicy: 'Local' } }),
    );
    expect(predicted.impacts).toContain('pool-swap');
    expect(measuredMs, JSON.stringify(intervals)).toBeLessThanOrEqual(predicted.seconds * 1000);
    const healthCheckNodePort = (await readService(namespace, name)).spec!.healthCheckNodePort!;
    const pool = poolOf(await theLb(harness, service), 'tcp/http');
    expect(pool.members.map((m) => m.monitor_port)).toEqual([healthCheckNodePort, healthCheckNodePort]);
    expect(pool.monitors[0]).toMatchObject({ type: 'http', http: { url_path: '/livez' } });
  });

  it('a swap stopped while it waits for the successor is finished by the next pass, never built twice', async () => {
    const name = uniqueName('stopped');
    const service = await serving(name);
    const lbUuid = (await theLb(harness, service)).lb.uuid;
    // Under Local the successor's members are checked on the health-check node port; it fails
    // here, so the pass waits for them, and is stopped while it waits.
    const healthCheckNodePort = (await patchService(namespace, name, { spec: { externalTrafficPolicy: 'Local' } })).spec!.healthCheckNodePort!;
    for (const i of [1, 2]) harness.sim.admin.setEndpointHealth(privateAddress(i), healthCheckNodePort, false);
    const abort = new AbortController();
    const logFrom = harness.sim.admin.requests().length;
    const stopped = runPass(harness, [name], { ...pass, abort: abort.signal });
    await waitFor(() => harness.sim.admin.requests().slice(logFrom).some((r) => r.method === 'POST' && r.route === '/v1/load-balancers/health-monitors'));
    abort.abort(new Error('stopped by the test'));
    const first = await stopped;
    expect(first.error).toBeDefined();
    const pools = async () => (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lbUuid);
    expect(await pools(), 'the old pool and its successor').toHaveLength(2);
    // The old pool kept serving throughout.
    expect(harness.sim.admin.serving(lbUuid).ports.find((p) => p.port === 80)!.intervals.at(-1)).toMatchObject({ serving: true, to: null });

    for (const i of [1, 2]) harness.sim.admin.setEndpointHealth(privateAddress(i), healthCheckNodePort, true);
    const next = await passOk(harness, [name], pass);
    const creates = writesTaken(next.simWrites).filter((w) => w.method === 'POST').map((w) => w.route);
    expect(creates, 'the next pass builds no second successor').toEqual(['/v1/load-balancers/listeners']);
    expect(await pools()).toHaveLength(1);
    const pool = poolOf(await theLb(harness, service), 'tcp/http');
    expect(pool.listeners).toHaveLength(1);
    expect(pool.members.map((m) => m.monitor_port)).toEqual([healthCheckNodePort, healthCheckNodePort]);
  });

  it('members that never come up: the pass fails after the wait, the old pool keeps serving, nothing is taken out of service', async () => {
    const name = uniqueName('never-up');
    const service = await serving(name);
    const lbUuid = (await theLb(harness, service)).lb.uuid;
    const since = Date.now();
    const healthCheckNodePort = (await patchService(namespace, name, { spec: { externalTrafficPolicy: 'Local' } })).spec!.healthCheckNodePort!;
    for (const i of [1, 2]) harness.sim.admin.setEndpointHealth(privateAddress(i), healthCheckNodePort, false);
    try {
      const failed = await passFails(harness, [name], pass);
      const message = String(failed.error.failures[0]?.error.message);
      expect(message).toMatch(/await-members .*did not pass their health checks within 22 s \(0 up, 2 down/);
      expect(failed.simWrites.filter((w) => w.route.startsWith('/v1/load-balancers/listeners'))).toEqual([]);
      const port80 = harness.sim.admin.serving(lbUuid, { since }).ports.find((p) => p.port === 80)!;
      expect(port80.intervals.at(-1)).toMatchObject({ serving: true, to: null });
      expect(port80.longestOutageMs, JSON.stringify(port80.intervals)).toBe(0);
    } finally {
      for (const i of [1, 2]) harness.sim.admin.setEndpointHealth(privateAddress(i), healthCheckNodePort, true);
    }
    const next = await passOk(harness, [name], pass);
    expect(writesTaken(next.simWrites).filter((w) => w.method === 'POST').map((w) => w.route), 'the successor is kept, not built again').toEqual(['/v1/load-balancers/listeners']);
    expect(poolOf(await theLb(harness, service), 'tcp/http').monitors[0]!.type).toBe('http');
  }, 60_000);

  it('a node leaving: its member is drained (tagged, disabled), deleted after the drain period; no outage', async () => {
    const name = uniqueName('drain');
    const service = await serving(name);
    const lbUuid = (await theLb(harness, service)).lb.uuid;
    const since = Date.now();
    const drained = { ...pass, drainSeconds: 2 };
    await patchService(namespace, name, { metadata: { annotations: { [key('loadbalancer-node-selector')]: 'mbb/slot=1' } } });
    const first = await passOk(harness, [name], drained);
    // Tagged and disabled in one PATCH.
    expect(first.simWrites.map((w) => `${w.method} ${w.route}`)).toEqual(['PATCH /v1/load-balancers/pools/{uuid}/members/{uuid}']);
    let pool = poolOf(await theLb(harness, service), 'tcp/http');
    const leaving = pool.members.find((m) => m.address === privateAddress(2))!;
    expect(leaving.enabled).toBe(false);
    expect(Date.parse(leaving.tags[MEMBER_DRAINING_TAG]!)).toBeGreaterThanOrEqual(since - 1000);
    // Within the drain period nothing more is written.
    expect((await passOk(harness, [name], drained)).simWrites).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const last = await passOk(harness, [name], drained);
    expect(last.simWrites.map((w) => `${w.method} ${w.route}`)).toEqual(['DELETE /v1/load-balancers/pools/{uuid}/members/{uuid}']);
    pool = poolOf(await theLb(harness, service), 'tcp/http');
    expect(pool.members.map((m) => m.address)).toEqual([privateAddress(1)]);
    await new Promise((resolve) => setTimeout(resolve, PROPAGATION_MS * 2));
    expect(harness.sim.admin.serving(lbUuid, { since }).ports.find((p) => p.port === 80)!.longestOutageMs).toBe(0);
  });

  it('a drained member whose node is selected again is enabled again and loses its tag', async () => {
    const name = uniqueName('return');
    const service = await serving(name);
    const drained = { ...pass, drainSeconds: 300 };
    await patchService(namespace, name, { metadata: { annotations: { [key('loadbalancer-node-selector')]: 'mbb/slot=1' } } });
    await passOk(harness, [name], drained);
    await patchService(namespace, name, { metadata: { annotations: { [key('loadbalancer-node-selector')]: null } } });
    const back = await passOk(harness, [name], drained);
    expect(back.simWrites.map((w) => `${w.method} ${w.route}`)).toEqual(['PATCH /v1/load-balancers/pools/{uuid}/members/{uuid}']);
    const member = poolOf(await theLb(harness, service), 'tcp/http').members.find((m) => m.address === privateAddress(2))!;
    expect(member.enabled).toBe(true);
    expect(member.tags[MEMBER_DRAINING_TAG]).toBeUndefined();
  });

  it('every node leaving: the last members keep serving, with a Warning, until a replacement exists', async () => {
    const name = uniqueName('last');
    const service = await serving(name);
    await patchService(namespace, name, { metadata: { annotations: { [key('loadbalancer-node-selector')]: 'nothing=matches' } } });
    const result = await passOk(harness, [name], { ...pass, drainSeconds: 60 });
    expect(result.simWrites).toEqual([]);
    expect(poolOf(await theLb(harness, service), 'tcp/http').members.filter((m) => m.enabled)).toHaveLength(2);
    expect(await warningsOf(service)).toContainEqual(expect.objectContaining({ reason: 'MembersKept' }));
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not reached within 10 s');
}
