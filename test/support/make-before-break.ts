// What the simulator receives when a pass runs a make-before-break strategy
// (src/core/lb/strategies.ts): the writes of a pool swap or a member rotation in their order,
// with the pools they go to named, and the wait between building and tearing down.
import type { V1Service } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { DataPlaneChanges, RequestLogEntry } from '../../src/sim/index.js';
import { planCommand } from '../../src/commands/plan.js';
import type { SyncLbOptions } from '../../src/commands/sync-lb.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import type { Harness } from './ccm.js';
import { createLoadBalancerService } from './kube.js';
import { expectWellFormed, key, passOk, poolOf, readService, theLb, useLbWorld, type LbWorld, type PassResult, type PoolState } from './lb-scenarios.js';
import { writesTaken } from './strict-world.js';

/** How long a configuration change takes to reach the data plane in these tests. */
export const PROPAGATION_MS = 500;

/** Health checks fast enough for tests: a new member is up 2 × 1 s after it reached the data plane. */
export const FAST_MONITOR: Readonly<Record<string, string>> = {
  [key('loadbalancer-health-monitor-delay-s')]: '1',
  [key('loadbalancer-health-monitor-timeout-s')]: '1',
  [key('loadbalancer-health-monitor-up-threshold')]: '2',
  [key('loadbalancer-health-monitor-down-threshold')]: '2',
};

/**
 * The world of a file (useLbWorld) whose data plane checks health, propagates changes in
 * PROPAGATION_MS and holds what a delete frees until then (plus `dataPlane`): two servers, the
 * namespace, and the Nodes `<prefix>-1` and `<prefix>-2` labelled `<slotLabel>=1` and `=2`.
 */
export function useDataPlaneWorld(prefix: string, namespace: string, slotLabel: string, dataPlane: DataPlaneChanges = {}): LbWorld {
  return useLbWorld({
    prefix,
    namespace,
    dataPlane: { propagationMs: PROPAGATION_MS, healthChecks: true, deletesHoldUntilPropagated: true, ...dataPlane },
    node: (i) => ({ labels: { [slotLabel]: String(i) } }),
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * `METHOD path` of each request without its query, each UUID of `names` replaced by its name
 * (e.g. OLD, NEW) and every other UUID by `{uuid}`.
 */
export function namedRoutes(entries: readonly RequestLogEntry[], names: Readonly<Record<string, string>>): string[] {
  return entries.map((e) => `${e.method} ${e.path.split('?')[0]!.replace(UUID, (uuid) => names[uuid] ?? '{uuid}')}`);
}

/**
 * The writes of one pool swap, in order: the successor pool NEW is built (pool, its `created`
 * members, monitor) while OLD serves; the port's listener moves (deleted, created for NEW); then
 * OLD goes with its monitor and its `deleted` members.
 */
export function poolSwapWrites(created: number, deleted: number): string[] {
  return [
    'POST /v1/load-balancers/pools',
    ...Array<string>(created).fill('POST /v1/load-balancers/pools/NEW/members'),
    'POST /v1/load-balancers/health-monitors',
    'DELETE /v1/load-balancers/listeners/{uuid}',
    'POST /v1/load-balancers/listeners',
    'DELETE /v1/load-balancers/health-monitors/{uuid}',
    ...Array<string>(deleted).fill('DELETE /v1/load-balancers/pools/OLD/members/{uuid}'),
    'DELETE /v1/load-balancers/pools/OLD',
  ];
}

/**
 * A pass that swapped the pool `before` for the pool `name` (by default of the same name): the
 * API took exactly the writes of a pool swap (a create refused while a delete settled is sent
 * again, writesTaken), awaiting the new members before the listener moved; afterwards the
 * new pool (another UUID) holds the port's listener (a new one, on the same port) and the old
 * pool is gone. Returns the new pool.
 */
export async function expectPoolSwap(
  harness: Harness,
  pass: Pick<PassResult, 'simRequests' | 'simWrites'>,
  service: V1Service,
  before: PoolState,
  name: string = before.pool.name,
): Promise<PoolState> {
  const state = await theLb(harness, service);
  expectWellFormed(state);
  const after = poolOf(state, name);
  expect(after.pool.uuid).not.toBe(before.pool.uuid);
  expect(Object.values(state.pools).map((p) => p.pool.uuid)).not.toContain(before.pool.uuid);
  const names = { [before.pool.uuid]: 'OLD', [after.pool.uuid]: 'NEW' };
  expect(namedRoutes(writesTaken(pass.simWrites), names)).toEqual(poolSwapWrites(after.members.length, before.members.length));
  expectAwaited(pass.simRequests, names, {
    built: 'POST /v1/load-balancers/health-monitors',
    polled: 'GET /v1/load-balancers/pools/NEW/members',
    teardown: 'DELETE /v1/load-balancers/listeners/{uuid}',
  });
  const [listener] = after.listeners;
  expect(listener).toMatchObject({ name: before.listeners[0]!.name, protocol_port: before.listeners[0]!.protocol_port });
  expect(listener!.uuid).not.toBe(before.listeners[0]!.uuid);
  return after;
}

/** The writes of a member rotation in pool POOL, in order: the new members added, then the old ones deleted. */
export function memberRotationWrites(added: number, removed: number): string[] {
  return [
    ...Array<string>(added).fill('POST /v1/load-balancers/pools/POOL/members'),
    ...Array<string>(removed).fill('DELETE /v1/load-balancers/pools/POOL/members/{uuid}'),
  ];
}

/**
 * The await-members step ran: between the last write that builds (`built`) and the first that
 * takes something out of service (`teardown`), the new members' pool (`polled`, named as in
 * `names`) was read, which is how the executor checks that they are healthy.
 */
export function expectAwaited(
  requests: readonly RequestLogEntry[],
  names: Readonly<Record<string, string>>,
  step: { readonly built: string; readonly polled: string; readonly teardown: string },
): void {
  const seen = namedRoutes(requests, names);
  const built = seen.lastIndexOf(step.built);
  const teardown = seen.indexOf(step.teardown);
  expect(built, `${step.built} among the requests`).toBeGreaterThanOrEqual(0);
  expect(teardown, `${step.teardown} after ${step.built}`).toBeGreaterThan(built);
  expect(seen.slice(built + 1, teardown), `the requests between ${step.built} and ${step.teardown}`).toContain(step.polled);
}

/**
 * The data plane's view of a Service's port 80 around a change: `serving` converges a Service
 * (the fast monitor, plus `annotations`) and waits until its port serves; `measure` applies a
 * change, takes `plan`'s prediction, runs one pass (`run`, by default one that must succeed),
 * lets the data plane settle and answers the longest outage of port 80 since the change.
 */
export function dataPlaneProbes(harness: Harness, namespace: string, pass: Partial<SyncLbOptions>) {
  async function untilServing(lbUuid: string, port: number): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const ports = harness.sim.admin.serving(lbUuid).ports;
      const last = ports.find((p) => p.port === port)?.intervals.at(-1);
      if (last?.serving === true && last.to === null) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`port ${port} of load balancer ${lbUuid} never served`);
  }

  async function serving(name: string, annotations: Record<string, string> = {}): Promise<V1Service> {
    await createLoadBalancerService(namespace, name, { annotations: { ...FAST_MONITOR, ...annotations } });
    await passOk(harness, [name], pass);
    const service = await readService(namespace, name);
    await untilServing((await theLb(harness, service)).lb.uuid, 80);
    return service;
  }

  /** The plan's worst predicted interruption for the Service (seconds; 0 when none). */
  async function predictedSeconds(name: string): Promise<{ seconds: number; impacts: string[] }> {
    const ctx = harness.context({ output: 'json' });
    await planCommand([`service/${name}`], { namespace, detailedExitcode: false, drainSeconds: pass.drainSeconds ?? 0 }, ctx);
    const document = JSON.parse(ctx.out()) as PlanDocument;
    const worst = document.summary.worstDowntime;
    const impacts = [...new Set(document.services.flatMap((s) => s.actions.map((a) => a.impact)))].sort();
    return { seconds: worst === null ? 0 : (worst.maxSeconds ?? Number.POSITIVE_INFINITY), impacts };
  }

  async function measure(
    name: string,
    service: V1Service,
    change: () => Promise<unknown>,
    run: () => Promise<PassResult> = () => passOk(harness, [name], pass),
  ) {
    const lbUuid = (await theLb(harness, service)).lb.uuid;
    const since = Date.now();
    await change();
    const predicted = await predictedSeconds(name);
    const result = await run();
    await new Promise((resolve) => setTimeout(resolve, PROPAGATION_MS * 2 + 200));
    await untilServing(lbUuid, 80);
    const port = harness.sim.admin.serving(lbUuid, { since }).ports.find((p) => p.port === 80)!;
    return { predicted, measuredMs: port.longestOutageMs, intervals: port.intervals, writes: result.simWrites, result };
  }

  return { serving, untilServing, predictedSeconds, measure };
}
