// After structural changes sync-lb reads the state back and plans again: whatever changed
// meanwhile (here: another client deletes the new listener) is repaired in the same pass, and a
// state that never converges fails after the bounded number of rounds, naming what differs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncLbCommand, type SyncLbOptions } from '../../src/commands/sync-lb.js';
import { MAX_ROUNDS } from '../../src/core/apply/lb-pass.js';
import { PartialFailureError } from '../../src/core/errors.js';
import { startHarness, type Harness } from '../support/ccm.js';
import { createLoadBalancerService, createNode, deleteCreatedObjects, ensureNamespace, uniqueName } from '../support/kube.js';

describe('sync-lb rounds', () => {
  let harness: Harness;
  const namespace = uniqueName('rounds');
  const prefix = uniqueName('rd');
  const options: SyncLbOptions = { namespace, concurrency: 1, waitTimeout: 30, settleSeconds: 0, pollSeconds: 0.05, dryRun: false };
  const deleteListeners = async () => {
    for (const listener of await harness.cloud.listeners.list()) await harness.cloud.deleteByHref(listener.href);
  };

  beforeAll(async () => {
    harness = await startHarness({
      seed: `
networks: [{name: p, zone: rma1, subnets: [{cidr: 10.60.0.0/24}]}]
servers:
  - {name: ${prefix}-1, flavor: flex-4-2, zone: rma1, interfaces: [{type: private, network: p, addresses: [10.60.0.1]}]}
`,
    });
    await ensureNamespace(namespace);
    await createNode(`${prefix}-1`, { ready: true });
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await harness.stop();
  });

  it('repairs in a second round what changed after the first', async () => {
    await createLoadBalancerService(namespace, 'one');
    const rounds: number[] = [];
    const ctx = harness.context();
    const report = await syncLbCommand(['service/one'], {
      ...options,
      afterRound: async (round) => {
        rounds.push(round);
        if (round === 1) await deleteListeners();
      },
    }, ctx);
    expect(rounds).toEqual([1, 2]);
    expect(report.services[0]!.status).toBe('changed');
    expect(report.services[0]!.actions.filter((a) => a.kind === 'create-listener')).toHaveLength(2);
    expect((await harness.cloud.listeners.list()).map((l) => l.name)).toEqual(['tcp/80']);
    expect(ctx.out()).toContain('the state read back still differs: 1 more action');
  });

  it(`fails after ${MAX_ROUNDS} rounds when the state keeps changing, naming what still differs`, async () => {
    await createLoadBalancerService(namespace, 'two');
    const error = await syncLbCommand(['service/two'], { ...options, afterRound: deleteListeners }, harness.context()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PartialFailureError);
    const failure = (error as PartialFailureError).failures[0]!;
    expect(failure.object).toBe(`service/${namespace}/two`);
    expect(failure.error.message).toBe(`the state read back after ${MAX_ROUNDS} rounds still differs: create-listener listener tcp/80`);
  });
});
