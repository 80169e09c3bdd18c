// @kube-versions: all — what every versioned file relies on: admission plugins (TaintNodesByCondition), status subresources, the control plane of that version
// The test control plane itself: what test/support/worker-cluster.ts promises to every integration test.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  createNode,
  deleteCreatedObjects,
  deleteNodeForced,
  NOT_READY_TAINT_KEY,
  testConnection,
  testKubeconfig,
  testClusterDir,
  uniqueName,
} from '../support/kube.js';

afterAll(deleteCreatedObjects);

describe('test cluster', () => {
  test('the admin kubeconfig reaches an apiserver with the system namespaces', async () => {
    const conn = testConnection();
    const names = (await conn.core.listNamespace()).items.map((n) => n.metadata?.name);
    expect(names).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']));
    expect(process.env.CCM_TEST_KUBECONFIG).toBe(testKubeconfig());
  });

  // Files of different workers run at the same time; each worker's whole-cluster passes must
  // see only its own files' objects.
  test.skipIf(testClusterDir() === undefined)('this worker has a control plane of its own: worker-<VITEST_POOL_ID> of the run', () => {
    const root = process.env.CCM_TEST_CLUSTER_ROOT;
    expect(root).toBeTruthy();
    expect(testClusterDir()).toBe(join(root!, `worker-${process.env.VITEST_POOL_ID}`));
    expect(testKubeconfig()).toBe(join(testClusterDir()!, 'kubeconfig'));
  });

  test('every new Node gets the not-ready taint (TaintNodesByCondition), even one created Ready', async () => {
    const conn = testConnection();
    const name = uniqueName('probe');
    const ready = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'test' };
    const node = await conn.core.createNode({ body: { metadata: { name }, status: { conditions: [ready] } } });
    await deleteNodeForced(name);
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual([`${NOT_READY_TAINT_KEY}:NoSchedule`]);
  });

  test('createNode writes Ready and addresses through the status subresource; nothing removes the taint', async () => {
    const name = uniqueName('probe');
    const addresses = [{ type: 'InternalIP', address: '10.1.2.3' }];
    const node = await createNode(name, { ready: true, addresses, labels: { role: 'probe' } });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node.status?.addresses).toEqual(addresses);
    expect(node.metadata?.labels?.role).toBe('probe');
    expect(node.spec?.taints?.map((t) => t.key)).toEqual([NOT_READY_TAINT_KEY]);
  });

  test('unique names are DNS-1035 labels and differ', () => {
    const a = uniqueName('Some_Long Prefix'.repeat(5));
    const b = uniqueName('Some_Long Prefix'.repeat(5));
    expect(a).not.toBe(b);
    for (const n of [a, b]) expect(n).toMatch(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });

  test('a second client from the same kubeconfig works (CLI processes load the file themselves)', async () => {
    const config = new KubeConfig();
    config.loadFromFile(testKubeconfig());
    const core = config.makeApiClient(CoreV1Api);
    expect((await core.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
  });
});
