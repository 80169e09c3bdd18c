// The watch loop of `run --watch-for` against a scripted watch source: which changes make a
// reaction pass (and which the tool caused itself), bursts, and every way a watch ends (closed,
// 410 Gone, failed, failing for good) — re-established from a list, or the loop fails loudly;
// and, on a fake clock, how a failed reaction pass is retried: backoff, cap, deadline, success.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { ChangeTracker, nodeFingerprint, reactionScope, serviceFingerprint, type ChangeSet } from '../../src/core/apply/watch-changes.js';
import { RETRY_PASS_MAX_MS, WatchBrokenError, retryPassDelayMs, watchAndReact, type ReactionFailure, type WatchClock, type WatchSource } from '../../src/core/apply/watch-loop.js';
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
      return [];
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
    expect(await loop.done).toEqual({ reactions: 2, retried: 0, reestablished: 0, endedBy: 'signal' });
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
    expect(await loop.done).toEqual({ reactions: 0, retried: 0, reestablished: 0, endedBy: 'deadline' });
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
    react: async () => [],
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

/**
 * A clock that moves only when told: `elapse` jumps to the end of the earliest pause and ends it;
 * after `run`, every pause ends at once with the clock at its end (the loop then runs to its
 * deadline without waiting). A wake or the signal ends a pause early, as on the real clock.
 */
class FakeClock implements WatchClock {
  private nowMs = 0;
  private running = false;
  private readonly waiting: { until: number; end: () => void }[] = [];
  /** Pauses begun so far. */
  begun = 0;

  now(): number {
    return this.nowMs;
  }

  pause(ms: number, wake: Promise<void>, signal: AbortSignal): Promise<void> {
    this.begun += 1;
    return new Promise<void>((resolve) => {
      const entry = {
        until: this.nowMs + Math.max(0, ms),
        end: () => {
          const index = this.waiting.indexOf(entry);
          if (index >= 0) this.waiting.splice(index, 1);
          resolve();
        },
      };
      if (this.running) {
        this.nowMs = Math.max(this.nowMs, entry.until);
        setImmediate(resolve);
        return;
      }
      this.waiting.push(entry);
      void wake.then(entry.end);
      signal.addEventListener('abort', entry.end, { once: true });
    });
  }

  get paused(): number {
    return this.waiting.length;
  }

  /** Moves the clock by `ms` without ending a pause that lasts longer. */
  advance(ms: number): void {
    this.nowMs += ms;
    for (const entry of this.waiting.filter((w) => w.until <= this.nowMs)) entry.end();
  }

  elapse(): void {
    const [first] = [...this.waiting].sort((a, b) => a.until - b.until);
    if (first === undefined) throw new Error('nothing is paused');
    this.nowMs = Math.max(this.nowMs, first.until);
    first.end();
  }

  run(): void {
    this.running = true;
    for (const entry of [...this.waiting].sort((a, b) => a.until - b.until)) {
      this.nowMs = Math.max(this.nowMs, entry.until);
      entry.end();
    }
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns += 1) {
    if (turns > 10_000) throw new Error('the loop never got there');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const WEB = { namespace: 'default', name: 'web', gone: false };
const onlyWeb: ChangeSet = { nodes: [], services: [WEB], relisted: false };
const webFailed: ReactionFailure[] = [{ again: onlyWeb, problem: 'cloudscale API POST /v1/load-balancers/pools: 500 Internal Server Error' }];

/**
 * A loop on a fake clock whose passes answer with `outcomes` in turn (then succeed), and whose
 * first pass is the change of Service web at time 0 (after the debounce of 20 ms).
 */
async function retryingLoop(outcomes: (readonly ReactionFailure[])[], untilMs: number) {
  const source = new ScriptedSource();
  const clock = new FakeClock();
  const abort = new AbortController();
  const passes: { at: number; changes: ChangeSet }[] = [];
  const notes: string[] = [];
  const done = watchAndReact({
    source,
    start: { nodes: { items: [], resourceVersion: '5' }, services: { items: [service('web')], resourceVersion: '7' } },
    untilMs,
    debounceMs: 20,
    reestablishWithinMs: 60_000,
    signal: abort.signal,
    onNote: (note) => notes.push(note),
    react: async (changes) => {
      passes.push({ at: clock.now(), changes });
      return outcomes.shift() ?? [];
    },
    clock,
  });
  const services = await source.current('services');
  await until(() => clock.begun === 1);
  services.onChange('MODIFIED', service('web', { port: 443 }));
  await until(() => clock.begun === 2);
  return { source, clock, abort, passes, notes, done, services };
}

describe('retrying a failed reaction pass (fake clock)', () => {
  test.each([
    [1, 2000],
    [2, 4000],
    [3, 8000],
    [4, 16_000],
    [5, RETRY_PASS_MAX_MS],
    [12, RETRY_PASS_MAX_MS],
  ])('after %i failed passes in a row, the next waits %i ms', (failures, ms) => {
    expect(retryPassDelayMs(failures)).toBe(ms);
  });

  test('a pass that keeps failing is run again without a new change, the waits doubling up to the cap; none starts after the deadline', async () => {
    const loop = await retryingLoop(Array.from({ length: 100 }, () => webFailed), 100_000);
    loop.clock.run();
    expect(await loop.done).toEqual({ reactions: 7, retried: 6, reestablished: 0, endedBy: 'deadline' });
    expect(loop.passes.every((p) => JSON.stringify(p.changes) === JSON.stringify(onlyWeb))).toBe(true);
    const starts = loop.passes.map((p) => p.at);
    expect(starts.slice(1).map((at, i) => at - starts[i]!)).toEqual([2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(starts.every((at) => at < 100_000)).toBe(true);
    expect(loop.notes[0]).toBe('retrying service/default/web in 2 s after: cloudscale API POST /v1/load-balancers/pools: 500 Internal Server Error');
    expect(loop.notes[1]).toMatch(/^retrying service\/default\/web in 4 s after: /);
    // The seventh failure at 90.02 s would be retried at 120.02 s, after the deadline.
    expect(loop.notes.at(-1)).toMatch(/^not retrying service\/default\/web: the watch ends before its next try, the next run passes it again; it failed: .*500/);
  });

  test('a retry that succeeds ends the retries', async () => {
    const loop = await retryingLoop([webFailed, webFailed], 100_000);
    loop.clock.run();
    expect(await loop.done).toMatchObject({ reactions: 3, retried: 2, endedBy: 'deadline' });
    expect(loop.passes.map((p) => p.at)).toEqual([20, 2020, 6020]);
  });

  test('a failure whose retry would start after the deadline is left to the next run', async () => {
    const loop = await retryingLoop([webFailed], 1500);
    loop.clock.run();
    expect(await loop.done).toMatchObject({ reactions: 1, retried: 0, endedBy: 'deadline' });
    expect(loop.notes).toEqual([expect.stringMatching(/^not retrying service\/default\/web: /)]);
  });

  test('a new change of the failed Service takes its retry along at once, keeping the backoff; another Service\'s change does not', async () => {
    const loop = await retryingLoop([webFailed, [], webFailed], 100_000);
    const { clock } = loop;
    clock.elapse(); // the debounce: the first pass fails at 20 ms, its retry due at 2020 ms
    await until(() => clock.begun === 3);
    clock.advance(500);
    loop.services.onChange('ADDED', service('other'));
    await until(() => clock.begun === 4);
    clock.elapse();
    await until(() => clock.begun === 5);
    // Web's retry is not due yet: the other Service's pass goes alone.
    expect(loop.passes[1]!.changes.services.map((s) => s.name)).toEqual(['other']);
    clock.advance(480);
    loop.services.onChange('MODIFIED', service('web', { port: 8443 }));
    await until(() => clock.begun === 6);
    clock.elapse();
    await until(() => loop.passes.length === 3);
    expect(loop.passes[2]!.at).toBe(1040);
    expect(loop.passes[2]!.changes.services.map((s) => s.name)).toEqual(['web']);
    // It failed again: its second failure in a row waits 4 s, not 2 (the backoff went on).
    loop.clock.run();
    await loop.done;
    expect(loop.passes.map((p) => p.at)).toEqual([20, 540, 1040, 5040]);
    expect(loop.notes[1]).toMatch(/^retrying service\/default\/web in 4 s after: /);
  });
});
