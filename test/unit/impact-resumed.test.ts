// Every strategy's resumed form says what it does: a pass stopped after any step of a pool swap,
// a member rotation or a listener re-creation leaves a state the next pass finishes, and that
// pass's plan must predict what finishing does to traffic — above all, a port the stopped pass
// left without a listener is down now, which a plan of "no interruption" would hide. A drain is
// one step (tag and disable in one PATCH); the passes after it finish it (below).
import { describe, expect, test } from 'vitest';
import { applyBudget } from '../../src/core/plan/budget.js';
import { downtimeOf } from '../../src/core/lb/impact.js';
import { worstDowntime, type ServicePlan } from '../../src/core/lb/service-plan.js';
import { converged, svc, type World } from '../support/lb-world.js';

const shape = (plan: ServicePlan) => plan.actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`);
const twoPorts = () => svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]);
const DRAIN = { seconds: 60, nowMs: Date.parse('2026-01-01T00:00:00Z') };

/** The strategies, each as the change that causes it on a converged World. */
const STRATEGIES: readonly (readonly [string, () => World])[] = [
  ['pool swap (pool algorithm)', () => changed(svc(), (w) => w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' }))],
  ['pool swap of two ports', () => changed(twoPorts(), (w) => w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' }))],
  [
    'pool swap with a port number change',
    () =>
      changed(svc(), (w) => {
        w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
        w.service.spec!.ports![0]!.port = 8080;
      }),
  ],
  ['member rotation (node port)', () => changed(svc(), (w) => (w.service.spec!.ports![0]!.nodePort = 31080))],
  [
    'member rotation with a drain period',
    () =>
      changed(svc(), (w) => {
        w.drain = DRAIN;
        w.service.spec!.ports![0]!.nodePort = 31080;
      }),
  ],
  [
    'listener re-creation (two ports swap numbers)',
    () =>
      changed(twoPorts(), (w) => {
        const [http, https] = w.service.spec!.ports!;
        [http!.port, https!.port] = [https!.port, http!.port];
      }),
  ],
];

function changed(service: ReturnType<typeof svc>, change: (w: World) => void): World {
  const world = converged(service);
  change(world);
  return world;
}

/** The Service's ports (`tcp/80`) that no listener of the World serves. */
function portsWithoutListener(w: World): string[] {
  const served = new Set(w.listeners.map((l) => `${l.protocol}/${l.protocol_port}`));
  return w.service.spec!.ports!.map((p) => `${(p.protocol ?? 'TCP').toLowerCase()}/${p.port}`).filter((port) => !served.has(port));
}

interface Stop {
  readonly k: number;
  /** The World after the first `k` actions of the full plan. */
  readonly world: World;
  /** Another such World (actions refer to objects created in the same `apply`, so each prefix is applied anew). */
  readonly again: () => World;
}

/** Every stop: after the first `k` actions of the full plan, for each k that leaves some undone. */
function stops(make: () => World): Stop[] {
  const total = make().plan().actions.length;
  return Array.from({ length: total - 1 }, (_, i) => {
    const again = () => {
      const world = make();
      world.apply(world.plan().actions.slice(0, i + 1));
      return world;
    };
    return { k: i + 1, world: again(), again };
  });
}

describe('a strategy resumed after a pass stopped after any of its steps', () => {
  const cases = STRATEGIES.flatMap(([name, make]) => stops(make).map((stop) => [`${name}, stopped after step ${stop.k}`, stop] as const));

  test.each(cases)('%s: a port left without its listener is predicted as down until it has one again; the rest converges', (_, { world, again }) => {
    const missing = portsWithoutListener(world);
    const resumed = world.plan();
    for (const port of missing) {
      // The action that gives the port a listener again: one created for it, or one moved to it in place.
      const restores = resumed.actions.filter(
        (a) =>
          (a.kind === 'create-listener' && a.object === `listener ${port}`) ||
          (a.kind === 'update-listener' && 'protocol_port' in a.patch && `tcp/${a.patch.protocol_port}` === port),
      );
      expect(restores.map((a) => a.impact), `what gives ${port} a listener again`).toEqual([expect.stringMatching(/^(listener-missing|port-move)$/)]);
      expect(restores[0]!.downtime.class).toBe('short');
    }
    if (missing.length > 0) expect(worstDowntime([resumed])).not.toBeNull();
    // No step takes a listener away from a port the Service has without predicting it.
    const wanted = new Set(world.service.spec!.ports!.map((p) => `listener ${(p.protocol ?? 'TCP').toLowerCase()}/${p.port}`));
    for (const action of resumed.actions.filter((a) => a.kind === 'delete-listener' && wanted.has(a.object))) {
      expect(['pool-swap', 'listener-recreation']).toContain(action.impact);
    }
    // Step by step as the API takes them: never two listeners on one port and protocol.
    resumed.actions.forEach((action, i) => {
      const stepped = again();
      stepped.apply(resumed.actions.slice(0, i + 1));
      const ports = stepped.listeners.map((l) => `${l.protocol}/${l.protocol_port}`);
      expect(new Set(ports).size, `listeners after ${action.kind} ${action.object}: ${ports.join(', ')}`).toBe(ports.length);
    });
    world.apply(resumed.actions);
    expect(world.plan().actions).toEqual([]);
  });

  test('the cases above include a port without its listener for each strategy that moves one', () => {
    const stranded = cases.filter(([, { again }]) => portsWithoutListener(again()).length > 0).map(([name]) => name.split(',')[0]);
    expect([...new Set(stranded)]).toEqual([
      'pool swap (pool algorithm)',
      'pool swap of two ports',
      'pool swap with a port number change',
      'listener re-creation (two ports swap numbers)',
    ]);
  });
});

describe('a pool swap stopped between its listener delete and create', () => {
  function stranded(): World {
    const world = converged();
    world.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const full = world.plan();
    const move = full.actions.findIndex((a) => a.kind === 'delete-listener');
    world.apply(full.actions.slice(0, move + 1));
    expect(world.listeners).toEqual([]);
    return world;
  }

  test('the next pass says the port serves nothing until its listener is back (was: no interruption)', () => {
    const resumed = stranded().plan();
    expect(shape(resumed)).toEqual([
      'delete-monitor health monitor of pool tcp/http [none]',
      'delete-member member 10.0.0.1:30080 of pool tcp/http [none]',
      'delete-member member 10.0.0.2:30080 of pool tcp/http [none]',
      'delete-pool pool tcp/http [none]',
      'create-listener listener tcp/80 [listener-missing]',
    ]);
    expect(resumed.actions.at(-1)!.downtime).toEqual(downtimeOf('listener-missing'));
    expect(downtimeOf('listener-missing')).toEqual({
      class: 'short',
      minSeconds: 0,
      maxSeconds: 50,
      text: 'the port has no listener and serves nothing now: it answers once this one reaches the data plane (up to ~25 s; ~50 s if its create fails and is sent again)',
    });
  });

  test('never held by the budget: the port is down already, holding would only prolong the outage', () => {
    const resumed = stranded().plan();
    expect(applyBudget(resumed, { seconds: 0 })).toEqual(resumed);
  });
});

describe('a listener moved to another port number in place frees its old number first', () => {
  test('a new port that takes the old number in the same edit: the move comes before the new listener', () => {
    const world = converged();
    world.service.spec!.ports = [
      { name: 'http', port: 8080, nodePort: 30080 },
      { name: 'admin', port: 80, nodePort: 30090 },
    ];
    const plan = world.plan();
    const listeners = shape(plan).filter((line) => line.includes('listener'));
    expect(listeners).toEqual(['update-listener listener tcp/80 [port-move]', 'create-listener listener tcp/80 [none]']);
    world.apply(plan.actions);
    expect(world.listeners.map((l) => `${l.protocol_port} ${l.pool!.name}`).sort()).toEqual(['80 tcp/admin', '8080 tcp/http']);
  });

  test('with another field of the listener changed in the same edit: still one update (one PATCH)', () => {
    const world = converged();
    world.service.spec!.ports![0]!.port = 8080;
    world.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]' });
    const plan = world.plan();
    expect(shape(plan)).toEqual(['update-listener listener tcp/80 [port-move]']);
    expect(plan.actions[0]).toMatchObject({ patch: { protocol_port: 8080, name: 'tcp/8080', allowed_cidrs: ['10.0.0.0/8'] } });
  });
});

describe('a member rotation stopped after its creates, the new members not checked yet', () => {
  test.each([
    ['deleted at once (--drain-seconds 0)', undefined, 'delete-member', 'member-rotation'],
    ['drained', DRAIN, 'update-member', 'member-drain'],
  ] as const)('the old members leave only after a wait for the new ones (%s), predicted as no interruption', (_, drain, leaving, impact) => {
    const world = converged();
    if (drain !== undefined) world.drain = drain;
    world.service.spec!.ports![0]!.nodePort = 31080;
    const full = world.plan();
    world.apply(full.actions.filter((a) => a.kind === 'create-member'));
    for (const member of Object.values(world.members).flat()) if (member.protocol_port === 31080) member.monitor_status = 'unknown';
    const resumed = world.plan();
    const wait = resumed.actions.findIndex((a) => a.kind === 'await-members');
    const leaves = resumed.actions.flatMap((a, i) => (a.kind === leaving ? [i] : []));
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(resumed.actions[wait]).toMatchObject({ impact: 'member-rotation', members: ['10.0.0.1:31080', '10.0.0.2:31080'] });
    expect(leaves.length).toBeGreaterThan(0);
    for (const i of leaves) {
      expect(i).toBeGreaterThan(wait);
      expect(resumed.actions[i]!.impact).toBe(impact);
    }
    expect(worstDowntime([resumed])).toBeNull();
  });
});

describe('a drain resumed by the passes after it', () => {
  const drained = () => {
    const world = converged();
    world.drain = DRAIN;
    world.nodes.pop();
    world.apply(world.plan().actions);
    return world;
  };
  const at = (world: World, seconds: number) => (world.drain = { seconds: 60, nowMs: DRAIN.nowMs + seconds * 1000 });

  test('within the drain period: nothing runs, the deletion is pending', () => {
    const world = drained();
    at(world, 59);
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.pending!.map((p) => `${p.action.kind} ${p.action.object} [${p.action.impact}] after ${p.after}`)).toEqual([
      'delete-member member 10.0.0.2:30080 of pool tcp/http [none] after 2026-01-01T00:01:00.000Z',
    ]);
  });

  test('after it: the disabled member is deleted, predicted as no interruption (it takes no new connections already)', () => {
    const world = drained();
    at(world, 60);
    const plan = world.plan();
    expect(shape(plan)).toEqual(['delete-member member 10.0.0.2:30080 of pool tcp/http [none]']);
    expect(worstDowntime([plan])).toBeNull();
  });

  test('tagged but still enabled (a drain that did not finish): the next pass disables it, keeping when the drain began', () => {
    const world = converged();
    world.drain = DRAIN;
    world.nodes.pop();
    const member = world.members[world.pools[0]!.uuid]!.find((m) => m.address === '10.0.0.2')!;
    member.tags = { 'k8s.cloudscale.ch/draining-since': '2025-12-31T23:59:30.000Z' };
    const plan = world.plan();
    expect(shape(plan)).toEqual(['update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]']);
    expect(plan.actions[0]).toMatchObject({ patch: { enabled: false } });
    expect(plan.pending![0]!.after).toBe('2026-01-01T00:00:30.000Z');
  });
});
