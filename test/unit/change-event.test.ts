// The words of the change Event, against real plans of the planner (the in-test cloud model of
// test/support/lb-world.ts): what changed, by which strategy, and the time it took.
import { describe, expect, test } from 'vitest';
import { describeChanges } from '../../src/core/apply/change-event.js';
import type { ServicePlan } from '../../src/core/lb/service-plan.js';
import { World, converged, node, server, svc } from '../support/lb-world.js';

/** Every action of the plan as executed (each 100 ms: the Event names the whole's time, given apart). */
const executed = (plan: ServicePlan) => plan.actions.map((action) => ({ action, ms: 100 }));

describe('describeChanges', () => {
  test.each<[string, (w: World) => void, string]>([
    [
      'pool algorithm: a pool swap',
      (w) => w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' }),
      '11 steps in 4.2 s: pool swap of pool tcp/http (k8s.cloudscale.ch/loadbalancer-pool-algorithm round_robin → least_connections)',
    ],
    [
      'Service port: the listener moves in place',
      (w) => (w.service.spec!.ports![0]!.port = 8080),
      '1 step in 4.2 s: in-place update of listener tcp/80 (spec.ports[http].port 80 → 8080, name tcp/80 → tcp/8080)',
    ],
    [
      'node port: a member rotation',
      (w) => (w.service.spec!.ports![0]!.nodePort = 30081),
      '5 steps in 4.2 s: member rotation of 4 members of pool tcp/http (spec.ports[http].nodePort 30080 → 30081)',
    ],
    [
      'a node leaves, with a drain period: a drain',
      (w) => {
        w.drain = { seconds: 60, nowMs: 0 };
        w.nodes = [node(1)];
      },
      '1 step in 4.2 s: drain of member 10.0.0.2:30080 of pool tcp/http (10.0.0.2 is no longer the private address of a selected node (pool tcp/http): drained (no new connections), deleted after 60 s)',
    ],
    [
      'a node joins: an addition',
      (w) => {
        w.nodes = [node(1), node(2), node(3)];
        w.servers = [server(1), server(2), server(3)];
      },
      '1 step in 4.2 s: addition of member 10.0.0.3:30080 of pool tcp/http (node worker-3 is selected: its address 10.0.0.3 joins the pool)',
    ],
    [
      'two listener fields: one in-place update naming both',
      (w) => w.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]', 'loadbalancer-timeout-client-data-ms': '60000' }),
      '1 step in 4.2 s: in-place update of listener tcp/80 (k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs [] → ["10.0.0.0/8"], k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms 50000 → 60000)',
    ],
  ])('%s', (_, change, words) => {
    const w = converged();
    change(w);
    expect(describeChanges(executed(w.plan()), 4200)).toBe(words);
  });

  test('a port removed: its members counted apart from their pool, objects past the third counted', () => {
    const w = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]));
    w.service.spec!.ports = [w.service.spec!.ports![0]!];
    expect(describeChanges(executed(w.plan()), 1000)).toBe(
      '5 steps in 1.0 s: port removal of listener tcp/443, health monitor of pool tcp/https, 2 members of pool tcp/https and 1 more ' +
        '(no Service port maps to this pool any more: port tcp/443 stops serving)',
    );
  });

  test('more than eight changes: the first eight named, the others counted', () => {
    const w = converged();
    const added = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    w.nodes = [node(1), node(2), ...added.map((n) => node(n))];
    w.servers = [server(1), server(2), ...added.map((n) => server(n))];
    const words = describeChanges(executed(w.plan()), 1000);
    expect(words.split('; ')).toHaveLength(9);
    expect(words).toMatch(/^10 steps in 1\.0 s: addition of member 10\.0\.0\.3:30080 of pool tcp\/http \(/);
    expect(words).toMatch(/; and 2 more changes$/);
  });

  test('a new load balancer: its creation, the objects on it counted as steps', () => {
    const plan = new World(svc()).plan();
    expect(describeChanges(executed(plan), 3000)).toBe(
      '6 steps in 3.0 s: creation of load balancer k8s-service-uid-web (the Service has no load balancer yet)',
    );
  });

  test('a pool swap carries the fields its new objects change with it', () => {
    const w = converged();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections', 'loadbalancer-timeout-client-data-ms': '60000' });
    expect(describeChanges(executed(w.plan()), 1000)).toBe(
      '11 steps in 1.0 s: pool swap of pool tcp/http (k8s.cloudscale.ch/loadbalancer-pool-algorithm round_robin → least_connections, timeout_client_data_ms 50000 → 60000)',
    );
  });

  test('two changes in one pass: each with its strategy', () => {
    const w = converged();
    w.nodes = [node(1), node(2), node(3)];
    w.servers = [server(1), server(2), server(3)];
    w.annotate({ 'loadbalancer-timeout-client-data-ms': '60000' });
    expect(describeChanges(executed(w.plan()), 1000)).toBe(
      '2 steps in 1.0 s: addition of member 10.0.0.3:30080 of pool tcp/http (node worker-3 is selected: its address 10.0.0.3 joins the pool); ' +
        'in-place update of listener tcp/80 (k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms 50000 → 60000)',
    );
  });

  test('only the Service written: its writes are named', () => {
    const plan = new World(svc()).plan();
    const kube = plan.actions.filter((a) => a.verb === 'kube' && a.kind === 'write-status');
    expect(describeChanges(kube.map((action) => ({ action, ms: 1 })), 50)).toBe(
      "1 step in 50 ms: Service update of status.loadBalancer (publish the new load balancer's VIP addresses)",
    );
  });

  test('nothing executed: no words', () => {
    expect(describeChanges([], 0)).toBe('');
  });
});
