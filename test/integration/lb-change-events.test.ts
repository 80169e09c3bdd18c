// Every change to an existing load balancer leaves a Normal Event on its Service, read back from
// the real kube-apiserver after passes against the simulator: what changed, the strategy and the
// time it took, once per change (not per request, not folded into the Event of an earlier change
// with the same reason), from sync-lb, an approved held change, `apply FILE` and a reaction pass
// of `run --watch-for`.
import type { CoreV1Event, V1Service } from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCommand } from '../../src/commands/apply.js';
import { planCommand } from '../../src/commands/plan.js';
import { runCommand } from '../../src/commands/run.js';
import { MAX_ROUNDS } from '../../src/core/apply/lb-pass.js';
import { recordEvent } from '../../src/core/kube/events.js';
import { LB_ANNOTATIONS } from '../../src/core/lb/annotations.js';
import { createLoadBalancerService, testConnection, uniqueName, waitUntil } from '../support/kube.js';
import {
  TEST_PASS,
  FAST_PASS,
  annotate,
  expectConverged,
  key,
  lbsNamed,
  passFails,
  passOk,
  patchService,
  readService,
  type EventSummary,
  useLbWorld,
} from '../support/lb-scenarios.js';

/** In every change Event, after its steps: the time measured. */
const MEASURED = / in (\d+ ms|\d+\.\d s): /;

/** The Events' messages without the time measured (each must end with one). */
function words(events: readonly EventSummary[]): string[] {
  return events.map((e) => {
    expect(e.message).toMatch(MEASURED);
    return e.message!.replace(MEASURED, ': ');
  });
}

const SWAP = 'pool swap of pool tcp/http (k8s.cloudscale.ch/loadbalancer-pool-algorithm round_robin → least_connections)';

describe('an Event for every change to a load balancer', () => {
  let dir: string;
  const namespace = uniqueName('lb-events');
  const prefix = uniqueName('lbev');
  const pass = { ...TEST_PASS, namespace };
  const { harness } = useLbWorld({ prefix, namespace });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccm-change-events-'));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** A Service with its load balancer, converged; the names of its Events so far. */
  async function existing(name: string): Promise<{ service: V1Service; before: Set<string> }> {
    await createLoadBalancerService(namespace, name);
    await passOk(harness, [name], pass);
    const service = await readService(namespace, name);
    return { service, before: await eventNames(service) };
  }

  async function serviceEvents(service: V1Service): Promise<CoreV1Event[]> {
    const { items } = await testConnection().core.listNamespacedEvent({ namespace });
    return items.filter((e) => e.involvedObject.uid === service.metadata!.uid);
  }

  async function eventNames(service: V1Service): Promise<Set<string>> {
    return new Set((await serviceEvents(service)).map((e) => e.metadata!.name!));
  }

  /**
   * The Normal change Events recorded since `before` (the names of the Events before). By name:
   * Events carry timestamps in whole seconds, too coarse to order the passes of one test.
   */
  async function changeEventsSince(service: V1Service, before: ReadonlySet<string>): Promise<EventSummary[]> {
    return (await serviceEvents(service))
      .filter((e) => !before.has(e.metadata!.name!) && e.type === 'Normal' && /^(Ensured|Updated|Deleted)LoadBalancer$/.test(e.reason ?? ''))
      .map((e) => ({ type: e.type, reason: e.reason, message: e.message }));
  }

  it('the creation: one Event naming it, with its steps and time', async () => {
    const { service } = await existing('created');
    const ensured = await changeEventsSince(service, new Set());
    expect(ensured.map((e) => e.reason)).toEqual(['EnsuredLoadBalancer']);
    expect(words(ensured)).toEqual([
      `Ensured load balancer, 6 steps: creation of load balancer k8s-service-${service.metadata!.uid!} (the Service has no load balancer yet)`,
    ]);
  });

  it('a pool swap: one Event naming the pool, the annotation old → new and the strategy; none for the pass after', async () => {
    const { service, before } = await existing('swap');
    await annotate(namespace, 'swap', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    await passOk(harness, ['swap'], pass);
    const events = await changeEventsSince(service, before);
    expect(events.map((e) => e.reason)).toEqual(['EnsuredLoadBalancer']);
    expect(words(events)).toEqual([`Ensured load balancer, 11 steps: ${SWAP}`]);
    // Converged: no change, no Event.
    const after = await eventNames(service);
    await expectConverged(harness, ['swap'], pass);
    expect(await eventNames(service)).toEqual(after);
  });

  it('a port change, then the same change back and again: an Event each, none folded into an earlier one', async () => {
    const { service, before } = await existing('port');
    const ports = (port: number) => [{ ...service.spec!.ports![0]!, port }];
    const events: EventSummary[] = [];
    let seen = before;
    for (const port of [8080, 80, 8080]) {
      await patchService(namespace, 'port', { spec: { ports: ports(port) } });
      await passOk(harness, ['port'], pass);
      events.push(...(await changeEventsSince(service, seen)));
      seen = await eventNames(service);
    }
    expect(words(events)).toEqual([
      'Ensured load balancer, 1 step: in-place update of listener tcp/80 (spec.ports[http].port 80 → 8080, name tcp/80 → tcp/8080)',
      'Ensured load balancer, 1 step: in-place update of listener tcp/8080 (spec.ports[http].port 8080 → 80, name tcp/8080 → tcp/80)',
      'Ensured load balancer, 1 step: in-place update of listener tcp/80 (spec.ports[http].port 80 → 8080, name tcp/80 → tcp/8080)',
    ]);
  });

  it('a held change, approved: the held pass says what it did, the approved pass the pool swap', async () => {
    const { service, before } = await existing('held');
    await annotate(namespace, 'held', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    const held = await passOk(harness, ['held'], { ...pass, maxDowntime: 0 });
    const id = held.report.services[0]!.held![0]!.id;
    const built = await changeEventsSince(service, before);
    // The successor pool is built beside the old one now (pool, 2 members, monitor); the rest waits for the approval.
    expect(words(built)).toEqual([`Ensured load balancer, 4 steps: ${SWAP}`]);

    await annotate(namespace, 'held', { [LB_ANNOTATIONS.approveChange.key]: id });
    const seen = await eventNames(service);
    await passOk(harness, ['held'], { ...pass, maxDowntime: 0 });
    // The wait for the successor, the listener move and the old pool's retirement.
    expect(words(await changeEventsSince(service, seen))).toEqual([`Ensured load balancer, 7 steps: ${SWAP}`]);
  });

  it('apply FILE: the saved plan applied leaves the Event of its change', async () => {
    const { service, before } = await existing('saved');
    await annotate(namespace, 'saved', { [key('loadbalancer-timeout-client-data-ms')]: '60000' });
    const file = join(dir, 'saved.json');
    const planning = harness.context();
    const planned = await planCommand(['service/saved'], { namespace, detailedExitcode: true, drainSeconds: 0, out: file }, planning);
    expect(planned.exitCode, planning.err()).toBe(2);
    const applying = harness.context();
    await applyCommand(file, { ...FAST_PASS, concurrency: 4, wait: true }, applying);
    expect(words(await changeEventsSince(service, before))).toEqual([
      'Ensured load balancer, 1 step: in-place update of listener tcp/80 (k8s.cloudscale.ch/loadbalancer-timeout-client-data-ms 50000 → 60000)',
    ]);
  });

  it('run --watch-for: a change made while it watches gets its Event from the reaction pass', async () => {
    const { service, before } = await existing('watched');
    const abort = new AbortController();
    const ctx = harness.context({ abort: abort.signal });
    const options = { ...FAST_PASS, wait: false, force: true, drainSeconds: 0, watchDebounceMs: 100 };
    const run = runCommand({ ...options, watchForMs: 100_000 }, ctx);
    try {
      await waitUntil('the full pass', () => /^watch: watching Nodes and Services/m.test(ctx.err()));
      await annotate(namespace, 'watched', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
      await waitUntil('the change Event', async () => (await changeEventsSince(service, before)).length > 0);
    } finally {
      abort.abort(new Error('interrupted by SIGTERM'));
      await run.catch(() => undefined);
    }
    const report = await run;
    expect(report.watch?.reactionPasses.some((p) => p.changes.includes(`service/${namespace}/watched`))).toBe(true);
    expect(words(await changeEventsSince(service, before))).toEqual([`Ensured load balancer, 11 steps: ${SWAP}`]);
  });

  /** Deletes the listeners of the Service's load balancer, as another client might between two rounds. */
  async function deleteListenersOf(name: string): Promise<void> {
    const service = await readService(namespace, name);
    const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
    for (const listener of await harness.cloud.listeners.list()) {
      if (listener.load_balancer.uuid === lb!.uuid) await harness.cloud.deleteByHref(listener.href);
    }
  }

  /** The SyncLoadBalancerFailed Warnings of a Service since `before`. */
  async function failuresSince(service: V1Service, before: ReadonlySet<string>): Promise<string[]> {
    return (await serviceEvents(service))
      .filter((e) => !before.has(e.metadata!.name!) && e.reason === 'SyncLoadBalancerFailed')
      .map((e) => e.message!);
  }

  it('a change repaired in a second round of the pass: one Event, with the steps of both rounds', async () => {
    const service = await createLoadBalancerService(namespace, 'rounds');
    await passOk(harness, ['rounds'], {
      ...pass,
      afterRound: async (round) => {
        if (round === 1) await deleteListenersOf('rounds');
      },
    });
    // Six steps build the load balancer; the second round creates the listener deleted meanwhile.
    expect(words(await changeEventsSince(service, new Set()))).toEqual([
      `Ensured load balancer, 7 steps: creation of load balancer k8s-service-${service.metadata!.uid!} (the Service has no load balancer yet)`,
    ]);
  });

  it(`a pass that fails after ${MAX_ROUNDS} rounds: its Warning says what it changed before`, async () => {
    const service = await createLoadBalancerService(namespace, 'unsettled');
    await passFails(harness, ['unsettled'], { ...pass, afterRound: () => deleteListenersOf('unsettled') });
    const failures = await failuresSince(service, new Set());
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(
      new RegExp(
        `^Error syncing load balancer: the state read back after ${MAX_ROUNDS} rounds still differs: create-listener listener tcp/80; ` +
          `changed before, 8 steps in (\\d+ ms|\\d+\\.\\d s): creation of load balancer k8s-service-${service.metadata!.uid!} \\(the Service has no load balancer yet\\)$`,
      ),
    );
    expect(await changeEventsSince(service, new Set())).toEqual([]);
  });

  it('a pool swap that fails midway: the Warning says what was changed before; the next pass the rest', async () => {
    const { service, before } = await existing('midway');
    await annotate(namespace, 'midway', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    // The listener's create after the old one was deleted, refused for good (a 403: no transient
    // failure, which the pair's retries would get past): the pass fails there.
    harness.sim.admin.setFaults({ errorRate: { pathPattern: '/v1/load-balancers/listeners', methods: ['POST'], status: 403, count: 1 } });
    try {
      await passFails(harness, ['midway'], pass);
    } finally {
      harness.sim.admin.clearFaults();
    }
    const failures = await failuresSince(service, before);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^Error syncing load balancer: create-listener listener tcp\/80: .*403/);
    expect(failures[0]!.split('; changed before, ')[1]!.replace(MEASURED, ': ')).toBe(`6 steps: ${SWAP}`);
    expect(await changeEventsSince(service, before)).toEqual([]);

    const seen = await eventNames(service);
    await passOk(harness, ['midway'], pass);
    // The planner sees what is left: the old pool serves no port any more, the port has no listener.
    expect(words(await changeEventsSince(service, seen))).toEqual([
      'Ensured load balancer, 5 steps: removal of health monitor of pool tcp/http, 2 members of pool tcp/http, pool tcp/http ' +
        '(no Service port maps to this pool any more (it serves no port)); ' +
        'addition of listener tcp/80 (the listener of port http TCP 80 is missing)',
    ]);
  });

  it('recordEvent: the same words twice are two Events with aggregate false, one counted Event by default', async () => {
    const service = await createLoadBalancerService(namespace, 'words');
    const subject = { kind: 'Service', apiVersion: 'v1', namespace, name: 'words', uid: service.metadata!.uid! };
    const content = { type: 'Normal' as const, reason: 'EnsuredLoadBalancer', message: 'Ensured load balancer: the same words', component: 'service-controller' };
    for (let i = 0; i < 2; i++) expect((await recordEvent(testConnection(), subject, content, { aggregate: false })).error).toBeUndefined();
    expect((await serviceEvents(service)).map((e) => [e.message, e.count])).toEqual([
      ['Ensured load balancer: the same words', 1],
      ['Ensured load balancer: the same words', 1],
    ]);
    const repeated = { ...content, message: 'Ensured load balancer: words repeated' };
    for (let i = 0; i < 2; i++) expect((await recordEvent(testConnection(), subject, repeated)).error).toBeUndefined();
    expect((await serviceEvents(service)).filter((e) => e.message === repeated.message)).toHaveLength(1);
  });
});
