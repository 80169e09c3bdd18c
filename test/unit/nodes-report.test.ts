import { describe, expect, test } from 'vitest';
import { summarise, untouchedResult } from '../../src/core/apply/node-report.js';
import { nodeResultDocument, nodeText } from '../../src/core/render/node-report.js';
import { toNodeSnapshot } from '../../src/core/kube/nodes.js';
import type { NodeAction, NodeAddress, NodeSnapshot } from '../../src/core/nodes/types.js';
import { counted } from '../../src/core/text/wording.js';

const node: NodeSnapshot = toNodeSnapshot({ metadata: { name: 'worker-1', uid: 'uid-1', resourceVersion: '7' } });

const SERVER_UUID = '5a4346e5-1910-4009-885d-c812026c33fd';

function initialize(addresses: NodeAddress[] | undefined): NodeAction {
  return {
    kind: 'initialize',
    node: node.name,
    object: `node/${node.name}`,
    verb: 'update',
    reason: { field: 'spec.taints', from: 'NoSchedule', to: null, text: 'uninitialised node' },
    changes: [],
    impact: 'none',
    server: { uuid: SERVER_UUID, name: node.name, zone: 'rma1', flavor: 'flex-4-2', status: 'running' },
    write: addresses === undefined ? {} : { addresses },
  };
}

const address = (n: number): NodeAddress => ({ type: 'InternalIP', address: `10.0.0.${n}` });

describe('the line of a node', () => {
  test.each([
    [[address(1)], false, `initialized: providerID cloudscale://${SERVER_UUID}, zone rma1, 1 address`],
    [[address(1), address(2)], false, `initialized: providerID cloudscale://${SERVER_UUID}, zone rma1, 2 addresses`],
    [undefined, false, `initialized: providerID cloudscale://${SERVER_UUID}, zone rma1, addresses unchanged`],
    [[address(1)], true, `would be initialized: providerID cloudscale://${SERVER_UUID}, zone rma1, 1 address`],
  ])('initialize with addresses %j (dry run %s)', (addresses, dryRun, text) => {
    const result = summarise(node, [initialize(addresses)], dryRun);
    expect(result.outcome).toBe('initialized');
    expect(nodeText(result)).toBe(text);
  });

  test('a refused deletion is refused, with the hint of its problem', () => {
    const refused: NodeAction = {
      kind: 'delete-node',
      node: node.name,
      object: `node/${node.name}`,
      verb: 'refuse',
      problem: 'deletion-bound',
      reason: { field: 'spec.providerID', from: 'cloudscale://x', to: null, text: 'server x is gone; refused: bound' },
      changes: [],
      impact: 'minimal',
      uid: node.uid,
      resourceVersion: node.resourceVersion,
      serverUuid: 'x',
    };
    expect(nodeResultDocument(summarise(node, [refused], false))).toEqual({
      node: node.name,
      object: `node/${node.name}`,
      outcome: 'refused',
      text: 'deletion refused: server x is gone; refused: bound',
      actions: [refused],
      error: {
        message: 'server x is gone; refused: bound',
        hint: 'check that the servers are really gone, then run once with a higher --max-node-deletions',
      },
    });
  });

  test.each([
    [undefined, 'in-sync', 'in sync'],
    [{ node: node.name, why: 'in-sync' as const, text: 'in sync with server worker-1' }, 'in-sync', 'in sync'],
    [{ node: node.name, why: 'deletion-off' as const, text: 'kept: …' }, 'deletion-off', 'kept: …'],
  ])('untouched %#: outcome %s, no error', (untouched, outcome, text) => {
    expect(nodeResultDocument(untouchedResult(node.name, untouched))).toEqual({ node: node.name, object: `node/${node.name}`, outcome, text, actions: [] });
  });
});

// The pass builds node results as data; their words are render/node-report.ts's alone.
test('a node result carries no words of its line: the documents and the lines add them', () => {
  const results = [summarise(node, [initialize([address(1)])], false), summarise(node, [], true), untouchedResult(node.name, undefined)];
  expect(results.filter((result) => 'text' in result)).toEqual([]);
  expect(results.map((result) => nodeResultDocument(result).text)).toEqual([
    `initialized: providerID cloudscale://${SERVER_UUID}, zone rma1, 1 address`,
    'in sync',
    'in sync',
  ]);
});

test.each([
  [0, 'node', undefined, '0 nodes'],
  [1, 'node', undefined, '1 node'],
  [2, 'node', undefined, '2 nodes'],
  [1, 'address', 'addresses', '1 address'],
  [3, 'address', 'addresses', '3 addresses'],
])('counted(%i, %s)', (count, noun, plural, expected) => {
  expect(counted(count, noun, plural)).toBe(expected);
});
