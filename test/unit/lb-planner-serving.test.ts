// Serving decides, in every pass: the planner against an actual state whose members carry the
// health monitors' `monitor_status`. A step that takes serving capacity away (a member drained
// or deleted, a listener moved) comes after a gate that waits for what replaces it to be `up`,
// also in a later pass that finds a strategy half done; when nothing would replace it, it is not
// planned. A load balancer in `error` is planned as usual, with a warning that says why.
import { describe, expect, test } from 'vitest';
import type { MonitorStatus } from '../../src/core/cloudscale/types.js';
import type { PlannedAction } from '../../src/core/lb/actions.js';
import type { ServicePlan } from '../../src/core/lb/service-plan.js';
import { converged, node, SUBNET_B, svc, type World } from '../support/lb-world.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const shape = (plan: ServicePlan) => plan.actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`);
const warnings = (plan: ServicePlan) => plan.warnings.map((w) => `${w.reason}: ${w.message}`);

/** Sets the monitor status of the members of the only pool whose addresses and ports match. */
function report(world: World, status: MonitorStatus, which: (member: { address: string; protocol_port: number }) => boolean = () => true): void {
  for (const members of Object.values(world.members)) for (const m of members) if (which(m)) m.monitor_status = status;
}

/** Applies a plan's steps up to (not including) its first wait: a pass stopped at its gate. */
function stopAtGate(world: World, plan: ServicePlan): void {
  const gate = plan.actions.findIndex((a) => a.kind === 'await-members');
  expect(gate, 'the plan has a gate').toBeGreaterThan(0);
  world.apply(plan.actions.slice(0, gate));
}

/** A converged Service on worker-1 and worker-2 (node ports 30080), members drained or deleted at once. */
function servingWorld(drainSeconds: number): World {
  return converged(svc(), (w) => (w.drain = { seconds: drainSeconds, nowMs: NOW }));
}

const awaitOf = (plan: ServicePlan) => plan.actions.find((a): a is Extract<PlannedAction, { kind: 'await-members' }> => a.kind === 'await-members');

describe('a node-port change whose first pass stopped after creating the new members', () => {
  const resumed = (drainSeconds: number, status: MonitorStatus) => {
    const world = servingWorld(drainSeconds);
    world.service.spec!.ports![0]!.nodePort = 31000;
    stopAtGate(world, world.plan());
    report(world, status, (m) => m.protocol_port === 31000);
    return world.plan();
  };
  const leave = (drainSeconds: number) =>
    [1, 2].map((n) =>
      drainSeconds === 0
        ? `delete-member member 10.0.0.${n}:30080 of pool tcp/http [member-rotation]`
        : `update-member member 10.0.0.${n}:30080 of pool tcp/http [member-drain]`,
    );
  const gate = 'await-members 2 members of pool tcp/http healthy [member-rotation]';

  test.each([
    // new members' status, drain seconds, the gate before the old members leave, a warning
    ['down', 60, true, true],
    ['down', 0, true, true],
    ['changing', 60, true, false],
    ['unknown', 0, true, false],
    ['up', 60, false, false],
    ['up', 0, false, false],
  ] as const)('new members %s, drain %i s: gated %s, warned %s', (status, drainSeconds, gated, warned) => {
    const plan = resumed(drainSeconds, status);
    const leaving = gated || drainSeconds !== 0 ? leave(drainSeconds) : leave(0).map((l) => l.replace('member-rotation', 'minimal'));
    expect(shape(plan)).toEqual(gated ? [gate, ...leaving] : leaving);
    if (gated) {
      expect(awaitOf(plan)).toMatchObject({
        members: ['10.0.0.1:31000', '10.0.0.2:31000'],
        protects: { members: ['10.0.0.1:30080', '10.0.0.2:30080'] },
      });
    }
    const kept = warnings(plan).filter((w) => w.startsWith('MembersKept'));
    expect(kept).toEqual(
      warned
        ? [
            'MembersKept: pool tcp/http: 10.0.0.1:30080, 10.0.0.2:30080 keep serving, because the members that would replace them are down: ' +
              '10.0.0.1:31000 (node worker-1) fails its tcp check on port 31000, 10.0.0.2:31000 (node worker-2) fails its tcp check on port 31000. ' +
              'The pass waits up to 26 s for one of them to pass its check; until one does, nothing is taken out of service.',
          ]
        : [],
    );
  });

  test('old members already down: nothing to protect, no gate (the plan repairs the port)', () => {
    const world = servingWorld(60);
    world.service.spec!.ports![0]!.nodePort = 31000;
    stopAtGate(world, world.plan());
    report(world, 'down');
    expect(shape(world.plan())).toEqual(leave(60));
  });
});

describe('the node selector narrowed onto Nodes whose members are not up', () => {
  const narrowed = (drainSeconds: number, statuses: Readonly<Record<string, MonitorStatus>>) => {
    const world = servingWorld(drainSeconds);
    world.nodes = [node(1, { edge: 'yes' }), node(2)];
    world.annotate({ 'loadbalancer-node-selector': 'edge=yes' });
    for (const [address, status] of Object.entries(statuses)) report(world, status, (m) => m.address === address);
    return world.plan();
  };

  test.each([
    // worker-1 (stays), worker-2 (leaves), drain seconds → the plan
    ['down', 'up', 60, ['await-members member of pool tcp/http healthy [member-rotation]', 'update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]']],
    ['down', 'up', 0, ['await-members member of pool tcp/http healthy [member-rotation]', 'delete-member member 10.0.0.2:30080 of pool tcp/http [member-rotation]']],
    ['changing', 'up', 60, ['await-members member of pool tcp/http healthy [member-rotation]', 'update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]']],
    ['up', 'up', 60, ['update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]']],
    ['down', 'down', 60, ['update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]']],
  ] as const)('worker-1 %s, worker-2 %s, drain %i s', (staying, leaving, drainSeconds, expected) => {
    const plan = narrowed(drainSeconds, { '10.0.0.1': staying, '10.0.0.2': leaving });
    expect(shape(plan)).toEqual(expected);
    const gate = awaitOf(plan);
    if (gate !== undefined) expect(gate).toMatchObject({ members: ['10.0.0.1:30080'], protects: { members: ['10.0.0.2:30080'] } });
    expect(warnings(plan).some((w) => w.startsWith('MembersKept')), 'a MembersKept warning').toBe(staying === 'down' && leaving === 'up');
  });

  test('the warning names the member that stays down, its Node and its check', () => {
    const plan = narrowed(60, { '10.0.0.1': 'down' });
    expect(warnings(plan)).toContain(
      'MembersKept: pool tcp/http: 10.0.0.2:30080 keep serving, because the members that would replace them are down: ' +
        '10.0.0.1:30080 (node worker-1) fails its tcp check on port 30080. The pass waits up to 26 s for one of them to pass its check; ' +
        'until one does, nothing is taken out of service.',
    );
  });
});

describe('a pool swap whose successor would have no member', () => {
  const swapOnto = (selector: string, drainSeconds = 60) => {
    const world = servingWorld(drainSeconds);
    world.annotate({ 'loadbalancer-pool-algorithm': 'least_connections', 'loadbalancer-node-selector': selector });
    return world;
  };

  test.each([60, 0])('pool algorithm and a selector matching no Node in one edit (drain %i s): nothing is swapped, the old pool keeps the port', (drainSeconds) => {
    const plan = swapOnto('nothing=matches', drainSeconds).plan();
    expect(shape(plan)).toEqual([]);
    expect(warnings(plan)).toContain(
      'PoolSwapHeld: pool tcp/http is not swapped for pool tcp/http (the pool algorithm cannot change in place: pool tcp/http is replaced): ' +
        'no selected Node would be a member of it, so port TCP 80 stays on the old pool, whose 2 members keep serving. The swap runs once a Node is selected.',
    );
  });

  test('once a Node is selected again the swap runs, gated on the successor', () => {
    const world = swapOnto('nothing=matches');
    world.annotate({ 'loadbalancer-node-selector': null });
    const plan = world.plan();
    expect(shape(plan).slice(0, 5)).toEqual([
      'create-pool pool tcp/http [none]',
      'create-member member 10.0.0.1:30080 of pool tcp/http [none]',
      'create-member member 10.0.0.2:30080 of pool tcp/http [none]',
      'create-monitor health monitor of pool tcp/http [none]',
      'await-members 2 members of pool tcp/http healthy [none]',
    ]);
    expect(plan.warnings).toEqual([]);
  });

  test('the old pool serving nothing (every member down): the swap runs, there is nothing to keep', () => {
    const world = swapOnto('nothing=matches');
    report(world, 'down');
    expect(shape(world.plan())).toContain('delete-listener listener tcp/80 [pool-swap]');
  });
});

describe('a load balancer in status "error" is planned and changed as usual, with why', () => {
  const inError = () => {
    const world = servingWorld(60);
    world.lbs[0]!.status = 'error';
    report(world, 'down');
    return world;
  };
  const why =
    'LoadBalancerError: load balancer k8s-service-uid-web (00000000-0000-4000-8000-000000000001) is in status "error": pool tcp/http (port TCP 80) has every member down: ' +
    '10.0.0.1:30080 (node worker-1) fails its tcp check on port 30080, 10.0.0.2:30080 (node worker-2) fails its tcp check on port 30080; ';

  test('repaired by a node-port change: the new members are created, the old ones (down) leave without a gate', () => {
    const world = inError();
    world.service.spec!.ports![0]!.nodePort = 31000;
    const plan = world.plan();
    expect(plan.problems).toEqual([]);
    expect(shape(plan)).toEqual([
      'create-member member 10.0.0.1:31000 of pool tcp/http [minimal]',
      'create-member member 10.0.0.2:31000 of pool tcp/http [minimal]',
      'update-member member 10.0.0.1:30080 of pool tcp/http [member-drain]',
      'update-member member 10.0.0.2:30080 of pool tcp/http [member-drain]',
    ]);
    expect(warnings(plan)).toEqual([`${why}this plan adds members, which repairs it once a member passes its check`]);
  });

  test.each([
    ['nothing changes', (_: World) => undefined, 'this plan does not change it: it serves again once a member passes its check (check that the nodes answer on that port)'],
    ['its monitor changes in place', (w: World) => w.annotate({ 'loadbalancer-health-monitor-delay-s': '5' }), 'this plan changes its health monitor, which repairs it once a member passes its check'],
    ['its monitor type changes (a pool swap)', (w: World) => w.annotate({ 'loadbalancer-health-monitor-type': 'http' }), 'this plan moves its port to a new pool, which repairs it once a member passes its check'],
  ])('%s: the warning says whether the plan repairs it', (_title, edit, verdict) => {
    const world = inError();
    edit(world);
    const plan = world.plan();
    expect(plan.problems).toEqual([]);
    expect(warnings(plan)).toEqual([`${why}${verdict}`]);
  });

  test('a pool swap stopped at its gate, the successor down too: the successor is named by the port it is to serve', () => {
    const world = servingWorld(60);
    world.annotate({ 'loadbalancer-health-monitor-type': 'http' });
    stopAtGate(world, world.plan());
    world.lbs[0]!.status = 'error';
    report(world, 'down');
    const [warning] = warnings(world.plan());
    expect(warning).toContain('pool tcp/http (port TCP 80) has every member down: ');
    expect(warning).toContain('; pool tcp/http (no port yet: it is to serve TCP 80) has every member down: ');
    expect(warning).not.toContain('no port)');
  });

  test('in "error" with no pool down as listed: planned as usual, the warning says the cause is not visible', () => {
    const world = servingWorld(60);
    world.lbs[0]!.status = 'error';
    world.service.spec!.ports![0]!.nodePort = 31000;
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toContain('create-member');
    expect(warnings(plan)).toEqual([
      'LoadBalancerError: load balancer k8s-service-uid-web (00000000-0000-4000-8000-000000000001) is in status "error", but no pool has every member down as the API lists them: ' +
        'the cause is not visible in the API. It is planned and changed as usual; if it stays in "error", ask cloudscale support.',
    ]);
  });
});

describe('a member replaced at its own address and port while the other members are not up', () => {
  // worker-1's address moves to another subnet: its member cannot be added beside the old one.
  const moved = (worker2: MonitorStatus) => {
    const world = servingWorld(0);
    report(world, worker2, (m) => m.address === '10.0.0.2');
    world.servers[0]!.interfaces[1]!.addresses[0]!.subnet = SUBNET_B;
    return world.plan();
  };

  test('worker-2 up: the old member makes room, worker-2 serves meanwhile', () => {
    expect(shape(moved('up'))).toEqual([
      'delete-member member 10.0.0.1:30080 of pool tcp/http [minimal]',
      'create-member member 10.0.0.1:30080 of pool tcp/http [minimal]',
    ]);
  });

  test.each(['down', 'changing'] as const)('worker-2 %s: the pool is swapped, so the old member serves until its successor is up', (status) => {
    const plan = shape(moved(status));
    expect(plan).not.toContain('delete-member member 10.0.0.1:30080 of pool tcp/http [minimal]');
    expect(plan.slice(0, 5)).toEqual([
      'create-pool pool tcp/http [none]',
      'create-member member 10.0.0.1:30080 of pool tcp/http [none]',
      'create-member member 10.0.0.2:30080 of pool tcp/http [none]',
      'create-monitor health monitor of pool tcp/http [none]',
      'await-members 2 members of pool tcp/http healthy [none]',
    ]);
  });
});

describe('a pool swap a stopped pass left at its gate', () => {
  const resumed = (status: MonitorStatus) => {
    const world = servingWorld(60);
    const old = world.pools[0]!.uuid;
    world.annotate({ 'loadbalancer-health-monitor-type': 'http' });
    stopAtGate(world, world.plan());
    const successor = world.pools.find((p) => p.uuid !== old)!.uuid;
    for (const m of world.members[successor]!) m.monitor_status = status;
    return world.plan();
  };

  test.each(['down', 'changing', 'up'] as const)('successor members %s: the gate still stands before the listener moves', (status) => {
    const plan = resumed(status);
    expect(shape(plan).slice(0, 3)).toEqual([
      'await-members 2 members of pool tcp/http healthy [none]',
      'delete-listener listener tcp/80 [pool-swap]',
      'create-listener listener tcp/80 [pool-swap]',
    ]);
    const kept = warnings(plan).filter((w) => w.startsWith('MembersKept'));
    expect(kept).toEqual(
      status === 'down'
        ? [
            'MembersKept: pool tcp/http keeps port TCP 80, because the members of its successor are down: ' +
              '10.0.0.1:30080 (node worker-1) fails its http GET / check on port 30080, 10.0.0.2:30080 (node worker-2) fails its http GET / check on port 30080. ' +
              'The pass waits up to 26 s for one of them to pass its check; until one does, the listener does not move.',
          ]
        : [],
    );
  });
});
