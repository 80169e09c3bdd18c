// The watch loop of `run --watch-for` against a scripted watch source: which changes make a
// reaction pass (and which the tool caused itself), bursts, and every way a watch ends (closed,
// 410 Gone, failed, failing for good) — re-established from a list, or the loop fails loudly.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { ChangeTracker, nodeFingerprint, reactionScope, serviceFingerprint, type ChangeSet } from '../../src/core/apply/watch-changes.js';
import { WatchBrokenError, watchAndReact, type WatchSource } from '../../src/core/apply/watch-loop.js';
import { KubeApiError } from '../../src/core/errors.js';
import type { ListedCollection, WatchHandlers, WatchedKind } from '../../src/core/kube/watch.js';

const TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';

function node(name: string, change: { taints?: { key: string; effect: string }[]; labels?: Record<string, string> } = {}): V1Node {
  return {
    metadata: { name, labels: change.labels ?? {}, resourceVersion: '1' },
    spec: { taints: change.taints ?? [] },
    status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date() }] },
  };
}

function service(name: string, change: { port?: number; annotations?: Record<string, string>; finalizers?: string[]; type?: string } = {}): V1Service {
  return {
    metadata: { namespace: 'default', name, annotations: change.annotations ?? {}, finalizers: change.finalizers ?? [] },
    spec: { type: change.type ?? 'LoadBalancer', ports: [{ port: change.port ?? 80 }] },
  };
}

describe('fingerprints: what the passes write is no change', () => {
  test.each<[string, V1Node, V1Node, boolean]>([
    ['the uninitialized taint removed, zone and instance-type labels set', node('a', { taints: [{ key: TAINT, effect: 'NoSchedule' }] }), { ...node('a', { labels: { 'topology.kubernetes.io/zone': 'rma1', 'node.kubernetes.io/instance-type': 'flex-4-2' } }), spec: { providerID: 'cloudscale://x', taints: [] } }, false],
    ['a heartbeat', node('a'), { ...node('a'), status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(0) }] } }, false],
    ['the node excluded from load balancers', node('a'), node('a', { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } }), true],
    ['the autoscaler taint', node('a'), node('a', { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] }), true],
    ['Ready turned False', node('a'), { ...node('a'), status: { conditions: [{ type: 'Ready', status: 'False' }] } }, true],
  ])('node: %s → changed %s', (_, before, after, changed) => {
    expect(nodeFingerprint(before) !== nodeFingerprint(after)).toBe(changed);
  });

  test.each<[string, V1Service, V1Service, boolean]>([
    ['our annotations and finalizer', service('web'), service('web', { annotations: { 'k8s.cloudscale.ch/loadbalancer-uuid': 'u', 'k8s.cloudscale.ch/loadbalancer-zone': 'rma1', 'k8s.cloudscale.ch/loadbalancer-config-version': '1' }, finalizers: ['service.kubernetes.io/load-balancer-cleanup'] }), false],
    ['the record of announced held changes (cloudscale-ccm/announced-changes)', service('web'), service('web', { annotations: { 'cloudscale-ccm/announced-changes': '0123456789' } }), false],
    ['an approval (cloudscale-ccm/approve-change)', service('web'), service('web', { annotations: { 'cloudscale-ccm/approve-change': '0123456789' } }), true],
    ['the status (ingress)', service('web'), { ...service('web'), status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } }, false],
    ['a port', service('web'), service('web', { port: 443 }), true],
    ['a user annotation', service('web'), service('web', { annotations: { 'k8s.cloudscale.ch/loadbalancer-flavor': 'lb-standard' } }), true],
    ['type LoadBalancer → ClusterIP', service('web'), service('web', { type: 'ClusterIP' }), true],
  ])('service: %s → changed %s', (_, before, after, changed) => {
    expect(serviceFingerprint(before) !== serviceFingerprint(after)).toBe(changed);
  });

  test('a Service without a load balancer (no type LoadBalancer, no finalizer) has no fingerprint', () => {
    expect(serviceFingerprint(service('plain', { type: 'ClusterIP' }))).toBeUndefined();
  });
});

describe('reaction scope', () => {
  const changes = (c: Partial<ChangeSet>): ChangeSet => ({ nodes: [], services: [], relisted: false, ...c });
  test.each<[string, ChangeSet, ReturnType<typeof reactionScope>['kind']]>([
    ['a Node', changes({ nodes: ['a'] }), 'all'],
    ['a re-established watch', changes({ relisted: true }), 'all'],
    ['a Service deleted outright', changes({ services: [{ namespace: 'd', name: 'w', gone: true }] }), 'all-load-balancers'],
    ['a Service changed', changes({ services: [{ namespace: 'd', name: 'w', gone: false }] }), 'services'],
    ['nothing', changes({}), 'nothing'],
  ])('%s → %s', (_, set, kind) => {
    expect(reactionScope(set).kind).toBe(kind);
  });

  test('a tracker forgets a change once taken, and a relist names what disappeared', () => {
    const tracker = new ChangeTracker();
    tracker.baseline([node('a'), node('b')], [service('web')]);
    tracker.relisted('nodes', [node('a')]);
    expect(tracker.take()).toEqual({ nodes: ['b'], services: [], relisted: true });
    expect(tracker.hasPending).toBe(false);
  });
});

/** A watch source whose watches the test drives; lists answer from `lists` (or fail). */
class ScriptedSource implements WatchSource {
  readonly watches: { kind: WatchedKind; resourceVersion: string; handlers: WatchHandlers; stopped: boolean }[] = [];
  readonly listed: WatchedKind[] = [];
  failLists = 0;
  lists: Record<WatchedKind, ListedCollection> = {
    nodes: { items: [], resourceVersion: '10' },
    services: { items: [], resourceVersion: '10' },
  };
  private waiters: (() => void)[] = [];

  async list(kind: WatchedKind): Promise<ListedCollection> {
    this.listed.push(kind);
    if (this.failLists > 0) {
      this.failLists -= 1;
      throw new KubeApiError(`list ${kind}: connect ECONNREFUSED`, { status: 0 });
    }
    return this.lists[kind];
  }

  async watch(kind: WatchedKind, resourceVersion: string, _timeoutSeconds: number, handlers: WatchHandlers) {
    const entry = { kind, resourceVersion, handlers, stopped: false };
    this.watches.push(entry);
    for (const wake of this.waiters.splice(0)) wake();
    return { resourceVersion, stop: () => void (entry.stopped = true) };
  }

  /** The newest open watch of `kind`, once there is one. */
  async current(kind: WatchedKind, count = 1): Promise<WatchHandlers> {
    for (;;) {
      const open = this.watches.filter((w) => w.kind === kind);
      if (open.length >= count) return open[count - 1]!.handlers;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

function startLoop(source: ScriptedSource, extra: { untilMs?: number; reestablishWithinMs?: number } = {}) {
  const abort = new AbortController();
  const reactions: ChangeSet[] = [];
  let reacted: () => void = () => undefined;
  const nextReaction = () => new Promise<void>((resolve) => (reacted = resolve));
  const done = watchAndReact({
    source,
    start: {
      nodes: { items: [node('old', { taints: [] })], resourceVersion: '5' },
      services: { items: [service('web')], resourceVersion: '7' },
    },
    untilMs: extra.untilMs ?? performance.now() + 60_000,
    debounceMs: 20,
    reestablishWithinMs: extra.reestablishWithinMs ?? 60_000,
    signal: abort.signal,
    react: async (changes) => {
      reactions.push(changes);
      reacted();
    },
  });
  return { abort, reactions, nextReaction, done };
}

describe('the loop', () => {
  test('watches from the versions listed before the pass; a new Node makes one pass, its initialisation none', async () => {
    const source = new ScriptedSource();
    const loop = startLoop(source);
    const nodes = await source.current('nodes');
    expect(source.watches.map((w) => [w.kind, w.resourceVersion])).toEqual([['nodes', '5'], ['services', '7']]);
    const first = loop.nextReaction();
    nodes.onChange('ADDED', node('new', { taints: [{ key: TAINT, effect: 'NoSchedule' }] }));
    await first;
    expect(loop.reactions).toEqual([{ nodes: ['new'], services: [], relisted: false }]);
    // What the reaction pass wrote comes back as a change of its own: no second pass for it.
    nodes.onChange('MODIFIED', node('new', { labels: { 'topology.kubernetes.io/zone': 'rma1' } }));
    const services = await source.current('services');
    const second = loop.nextReaction();
    services.onChange('MODIFIED', service('web', { port: 443 }));
    await second;
    expect(loop.reactions[1]).toEqual({ nodes: [], services: [{ namespace: 'default', name: 'web', gone: false }], relisted: false });
    loop.abort.abort(new Error('interrupted by SIGTERM'));
    expect(await loop.done).toEqual({ reactions: 2, reestablished: 0, endedBy: 'signal' });
    expect(source.watches.every((w) => w.stopped)).toBe(true);
  });

  test('a burst within the debounce makes one pass', async () => {
    const source = new ScriptedSource();
    const loop = startLoop(source);
    const services = await source.current('services');
    const reaction = loop.nextReaction();
    services.onChange('ADDED', service('a'));
    services.onChange('ADDED', service('b'));
    services.onChange('DELETED', service('web'));
    await reaction;
    expect(loop.reactions).toHaveLength(1);
    expect(loop.reactions[0]!.services.map((s) => `${s.name}${s.gone ? ' gone' : ''}`)).toEqual(['a', 'b', 'web gone']);
    loop.abort.abort();
    await loop.done;
  });

  test('a watch the server closed resumes from the last version, without a list or a pass', async () => {
    const source = new ScriptedSource();
    const loop = startLoop(source);
    (await source.current('nodes')).onEnd({ how: 'closed' });
    await source.current('nodes', 2);
    expect(source.listed).toEqual([]);
    expect(source.watches.filter((w) => w.kind === 'nodes').map((w) => w.resourceVersion)).toEqual(['5', '5']);
    loop.abort.abort();
    expect((await loop.done).reactions).toBe(0);
  });

  test('410 Gone: listed again, what the list shows changed makes a pass, the watch continues from the list', async () => {
    const source = new ScriptedSource();
    source.lists.nodes = { items: [node('arrived-meanwhile')], resourceVersion: '99' };
    const loop = startLoop(source);
    const reaction = loop.nextReaction();
    (await source.current('nodes')).onEnd({ how: 'expired', message: 'too old resource version: 5 (60)' });
    await reaction;
    expect(loop.reactions[0]).toEqual({ nodes: ['arrived-meanwhile', 'old'], services: [], relisted: true });
    await source.current('nodes', 2);
    expect(source.watches.filter((w) => w.kind === 'nodes').at(-1)!.resourceVersion).toBe('99');
    loop.abort.abort();
    expect((await loop.done).reestablished).toBe(1);
  });

  test('a failed watch whose list fails a few times is re-established once the server answers', async () => {
    const source = new ScriptedSource();
    source.failLists = 2;
    const loop = startLoop(source);
    (await source.current('services')).onEnd({ how: 'failed', error: new KubeApiError('watch services: socket hang up', { status: 0 }) });
    await source.current('services', 2);
    expect(source.listed).toEqual(['services', 'services', 'services']);
    loop.abort.abort();
    expect((await loop.done).reestablished).toBe(1);
  });

  test('a watch that cannot be re-established in time fails the loop, naming the watch and the last problem', async () => {
    const source = new ScriptedSource();
    source.failLists = Number.POSITIVE_INFINITY;
    const loop = startLoop(source, { reestablishWithinMs: 1000 });
    (await source.current('nodes')).onEnd({ how: 'failed', error: new KubeApiError('watch nodes: socket hang up', { status: 0 }) });
    const error = await loop.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WatchBrokenError);
    expect((error as Error).message).toMatch(/^the watch of nodes broke and could not be re-established within 1 s: list nodes: connect ECONNREFUSED$/);
    // The other watch, still open, is closed on the way out.
    expect(source.watches.filter((w) => w.kind === 'services').every((w) => w.stopped)).toBe(true);
  });

  test('ends at the deadline with the changes after it left to the next run', async () => {
    const source = new ScriptedSource();
    const loop = startLoop(source, { untilMs: performance.now() + 50 });
    expect(await loop.done).toEqual({ reactions: 0, reestablished: 0, endedBy: 'deadline' });
  });
});

test('a Service read by a list and the same Service from a watch event (other field order) have one fingerprint', () => {
  const listed = service('web');
  const fromWatch = JSON.parse(JSON.stringify({ metadata: listed.metadata, spec: { ports: listed.spec!.ports, type: 'LoadBalancer' } })) as V1Service;
  expect(serviceFingerprint(fromWatch)).toBe(serviceFingerprint(listed));
});

test('a server that closes every watch at once is not asked again in a busy loop: each reopening waits', async () => {
  const source = new ScriptedSource();
  const paused: number[] = [];
  let now = 0;
  const abort = new AbortController();
  const clock = {
    now: () => now,
    pause: async (ms: number, wake: Promise<void>, signal: AbortSignal) => {
      // The main loop's wait for a change (the deadline is a minute away): until woken or stopped.
      if (ms >= 10_000) return new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => resolve(), { once: true });
        void wake.then(resolve);
      });
      paused.push(ms);
      now += ms;
      if (paused.length >= 5) abort.abort();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  const done = watchAndReact({
    source,
    start: { nodes: { items: [], resourceVersion: '1' }, services: { items: [], resourceVersion: '1' } },
    untilMs: 60_000,
    debounceMs: 0,
    reestablishWithinMs: 30_000,
    signal: abort.signal,
    react: async () => undefined,
    clock,
  });
  for (let closed = 0; !abort.signal.aborted; closed += 1) {
    (await source.current('nodes', closed + 1)).onEnd({ how: 'closed' });
    await new Promise((resolve) => setImmediate(resolve));
  }
  await done;
  // Between two watches of nodes, a pause of the missing second (the services watch stays open).
  expect(paused.filter((ms) => ms === 1000).length).toBeGreaterThanOrEqual(source.watches.filter((w) => w.kind === 'nodes').length - 1);
});
