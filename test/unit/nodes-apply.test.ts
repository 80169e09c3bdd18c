import { describe, expect, test } from 'vitest';
import type { Server } from '../../src/core/cloudscale/types.js';
import { KubeApiError } from '../../src/core/errors.js';
import { applyNodeActions } from '../../src/core/apply/node-writes.js';
import { planNodes, taintsAfter } from '../../src/core/nodes/plan.js';
import type { NodeApi, NodeSnapshot } from '../../src/core/nodes/types.js';

const UNINIT = { key: 'node.cloudprovider.kubernetes.io/uninitialized', effect: 'NoSchedule' };

/**
 * An in-memory Node store with the apiserver's optimistic concurrency: every write names the
 * resourceVersion it was computed from and fails with 409 if the stored one moved on.
 */
class NodeStore implements NodeApi {
  readonly calls: string[] = [];
  private version = 1;
  constructor(public node: NodeSnapshot | undefined) {}

  async get(): Promise<NodeSnapshot | undefined> {
    this.calls.push('get');
    return this.node === undefined ? undefined : structuredClone(this.node);
  }
  async patchNode(base: NodeSnapshot, write: Parameters<NodeApi['patchNode']>[1]): Promise<NodeSnapshot> {
    this.calls.push('patchNode');
    const node = this.current(base.resourceVersion);
    if (write.providerID !== undefined) node.providerID = write.providerID;
    Object.assign(node.labels, write.labels);
    node.taints = taintsAfter(base.taints, write);
    return this.bump();
  }
  async patchAddresses(base: NodeSnapshot, addresses: Parameters<NodeApi['patchAddresses']>[1]): Promise<NodeSnapshot> {
    this.calls.push('patchAddresses');
    this.current(base.resourceVersion).addresses = [...addresses];
    return this.bump();
  }
  async delete(_name: string, pre: { uid: string; resourceVersion: string }): Promise<boolean> {
    this.calls.push('delete');
    if (this.node === undefined) return false;
    this.current(pre.resourceVersion);
    this.node = undefined;
    return true;
  }
  /** What a kubelet does meanwhile: any change moves the resourceVersion on. */
  concurrentWrite(change: (node: NodeSnapshot) => void): void {
    if (this.node === undefined) throw new Error('no node');
    change(this.node);
    this.bump();
  }
  private current(resourceVersion: string): NodeSnapshot {
    if (this.node === undefined) throw new KubeApiError('not found', { status: 404 });
    if (this.node.resourceVersion !== resourceVersion) {
      throw new KubeApiError('the object has been modified', { status: 409, reason: 'Conflict' });
    }
    return this.node;
  }
  private bump(): NodeSnapshot {
    if (this.node === undefined) throw new Error('no node');
    this.version += 1;
    this.node.resourceVersion = String(this.version);
    return structuredClone(this.node);
  }
}

const server: Server = {
  href: 'h',
  uuid: '11111111-2222-4333-8444-555555555555',
  name: 'w1',
  status: 'running',
  zone: { slug: 'rma1' },
  flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
  image: null,
  interfaces: [],
  created_at: '',
  tags: {},
};

function node(overrides: Partial<NodeSnapshot> = {}): NodeSnapshot {
  return {
    name: 'w1',
    uid: 'uid-1',
    resourceVersion: '1',
    providerID: '',
    labels: {},
    annotations: {},
    taints: [UNINIT],
    addresses: [],
    readiness: 'True',
    deleting: false,
    ...overrides,
  };
}

describe('applyNodeActions', () => {
  test('addresses are written before the patch that removes the uninitialized taint', async () => {
    const store = new NodeStore(node());
    const plan = planNodes({ nodes: [node()], servers: [server] });
    const outcome = await applyNodeActions(store, node(), plan.actions, { cloud: { servers: [server] } });
    expect(outcome.error).toBeUndefined();
    expect(store.calls).toEqual(['patchAddresses', 'patchNode']);
    expect(store.node?.taints).toEqual([]);
    expect(store.node?.providerID).toBe(`cloudscale://${server.uuid}`);
  });

  test('a conflict re-reads and re-plans; a taint added meanwhile survives', async () => {
    const store = new NodeStore(node());
    const extra = { key: 'example.com/x', effect: 'NoExecute' };
    const plan = planNodes({ nodes: [node()], servers: [server] });
    const outcome = await applyNodeActions(store, node(), plan.actions, {
      cloud: { servers: [server] },
      beforeWrite: async (_n, attempt) => {
        if (attempt === 1) store.concurrentWrite((n) => n.taints.push(extra));
      },
    });
    expect(outcome).toMatchObject({ attempts: 2, vanished: false });
    expect(outcome.error).toBeUndefined();
    expect(store.calls).toEqual(['patchAddresses', 'get', 'patchAddresses', 'patchNode']);
    expect(store.node?.taints).toEqual([extra]);
  });

  test('a conflict after the addresses were written: the retry only patches what is left', async () => {
    const store = new NodeStore(node());
    const plan = planNodes({ nodes: [node()], servers: [server] });
    const original = store.patchAddresses.bind(store);
    let raced = false;
    store.patchAddresses = async (base, addresses) => {
      const written = await original(base, addresses);
      if (!raced) {
        raced = true;
        store.concurrentWrite((n) => (n.labels['kubelet'] = 'yes'));
      }
      return written;
    };
    const outcome = await applyNodeActions(store, node(), plan.actions, { cloud: { servers: [server] } });
    expect(outcome.error).toBeUndefined();
    expect(store.calls).toEqual(['patchAddresses', 'patchNode', 'get', 'patchNode']);
    expect(store.node?.labels).toMatchObject({ kubelet: 'yes', 'topology.kubernetes.io/zone': 'rma1' });
    expect(outcome.applied.map((a) => a.kind)).toEqual(['initialize']);
  });

  test('conflicts on every attempt stop after maxAttempts with the 409 as error', async () => {
    const store = new NodeStore(node());
    const plan = planNodes({ nodes: [node()], servers: [server] });
    const outcome = await applyNodeActions(store, node(), plan.actions, {
      cloud: { servers: [server] },
      maxAttempts: 3,
      beforeWrite: async () => store.concurrentWrite((n) => (n.labels['beat'] = String(Math.random()))),
    });
    expect(outcome.attempts).toBe(3);
    expect(outcome.error).toBeInstanceOf(KubeApiError);
    expect((outcome.error as KubeApiError).isConflict).toBe(true);
    expect(store.node?.taints).toEqual([UNINIT]);
  });

  test('other errors are not retried', async () => {
    const store = new NodeStore(node());
    store.patchAddresses = async () => {
      throw new KubeApiError('forbidden', { status: 403 });
    };
    const plan = planNodes({ nodes: [node()], servers: [server] });
    const outcome = await applyNodeActions(store, node(), plan.actions, { cloud: { servers: [server] } });
    expect(outcome).toMatchObject({ attempts: 1 });
    expect((outcome.error as KubeApiError).status).toBe(403);
    expect(store.node?.taints).toEqual([UNINIT]);
  });

  test('the Node replaced by a new one of the same name (other uid) is left alone', async () => {
    const store = new NodeStore(node());
    const plan = planNodes({ nodes: [node()], servers: [server] });
    const outcome = await applyNodeActions(store, node(), plan.actions, {
      cloud: { servers: [server] },
      beforeWrite: async (_n, attempt) => {
        if (attempt === 1) store.concurrentWrite((n) => (n.uid = 'uid-2'));
      },
    });
    expect(outcome).toMatchObject({ vanished: true, applied: [] });
    expect(store.calls).toEqual(['patchAddresses', 'get']);
  });

  test('a deletion re-planned after a conflict happens only if the pass approved it', async () => {
    const gone = node({ providerID: `cloudscale://${server.uuid}`, taints: [], readiness: 'False' });
    const servers = [{ ...server, uuid: '99999999-2222-4333-8444-555555555555' }];
    // Only absent from the list: refused until a GET of the server answers 404.
    const refused = planNodes({ nodes: [gone], servers });
    expect(refused.actions.map((a) => a.verb)).toEqual(['refuse']);

    const store = new NodeStore(structuredClone(gone));
    const outcome = await applyNodeActions(store, gone, refused.actions, { cloud: { servers } });
    expect(outcome.applied).toEqual([]);
    expect(store.node).toBeDefined();
    expect(store.calls).toEqual([]);

    const lookups = new Map([[server.uuid, { state: 'not-found' as const }]]);
    const cloud = { servers, lookups };
    const approved = planNodes({ nodes: [gone], servers, serverLookups: lookups });
    const racing = new NodeStore(structuredClone(gone));
    const deleted = await applyNodeActions(racing, gone, approved.actions, {
      cloud,
      beforeWrite: async (_n, attempt) => {
        if (attempt === 1) racing.concurrentWrite((n) => (n.labels['x'] = 'y'));
      },
    });
    expect(deleted.error).toBeUndefined();
    expect(racing.calls).toEqual(['delete', 'get', 'delete']);
    expect(racing.node).toBeUndefined();
  });
});
