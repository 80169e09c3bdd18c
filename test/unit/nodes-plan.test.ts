import { describe, expect, test } from 'vitest';
import type { Server } from '../../src/core/cloudscale/types.js';
import type { ServerLookup } from '../../src/core/nodes/match.js';
import {
  defaultMaxNodeDeletions,
  mergeWrites,
  planNodes,
  taintsAfter,
} from '../../src/core/nodes/plan.js';
import type { NodeAction, NodeSnapshot, Taint } from '../../src/core/nodes/types.js';

const UNINIT: Taint = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
const SHUTDOWN: Taint = { key: 'node.cloudprovider.kubernetes.io/shutdown', effect: 'NoSchedule' };
const OTHER: Taint = { key: 'example.com/dedicated', value: 'db', effect: 'NoExecute', timeAdded: '2024-01-01T00:00:00Z' };

let serial = 0;
function uuid(): string {
  serial += 1;
  return `00000000-0000-4000-8000-${serial.toString().padStart(12, '0')}`;
}

function server(name: string, overrides: Partial<Server> = {}): Server {
  const id = overrides.uuid ?? uuid();
  return {
    href: `https://api.example/v1/servers/${id}`,
    uuid: id,
    name,
    status: 'running',
    zone: { slug: 'rma1' },
    flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
    image: null,
    interfaces: [
      {
        type: 'public',
        network: { href: 'h', uuid: 'p', name: 'public' },
        addresses: [
          { version: 4, address: '203.0.113.10', prefix_length: 24, gateway: null, reverse_ptr: null, subnet: { href: 'h', uuid: 's', cidr: '203.0.113.0/24' } },
        ],
      },
      {
        type: 'private',
        network: { href: 'h', uuid: 'q', name: 'net' },
        addresses: [
          { version: 4, address: '10.0.0.10', prefix_length: 24, gateway: null, reverse_ptr: null, subnet: { href: 'h', uuid: 't', cidr: '10.0.0.0/24' } },
        ],
      },
    ],
    created_at: '2024-01-01T00:00:00Z',
    tags: {},
    ...overrides,
  };
}

type Tweak = (n: NodeSnapshot) => void;
function node(name: string, ...tweaks: Tweak[]): NodeSnapshot {
  const n: NodeSnapshot = {
    name,
    uid: `uid-${name}`,
    resourceVersion: '7',
    providerID: '',
    labels: {},
    annotations: {},
    taints: [],
    addresses: [],
    readiness: 'True',
    deleting: false,
  };
  for (const tweak of tweaks) tweak(n);
  return n;
}
const withProviderId = (s: Server | string): Tweak => (n) => {
  n.providerID = `cloudscale://${typeof s === 'string' ? s : s.uuid}`;
};
const withTaints = (...taints: Taint[]): Tweak => (n) => {
  n.taints = taints;
};
const notReady = (status: NodeSnapshot['readiness'] = 'False'): Tweak => (n) => {
  n.readiness = status;
};
const inSyncWith = (s: Server): Tweak => (n) => {
  n.providerID = `cloudscale://${s.uuid}`;
  n.labels = {
    'node.kubernetes.io/instance-type': s.flavor.slug,
    'beta.kubernetes.io/instance-type': s.flavor.slug,
    'topology.kubernetes.io/zone': s.zone.slug,
    'failure-domain.beta.kubernetes.io/zone': s.zone.slug,
    'topology.kubernetes.io/region': s.zone.slug.replace(/\d+$/, ''),
    'failure-domain.beta.kubernetes.io/region': s.zone.slug.replace(/\d+$/, ''),
  };
  n.addresses = [
    { type: 'Hostname', address: s.name },
    { type: 'ExternalIP', address: '203.0.113.10' },
    { type: 'InternalIP', address: '10.0.0.10' },
  ];
};

/** kind/verb/problem per node: the decision table without the display text. */
function decisions(actions: readonly NodeAction[]): string[] {
  return actions.map((a) => `${a.node}: ${a.kind} ${a.verb}${'problem' in a && a.problem ? ` (${a.problem})` : ''}`);
}

describe('initialisation', () => {
  test('a tainted node matched by name gets providerID, labels, addresses and loses only the uninitialized taint', () => {
    const s = server('worker-1');
    const plan = planNodes({ nodes: [node('worker-1', withTaints(UNINIT, OTHER))], servers: [s] });
    expect(plan.actions).toHaveLength(1);
    const action = plan.actions[0];
    expect(action?.kind).toBe('initialize');
    if (action?.kind !== 'initialize') return;
    expect(action.write).toEqual({
      providerID: `cloudscale://${s.uuid}`,
      labels: {
        'node.kubernetes.io/instance-type': 'flex-4-2',
        'beta.kubernetes.io/instance-type': 'flex-4-2',
        'topology.kubernetes.io/zone': 'rma1',
        'failure-domain.beta.kubernetes.io/zone': 'rma1',
        'topology.kubernetes.io/region': 'rma',
        'failure-domain.beta.kubernetes.io/region': 'rma',
      },
      addresses: [
        { type: 'Hostname', address: 'worker-1' },
        { type: 'ExternalIP', address: '203.0.113.10' },
        { type: 'InternalIP', address: '10.0.0.10' },
      ],
      removeTaints: [UNINIT.key],
    });
    expect(action.reason.text).toContain('matched by name');
    expect(action.impact).toBe('none');
    expect(taintsAfter([UNINIT, OTHER], action.write)).toEqual([OTHER]);
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });

  test('a tainted node with a providerID keeps it and is matched by it, not by name', () => {
    const byId = server('renamed');
    const sameName = server('worker-1');
    const plan = planNodes({
      nodes: [node('worker-1', withProviderId(byId), withTaints(UNINIT))],
      servers: [byId, sameName],
    });
    const action = plan.actions[0];
    if (action?.kind !== 'initialize') throw new Error('expected initialize');
    expect(action.server.uuid).toBe(byId.uuid);
    expect(action.write.providerID).toBeUndefined();
    expect(action.write.addresses?.[0]).toEqual({ type: 'Hostname', address: 'renamed' });
  });

  test('a tainted node already carrying every value only loses the taint', () => {
    const s = server('worker-1');
    const plan = planNodes({ nodes: [node('worker-1', inSyncWith(s), withTaints(UNINIT))], servers: [s] });
    const action = plan.actions[0];
    if (action?.kind !== 'initialize') throw new Error('expected initialize');
    expect(action.write).toEqual({ removeTaints: [UNINIT.key] });
  });

  test.each<{ name: string; nodes: NodeSnapshot[]; servers: Server[]; expected: string[] }>([
    {
      name: 'no server of that name',
      nodes: [node('worker-1', withTaints(UNINIT))],
      servers: [server('worker-2')],
      expected: ['worker-1: skip refuse (no-match)'],
    },
    {
      name: 'two servers named alike',
      nodes: [node('worker-1', withTaints(UNINIT))],
      servers: [server('worker-1'), server('worker-1')],
      expected: ['worker-1: skip refuse (ambiguous)'],
    },
    {
      name: 'name match is exact (no prefix, no case folding)',
      nodes: [node('worker-1', withTaints(UNINIT))],
      servers: [server('Worker-1'), server('worker-10')],
      expected: ['worker-1: skip refuse (no-match)'],
    },
    {
      name: 'a foreign providerID is never touched',
      nodes: [node('worker-1', withTaints(UNINIT), (n) => (n.providerID = 'hcloud://4711'))],
      servers: [server('worker-1')],
      expected: ['worker-1: skip refuse (foreign-provider-id)'],
    },
    {
      name: 'a garbage providerID',
      nodes: [node('worker-1', withTaints(UNINIT), (n) => (n.providerID = 'cloudscale://nope'))],
      servers: [server('worker-1')],
      expected: ['worker-1: skip refuse (invalid-provider-id)'],
    },
    {
      name: 'a provided node IP the server does not have keeps the node tainted',
      nodes: [
        node('worker-1', withTaints(UNINIT), (n) => (n.annotations['alpha.kubernetes.io/provided-node-ip'] = '192.0.2.1')),
      ],
      servers: [server('worker-1')],
      expected: ['worker-1: skip refuse (provided-node-ip)'],
    },
    {
      name: 'one bad node does not stop the others',
      nodes: [node('a', withTaints(UNINIT)), node('b', withTaints(UNINIT))],
      servers: [server('b')],
      expected: ['a: skip refuse (no-match)', 'b: initialize update'],
    },
  ])('$name', ({ nodes, servers, expected }) => {
    expect(decisions(planNodes({ nodes, servers }).actions)).toEqual(expected);
  });

  test('a provided node IP reorders and filters the addresses written', () => {
    const s = server('worker-1');
    const plan = planNodes({
      nodes: [node('worker-1', withTaints(UNINIT), (n) => (n.annotations['alpha.kubernetes.io/provided-node-ip'] = '10.0.0.10'))],
      servers: [s],
    });
    const action = plan.actions[0];
    if (action?.kind !== 'initialize') throw new Error('expected initialize');
    expect(action.write.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.10' },
      { type: 'Hostname', address: 'worker-1' },
      { type: 'ExternalIP', address: '203.0.113.10' },
    ]);
  });
});

describe('refresh (drift repair)', () => {
  test('an initialised node in sync: no action, reported in sync', () => {
    const s = server('worker-1');
    const plan = planNodes({ nodes: [node('worker-1', inSyncWith(s))], servers: [s] });
    expect(plan.actions).toEqual([]);
    expect(plan.untouched).toEqual([{ node: 'worker-1', why: 'in-sync', text: expect.stringContaining(s.uuid) }]);
  });

  test('changed zone and addresses are written; only the differing labels', () => {
    const s = server('worker-1');
    const moved = { ...s, zone: { slug: 'lpg1' }, interfaces: s.interfaces.slice(1) };
    const plan = planNodes({ nodes: [node('worker-1', inSyncWith(s))], servers: [moved] });
    const action = plan.actions[0];
    if (action?.kind !== 'refresh') throw new Error('expected refresh');
    expect(action.write).toEqual({
      labels: {
        'topology.kubernetes.io/zone': 'lpg1',
        'failure-domain.beta.kubernetes.io/zone': 'lpg1',
        'topology.kubernetes.io/region': 'lpg',
        'failure-domain.beta.kubernetes.io/region': 'lpg',
      },
      addresses: [
        { type: 'Hostname', address: 'worker-1' },
        { type: 'InternalIP', address: '10.0.0.10' },
      ],
    });
    expect(action.reason).toMatchObject({ field: 'metadata.labels[topology.kubernetes.io/zone]', from: 'rma1', to: 'lpg1' });
    expect(action.changes.map((c) => c.field)).toContain('status.addresses');
  });

  test('a missing beta label is added', () => {
    const s = server('worker-1');
    const plan = planNodes({
      nodes: [node('worker-1', inSyncWith(s), (n) => delete n.labels['beta.kubernetes.io/instance-type'])],
      servers: [s],
    });
    expect(plan.actions[0]).toMatchObject({ kind: 'refresh', write: { labels: { 'beta.kubernetes.io/instance-type': 'flex-4-2' } } });
  });

  test.each([
    [[server('worker-2')], 'among 1 server'],
    [[server('worker-2'), server('worker-3')], 'among 2 servers'],
  ])('the no-match text counts the servers in the right number (%#)', (servers, counted) => {
    const plan = planNodes({ nodes: [node('worker-1', withTaints(UNINIT))], servers });
    expect(plan.actions[0]?.reason.text).toBe(`no providerID and no server named "worker-1" ${counted}`);
  });

  test('untainted nodes without a providerID are not managed', () => {
    const plan = planNodes({ nodes: [node('worker-1')], servers: [server('worker-1')] });
    expect(plan.actions).toEqual([]);
    expect(plan.untouched[0]?.why).toBe('unmanaged');
  });

  test('nodes being deleted are left alone', () => {
    const plan = planNodes({ nodes: [node('worker-1', withTaints(UNINIT), (n) => (n.deleting = true))], servers: [] });
    expect(plan.actions).toEqual([]);
    expect(plan.untouched[0]?.why).toBe('deleting');
  });
});

describe('lifecycle', () => {
  const cases: { name: string; node: (s: Server) => NodeSnapshot; status: string; expected: string[] }[] = [
    { name: 'NotReady + stopped → shutdown taint', node: (s) => node('n', inSyncWith(s), notReady()), status: 'stopped', expected: ['n: add-shutdown-taint update'] },
    { name: 'Ready Unknown + stopped → shutdown taint', node: (s) => node('n', inSyncWith(s), notReady('Unknown')), status: 'stopped', expected: ['n: add-shutdown-taint update'] },
    { name: 'no Ready condition + stopped → shutdown taint', node: (s) => node('n', inSyncWith(s), notReady('missing')), status: 'stopped', expected: ['n: add-shutdown-taint update'] },
    { name: 'Ready + stopped → nothing (only NotReady nodes)', node: (s) => node('n', inSyncWith(s)), status: 'stopped', expected: [] },
    { name: 'NotReady + running → nothing', node: (s) => node('n', inSyncWith(s), notReady()), status: 'running', expected: [] },
    { name: 'NotReady + changing → nothing', node: (s) => node('n', inSyncWith(s), notReady()), status: 'changing', expected: [] },
    { name: 'already tainted + still stopped → nothing', node: (s) => node('n', inSyncWith(s), notReady(), withTaints(SHUTDOWN)), status: 'stopped', expected: [] },
    { name: 'tainted + running again → taint removed', node: (s) => node('n', inSyncWith(s), notReady(), withTaints(SHUTDOWN)), status: 'running', expected: ['n: remove-shutdown-taint update'] },
    { name: 'tainted + Ready → taint removed', node: (s) => node('n', inSyncWith(s), withTaints(SHUTDOWN)), status: 'stopped', expected: ['n: remove-shutdown-taint update'] },
    { name: 'uninitialised, NotReady, stopped → initialise and taint', node: (s) => node('n', withProviderId(s), withTaints(UNINIT), notReady()), status: 'stopped', expected: ['n: initialize update', 'n: add-shutdown-taint update'] },
  ];
  test.each(cases)('$name', ({ node: makeNode, status, expected }) => {
    const s = server('n', { status });
    expect(decisions(planNodes({ nodes: [makeNode(s)], servers: [s, server('other')] }).actions)).toEqual(expected);
  });

  test('a name-only match never gets a shutdown taint', () => {
    const s = server('n', { status: 'stopped' });
    expect(decisions(planNodes({ nodes: [node('n', withTaints(UNINIT), notReady())], servers: [s] }).actions)).toEqual([
      'n: initialize update',
    ]);
  });

  test('the shutdown taint write keeps other taints', () => {
    const s = server('n', { status: 'stopped' });
    const plan = planNodes({ nodes: [node('n', inSyncWith(s), notReady(), withTaints(OTHER))], servers: [s, server('x')] });
    const action = plan.actions[0];
    if (action?.kind !== 'add-shutdown-taint') throw new Error('expected add-shutdown-taint');
    expect(taintsAfter([OTHER], action.write)).toEqual([OTHER, SHUTDOWN]);
  });

  test('NotReady node whose server is only absent from the list → deletion awaits a GET of that server', () => {
    const gone = uuid();
    const plan = planNodes({ nodes: [node('n', withProviderId(gone), notReady())], servers: [server('other')] });
    expect(decisions(plan.actions)).toEqual(['n: delete-node refuse (unconfirmed-deletion)']);
    expect(plan.actions[0]?.reason.text).toContain(`GET /v1/servers/${gone} must answer 404 first`);
    expect(plan.deletions).toEqual({ limit: 1, candidates: 1, refusal: null, awaitingConfirmation: [gone], disabled: null });
  });

  test('the GET answers 404 → delete with uid and resourceVersion preconditions', () => {
    const gone = uuid();
    const lookups = new Map<string, ServerLookup>([[gone, { state: 'not-found' }]]);
    const plan = planNodes({ nodes: [node('n', withProviderId(gone), notReady())], servers: [server('other')], serverLookups: lookups });
    expect(plan.actions).toEqual([
      expect.objectContaining({ kind: 'delete-node', verb: 'delete', uid: 'uid-n', resourceVersion: '7', serverUuid: gone, impact: 'minimal' }),
    ]);
    expect(plan.deletions).toEqual({ limit: 1, candidates: 1, refusal: null, awaitingConfirmation: [], disabled: null });
  });

  // The list left the server out once: what the GET answers decides, never the list.
  test.each<{ name: string; answer: (s: Server) => ServerLookup; expected: string[] }>([
    { name: '200 → the server exists: kept, planned as matched', answer: (s) => ({ state: 'found', server: s }), expected: [] },
    { name: '200 of a stopped server → kept, shutdown taint', answer: (s) => ({ state: 'found', server: { ...s, status: 'stopped' } }), expected: ['n: add-shutdown-taint update'] },
    { name: '5xx or no answer → no decision, reported', answer: () => ({ state: 'error', message: 'answered 503' }), expected: ['n: skip refuse (api-error)'] },
  ])('list without the server, GET $name', ({ answer, expected }) => {
    const s = server('n');
    const lookups = new Map<string, ServerLookup>([[s.uuid, answer(s)]]);
    const plan = planNodes({ nodes: [node('n', inSyncWith(s), notReady())], servers: [server('other')], serverLookups: lookups });
    expect(decisions(plan.actions)).toEqual(expected);
    expect(plan.deletions.candidates).toBe(0);
    expect(plan.deletions.awaitingConfirmation).toEqual([]);
  });

  test('Ready node whose server is gone → not deleted, reported as a problem', () => {
    const plan = planNodes({ nodes: [node('n', withProviderId(uuid()))], servers: [server('other')] });
    expect(decisions(plan.actions)).toEqual(['n: skip refuse (server-missing)']);
  });

  test('a 404 from a single GET is enough to delete, without a list', () => {
    const gone = uuid();
    const lookups = new Map<string, ServerLookup>([[gone, { state: 'not-found' }]]);
    const plan = planNodes({ nodes: [node('n', withProviderId(gone), notReady())], serverLookups: lookups });
    expect(decisions(plan.actions)).toEqual(['n: delete-node delete']);
  });

  test('an API error on a lookup → nothing but a report', () => {
    const id = uuid();
    const lookups = new Map<string, ServerLookup>([[id, { state: 'error', message: 'HTTP 500' }]]);
    const plan = planNodes({ nodes: [node('n', withProviderId(id), notReady())], serverLookups: lookups });
    expect(decisions(plan.actions)).toEqual(['n: skip refuse (api-error)']);
    expect(plan.actions[0]?.reason.text).toContain('HTTP 500');
  });

  test('lookups: found servers are matched without a list', () => {
    const s = server('n', { status: 'stopped' });
    const lookups = new Map<string, ServerLookup>([[s.uuid, { state: 'found', server: s }]]);
    const plan = planNodes({ nodes: [node('n', inSyncWith(s), notReady())], serverLookups: lookups });
    expect(decisions(plan.actions)).toEqual(['n: add-shutdown-taint update']);
  });

  test('lookups cannot match by name', () => {
    const plan = planNodes({ nodes: [node('n', withTaints(UNINIT))], serverLookups: new Map() });
    expect(decisions(plan.actions)).toEqual(['n: skip refuse (api-error)']);
  });
});

describe('deletion guard rails', () => {
  /** `gone` NotReady nodes whose servers the list lacks and their GETs answered 404 for. */
  function cluster(
    total: number,
    gone: number,
  ): { nodes: NodeSnapshot[]; servers: Server[]; serverLookups: Map<string, ServerLookup> } {
    const servers = Array.from({ length: total - gone }, (_, i) => server(`n${i}`));
    const goneUuids = Array.from({ length: gone }, () => uuid());
    const nodes = [
      ...servers.map((s) => node(s.name, inSyncWith(s))),
      ...goneUuids.map((id, i) => node(`gone${i}`, withProviderId(id), notReady())),
    ];
    const serverLookups = new Map<string, ServerLookup>(goneUuids.map((id) => [id, { state: 'not-found' }]));
    return { nodes, servers, serverLookups };
  }

  test.each([
    [1, 1],
    [9, 1],
    [10, 1],
    [25, 2],
    [100, 10],
  ])('default bound for %i nodes is %i', (total, bound) => {
    expect(defaultMaxNodeDeletions(cluster(total, 0).nodes)).toBe(bound);
  });

  test('within the default bound: deleted', () => {
    const plan = planNodes(cluster(20, 2));
    expect(decisions(plan.actions)).toEqual(['gone0: delete-node delete', 'gone1: delete-node delete']);
    expect(plan.deletions).toEqual({ limit: 2, candidates: 2, refusal: null, awaitingConfirmation: [], disabled: null });
  });

  test('over the bound before any GET: refused, and no server is to be looked up', () => {
    const { nodes, servers } = cluster(20, 3);
    const plan = planNodes({ nodes, servers });
    expect(decisions(plan.actions)).toEqual([
      'gone0: delete-node refuse (deletion-bound)',
      'gone1: delete-node refuse (deletion-bound)',
      'gone2: delete-node refuse (deletion-bound)',
    ]);
    expect(plan.deletions.awaitingConfirmation).toEqual([]);
  });

  test('over the bound: every deletion refused, not the first few', () => {
    const plan = planNodes(cluster(20, 3));
    expect(decisions(plan.actions)).toEqual([
      'gone0: delete-node refuse (deletion-bound)',
      'gone1: delete-node refuse (deletion-bound)',
      'gone2: delete-node refuse (deletion-bound)',
    ]);
    expect(plan.deletions.refusal).toMatch(/3 nodes would be deleted, more than --max-node-deletions 2/);
  });

  test('an explicit bound overrides the default', () => {
    expect(decisions(planNodes({ ...cluster(20, 3), options: { maxNodeDeletions: 3 } }).actions)).toHaveLength(3);
    expect(planNodes({ ...cluster(20, 3), options: { maxNodeDeletions: 3 } }).deletions.refusal).toBeNull();
  });

  test.each([1, 2])('0 turns deletion off with %i dead nodes: kept, said once, no refusal, nothing to look up', (gone) => {
    const { nodes, servers } = cluster(5, gone);
    const plan = planNodes({ nodes, servers, options: { maxNodeDeletions: 0 } });
    expect(plan.actions).toEqual([]);
    const kept = plan.untouched.filter((u) => u.why === 'deletion-off');
    expect(kept.map((u) => u.node)).toEqual(nodes.slice(5 - gone).map((n) => n.name));
    expect(kept[0]?.text).toMatch(/^kept: server .* is not in the server list .* --max-node-deletions 0 turns node deletion off$/);
    expect(plan.deletions.refusal).toBeNull();
    expect(plan.deletions.awaitingConfirmation).toEqual([]);
    expect(plan.deletions.disabled).toBe(
      gone === 1
        ? 'node deletion is off (--max-node-deletions 0): 1 NotReady node whose server seems gone is kept: node/gone0'
        : 'node deletion is off (--max-node-deletions 0): 2 NotReady nodes whose server seems gone are kept: node/gone0, node/gone1',
    );
  });

  test('0 without candidates says nothing', () => {
    expect(planNodes({ ...cluster(5, 0), options: { maxNodeDeletions: 0 } }).deletions.disabled).toBeNull();
  });

  test('an empty project is refused even with deletion off: a wrong token is a failure', () => {
    const plan = planNodes({ nodes: [node('a', withProviderId(uuid()), notReady())], servers: [], options: { maxNodeDeletions: 0 } });
    expect(decisions(plan.actions)).toEqual(['a: delete-node refuse (wrong-project)']);
    expect(plan.deletions.refusal).toMatch(/^the cloudscale project lists no servers at all, but 1 node carries a cloudscale providerID/);
    expect(plan.deletions.disabled).toBeNull();
  });

  test('an empty project while nodes carry cloudscale providerIDs: nothing deleted, whatever the bound', () => {
    const nodes = [node('a', withProviderId(uuid()), notReady()), node('b', withProviderId(uuid()))];
    const plan = planNodes({ nodes, servers: [], options: { maxNodeDeletions: 100 } });
    expect(decisions(plan.actions)).toEqual([
      'a: delete-node refuse (wrong-project)',
      'b: skip refuse (server-missing)',
    ]);
    expect(plan.deletions.refusal).toMatch(/lists no servers at all, but 2 nodes carry a .*right project/);
  });

  test('an empty project with only foreign nodes is not a wrong-project case', () => {
    const plan = planNodes({ nodes: [node('a', (n) => (n.providerID = 'hcloud://1'))], servers: [] });
    expect(plan.deletions.refusal).toBeNull();
  });
});

describe('writes', () => {
  test('mergeWrites accumulates taint edits and later labels win', () => {
    expect(
      mergeWrites([
        { providerID: 'cloudscale://x', labels: { a: '1', b: '1' }, removeTaints: [UNINIT.key] },
        { addTaints: [SHUTDOWN] },
        { labels: { b: '2' }, addresses: [{ type: 'Hostname', address: 'h' }] },
      ]),
    ).toEqual({
      providerID: 'cloudscale://x',
      labels: { a: '1', b: '2' },
      removeTaints: [UNINIT.key],
      addTaints: [SHUTDOWN],
      addresses: [{ type: 'Hostname', address: 'h' }],
    });
  });

  test('taintsAfter removes every effect of a key and does not duplicate', () => {
    const noExec = { ...SHUTDOWN, effect: 'NoExecute' };
    expect(taintsAfter([SHUTDOWN, noExec, OTHER], { removeTaints: [SHUTDOWN.key] })).toEqual([OTHER]);
    expect(taintsAfter([SHUTDOWN, OTHER], { addTaints: [SHUTDOWN] })).toEqual([SHUTDOWN, OTHER]);
  });
});
