// The simulator's data plane over HTTP, in real time: monitor_status as health checks see it,
// configuration that reaches the data plane late, and the serving history and probe that measure
// downtime. Timings are small (delay_s 1, propagation 300–500 ms, 1 s once) so the file runs in
// seconds.
// Each API call is bracketed by the test's clock, so a boundary the simulator recorded can be
// checked to lie within [before, after] of the call plus the modelled delay.

import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import type { DataPlaneChanges, SimulatorOptions } from '../../src/sim/index.js';
import { DEFAULT_WORLD, loadSeedFile, REAL_PROPAGATION, SimAdminError, startSimulator, WORLDS, type Simulator } from '../../src/sim/index.js';

let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(path.startsWith('http') ? path : `${sim!.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Runs an API call and gives the window in which the simulator took it. */
async function timed(method: string, path: string, body?: unknown): Promise<{ body: any; before: number; after: number }> {
  const before = Date.now();
  const answer = await call(method, path, body);
  const after = Date.now();
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  return { body: answer.body, before, after };
}

interface World {
  lb: { uuid: string; vip: string };
  pool: string;
  subnet: string;
  servers: { uuid: string; name: string; address: string }[];
}

/** A simulator with the example cloud, a running load balancer and one tcp pool. */
async function world(dataPlane: DataPlaneChanges, options: Omit<SimulatorOptions, 'seed' | 'dataPlane'> = {}): Promise<World> {
  // From the forgiving world, whatever the default: each test switches on the knobs it checks.
  sim = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), lbProvisionMs: 0, world: 'forgiving', dataPlane, ...options });
  const subnet = (await call('GET', '/v1/subnets')).body[0].uuid as string;
  const servers = ((await call('GET', '/v1/servers')).body as any[]).map((s) => ({
    uuid: s.uuid as string,
    name: s.name as string,
    address: s.interfaces[1].addresses[0].address as string,
  }));
  const lb = (await timed('POST', '/v1/load-balancers', { name: 'lb', flavor: 'lb-standard', zone: 'rma1' })).body;
  const pool = (await timed('POST', '/v1/load-balancers/pools', { name: 'p', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' })).body;
  return { lb: { uuid: lb.uuid, vip: lb.vip_addresses[0].address }, pool: pool.uuid, subnet, servers };
}

const addMember = (w: World, server: number, port = 30080) =>
  timed('POST', `/v1/load-balancers/pools/${w.pool}/members`, {
    name: w.servers[server]!.name,
    protocol_port: port,
    address: w.servers[server]!.address,
    subnet: w.subnet,
  });
const addListener = (w: World, port = 80) =>
  timed('POST', '/v1/load-balancers/listeners', { name: `tcp/${port}`, pool: w.pool, protocol: 'tcp', protocol_port: port });
const addMonitor = (w: World, timing: { delay_s: number; up_threshold: number; down_threshold: number }) =>
  timed('POST', '/v1/load-balancers/health-monitors', { pool: w.pool, type: 'tcp', timeout_s: 1, ...timing });
const memberStatus = async (href: string): Promise<string> => (await call('GET', href)).body.monitor_status;
const probe = (w: World, port = 80, source?: string) =>
  call('GET', `/_sim/probe?address=${w.lb.vip}&port=${port}&protocol=tcp${source === undefined ? '' : `&source=${source}`}`);
const lbStatus = async (w: World): Promise<string> => (await call('GET', `/v1/load-balancers/${w.lb.uuid}`)).body.status;

/** The port's intervals as epoch ms. */
function intervalsOf(w: World, port = 80, since?: number) {
  const ports = sim!.admin.serving(w.lb.uuid, { since }).ports;
  const found = ports.find((p) => p.protocol === 'tcp' && p.port === port)!;
  return {
    longestOutageMs: found.longestOutageMs,
    intervals: found.intervals.map((i) => ({ from: Date.parse(i.from), to: i.to === null ? null : Date.parse(i.to), serving: i.serving })),
  };
}

async function waitFor<T>(read: () => Promise<T>, wanted: T, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while ((await read()) !== wanted) {
    if (Date.now() - start > timeoutMs) throw new Error(`still not ${String(wanted)} after ${timeoutMs} ms`);
    await sleep(25);
  }
  return Date.now();
}

describe('health checks', () => {
  test('a new member is changing, then up after up_threshold × delay_s; the port serves from then on', async () => {
    const w = await world({ healthChecks: true });
    await addMonitor(w, { delay_s: 1, up_threshold: 2, down_threshold: 1 });
    const member = await addMember(w, 1);
    await addListener(w);
    expect(member.body.monitor_status).toBe('changing');
    expect((await probe(w)).status).toBe(503);
    await sleep(1000);
    expect(await memberStatus(member.body.href)).toBe('changing');
    const upSeen = await waitFor(() => memberStatus(member.body.href), 'up', 2000);
    expect(upSeen - member.before).toBeGreaterThanOrEqual(2000);
    const { intervals } = intervalsOf(w);
    expect(intervals).toHaveLength(2);
    expect(intervals[1]!.serving).toBe(true);
    expect(intervals[1]!.from).toBeGreaterThanOrEqual(member.before + 2000);
    expect(intervals[1]!.from).toBeLessThanOrEqual(member.after + 2000);
    expect((await probe(w)).body).toEqual({ served: true, member: { uuid: member.body.uuid, address: w.servers[1]!.address, protocol_port: 30080 } });
  });

  test('a stopped server stays up until down_threshold checks failed, then the port stops serving', async () => {
    const w = await world({ healthChecks: true });
    await addMonitor(w, { delay_s: 1, up_threshold: 1, down_threshold: 2 });
    const member = await addMember(w, 1);
    await addListener(w);
    await waitFor(() => memberStatus(member.body.href), 'up', 1500);
    const stoppedAt = Date.now();
    sim!.admin.stopServer(w.servers[1]!.uuid);
    expect(await memberStatus(member.body.href)).toBe('up');
    await waitFor(() => memberStatus(member.body.href), 'down', 3000);
    const { intervals, longestOutageMs } = intervalsOf(w);
    expect(intervals.map((i) => i.serving)).toEqual([false, true, false]);
    // Two failed checks: the first after the stop is at most 1 s later, the second 1 s after it.
    const downAt = intervals[2]!.from;
    expect(downAt - stoppedAt).toBeGreaterThan(1000);
    expect(downAt - stoppedAt).toBeLessThanOrEqual(2000 + 50);
    expect(longestOutageMs).toBeGreaterThanOrEqual(Date.now() - downAt - 50);
    expect(await probe(w)).toEqual({ status: 503, body: { served: false, reason: 'the tcp listener on port 80 has no enabled member that is up in the data plane' } });
  });

  test('errorWhilePoolDown: the load balancer shows error while its monitored pool has only down members', async () => {
    const w = await world({ healthChecks: true, errorWhilePoolDown: true });
    await addMonitor(w, { delay_s: 1, up_threshold: 1, down_threshold: 1 });
    const member = await addMember(w, 1);
    await waitFor(() => memberStatus(member.body.href), 'up', 1500);
    const lbStatus = async (): Promise<string> => (await call('GET', `/v1/load-balancers/${w.lb.uuid}`)).body.status;
    expect(await lbStatus()).toBe('running');
    sim!.admin.stopServer(w.servers[1]!.uuid);
    await waitFor(lbStatus, 'error', 1500);
    expect(await memberStatus(member.body.href)).toBe('down');
    sim!.admin.startServer(w.servers[1]!.uuid);
    await waitFor(lbStatus, 'running', 1500);
  });

  test('an endpoint marked failing over HTTP (externalTrafficPolicy Local without endpoints) goes down; cleared, it comes back', async () => {
    const w = await world({ healthChecks: true });
    await addMonitor(w, { delay_s: 1, up_threshold: 1, down_threshold: 1 });
    const member = await addMember(w, 2);
    await addListener(w);
    await waitFor(() => memberStatus(member.body.href), 'up', 1500);
    const mark = { address: w.servers[2]!.address, port: 30080, healthy: false };
    expect((await call('PUT', '/_sim/endpoint-health', mark)).status).toBe(204);
    expect((await call('GET', '/_sim/endpoint-health')).body).toEqual({ failing: [{ address: mark.address, port: 30080 }] });
    await waitFor(() => memberStatus(member.body.href), 'down', 1500);
    expect((await call('PUT', '/_sim/endpoint-health', { ...mark, healthy: true })).status).toBe(204);
    await waitFor(() => memberStatus(member.body.href), 'up', 1500);
    expect(intervalsOf(w).intervals.map((i) => i.serving)).toEqual([false, true, false, true]);
  });
});

describe('propagation', () => {
  test('a new listener serves propagationMs after the API answered; the API shows it at once', async () => {
    const w = await world({ propagationMs: 500 });
    const member = await addMember(w, 0);
    expect(member.body.monitor_status).toBe('no_monitor');
    const listener = await addListener(w);
    expect((await call('GET', listener.body.href)).status).toBe(200);
    expect(await probe(w)).toEqual({ status: 503, body: { served: false, reason: 'the data plane has no tcp listener on port 80 (none in the API, or not propagated yet)' } });
    await sleep(listener.after + 500 - Date.now() + 20);
    expect((await probe(w)).status).toBe(200);
    const { intervals } = intervalsOf(w);
    expect(intervals[1]!.from).toBeGreaterThanOrEqual(listener.before + 500);
    expect(intervals[1]!.from).toBeLessThanOrEqual(listener.after + 500);
  });

  test('a monitored member created with propagation is changing until it reached the data plane, with instant checks then up', async () => {
    const w = await world({ propagationMs: 300 });
    await addMonitor(w, { delay_s: 5, up_threshold: 3, down_threshold: 3 });
    const member = await addMember(w, 0);
    expect(member.body.monitor_status).toBe('changing');
    await sleep(member.after + 300 - Date.now() + 20);
    expect(await memberStatus(member.body.href)).toBe('up');
  });

  test('deleting and re-creating a listener is an outage as long as the gap between the calls, shifted by the propagation', async () => {
    const w = await world({ propagationMs: 300 });
    await addMember(w, 0);
    const first = await addListener(w);
    await sleep(first.after + 300 - Date.now() + 50);
    const removed = await timed('DELETE', first.body.href);
    await sleep(500);
    const again = await addListener(w);
    await sleep(again.after + 300 - Date.now() + 50);
    expect((await probe(w)).status).toBe(200);
    const { intervals, longestOutageMs } = intervalsOf(w);
    expect(intervals.map((i) => i.serving)).toEqual([false, true, false, true]);
    const outage = intervals[2]!;
    expect(outage.from).toBeGreaterThanOrEqual(removed.before + 300);
    expect(outage.from).toBeLessThanOrEqual(removed.after + 300);
    expect(outage.to!).toBeGreaterThanOrEqual(again.before + 300);
    expect(outage.to!).toBeLessThanOrEqual(again.after + 300);
    expect(longestOutageMs).toBe(outage.to! - outage.from);
    expect(longestOutageMs).toBeGreaterThanOrEqual(again.before - removed.after);
    expect(longestOutageMs).toBeLessThanOrEqual(again.after - removed.before);
  });

  test('a disabled member stops serving once the PATCH reached the data plane; a listener port PATCH moves the serving port', async () => {
    const w = await world({ propagationMs: 300 });
    const a = await addMember(w, 0);
    const b = await addMember(w, 1);
    const listener = await addListener(w);
    await sleep(listener.after + 300 - Date.now() + 20);
    const picked = [];
    for (let i = 0; i < 4; i++) picked.push((await probe(w)).body.member.uuid);
    expect(picked).toEqual([a.body.uuid, b.body.uuid, a.body.uuid, b.body.uuid]);
    await timed('PATCH', a.body.href, { enabled: false });
    expect((await call('GET', a.body.href)).body.enabled).toBe(false);
    await sleep(350);
    for (let i = 0; i < 3; i++) expect((await probe(w)).body.member.uuid).toBe(b.body.uuid);
    const disabled = await timed('PATCH', b.body.href, { enabled: false });
    await sleep(disabled.after + 300 - Date.now() + 20);
    expect((await probe(w)).body.reason).toBe('the tcp listener on port 80 has no enabled member in the data plane');
    const { intervals } = intervalsOf(w);
    expect(intervals.map((i) => i.serving)).toEqual([false, true, false]);
    expect(intervals[2]!.from).toBeGreaterThanOrEqual(disabled.before + 300);

    await timed('PATCH', b.body.href, { enabled: true });
    const moved = await timed('PATCH', listener.body.href, { protocol_port: 8080 });
    await sleep(moved.after + 300 - Date.now() + 20);
    expect((await probe(w, 80)).status).toBe(503);
    expect((await probe(w, 8080)).status).toBe(200);
    expect(intervalsOf(w, 8080).intervals.map((i) => i.serving)).toEqual([false, true]);
  });
});

describe('deletes that hold until they reached the data plane (deletesHoldUntilPropagated)', () => {
  test('a listener port, a member address and port, a pool monitor are refused until the delete propagated, then free', async () => {
    // 1 s, so that the refused calls surely come before the deletes propagated, even on a busy machine.
    const w = await world({ propagationMs: 1000, deletesHoldUntilPropagated: true });
    const member = await addMember(w, 0);
    const listener = await addListener(w);
    const monitor = await addMonitor(w, { delay_s: 1, up_threshold: 1, down_threshold: 1 });
    await sleep(monitor.after + 1000 - Date.now() + 20);
    await timed('DELETE', listener.body.href);
    await timed('DELETE', member.body.href);
    const lastDeleted = await timed('DELETE', monitor.body.href);
    const listenerBody = { name: 'again', pool: w.pool, protocol: 'tcp', protocol_port: 80 };
    expect(await call('POST', '/v1/load-balancers/listeners', listenerBody)).toEqual({
      status: 400,
      body: { protocol_port: "The load balancer's tcp listener on port 80 is still being deleted or moved; try again later." },
    });
    const memberBody = { name: 'again', protocol_port: 30080, address: w.servers[0]!.address, subnet: w.subnet };
    expect(await call('POST', `/v1/load-balancers/pools/${w.pool}/members`, memberBody)).toEqual({
      status: 400,
      body: { detail: `A member with address ${w.servers[0]!.address} and protocol_port 30080 is still being deleted from the pool; try again later.` },
    });
    expect((await call('POST', '/v1/load-balancers/health-monitors', { pool: w.pool, type: 'tcp' })).body).toEqual({
      pool: "This pool's previous health monitor is still being deleted; try again later.",
    });
    // Another port is free at once, and a port a listener moved away from is held too.
    const other = await addListener(w, 443);
    expect((await call('PATCH', other.body.href, { protocol_port: 80 })).status).toBe(400);
    await sleep(lastDeleted.after + 1000 - Date.now() + 20);
    expect((await call('POST', '/v1/load-balancers/listeners', listenerBody)).status).toBe(201);
    expect((await call('POST', `/v1/load-balancers/pools/${w.pool}/members`, memberBody)).status).toBe(201);
    expect((await call('POST', '/v1/load-balancers/health-monitors', { pool: w.pool, type: 'tcp' })).status).toBe(201);
  });

  test('without the switch a delete frees the port at once, as before', async () => {
    const w = await world({ propagationMs: 300 });
    await addMember(w, 0);
    const listener = await addListener(w);
    await timed('DELETE', listener.body.href);
    expect((await call('POST', '/v1/load-balancers/listeners', { name: 'again', pool: w.pool, protocol: 'tcp', protocol_port: 80 })).status).toBe(201);
  });
});

describe('the serving history and the probe', () => {
  test('serving merges intervals, answers the same over HTTP, honours since, and counts the longest outage after the first serving', async () => {
    const w = await world({});
    const member = await addMember(w, 0);
    await sleep(100); // not serving yet: no listener; this wait is no outage
    await addListener(w);
    await sleep(50);
    await timed('PATCH', member.body.href, { name: 'renamed' }); // no change of the data plane, no new interval
    const disabled = await timed('PATCH', member.body.href, { enabled: false });
    await sleep(200);
    const enabled = await timed('PATCH', member.body.href, { enabled: true });
    await sleep(50);
    const inProcess = sim!.admin.serving(w.lb.uuid);
    const port = inProcess.ports[0]!;
    expect(port.intervals.map((i) => i.serving)).toEqual([false, true, false, true]);
    expect(port.longestOutageMs).toBeGreaterThanOrEqual(enabled.before - disabled.after);
    expect(port.longestOutageMs).toBeLessThanOrEqual(enabled.after - disabled.before);
    const overHttp = await call('GET', `/_sim/load-balancers/${w.lb.uuid}/serving`);
    expect(overHttp.status).toBe(200);
    expect(overHttp.body.ports[0].intervals).toEqual(port.intervals);
    expect(overHttp.body.ports[0].longestOutageMs).toBe(port.longestOutageMs);

    const since = await call('GET', `/_sim/load-balancers/${w.lb.uuid}/serving?since=${enabled.after}`);
    expect(since.body).toEqual({
      ports: [{ protocol: 'tcp', port: 80, intervals: [{ from: new Date(enabled.after).toISOString(), to: null, serving: true }], longestOutageMs: 0 }],
    });
    const sinceIso = await call('GET', `/_sim/load-balancers/${w.lb.uuid}/serving?since=${new Date(enabled.after).toISOString()}`);
    expect(sinceIso.body).toEqual(since.body);
    expect((await call('GET', `/_sim/load-balancers/${w.lb.uuid}/serving?since=yesterday`)).status).toBe(400);
    expect(await call('GET', '/_sim/load-balancers/11111111-2222-4333-8444-555555555555/serving')).toEqual({
      status: 404,
      body: { detail: 'no simulated load balancer has uuid 11111111-2222-4333-8444-555555555555' },
    });
  });

  test('the probe answers 200 with a member, 503 with the reason, 400 for a malformed question', async () => {
    const w = await world({});
    expect(await call('GET', '/_sim/probe?address=192.0.2.99&port=80')).toEqual({
      status: 503,
      body: { served: false, reason: 'no load balancer has the address 192.0.2.99' },
    });
    expect((await probe(w)).body.reason).toBe('the data plane has no tcp listener on port 80 (none in the API, or not propagated yet)');
    await addListener(w);
    expect((await probe(w)).body.reason).toBe('the tcp listener on port 80 has no enabled member in the data plane');
    const member = await addMember(w, 2);
    expect(await call('GET', `/_sim/probe?address=${w.lb.vip}&port=80`)).toEqual({
      status: 200,
      body: { served: true, member: { uuid: member.body.uuid, address: w.servers[2]!.address, protocol_port: 30080 } },
    });
    expect((await call('GET', `/_sim/probe?address=${w.lb.vip}&port=80&protocol=udp`)).status).toBe(503);
    expect((await call('GET', `/_sim/probe?address=${w.lb.vip}`)).status).toBe(400);
    expect((await call('GET', `/_sim/probe?address=${w.lb.vip}&port=http`)).status).toBe(400);
    expect((await call('GET', `/_sim/probe?address=not-an-ip&port=80`)).status).toBe(400);
    // A deleted load balancer serves nothing any more; its history stays readable.
    await timed('DELETE', `/v1/load-balancers/${w.lb.uuid}`);
    expect((await probe(w)).body.reason).toBe(`no load balancer has the address ${w.lb.vip}`);
    expect(intervalsOf(w).intervals.map((i) => i.serving)).toEqual([false, true, false]);
  });

  test('timings come from the seed, startSimulator overrides them, and the admin API changes them', async () => {
    const seed = { ...(await loadSeedFile('examples/sim-seed.yaml')), dataPlane: { propagationMs: 15000, healthChecks: true } };
    sim = await startSimulator({ seed, world: 'forgiving', dataPlane: { propagationMs: 200 } });
    expect(sim.admin.dataPlane()).toEqual({ propagationMs: 200, healthChecks: true, deletesHoldUntilPropagated: false, errorWhilePoolDown: false });
    expect(await call('PATCH', '/_sim/data-plane', { healthChecks: false })).toEqual({
      status: 200,
      body: { propagationMs: 200, healthChecks: false, deletesHoldUntilPropagated: false, errorWhilePoolDown: false },
    });
    expect(await call('PATCH', '/_sim/data-plane', { propagationMs: -5 })).toEqual({
      status: 400,
      body: { detail: 'dataPlane.propagationMs: expected milliseconds from 0 to 3600000, got -5' },
    });
    expect((await call('GET', '/_sim/data-plane')).body).toEqual({ propagationMs: 200, healthChecks: false, deletesHoldUntilPropagated: false, errorWhilePoolDown: false });
    await expect(startSimulator({ dataPlane: { propagationMs: Number.NaN } })).rejects.toThrow('dataPlane.propagationMs');
  });
});

describe('propagation per kind of change', () => {
  test('a new port waits newListener, a re-created listener listener, allowed_cidrs allowedCidrs; the API shows each at once', async () => {
    const w = await world({ propagationMs: { newListener: 600, listener: 300, allowedCidrs: 500, member: 0, monitor: 0, delete: 0 } });
    await addMember(w, 0);
    const first = await addListener(w);
    await sleep(first.after + 600 - Date.now() + 30);
    expect((await probe(w)).status).toBe(200);
    const removed = await timed('DELETE', first.body.href);
    const again = await addListener(w);
    expect((await call('GET', again.body.href)).status).toBe(200);
    await sleep(again.after + 300 - Date.now() + 30);
    expect((await probe(w)).status).toBe(200);
    const { intervals } = intervalsOf(w);
    expect(intervals.map((i) => i.serving)).toEqual([false, true, false, true]);
    expect(intervals[1]!.from).toBeGreaterThanOrEqual(first.before + 600);
    expect(intervals[1]!.from).toBeLessThanOrEqual(first.after + 600);
    expect(intervals[2]!.from).toBeGreaterThanOrEqual(removed.before);
    expect(intervals[2]!.from).toBeLessThanOrEqual(removed.after);
    expect(intervals[3]!.from).toBeGreaterThanOrEqual(again.before + 300);
    expect(intervals[3]!.from).toBeLessThanOrEqual(again.after + 300);

    const narrowed = await timed('PATCH', again.body.href, { allowed_cidrs: ['192.0.2.0/24'] });
    expect((await call('GET', again.body.href)).body.allowed_cidrs).toEqual(['192.0.2.0/24']);
    expect((await probe(w, 80, '198.51.100.7')).status).toBe(200);
    await sleep(narrowed.after + 500 - Date.now() + 30);
    expect(await probe(w, 80, '198.51.100.7')).toEqual({
      status: 503,
      body: { served: false, reason: 'the tcp listener on port 80 does not allow 198.51.100.7 (allowed_cidrs 192.0.2.0/24)' },
    });
    expect((await probe(w, 80, '192.0.2.9')).status).toBe(200);
    expect((await probe(w, 80)).status).toBe(200);
    expect((await call('GET', `/_sim/probe?address=${w.lb.vip}&port=80&source=nowhere`)).body).toEqual({ detail: 'probe: source "nowhere" is not an IP address' });
  });

  test('a member change waits member: a disabled member takes new connections until then', async () => {
    const w = await world({ propagationMs: { newListener: 0, listener: 0, allowedCidrs: 0, member: 400, monitor: 0, delete: 0 } });
    const a = await addMember(w, 0);
    await addListener(w);
    await sleep(a.after + 400 - Date.now() + 30);
    const disabled = await timed('PATCH', a.body.href, { enabled: false });
    expect((await probe(w)).status).toBe(200);
    await sleep(disabled.after + 400 - Date.now() + 30);
    expect((await probe(w)).status).toBe(503);
    const { intervals } = intervalsOf(w);
    expect(intervals[2]!.from).toBeGreaterThanOrEqual(disabled.before + 400);
    expect(intervals[2]!.from).toBeLessThanOrEqual(disabled.after + 400);
  });
});

describe('worlds and the time scale', () => {
  test('strict at time scale 0.01: the real delays, monitors and provisioning, 100 times faster', async () => {
    sim = await startSimulator({ seed: await loadSeedFile('examples/sim-seed.yaml'), world: 'strict', timeScale: 0.01 });
    expect(sim.admin.world()).toEqual({ world: 'strict', timeScale: 0.01 });
    expect((await call('GET', '/_sim/world')).body).toEqual({ world: 'strict', timeScale: 0.01 });
    expect(sim.admin.dataPlane()).toEqual({ propagationMs: REAL_PROPAGATION, healthChecks: true, deletesHoldUntilPropagated: true, errorWhilePoolDown: true });
    const subnet = (await call('GET', '/v1/subnets')).body[0].uuid as string;
    const server = (await call('GET', '/v1/servers')).body[0];
    // 2 s of provisioning take 20 ms.
    const lb = await timed('POST', '/v1/load-balancers', { name: 'lb', flavor: 'lb-standard', zone: 'rma1' });
    expect(lb.body.status).toBe('changing');
    await sleep(lb.after + 20 - Date.now() + 10);
    expect((await call('GET', lb.body.href)).body.status).toBe('running');
    const pool = (await timed('POST', '/v1/load-balancers/pools', { name: 'p', load_balancer: lb.body.uuid, algorithm: 'round_robin', protocol: 'tcp' })).body;
    // delay_s 2 → checks every 20 ms; the member reaches the data plane after 50 ms, up two checks later.
    await timed('POST', '/v1/load-balancers/health-monitors', { pool: pool.uuid, type: 'tcp', delay_s: 2, up_threshold: 2, down_threshold: 3 });
    const member = await timed('POST', `/v1/load-balancers/pools/${pool.uuid}/members`, {
      name: 'm',
      protocol_port: 30080,
      address: server.interfaces[1].addresses[0].address,
      subnet,
    });
    // A new port serves 30 s × 0.01 after its listener was created, by then the member is up.
    const listener = await timed('POST', '/v1/load-balancers/listeners', { name: 'l', pool: pool.uuid, protocol: 'tcp', protocol_port: 80 });
    await waitFor(() => memberStatus(member.body.href), 'up', 2000);
    const upSeen = Date.now();
    expect(upSeen - member.before).toBeGreaterThanOrEqual(50 + 2 * 20);
    await sleep(listener.after + 300 - Date.now() + 30);
    const intervals = sim.admin.serving(lb.body.uuid).ports[0]!.intervals;
    expect(intervals.map((i) => i.serving)).toEqual([false, true]);
    expect(Date.parse(intervals[1]!.from)).toBeGreaterThanOrEqual(listener.before + 300);
    expect(Date.parse(intervals[1]!.from)).toBeLessThanOrEqual(listener.after + 300);
  });

  test('strict: error while every member of a pool is down (by its own monitor), running again once one is up', async () => {
    const w = await world({}, { world: 'strict', timeScale: 0.01 });
    await addMonitor(w, { delay_s: 2, up_threshold: 2, down_threshold: 3 });
    const a = await addMember(w, 0);
    const b = await addMember(w, 1);
    await addListener(w);
    await waitFor(() => memberStatus(a.body.href), 'up', 2000);
    await waitFor(() => memberStatus(b.body.href), 'up', 2000);
    expect(await lbStatus(w)).toBe('running');
    sim!.admin.stopServer(w.servers[0]!.uuid);
    await waitFor(() => memberStatus(a.body.href), 'down', 2000);
    expect(await lbStatus(w)).toBe('running');
    sim!.admin.stopServer(w.servers[1]!.uuid);
    await waitFor(() => lbStatus(w), 'error', 2000);
    expect(await memberStatus(b.body.href)).toBe('down');
    // Changes are still taken in error: they are the way out.
    expect((await call('PATCH', a.body.href, { name: 'renamed' })).status).toBe(204);
    sim!.admin.startServer(w.servers[1]!.uuid);
    await waitFor(() => lbStatus(w), 'running', 2000);
    expect(await memberStatus(b.body.href)).toBe('up');
  });

  test('strict: a pool deleted and created anew serves 45 s after its listener, a listener re-created on its pool 15 s after', async () => {
    // At time scale 0.01: 45 s take 450 ms, 15 s 150 ms, a delete settles in 20 ms.
    const w = await world({}, { world: 'strict', timeScale: 0.01 });
    const monitorTiming = { delay_s: 2, up_threshold: 2, down_threshold: 3 };
    await addMonitor(w, monitorTiming);
    await addMember(w, 0);
    const first = await addListener(w);
    await sleep(first.after + 300 - Date.now() + 30);
    expect((await probe(w)).status).toBe(200);

    // The Go CCM's algorithm change: delete the pool (its listener goes with it), then a new
    // pool with its member, monitor and listener, once the port is free.
    const deleted = await timed('DELETE', `/v1/load-balancers/pools/${w.pool}`);
    await sleep(deleted.after + 20 - Date.now() + 30);
    const pool = (await timed('POST', '/v1/load-balancers/pools', { name: 'p2', load_balancer: w.lb.uuid, algorithm: 'least_connections', protocol: 'tcp' })).body;
    w.pool = pool.uuid;
    await addMember(w, 0);
    await addMonitor(w, monitorTiming);
    const onNewPool = await addListener(w);
    await sleep(onNewPool.after + 450 - Date.now() + 30);
    expect((await probe(w)).status).toBe(200);

    // A listener re-created on the pool that stays: the shorter re-creation.
    const listenerDeleted = await timed('DELETE', onNewPool.body.href);
    await sleep(listenerDeleted.after + 20 - Date.now() + 30);
    const onSamePool = await addListener(w);
    await sleep(onSamePool.after + 150 - Date.now() + 30);
    expect((await probe(w)).status).toBe(200);

    const { intervals } = intervalsOf(w);
    expect(intervals.map((i) => i.serving)).toEqual([false, true, false, true, false, true]);
    expect(intervals[3]!.from).toBeGreaterThanOrEqual(onNewPool.before + 450);
    expect(intervals[3]!.from).toBeLessThanOrEqual(onNewPool.after + 450);
    expect(intervals[5]!.from).toBeGreaterThanOrEqual(onSamePool.before + 150);
    expect(intervals[5]!.from).toBeLessThanOrEqual(onSamePool.after + 150);
  });

  test('strict: a deleted member settles before its address and port are free again (400), then they are', async () => {
    // 5 s × 0.1: the re-create right after the delete surely comes before it settled.
    const w = await world({}, { world: 'strict', timeScale: 0.1 });
    const member = await addMember(w, 0);
    await sleep(member.after + 500 - Date.now() + 30);
    const removed = await timed('DELETE', member.body.href);
    const again = await call('POST', `/v1/load-balancers/pools/${w.pool}/members`, {
      name: 'again',
      protocol_port: 30080,
      address: w.servers[0]!.address,
      subnet: w.subnet,
    });
    expect(again).toEqual({
      status: 400,
      body: { detail: `A member with address ${w.servers[0]!.address} and protocol_port 30080 is still being deleted from the pool; try again later.` },
    });
    await sleep(removed.after + 500 - Date.now() + 30);
    expect((await addMember(w, 0)).body.name).toBe(w.servers[0]!.name);
  });

  test('the seed and the options change single settings over the world; the default world is DEFAULT_WORLD', async () => {
    const seed = { ...(await loadSeedFile('examples/sim-seed.yaml')), dataPlane: { healthChecks: false } };
    sim = await startSimulator({ seed, world: 'strict', dataPlane: { propagationMs: { member: 0 } } });
    expect(sim.admin.dataPlane()).toEqual({
      propagationMs: { ...REAL_PROPAGATION, member: 0 },
      healthChecks: false,
      deletesHoldUntilPropagated: true,
      errorWhilePoolDown: true,
    });
    expect(sim.admin.setDataPlane({ propagationMs: { delete: 7 } }).propagationMs).toEqual({ ...REAL_PROPAGATION, member: 0, delete: 7 });
    expect(await call('PATCH', '/_sim/data-plane', { propagationMs: { deletes: 1 } })).toEqual({
      status: 400,
      body: { detail: 'dataPlane.propagationMs: unknown kind "deletes" (expected one of: newListener, listener, newPool, allowedCidrs, member, monitor, delete)' },
    });
    await sim.stop();
    sim = await startSimulator();
    expect(sim.admin.world()).toEqual({ world: DEFAULT_WORLD, timeScale: 1 });
    expect(sim.admin.dataPlane()).toEqual(WORLDS[DEFAULT_WORLD].dataPlane);
    expect(sim.admin.behaviour()).toEqual(WORLDS[DEFAULT_WORLD].behaviour);
    await expect(startSimulator({ world: 'real' as 'strict' })).rejects.toThrow('world: "real" is no world of the simulator (expected one of: strict, forgiving)');
    await expect(startSimulator({ timeScale: 0 })).rejects.toThrow(SimAdminError);
    await expect(startSimulator({ timeScale: 0 })).rejects.toThrow('timeScale: expected a number from 0.001 to 100, got 0');
  });
});

describe('open connections', () => {
  test('survive a disable and a delete of their member; close on listener delete, server stop, or by the client', async () => {
    const w = await world({});
    const a = await addMember(w, 0);
    const b = await addMember(w, 1);
    const listener = await addListener(w);
    const open = async () => call('POST', `/_sim/connections?address=${w.lb.vip}&port=80`);
    const first = await open();
    const second = await open();
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: 'c1', protocol: 'tcp', port: 80, member: { uuid: a.body.uuid }, open: true, closedAt: null, closedReason: null });
    expect(second.body.member.uuid).toBe(b.body.uuid);

    await timed('PATCH', a.body.href, { enabled: false });
    await timed('DELETE', b.body.href);
    expect((await probe(w)).status).toBe(503);
    expect((await call('GET', '/_sim/connections/c1')).body.open).toBe(true);
    expect((await call('GET', '/_sim/connections/c2')).body.open).toBe(true);
    expect(await open()).toEqual({ status: 503, body: { opened: false, reason: 'the tcp listener on port 80 has no enabled member in the data plane' } });

    const c = await addMember(w, 2);
    const third = await open();
    expect(third.body.member.uuid).toBe(c.body.uuid);
    sim!.admin.stopServer(w.servers[2]!.uuid);
    expect(sim!.admin.connection(third.body.id)).toMatchObject({ open: false, closedReason: `the server with address ${w.servers[2]!.address} stopped running` });

    expect((await call('DELETE', '/_sim/connections/c1')).status).toBe(204);
    await timed('DELETE', listener.body.href);
    expect(sim!.admin.connections().map((x) => [x.id, x.open, x.closedReason])).toEqual([
      ['c1', false, 'closed by the client'],
      ['c2', false, 'the tcp listener on port 80 was deleted'],
      [third.body.id, false, `the server with address ${w.servers[2]!.address} stopped running`],
    ]);
    expect(await call('GET', '/_sim/connections/c99')).toEqual({ status: 404, body: { detail: 'no simulated connection has id c99' } });
  });
});
