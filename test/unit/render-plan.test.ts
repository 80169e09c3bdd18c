// The plan's text view on exact output. Plans are built from typed actions as the planner
// emits them (verb from ACTION_VERB, downtime from the impact model), and one from the planner
// itself (create from scratch), so the view is checked on what users really see.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import type { Server, SubnetStub } from '../../src/core/cloudscale/types.js';
import type { ActionKind, PlannedAction, Reason } from '../../src/core/lb/actions.js';
import { applyBudget } from '../../src/core/plan/budget.js';
import { planService } from '../../src/core/lb/planner.js';
import { type ServicePlan } from '../../src/core/lb/service-plan.js';
import type { Problem } from '../../src/core/lb/problems.js';
import type { NodeAction } from '../../src/core/nodes/types.js';
import { renderPlanText } from '../../src/core/render/plan.js';
import { planDocument, type PlanDocument } from '../../src/core/plan/document.js';
import { converged, node as worldNode, svc } from '../support/lb-world.js';
import { act, servicePlan } from '../support/plan-fixtures.js';

const P = 'k8s.cloudscale.ch/';

const text = (document: PlanDocument) => renderPlanText(document, { color: false });
const doc = (services: ServicePlan[], nodes: PlanDocument['nodes'] = null) => planDocument({ services, nodes });

const portChange: Reason = { text: 'the Service port changed, the pool tcp/http is kept', field: 'spec.ports[http].port', from: '80', to: '8080' };
const algorithmChange: Reason = {
  text: 'the pool algorithm cannot change in place: pool tcp/http is recreated',
  field: `${P}loadbalancer-pool-algorithm`,
  from: 'round_robin',
  to: 'source_ip',
};

function poolRecreation(): PlannedAction[] {
  const r = (kind: ActionKind, object: string) => act(kind, object, 'pool-recreation', algorithmChange);
  return [
    r('delete-listener', 'listener tcp/80'),
    r('delete-monitor', 'health monitor of pool tcp/http'),
    r('delete-member', 'member 10.0.0.1:30080 of pool tcp/http'),
    r('delete-pool', 'pool tcp/http'),
    r('create-pool', 'pool tcp/http'),
    r('create-member', 'member 10.0.0.1:30080 of pool tcp/http'),
    r('create-listener', 'listener tcp/80'),
    r('create-monitor', 'health monitor of pool tcp/http'),
  ];
}

const flavorProblem: Problem = {
  kind: 'forbidden-change',
  subject: `${P}loadbalancer-flavor`,
  message: 'the flavor of load balancer k8s-service-uid-web cannot change (lb-standard → lb-large); nothing was changed',
  hint: `Set ${P}loadbalancer-flavor back to lb-standard. To really change it, delete and re-create the Service.`,
};

describe('renderPlanText', () => {
  test('nothing to do: what was compared, then "No changes."', () => {
    expect(text(doc([servicePlan('web', [])], { actions: [], unchanged: 2, deletionRefusal: null }))).toBe(
      ['Unchanged: shop/web; 2 nodes.', 'No changes. The cloud and the cluster match the desired state.', ''].join('\n'),
    );
    expect(text(doc([]))).toBe('No changes. The cloud and the cluster match the desired state.\n');
  });

  test('create from scratch, as the planner plans it', () => {
    const plan = planService({
      service: newService(),
      nodes: [node(1), node(2)],
      servers: [server(1), server(2)],
      location: { kind: 'absent' },
      floatingIps: [],
      subnets: [],
      otherServices: [],
      clusterId: 'cluster-1',
      apiServerMinor: 34,
    });
    expect(text(doc([plan]))).toBe(
      [
        'Symbols: + create, * write to the Service',
        '',
        'Service shop/web — load balancer k8s-service-uid-web (new)',
        '  * add-finalizer      finalizer service.kubernetes.io/load-balancer-cleanup',
        '      because protect the load balancer from being left behind when the Service is deleted (metadata.finalizers: (none) → service.kubernetes.io/load-balancer-cleanup)',
        '  + create-lb          load balancer k8s-service-uid-web',
        '        flavor: lb-standard, zone: rma1',
        '      because the Service has no load balancer yet',
        '      impact: none, no interruption',
        '  + create-pool        pool tcp/http',
        '        algorithm: round_robin, protocol: tcp',
        '  + create-member      member 10.0.0.1:30080 of pool tcp/http',
        '        protocol_port: 30080, monitor_port: 30080, address: 10.0.0.1',
        '  + create-member      member 10.0.0.2:30080 of pool tcp/http',
        '        protocol_port: 30080, monitor_port: 30080, address: 10.0.0.2',
        '  + create-monitor     health monitor of pool tcp/http',
        '        type: tcp, delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3',
        '  + create-listener    listener tcp/80',
        '        protocol: tcp, protocol_port: 80, timeout_client_data_ms: 50000, timeout_member_connect_ms: 5000, timeout_member_data_ms: 50000',
        '      because part of the new load balancer',
        '      impact: none, no interruption',
        '  * write-annotations  annotations',
        '      because record the load balancer on the Service: loadbalancer-uuid, loadbalancer-config-version, loadbalancer-zone',
        '  * write-status       status.loadBalancer',
        "      because publish the new load balancer's VIP addresses",
        '',
        'Plan: 6 to create, 0 to update, 0 to delete, 3 Service writes. Expected downtime: none.',
        '',
      ].join('\n'),
    );
  });

  test('a port change keeping the name: only the listener is recreated', () => {
    const plan = servicePlan('web', [
      act('delete-listener', 'listener tcp/80', 'listener-recreation', portChange),
      act('create-listener', 'listener tcp/8080', 'listener-recreation', portChange),
    ]);
    expect(text(doc([plan]))).toBe(
      [
        'Symbols: + create, - delete',
        '',
        'Service shop/web — load balancer k8s-service-uid-web',
        '  - delete-listener  listener tcp/80',
        '  + create-listener  listener tcp/8080',
        '      because the Service port changed, the pool tcp/http is kept (spec.ports[http].port: 80 → 8080)',
        '      impact: listener-recreation, the port is unreachable for up to ~20 s (~45 s if a request of the pair fails and is sent again)',
        '',
        'Plan: 1 to create, 0 to update, 1 to delete. Worst expected downtime: shop/web, listener tcp/80 (listener-recreation): the port is unreachable for up to ~20 s (~45 s if a request of the pair fails and is sent again).',
        '',
      ].join('\n'),
    );
  });

  test('a pool recreation reads as one change: every step in the order it runs, one reason and one impact', () => {
    expect(text(doc([servicePlan('web', poolRecreation())]))).toBe(
      [
        'Symbols: + create, - delete',
        '',
        'Service shop/web — load balancer k8s-service-uid-web',
        '  - delete-listener  listener tcp/80',
        '  - delete-monitor   health monitor of pool tcp/http',
        '  - delete-member    member 10.0.0.1:30080 of pool tcp/http',
        '  - delete-pool      pool tcp/http',
        '  + create-pool      pool tcp/http',
        '  + create-member    member 10.0.0.1:30080 of pool tcp/http',
        '  + create-listener  listener tcp/80',
        '  + create-monitor   health monitor of pool tcp/http',
        '      because the pool algorithm cannot change in place: pool tcp/http is recreated (k8s.cloudscale.ch/loadbalancer-pool-algorithm: round_robin → source_ip)',
        '      impact: pool-recreation, the port is down for ~60–120 s',
        '',
        'Plan: 4 to create, 0 to update, 4 to delete. Worst expected downtime: shop/web, listener tcp/80 (pool-recreation): the port is down for ~60–120 s.',
        '',
      ].join('\n'),
    );
  });

  test('updates of one object: one block, each reason, the worst impact', () => {
    const plan = servicePlan('web', [
      act('update-listener', 'listener tcp/80', 'none', { text: 'timeout_client_data_ms changes in place', field: `${P}loadbalancer-timeout-client-data-ms`, from: '50000', to: '1000' }),
      act('update-listener', 'listener tcp/80', 'minimal', { text: 'allowed_cidrs changes in place', field: `${P}loadbalancer-listener-allowed-cidrs`, from: '[]', to: '["10.0.0.0/8"]' }),
    ]);
    expect(text(doc([plan]))).toBe(
      [
        'Symbols: ~ update in place',
        '',
        'Service shop/web — load balancer k8s-service-uid-web',
        '  ~ update-listener  listener tcp/80',
        '  ~ update-listener  listener tcp/80',
        '      because timeout_client_data_ms changes in place (k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms: 50000 → 1000)',
        '      because allowed_cidrs changes in place (k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs: [] → ["10.0.0.0/8"])',
        '      impact: minimal, no interruption expected; new connections may be affected for a few seconds',
        '',
        'Plan: 0 to create, 2 to update, 0 to delete. Worst expected downtime: shop/web, listener tcp/80 (minimal): no interruption expected; new connections may be affected for a few seconds.',
        '',
      ].join('\n'),
    );
  });

  test('a refusal shows the reason and how to proceed; it counts as refused and as a problem', () => {
    const plan = servicePlan(
      'web',
      [
        act('refuse', 'load balancer k8s-service-uid-web', 'refused', { text: 'the flavor of a load balancer is fixed', field: `${P}loadbalancer-flavor`, from: 'lb-standard', to: 'lb-large' }, { problem: flavorProblem }),
      ],
      { problems: [flavorProblem] },
    );
    expect(text(doc([plan]))).toBe(
      [
        'Symbols: ! refused',
        '',
        'Service shop/web — load balancer k8s-service-uid-web',
        '  ! refuse  load balancer k8s-service-uid-web',
        '      because the flavor of a load balancer is fixed (k8s.cloudscale.ch/loadbalancer-flavor: lb-standard → lb-large)',
        '      how to proceed: Set k8s.cloudscale.ch/loadbalancer-flavor back to lb-standard. To really change it, delete and re-create the Service.',
        '',
        'Plan: 0 to create, 0 to update, 0 to delete, 1 refused, 1 problem. Expected downtime: none.',
        '',
      ].join('\n'),
    );
  });

  test('a deletion: the load balancer goes, the status is cleared, the finalizer removed', () => {
    const why = 'the Service is no longer of type LoadBalancer (now ClusterIP)';
    const plan = servicePlan(
      'web',
      [
        act('delete-lb', 'load balancer k8s-service-uid-web', 'lb-deletion', { text: `${why}; the load balancer and everything on it are deleted` }),
        act('write-status', 'service shop/web status', 'none', { text: `${why}: clear status.loadBalancer`, field: 'status.loadBalancer.ingress' }),
        act('remove-finalizer', 'service shop/web finalizer', 'none', { text: `${why}; its load balancer is gone`, field: 'metadata.finalizers', from: 'service.kubernetes.io/load-balancer-cleanup' }),
      ],
      { mode: 'delete' },
    );
    expect(text(doc([plan]))).toBe(
      [
        'Symbols: - delete, * write to the Service',
        '',
        'Service shop/web — load balancer k8s-service-uid-web (no longer wanted)',
        '  - delete-lb         load balancer k8s-service-uid-web',
        '      because the Service is no longer of type LoadBalancer (now ClusterIP); the load balancer and everything on it are deleted',
        '      impact: lb-deletion, the Service loses its load balancer and its addresses',
        '  * write-status      service shop/web status',
        '      because the Service is no longer of type LoadBalancer (now ClusterIP): clear status.loadBalancer',
        '  * remove-finalizer  service shop/web finalizer',
        '      because the Service is no longer of type LoadBalancer (now ClusterIP); its load balancer is gone (metadata.finalizers: service.kubernetes.io/load-balancer-cleanup → (none))',
        '',
        'Plan: 0 to create, 0 to update, 1 to delete, 2 Service writes. Worst expected downtime: shop/web, load balancer k8s-service-uid-web (lb-deletion): the Service loses its load balancer and its addresses.',
        '',
      ].join('\n'),
    );
  });

  test('a deletion whose load balancer is already gone: only the finalizer', () => {
    const plan = servicePlan(
      'web',
      [act('remove-finalizer', 'service shop/web finalizer', 'none', { text: 'the Service is being deleted; its load balancer is gone', field: 'metadata.finalizers', from: 'service.kubernetes.io/load-balancer-cleanup' })],
      { mode: 'delete', loadBalancer: null },
    );
    expect(text(doc([plan]))).toBe(
      [
        'Symbols: * write to the Service',
        '',
        'Service shop/web — no load balancer',
        '  * remove-finalizer  service shop/web finalizer',
        '      because the Service is being deleted; its load balancer is gone (metadata.finalizers: service.kubernetes.io/load-balancer-cleanup → (none))',
        '',
        'Plan: 0 to create, 0 to update, 0 to delete, 1 Service write. Expected downtime: none.',
        '',
      ].join('\n'),
    );
  });

  test('problems and warnings: each with what it is about and how to fix it', () => {
    const plan = servicePlan('web', [], {
      loadBalancer: null,
      problems: [
        {
          kind: 'annotation',
          subject: `${P}loadbalancer-pool-algorithm`,
          message: 'invalid value "fastest": expected one of round_robin, least_connections, source_ip',
          hint: `Set ${P}loadbalancer-pool-algorithm to round_robin, least_connections or source_ip.`,
        },
      ],
      warnings: [{ reason: 'AnnotationWarning', message: `${P}loadbalancer-health-monitor-http: unknown field "paht" is ignored` }],
    });
    const quiet = servicePlan('api', [], { warnings: [{ reason: 'NoValidNodes', message: 'No valid nodes for service found' }] });
    expect(text(doc([quiet, plan]))).toBe(
      [
        'Service shop/api — load balancer k8s-service-uid-api',
        '  warning NoValidNodes: No valid nodes for service found',
        '',
        'Service shop/web — load balancer not planned (see the errors)',
        '  error k8s.cloudscale.ch/loadbalancer-pool-algorithm: invalid value "fastest": expected one of round_robin, least_connections, source_ip',
        '      how to fix: Set k8s.cloudscale.ch/loadbalancer-pool-algorithm to round_robin, least_connections or source_ip.',
        '  warning AnnotationWarning: k8s.cloudscale.ch/loadbalancer-health-monitor-http: unknown field "paht" is ignored',
        '',
        'Plan: 0 to create, 0 to update, 0 to delete, 1 problem. Expected downtime: none.',
        '',
      ].join('\n'),
    );
  });

  test('node actions, a refused deletion, and a pass-wide refusal without candidates', () => {
    const nodes: NodeAction[] = [
      {
        kind: 'initialize',
        node: 'worker-1',
        object: 'node/worker-1',
        verb: 'update',
        reason: {
          field: 'spec.taints[node.cloudprovider.kubernetes.io/uninitialized]',
          from: 'NoSchedule',
          to: null,
          text: 'uninitialised node; server worker-1 (5e000000-0000-4000-8000-000000000001), matched by name',
        },
        changes: [],
        impact: 'none',
        server: { uuid: '5e000000-0000-4000-8000-000000000001', name: 'worker-1', zone: 'rma1', flavor: 'flex-4-2', status: 'running' },
        write: {},
      },
      {
        kind: 'add-shutdown-taint',
        node: 'worker-2',
        object: 'node/worker-2',
        verb: 'update',
        reason: { field: 'spec.taints[node.cloudprovider.kubernetes.io/shutdown]', from: null, to: 'NoSchedule', text: 'server worker-2 is stopped and the node is NotReady (Ready False)' },
        changes: [],
        impact: 'minimal',
        write: {},
      },
      {
        kind: 'delete-node',
        node: 'worker-3',
        object: 'node/worker-3',
        verb: 'refuse',
        problem: 'deletion-bound',
        reason: {
          field: 'spec.providerID',
          from: 'cloudscale://5e000000-0000-4000-8000-000000000003',
          to: null,
          text: 'server 5e000000-0000-4000-8000-000000000003 is not in the server list and the node is NotReady (Ready Unknown); refused: 2 nodes would be deleted, more than --max-node-deletions 1: none is deleted',
        },
        changes: [],
        impact: 'minimal',
        uid: 'u3',
        resourceVersion: '7',
        serverUuid: '5e000000-0000-4000-8000-000000000003',
      },
    ];
    const refusal = '2 nodes would be deleted, more than --max-node-deletions 1: none is deleted';
    expect(text(doc([], { actions: nodes, unchanged: 1, deletionRefusal: refusal }))).toBe(
      [
        'Symbols: ~ update in place, ! refused',
        '',
        'Nodes',
        '  ~ initialize          node/worker-1',
        '      because uninitialised node; server worker-1 (5e000000-0000-4000-8000-000000000001), matched by name (spec.taints[node.cloudprovider.kubernetes.io/uninitialized]: NoSchedule → (none))',
        '      impact: none',
        '  ~ add-shutdown-taint  node/worker-2',
        '      because server worker-2 is stopped and the node is NotReady (Ready False) (spec.taints[node.cloudprovider.kubernetes.io/shutdown]: (none) → NoSchedule)',
        '      impact: minimal',
        '  ! delete-node         node/worker-3',
        '      because server 5e000000-0000-4000-8000-000000000003 is not in the server list and the node is NotReady (Ready Unknown); refused: 2 nodes would be deleted, more than --max-node-deletions 1: none is deleted (spec.providerID: cloudscale://5e000000-0000-4000-8000-000000000003 → (none))',
        '',
        'Unchanged: 1 node.',
        'Plan: 0 to create, 0 to update, 0 to delete, 2 node changes, 1 problem. Expected downtime: none.',
        '',
      ].join('\n'),
    );
    const wrongProject = 'the cloudscale project lists no servers at all, but 2 node(s) carry a cloudscale providerID: is the API token for the right project? No node is deleted';
    expect(text(doc([], { actions: [], unchanged: 2, deletionRefusal: wrongProject }))).toBe(
      [
        'Nodes',
        `  ! no node is deleted: ${wrongProject}`,
        '',
        'Unchanged: 2 nodes.',
        'No changes. The cloud and the cluster match the desired state.',
        '',
      ].join('\n'),
    );
  });

  test('the summary line counts every verb and names the Service with the worst expected downtime', () => {
    const web = servicePlan('web', [
      act('update-listener', 'listener tcp/80', 'none', { text: 'timeout_client_data_ms changes in place' }),
      act('create-member', 'member 10.0.0.3:30080 of pool tcp/http', 'minimal', { text: 'node worker-3 is selected' }),
    ]);
    const api = servicePlan('api', poolRecreation());
    const db = servicePlan('db', [act('delete-listener', 'listener tcp/5432', 'listener-recreation', portChange), act('write-status', 'service shop/db status', 'none', { text: 'publish' })]);
    const unchanged = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((n) => servicePlan(n, []));
    const output = text(doc([web, db, api, ...unchanged]));
    const lines = output.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual([
      'Unchanged: shop/a, shop/b, shop/c, shop/d, shop/e, shop/f, shop/g, shop/h and 1 more Services.',
      'Plan: 5 to create, 1 to update, 5 to delete, 1 Service write. Worst expected downtime: shop/api, listener tcp/80 (pool-recreation): the port is down for ~60–120 s.',
    ]);
    // Grouped per Service, in document order; unchanged Services get no block.
    expect(lines.filter((l) => l.startsWith('Service '))).toEqual([
      'Service shop/web — load balancer k8s-service-uid-web',
      'Service shop/db — load balancer k8s-service-uid-db',
      'Service shop/api — load balancer k8s-service-uid-api',
    ]);
  });

  test('colour only when asked for; the words are the same', () => {
    const document = doc([servicePlan('web', poolRecreation())], { actions: [], unchanged: 1, deletionRefusal: null });
    const plain = renderPlanText(document, { color: false });
    const coloured = renderPlanText(document, { color: true });
    // eslint-disable-next-line no-control-regex
    const ansi = /\u001b\[[0-9;]*m/g;
    expect(plain).not.toMatch(ansi);
    expect(coloured).toMatch(ansi);
    expect(coloured).toContain('\u001b[31m- delete-pool    \u001b[39m');
    expect(coloured).toContain('\u001b[32m+ create-pool    \u001b[39m');
    expect(coloured.replace(ansi, '')).toBe(plain);
  });
});

// ---- a small cluster for the planner-built plan ----------------------------------------------

const API = 'https://api.example/v1';
const SUBNET: SubnetStub = { href: `${API}/subnets/a`, uuid: 'aaaa0001-0000-4000-8000-000000000001', cidr: '10.0.0.0/24' };
const PUBLIC: SubnetStub = { href: `${API}/subnets/p`, uuid: 'dddd0001-0000-4000-8000-000000000001', cidr: '192.0.2.0/24' };

function server(n: number): Server {
  const address = (a: string, subnet: SubnetStub) => ({ version: 4 as const, address: a, prefix_length: 24, gateway: null, reverse_ptr: null, subnet });
  return {
    href: `${API}/servers/s${n}`,
    uuid: `5e000000-0000-4000-8000-00000000000${n}`,
    name: `worker-${n}`,
    status: 'running',
    zone: { slug: 'rma1' },
    flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
    image: null,
    interfaces: [
      { type: 'public', network: { href: `${API}/networks/pub`, uuid: 'pub', name: 'public' }, addresses: [address(`192.0.2.${n}`, PUBLIC)] },
      { type: 'private', network: { href: `${API}/networks/priv`, uuid: 'priv', name: 'private' }, addresses: [address(`10.0.0.${n}`, SUBNET)] },
    ],
    created_at: '2024-01-01T00:00:00Z',
    tags: {},
  };
}

function node(n: number): V1Node {
  return { metadata: { name: `worker-${n}` }, spec: {} };
}

function newService(): V1Service {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', annotations: {}, finalizers: [] },
    spec: { type: 'LoadBalancer', ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }], externalTrafficPolicy: 'Cluster' },
    status: { loadBalancer: {} },
  };
}

describe('renderPlanText groups per object, from real plans', () => {
  test('a two-port pool swap with allowed CIDRs and a timeout changed at the same time: each reason once per port, every changed field listed', () => {
    const world = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]));
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip', 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]', 'loadbalancer-timeout-client-data-ms': '1000' });
    const output = text(doc([world.plan()]));
    const moving = 'because the pool algorithm cannot change in place: pool tcp/http is replaced (k8s.cloudscale.ch/loadbalancer-pool-algorithm: round_robin → source_ip)';
    expect(output.split('\n').filter((line) => line.trim() === moving)).toHaveLength(1);
    expect(output.split('\n').filter((line) => line.includes('because the pool algorithm cannot change in place'))).toHaveLength(2 * 4);
    // The listener moved to the successor says what else changes with it.
    expect(output).toContain(
      [
        '  - delete-listener  listener tcp/80',
        '  + create-listener  listener tcp/80',
        '        allowed_cidrs: [] → ["10.0.0.0/8"]',
        '        timeout_client_data_ms: 50000 → 1000',
        `      ${moving}`,
        '      impact: pool-swap, the port is unreachable only while its listener moves to the new, already healthy pool (up to ~20 s; ~45 s if a request of the move fails and is sent again)',
      ].join('\n'),
    );
    expect(output).toContain('  + create-pool      pool tcp/http\n        algorithm: round_robin → source_ip\n');
  });

  test('a pool swap is printed in the order it runs: the old pool goes after the wait and the listener move', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    const steps = text(doc([world.plan()]))
      .split('\n')
      .filter((line) => /^ {2}\S /.test(line))
      .map((line) => line.trim().replace(/ {2,}/g, '  '));
    expect(steps).toEqual([
      '+ create-pool  pool tcp/http',
      '+ create-member  member 10.0.0.1:30080 of pool tcp/http',
      '+ create-member  member 10.0.0.2:30080 of pool tcp/http',
      '+ create-monitor  health monitor of pool tcp/http',
      '… await-members  2 members of pool tcp/http healthy',
      '- delete-listener  listener tcp/80',
      '+ create-listener  listener tcp/80',
      '- delete-monitor  health monitor of pool tcp/http',
      '- delete-member  member 10.0.0.1:30080 of pool tcp/http',
      '- delete-member  member 10.0.0.2:30080 of pool tcp/http',
      '- delete-pool  pool tcp/http',
    ]);
    // The printed order is the order the actions run in.
    expect(steps.map((line) => line.split('  ')[0]!.slice(2))).toEqual(world.plan().actions.map((a) => a.kind));
  });

  test('a held listener move lists the fields that change with it: a timeout riding on it is shown', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip', 'loadbalancer-timeout-client-data-ms': '1000' });
    const output = text(doc([applyBudget(world.plan(), { seconds: 5 })]));
    expect(output).toContain(
      ['    - delete-listener  listener tcp/80', '    + create-listener  listener tcp/80', '          timeout_client_data_ms: 50000 → 1000', '    - delete-monitor   health monitor of pool tcp/http'].join('\n'),
    );
    // The successor pool, built now, says what differs from the pool it replaces later.
    expect(output).toContain('  + create-pool        pool tcp/http\n        algorithm: round_robin → source_ip\n');
  });

  test('in-place changes of one listener: one update, every field with its reason', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]', 'loadbalancer-timeout-client-data-ms': '1000' });
    expect(text(doc([world.plan()]))).toBe(
      [
        'Symbols: ~ update in place',
        '',
        'Service shop/web — load balancer k8s-service-uid-web',
        '  ~ update-listener  listener tcp/80',
        '      because allowed_cidrs changes in place (k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs: [] → ["10.0.0.0/8"])',
        '      because timeout_client_data_ms changes in place (k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms: 50000 → 1000)',
        '      impact: minimal, no interruption expected; new connections may be affected for a few seconds',
        '',
        'Plan: 0 to create, 1 to update, 0 to delete. Worst expected downtime: shop/web, listener tcp/80 (minimal): no interruption expected; new connections may be affected for a few seconds.',
        '',
      ].join('\n'),
    );
  });
});

describe('renderPlanText: what waits for its time is shown, never "No changes"', () => {
  test('members waiting for the end of their drain: the time they are deleted, counted in the summary as changes', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const world = converged(svc(), (w) => (w.drain = { seconds: 60, nowMs: start }));
    world.nodes = [worldNode(1)];
    world.converge();
    world.drain = { seconds: 60, nowMs: start + 30_000 };
    const document = doc([world.plan()]);
    expect(document.summary).toMatchObject({ pending: 1, changes: true, create: 0, update: 0, delete: 0 });
    expect(text(document)).toBe(
      [
        'Service shop/web — load balancer k8s-service-uid-web',
        '  later: 1 member is deleted after its drain ends at 2026-01-01T00:01:00.000Z',
        '    - delete-member  member 10.0.0.2:30080 of pool tcp/http',
        '',
        'Plan: 0 to create, 0 to update, 0 to delete, 1 member to delete after its drain. Expected downtime: none.',
        '',
      ].join('\n'),
    );
  });

  test('members whose drains end at different times: one line per time, the earliest first', () => {
    const member = (n: number) => act('delete-member', `member 10.0.0.${n}:30080 of pool tcp/http`, 'none');
    const plan = servicePlan('web', [], {
      pending: [
        { action: member(3), after: '2026-01-01T00:02:00.000Z' },
        { action: member(1), after: '2026-01-01T00:01:00.000Z' },
        { action: member(2), after: '2026-01-01T00:01:00.000Z' },
      ],
    });
    expect(text(doc([plan])).split('\n').filter((line) => line.includes('later:') || line.startsWith('Plan:'))).toEqual([
      '  later: 2 members are deleted after their drain ends at 2026-01-01T00:01:00.000Z',
      '  later: 1 member is deleted after its drain ends at 2026-01-01T00:02:00.000Z',
      'Plan: 0 to create, 0 to update, 0 to delete, 3 members to delete after their drain. Expected downtime: none.',
    ]);
  });
});

describe('renderPlanText names every field of a monitor change', () => {
  test('an http check on /healthz swapped for the /livez check of ETP Local: the path change is in the reason, not only type and version', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-health-monitor-type`]: 'http', [`${P}loadbalancer-health-monitor-http`]: '{"url_path":"/healthz"}' }));
    world.annotate({ 'loadbalancer-health-monitor-type': null, 'loadbalancer-health-monitor-http': null });
    Object.assign(world.service.spec!, { externalTrafficPolicy: 'Local', healthCheckNodePort: 31999 });
    const output = text(doc([world.plan()]));
    expect(output).toContain(
      '      because the monitor type or HTTP version cannot change in place: pool tcp/http is swapped for one with the new monitor (spec.externalTrafficPolicy: http.version 1.1, http.url_path /healthz → http.version 1.0, http.url_path /livez)\n',
    );
    // The new monitor lists what differs from the one it replaces, field by field.
    expect(output).toContain('  + create-monitor   health monitor of pool tcp/http\n        http.url_path: /healthz → /livez\n        http.version: 1.1 → 1.0\n');
  });
});

