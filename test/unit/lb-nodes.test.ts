import type { V1Node } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import type { Server } from '../../src/core/cloudscale/types.js';
import {
  EXCLUDE_FROM_LB_LABEL,
  lbNodeExclusion,
  mapNodesToServers,
  selectLbNodes,
  TO_BE_DELETED_TAINT,
} from '../../src/core/lb/nodes.js';
import { parseLabelSelector } from '../../src/core/lb/selector.js';

function node(name: string, tweak: (n: V1Node) => void = () => undefined): V1Node {
  const n: V1Node = { metadata: { name, labels: {} }, spec: {} };
  tweak(n);
  return n;
}
const labelled = (labels: Record<string, string>) => (n: V1Node) => Object.assign(n.metadata!.labels!, labels);

function server(uuid: string, name: string): Server {
  return {
    href: `https://api.example/v1/servers/${uuid}`,
    uuid,
    name,
    status: 'running',
    zone: { slug: 'rma1' },
    flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
    image: null,
    interfaces: [],
    created_at: '2024-01-01T00:00:00Z',
    tags: {},
  };
}

describe('lbNodeExclusion', () => {
  test.each<[string, V1Node, ReturnType<typeof lbNodeExclusion>]>([
    ['plain node', node('a'), null],
    ['NotReady is not a filter', node('a', (n) => (n.status = { conditions: [{ type: 'Ready', status: 'False' }] })), null],
    ['cordoned is not a filter', node('a', (n) => (n.spec!.unschedulable = true)), null],
    ['being deleted', node('a', (n) => (n.metadata!.deletionTimestamp = new Date('2024-01-01'))), 'deleting'],
    ['exclusion label true', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: 'true' })), 'exclude-label'],
    ['exclusion label empty', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: '' })), 'exclude-label'],
    ['exclusion label unparsable', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: 'yes' })), 'exclude-label'],
    ['exclusion label T', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: 'T' })), 'exclude-label'],
    ['exclusion label false includes', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: 'false' })), null],
    ['exclusion label 0 includes', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: '0' })), null],
    ['exclusion label False includes', node('a', labelled({ [EXCLUDE_FROM_LB_LABEL]: 'False' })), null],
    [
      'autoscaler taint',
      node('a', (n) => (n.spec!.taints = [{ key: TO_BE_DELETED_TAINT, effect: 'NoSchedule', value: '1700000000' }])),
      'autoscaler-taint',
    ],
    ['other taint', node('a', (n) => (n.spec!.taints = [{ key: 'dedicated', effect: 'NoSchedule' }])), null],
  ])('%s', (_name, n, expected) => {
    expect(lbNodeExclusion(n)).toBe(expected);
  });
});

describe('selectLbNodes', () => {
  const nodes = [
    node('n1', labelled({ env: 'prod', tier: 'frontend' })),
    node('n2', labelled({ env: 'dev' })),
    node('n3', labelled({ env: 'prod' })),
    node('n4', labelled({ env: 'prod', [EXCLUDE_FROM_LB_LABEL]: 'true' })),
  ];
  test.each<[string, string | null, string[]]>([
    ['no selector: all eligible', null, ['n1', 'n2', 'n3']],
    ['env=prod', 'env=prod', ['n1', 'n3']],
    ['env=prod,tier=frontend', 'env=prod,tier=frontend', ['n1']],
    ['no match', 'env=staging', []],
    ['the exclusion label is applied first', `${EXCLUDE_FROM_LB_LABEL}`, []],
  ])('%s', (_name, selector, expected) => {
    const selection = selectLbNodes(nodes, selector === null ? null : parseLabelSelector(selector));
    expect(selection.eligible.map((n) => n.metadata!.name)).toEqual(['n1', 'n2', 'n3']);
    expect(selection.selected.map((n) => n.metadata!.name)).toEqual(expected);
  });
});

describe('mapNodesToServers', () => {
  const s1 = server('dad649bd-a578-4c89-9d3b-95c353f28de5', 'worker-1');
  const s2 = server('0b0d3e5e-1111-4222-8333-444455556666', 'worker-2');
  const clone1 = server('aaaaaaaa-1111-4222-8333-444455556666', 'clone');
  const clone2 = server('bbbbbbbb-1111-4222-8333-444455556666', 'clone');
  const servers = [s1, s2, clone1, clone2];
  const withProviderId = (id: string) => (n: V1Node) => (n.spec!.providerID = id);

  test.each<[string, V1Node, Server]>([
    ['by name', node('worker-2'), s2],
    ['by providerID', node('whatever', withProviderId(`cloudscale://${s1.uuid}`)), s1],
    ['providerID in upper case without hyphens', node('x', withProviderId('cloudscale://DAD649BDA5784C899D3B95C353F28DE5')), s1],
    ['providerID wins over the name', node('worker-2', withProviderId(`cloudscale://${s1.uuid}`)), s1],
    ['providerID disambiguates clones', node('clone', withProviderId(`cloudscale://${clone2.uuid}`)), clone2],
  ])('%s', (_name, n, expected) => {
    expect(mapNodesToServers([n], servers)).toEqual({ ok: true, mapped: [{ node: n.metadata!.name, server: expected }] });
  });

  test.each<[string, V1Node, string]>([
    ['unknown name', node('worker-9'), 'node worker-9 has no providerID and no server is named worker-9'],
    ['ambiguous name', node('clone'), 'node clone has no providerID and 2 servers are named clone'],
    [
      'unknown UUID',
      node('w', withProviderId('cloudscale://11111111-2222-4333-8444-555555555555')),
      'node w has providerID cloudscale://11111111-2222-4333-8444-555555555555, but no server 11111111-2222-4333-8444-555555555555 exists',
    ],
    ['foreign provider', node('w', withProviderId('hcloud://123')), 'node w has providerID "hcloud://123", which is not a cloudscale server'],
    ['garbage provider ID', node('w', withProviderId('cloudscale://foo')), 'node w has providerID "cloudscale://foo", which is not a cloudscale server'],
  ])('%s → a problem naming the node', (_name, n, message) => {
    const result = mapNodesToServers([node('worker-1'), n], servers);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ kind: 'node-mapping', subject: `node ${n.metadata!.name}` });
    expect(result.problems[0]!.message).toContain(message);
    expect(result.problems[0]!.hint).not.toBe('');
  });

  test('reports every unmapped node', () => {
    const result = mapNodesToServers([node('a'), node('worker-1'), node('b')], servers);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.subject)).toEqual(['node a', 'node b']);
  });

  test('keeps node order', () => {
    expect(mapNodesToServers([node('worker-2'), node('worker-1')], servers)).toEqual({
      ok: true,
      mapped: [
        { node: 'worker-2', server: s2 },
        { node: 'worker-1', server: s1 },
      ],
    });
  });
});
