// The simulator's data plane: health-check arithmetic, serving intervals and outages, and the
// model itself driven by an injected clock (no HTTP, no waiting).

import { describe, expect, it } from 'vitest';
import { DataPlane } from '../../src/sim/dataplane.js';
import { DEFAULT_DATA_PLANE, readDataPlaneTimings, type DataPlaneTimings } from '../../src/sim/dataplane-timings.js';
import {
  applyChecks,
  checksBetween,
  longestOutageMs,
  nextStatusChange,
  servingIntervals,
  type CheckCounters,
  type Transition,
} from '../../src/sim/health-checks.js';
import { parseIp } from '../../src/sim/net.js';
import { validateSeed } from '../../src/sim/seed.js';
import { WORLDS } from '../../src/sim/world.js';

const timing = { delayMs: 1000, upThreshold: 2, downThreshold: 3 };
const fresh: CheckCounters = { status: 'changing', ok: 0, failed: 0 };

describe('checksBetween: checks at anchor + k × delay, k ≥ 1, counted in (from, to]', () => {
  it.each([
    { anchor: 0, from: 0, to: 999, expected: 0 },
    { anchor: 0, from: 0, to: 1000, expected: 1 },
    { anchor: 0, from: 1000, to: 1000, expected: 0 },
    { anchor: 0, from: 1000, to: 3500, expected: 2 },
    { anchor: 500, from: 500, to: 2500, expected: 2 },
    { anchor: 500, from: 0, to: 1499, expected: 0 },
    { anchor: 0, from: 2000, to: 1000, expected: 0 },
  ])('anchor $anchor, ($from, $to] → $expected', ({ anchor, from, to, expected }) => {
    expect(checksBetween(anchor, 1000, from, to)).toBe(expected);
  });
});

describe('applyChecks: consecutive successes and failures against the thresholds', () => {
  it.each<{ name: string; start: CheckCounters; count: number; healthy: boolean; expected: CheckCounters }>([
    { name: 'one success is not enough for up_threshold 2', start: fresh, count: 1, healthy: true, expected: { status: 'changing', ok: 1, failed: 0 } },
    { name: 'two successes: up', start: fresh, count: 2, healthy: true, expected: { status: 'up', ok: 2, failed: 0 } },
    { name: 'a failure resets the successes', start: { status: 'changing', ok: 1, failed: 0 }, count: 1, healthy: false, expected: { status: 'changing', ok: 0, failed: 1 } },
    { name: 'up stays up below down_threshold', start: { status: 'up', ok: 5, failed: 0 }, count: 2, healthy: false, expected: { status: 'up', ok: 0, failed: 2 } },
    { name: 'three failures: down', start: { status: 'up', ok: 5, failed: 0 }, count: 3, healthy: false, expected: { status: 'down', ok: 0, failed: 3 } },
    { name: 'a new member that fails goes down', start: fresh, count: 3, healthy: false, expected: { status: 'down', ok: 0, failed: 3 } },
    { name: 'no checks change nothing', start: fresh, count: 0, healthy: false, expected: fresh },
  ])('$name', ({ start, count, healthy, expected }) => {
    expect(applyChecks(start, count, healthy, timing)).toEqual(expected);
  });
});

describe('nextStatusChange: the check that reaches the threshold', () => {
  it.each<{ name: string; counters: CheckCounters; healthy: boolean; anchor: number; now: number; expected: number | undefined }>([
    { name: 'new and healthy: up at anchor + 2 delays', counters: fresh, healthy: true, anchor: 10_000, now: 10_000, expected: 12_000 },
    { name: 'one success counted, between checks', counters: { status: 'changing', ok: 1, failed: 0 }, healthy: true, anchor: 0, now: 1500, expected: 2000 },
    { name: 'up and healthy: no change', counters: { status: 'up', ok: 2, failed: 0 }, healthy: true, anchor: 0, now: 5000, expected: undefined },
    { name: 'up and failing from 2.5 s: down at the third failed check', counters: { status: 'up', ok: 2, failed: 0 }, healthy: false, anchor: 0, now: 2500, expected: 5000 },
    { name: 'down and failing: no change', counters: { status: 'down', ok: 0, failed: 3 }, healthy: false, anchor: 0, now: 9000, expected: undefined },
    { name: 'on a check time: the next one counts', counters: fresh, healthy: true, anchor: 0, now: 1000, expected: 3000 },
  ])('$name', ({ counters, healthy, anchor, now, expected }) => {
    expect(nextStatusChange(counters, healthy, anchor, now, timing)).toBe(expected);
  });
});

const history: Transition[] = [
  { at: 0, serving: false },
  { at: 100, serving: true },
  { at: 300, serving: false },
  { at: 350, serving: true },
  { at: 500, serving: false },
  { at: 900, serving: true },
];

describe('servingIntervals and longestOutageMs', () => {
  it.each([
    {
      name: 'the whole history',
      since: 0,
      now: 1000,
      intervals: [
        { from: 0, to: 100, serving: false },
        { from: 100, to: 300, serving: true },
        { from: 300, to: 350, serving: false },
        { from: 350, to: 500, serving: true },
        { from: 500, to: 900, serving: false },
        { from: 900, to: null, serving: true },
      ],
      outage: 400,
    },
    {
      name: 'since inside an interval clips it',
      since: 320,
      now: 1000,
      intervals: [
        { from: 320, to: 350, serving: false },
        { from: 350, to: 500, serving: true },
        { from: 500, to: 900, serving: false },
        { from: 900, to: null, serving: true },
      ],
      outage: 400,
    },
    {
      name: 'an outage going on counts up to now',
      since: 0,
      now: 700,
      intervals: [
        { from: 0, to: 100, serving: false },
        { from: 100, to: 300, serving: true },
        { from: 300, to: 350, serving: false },
        { from: 350, to: 500, serving: true },
        { from: 500, to: null, serving: false },
      ],
      outage: 200,
    },
    { name: 'since after now: nothing', since: 2000, now: 1000, intervals: [], outage: 0 },
    { name: 'since before the creation starts at the creation', since: -50, now: 50, intervals: [{ from: 0, to: null, serving: false }], outage: 0 },
  ])('$name', ({ since, now, intervals, outage }) => {
    expect(servingIntervals(history, since, now)).toEqual(intervals);
    expect(longestOutageMs(history, since, now)).toBe(outage);
  });

  it('merges adjacent equal states and does not count the wait before the first serving as an outage', () => {
    const transitions: Transition[] = [
      { at: 0, serving: false },
      { at: 50, serving: false },
      { at: 5000, serving: true },
      { at: 6000, serving: true },
    ];
    expect(servingIntervals(transitions, 0, 7000)).toEqual([
      { from: 0, to: 5000, serving: false },
      { from: 5000, to: null, serving: true },
    ]);
    expect(longestOutageMs(transitions, 0, 7000)).toBe(0);
  });

  it('an outage that began before since, after the port first served, counts from since', () => {
    expect(longestOutageMs(history, 600, 1000)).toBe(300);
  });
});

describe('readDataPlaneTimings', () => {
  const base = DEFAULT_DATA_PLANE;
  it.each([
    { value: { propagationMs: 15000, healthChecks: true }, timings: { ...base, propagationMs: 15000, healthChecks: true }, problems: [] },
    { value: { healthChecks: true }, timings: { ...base, healthChecks: true }, problems: [] },
    { value: { deletesHoldUntilPropagated: true }, timings: { ...base, deletesHoldUntilPropagated: true }, problems: [] },
    { value: { propagationMs: -1 }, timings: base, problems: ['dataPlane.propagationMs: expected milliseconds from 0 to 3600000, got -1'] },
    { value: { healthChecks: 'yes' }, timings: base, problems: ['dataPlane.healthChecks: expected true or false, got "yes"'] },
    {
      value: { propagationMs: { member: 5000, delete: 2000 } },
      timings: { ...base, propagationMs: { newListener: 0, listener: 0, newPool: 0, allowedCidrs: 0, member: 5000, monitor: 0, delete: 2000 } },
      problems: [],
    },
    {
      value: { propagationMs: { member: -1, listeners: 5 } },
      timings: base,
      problems: [
        'dataPlane.propagationMs.member: expected milliseconds from 0 to 3600000, got -1',
        'dataPlane.propagationMs: unknown kind "listeners" (expected one of: newListener, listener, newPool, allowedCidrs, member, monitor, delete)',
      ],
    },
    {
      value: { propagationMs: 'slow' },
      timings: base,
      problems: ['dataPlane.propagationMs: expected milliseconds from 0 to 3600000, or a mapping of newListener, listener, newPool, allowedCidrs, member, monitor, delete to them, got "slow"'],
    },
    { value: { propagation: 5 }, timings: base, problems: ['dataPlane: unknown field "propagation" (expected one of: propagationMs, healthChecks, deletesHoldUntilPropagated, errorWhilePoolDown)'] },
    { value: [], timings: base, problems: ['dataPlane: expected a mapping with any of propagationMs, healthChecks, deletesHoldUntilPropagated, errorWhilePoolDown'] },
  ])('$value', ({ value, timings, problems }) => {
    expect(readDataPlaneTimings(value, base, 'dataPlane')).toEqual({ timings, problems });
  });
});

/** A data plane on a hand-moved clock, with servers that are healthy unless listed as stopped. */
function planeAt(timings: Partial<DataPlaneTimings>, timeScale = 1) {
  const clock = { now: 0 };
  const stopped = new Set<string>();
  const plane = new DataPlane({ ...DEFAULT_DATA_PLANE, ...timings }, () => clock.now, (address) => !stopped.has(address), timeScale);
  plane.loadBalancerCreated('lb', 0, 0);
  return { plane, clock, stopped };
}

const member = (uuid: string, address: string, enabled = true) =>
  ({ kind: 'member', uuid, poolUuid: 'pool', address, port: 30080, monitorPort: null, enabled }) as const;
const monitor = { kind: 'monitor', uuid: 'mon', poolUuid: 'pool', delayS: 2, upThreshold: 2, downThreshold: 3 } as const;
const listener = { kind: 'listener', uuid: 'l80', protocol: 'tcp', port: 80, poolUuid: 'pool' } as const;

describe('DataPlane on an injected clock', () => {
  // The strict world's figures, in the API's seconds and at time scale 0.05: the same moments, 20 times sooner.
  it.each([1, 0.05])('strict world at time scale %s: member up after 5 s + 2 × 2 s, a new port after 30 s, a re-created one 15 s, a member removal after 5 s', (scale) => {
    const { plane, clock } = planeAt(WORLDS.strict.dataPlane, scale);
    const at = (seconds: number) => (clock.now = seconds * 1000 * scale);
    plane.configure('lb', monitor); // reaches the data plane at 5 s
    plane.configure('lb', member('m1', '10.0.0.1')); // at 5 s, checked at 7 and 9 s
    plane.configure('lb', listener); // a new port: at 30 s
    at(8.999);
    expect(plane.monitorStatus('m1')).toBe('changing');
    at(9);
    expect(plane.monitorStatus('m1')).toBe('up');
    at(29.999);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: false });
    at(30);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: true });
    at(40);
    plane.configure('lb', { kind: 'listener-deleted', uuid: 'l80' }); // a delete: at 42 s
    plane.configure('lb', { ...listener, uuid: 'l80b' }); // the port again: at 55 s
    at(41.999);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: true });
    at(54.999);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: false });
    at(55);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: true });
    plane.configure('lb', { kind: 'listener', uuid: 'l80b', protocol: 'tcp', port: 80, poolUuid: 'pool', allowedCidrs: ['192.0.2.0/24'] }, 'allowedCidrs');
    const outside = parseIp('198.51.100.7')!;
    at(69.999);
    expect(plane.probe('lb', 'tcp', 80, outside)).toMatchObject({ served: true });
    at(70);
    expect(plane.probe('lb', 'tcp', 80, outside)).toMatchObject({ served: false });
    plane.configure('lb', { ...member('m1', '10.0.0.1'), enabled: false }); // a member change: at 75 s
    at(74.999);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: true });
    at(75);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: false });
    expect(plane.serving('lb')![0]!.longestOutageMs).toBe(13_000 * scale);
  });

  // The port served from 30 s; at 40 s its pool changes as each client does it. The last call,
  // the listener's create at 41 s, decides when the port serves again: 45 s later on a pool
  // created after the port lost its listener (the Go CCM's algorithm change), 15 s later on a
  // pool that existed before (a listener re-created; the pool swap's successor).
  interface PoolChange {
    /** The calls at 40 s, before the listener's create at 41 s. */
    steps: (plane: DataPlane) => void;
    /** Seconds from the listener's create until the port serves. */
    servesAfter: number;
    /** The pool of the new listener: `pool2` (given a member and a monitor at 41 s) unless said. */
    onPool?: string;
  }
  const poolChanges: Record<string, PoolChange> = {
    'pool deleted with its listener, then created anew with member, monitor, listener (the Go CCM)': {
      steps: (plane: DataPlane) => {
        plane.configure('lb', { kind: 'pool-deleted', uuid: 'pool', keepListeners: false });
        plane.poolCreated('lb', 'pool2');
      },
      servesAfter: 45,
    },
    'pool deleted keeping its listener (pool null), that listener deleted, the pool created anew': {
      steps: (plane: DataPlane) => {
        plane.configure('lb', { kind: 'pool-deleted', uuid: 'pool', keepListeners: true });
        plane.configure('lb', { kind: 'listener-deleted', uuid: 'l80' });
        plane.poolCreated('lb', 'pool2');
      },
      servesAfter: 45,
    },
    'listener deleted and re-created on its pool, which stays': {
      steps: (plane: DataPlane) => plane.configure('lb', { kind: 'listener-deleted', uuid: 'l80' }),
      servesAfter: 15,
      onPool: 'pool',
    },
    'successor pool created first, then the listener moved to it and the old pool deleted (the pool swap)': {
      steps: (plane: DataPlane) => {
        plane.poolCreated('lb', 'pool2');
        plane.configure('lb', { kind: 'listener-deleted', uuid: 'l80' });
        plane.configure('lb', { kind: 'pool-deleted', uuid: 'pool', keepListeners: false });
      },
      servesAfter: 15,
    },
  };
  const poolChangeRows = Object.entries(poolChanges).flatMap(([name, row]) => [1, 0.05].map((scale) => [name, scale, row] as const));
  it.each(poolChangeRows)('strict world: %s, at time scale %s', (_, scale, { steps, servesAfter, onPool = 'pool2' }) => {
    const { plane, clock } = planeAt(WORLDS.strict.dataPlane, scale);
    const at = (seconds: number) => (clock.now = seconds * 1000 * scale);
    plane.configure('lb', monitor);
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', listener);
    at(30);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: true });
    at(40);
    steps(plane);
    at(41);
    if (onPool !== 'pool') {
      plane.configure('lb', { ...member('m2', '10.0.0.2'), poolUuid: onPool });
      plane.configure('lb', { ...monitor, uuid: 'mon2', poolUuid: onPool });
    }
    plane.configure('lb', { ...listener, uuid: 'l80b', poolUuid: onPool });
    at(41 + servesAfter - 0.001);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: false });
    at(41 + servesAfter);
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: true });
  });

  it('health checks: changing, up after up_threshold × delay_s, down after down_threshold failed checks', () => {
    const { plane, clock, stopped } = planeAt({ propagationMs: 0, healthChecks: true });
    plane.configure('lb', monitor);
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', listener);
    clock.now = 3999;
    expect(plane.monitorStatus('m1')).toBe('changing');
    clock.now = 4000;
    expect(plane.monitorStatus('m1')).toBe('up');
    clock.now = 5000;
    plane.beforeServerChange();
    stopped.add('10.0.0.1');
    plane.serverChanged(['10.0.0.1'], 5000);
    clock.now = 9999; // checks at 6, 8 s failed: still up
    expect(plane.monitorStatus('m1')).toBe('up');
    clock.now = 10_000;
    expect(plane.monitorStatus('m1')).toBe('down');
    const port = plane.serving('lb')![0]!;
    expect(port.intervals).toEqual([
      { from: new Date(0).toISOString(), to: new Date(4000).toISOString(), serving: false },
      { from: new Date(4000).toISOString(), to: new Date(10_000).toISOString(), serving: true },
      { from: new Date(10_000).toISOString(), to: null, serving: false },
    ]);
    expect(port.longestOutageMs).toBe(0);
  });

  it('propagation: the API change serves only propagationMs later; a delete and re-create is an outage of propagation + gap', () => {
    const { plane, clock } = planeAt({ propagationMs: 500, healthChecks: false });
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', listener);
    clock.now = 499;
    expect(plane.probe('lb', 'tcp', 80)).toMatchObject({ served: false });
    clock.now = 500;
    expect(plane.probe('lb', 'tcp', 80)).toEqual({ served: true, member: { uuid: 'm1', address: '10.0.0.1', protocol_port: 30080 } });
    clock.now = 1000;
    plane.configure('lb', { kind: 'listener-deleted', uuid: 'l80' });
    clock.now = 1300;
    plane.configure('lb', { ...listener, uuid: 'l80b' });
    clock.now = 3000;
    const port = plane.serving('lb')![0]!;
    // Deleted at 1000 + 500, re-created at 1300 + 500: 300 ms without a listener.
    expect(port.longestOutageMs).toBe(300);
    expect(port.intervals.map((i) => i.serving)).toEqual([false, true, false, true]);
  });

  it('a disabled member takes no traffic; no monitor means no_monitor and traffic; round robin over the rest', () => {
    const { plane, clock } = planeAt({ propagationMs: 0, healthChecks: true });
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', member('m2', '10.0.0.2'));
    plane.configure('lb', listener);
    expect(plane.monitorStatus('m1')).toBe('no_monitor');
    const picked = [1, 2, 3, 4].map(() => (plane.probe('lb', 'tcp', 80) as { member: { uuid: string } }).member.uuid);
    expect(picked).toEqual(['m1', 'm2', 'm1', 'm2']);
    clock.now = 100;
    plane.configure('lb', member('m1', '10.0.0.1', false));
    plane.configure('lb', member('m2', '10.0.0.2', false));
    expect(plane.probe('lb', 'tcp', 80)).toEqual({ served: false, reason: 'the tcp listener on port 80 has no enabled member in the data plane' });
    expect(plane.serving('lb')![0]!.longestOutageMs).toBe(0);
    clock.now = 400;
    expect(plane.serving('lb')![0]!.longestOutageMs).toBe(300);
  });

  it('an endpoint marked failing goes down; a new monitor checks every member afresh', () => {
    const { plane, clock } = planeAt({ propagationMs: 0, healthChecks: true });
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', listener);
    plane.setEndpointHealth('10.0.0.1', 30080, false);
    plane.configure('lb', monitor);
    clock.now = 6000;
    expect(plane.monitorStatus('m1')).toBe('down');
    expect(plane.failingEndpoints()).toEqual([{ address: '10.0.0.1', port: 30080 }]);
    plane.setEndpointHealth('10.0.0.1', 30080, true);
    clock.now = 9999;
    expect(plane.monitorStatus('m1')).toBe('down');
    clock.now = 10_000;
    expect(plane.monitorStatus('m1')).toBe('up');
  });

  it('realistic timings: a new pool with the monitor defaults serves 15 s + 2 × 2 s = 19 s after the API answered', () => {
    const { plane, clock } = planeAt({ propagationMs: 15_000, healthChecks: true });
    plane.configure('lb', monitor);
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', listener);
    clock.now = 18_999;
    expect(plane.monitorStatus('m1')).toBe('changing');
    clock.now = 60_000;
    expect(plane.monitorStatus('m1')).toBe('up');
    expect(plane.serving('lb')![0]!.intervals.map((i) => [Date.parse(i.from), i.serving])).toEqual([
      [0, false],
      [19_000, true],
    ]);
  });

  it('switching health checks on keeps up members up, and a stopped server then goes down only after its checks', () => {
    const { plane, clock, stopped } = planeAt({ propagationMs: 0, healthChecks: false });
    plane.configure('lb', monitor);
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', listener);
    clock.now = 1000;
    plane.setTimings({ ...DEFAULT_DATA_PLANE, healthChecks: true });
    expect(plane.monitorStatus('m1')).toBe('up');
    plane.beforeServerChange();
    stopped.add('10.0.0.1');
    plane.serverChanged(['10.0.0.1'], 1000);
    clock.now = 6999;
    expect(plane.monitorStatus('m1')).toBe('up');
    clock.now = 7000;
    expect(plane.monitorStatus('m1')).toBe('down');
    expect(plane.serving('lb')![0]!.intervals.map((i) => [Date.parse(i.from), i.serving])).toEqual([
      [0, true],
      [7000, false],
    ]);
  });

  it('a seed may set the timings; bad ones are refused with the seed problems', () => {
    // Only what the seed gives: the simulator applies it over its world's timings.
    expect(validateSeed({ dataPlane: { propagationMs: 15000, healthChecks: true } }, 'seed.yaml').dataPlane).toEqual({
      propagationMs: 15000,
      healthChecks: true,
    });
    expect(validateSeed({}, 'seed.yaml').dataPlane).toBeUndefined();
    expect(() => validateSeed({ dataPlane: { healthChecks: 1 } }, 'seed.yaml')).toThrow(
      'seed.yaml: dataPlane.healthChecks: expected true or false, got 1',
    );
  });

  it('hasPoolDown: a monitored pool whose enabled members are all down', () => {
    const { plane, clock } = planeAt({ healthChecks: true });
    plane.configure('lb', member('m1', '10.0.0.1'));
    plane.configure('lb', member('m2', '10.0.0.2'));
    expect(plane.hasPoolDown('lb')).toBe(false);
    plane.setEndpointHealth('10.0.0.1', 30080, false);
    plane.setEndpointHealth('10.0.0.2', 30080, false);
    expect(plane.hasPoolDown('lb')).toBe(false); // no monitor: nothing is down
    plane.configure('lb', monitor);
    clock.now = 5999;
    expect(plane.hasPoolDown('lb')).toBe(false); // changing, not down yet
    clock.now = 6000;
    expect(plane.hasPoolDown('lb')).toBe(true);
    plane.configure('lb', member('m2', '10.0.0.2', false));
    expect(plane.hasPoolDown('lb')).toBe(true);
    plane.configure('lb', member('m1', '10.0.0.1', false));
    expect(plane.hasPoolDown('lb')).toBe(false); // no enabled member left
  });

  it('with the defaults a monitored member follows its server at once', () => {
    const { plane, clock, stopped } = planeAt({ propagationMs: 0, healthChecks: false });
    plane.configure('lb', monitor);
    plane.configure('lb', member('m1', '10.0.0.1'));
    expect(plane.monitorStatus('m1')).toBe('up');
    clock.now = 10;
    plane.beforeServerChange();
    stopped.add('10.0.0.1');
    plane.serverChanged(['10.0.0.1'], 10);
    expect(plane.monitorStatus('m1')).toBe('down');
  });
});
