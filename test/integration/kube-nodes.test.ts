// @kube-versions: all — the server's Node validation (providerID settable once) and patch types
// What node initialisation relies on, proven against the real apiserver through client-node.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, describe, expect, test } from 'vitest';
import {
  createNode,
  deleteCreatedObjects,
  NOT_READY_TAINT_KEY,
  statusOf,
  testConnection,
  UNINITIALIZED_TAINT_KEY,
  uniqueName,
} from '../support/kube.js';

const conn = testConnection();
const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = () => setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const uninitialized = { key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' };
const dedicated = { key: 'example.com/dedicated', value: 'db', effect: 'NoExecute' };

afterAll(deleteCreatedObjects);

describe('Nodes on the test apiserver', () => {
  test('a Node created with the uninitialized taint keeps it, next to the admission not-ready taint', async () => {
    const name = uniqueName('node-taint');
    await createNode(name, { taints: [uninitialized] });
    const node = await conn.core.readNode({ name });
    expect(node.spec?.taints).toEqual([
      uninitialized,
      { key: NOT_READY_TAINT_KEY, effect: 'NoSchedule' },
    ]);
  });

  test('spec.providerID can be set once; a different value is rejected, the same value accepted', async () => {
    const name = uniqueName('node-pid');
    await createNode(name);
    const set = await conn.core.patchNode(
      { name, body: { spec: { providerID: 'cloudscale://11111111-1111-4111-8111-111111111111' } } },
      mergePatch(),
    );
    expect(set.spec?.providerID).toBe('cloudscale://11111111-1111-4111-8111-111111111111');

    const change = conn.core.patchNode(
      { name, body: { spec: { providerID: 'cloudscale://22222222-2222-4222-8222-222222222222' } } },
      mergePatch(),
    );
    const error = await change.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(statusOf(error)).toBe(422);
    expect(String((error as { body?: unknown }).body)).toContain('providerID');

    const same = await conn.core.patchNode(
      { name, body: { spec: { providerID: 'cloudscale://11111111-1111-4111-8111-111111111111' } } },
      mergePatch(),
    );
    expect(same.spec?.providerID).toBe('cloudscale://11111111-1111-4111-8111-111111111111');
  });

  test('status.addresses are replaced as a whole through the status subresource (merge patch)', async () => {
    const name = uniqueName('node-addr');
    await createNode(name, {
      addresses: [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'InternalIP', address: '10.0.0.6' },
        { type: 'Hostname', address: name },
      ],
    });
    const replacement = [
      { type: 'ExternalIP', address: '203.0.113.5' },
      { type: 'InternalIP', address: '10.0.0.7' },
    ];
    const patched = await conn.core.patchNodeStatus(
      { name, body: { status: { addresses: replacement } } },
      mergePatch(),
    );
    expect(patched.status?.addresses).toEqual(replacement);

    // The main resource ignores status: the same patch there changes nothing.
    const ignored = await conn.core.patchNode(
      { name, body: { status: { addresses: [{ type: 'InternalIP', address: '10.9.9.9' }] } } },
      mergePatch(),
    );
    expect(ignored.status?.addresses).toEqual(replacement);
  });

  test('one taint is removed, the others stay (JSON patch guarded by resourceVersion)', async () => {
    const name = uniqueName('node-untaint');
    const node = await createNode(name, { taints: [dedicated, uninitialized] });
    const taints = node.spec?.taints ?? [];
    const index = taints.findIndex((t) => t.key === UNINITIALIZED_TAINT_KEY);
    expect(index).toBeGreaterThanOrEqual(0);
    const patched = await conn.core.patchNode(
      {
        name,
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: node.metadata?.resourceVersion },
          { op: 'test', path: `/spec/taints/${index}/key`, value: UNINITIALIZED_TAINT_KEY },
          { op: 'remove', path: `/spec/taints/${index}` },
        ],
      },
      jsonPatch(),
    );
    expect(patched.spec?.taints?.map((t) => t.key)).toEqual([dedicated.key, NOT_READY_TAINT_KEY]);
    expect(patched.spec?.taints?.[0]).toEqual(dedicated);
  });

  test('a stale resourceVersion in a patch is refused with 409', async () => {
    const name = uniqueName('node-stale');
    const node = await createNode(name);
    await conn.core.patchNode({ name, body: { metadata: { labels: { step: 'one' } } } }, mergePatch());
    const stale = conn.core.patchNode(
      { name, body: { metadata: { resourceVersion: node.metadata?.resourceVersion, labels: { step: 'two' } } } },
      mergePatch(),
    );
    const error = await stale.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(statusOf(error)).toBe(409);
    expect((await conn.core.readNode({ name })).metadata?.labels?.step).toBe('one');
  });
});
