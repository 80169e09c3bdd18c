// After structural changes sync-lb reads the state back and plans again: whatever changed
// meanwhile (here: another client deletes the new listener) is repaired in the same pass, and a
// state that never converges fails after the bounded number of rounds, naming what differs.
import { describe, expect, it } from 'vitest';
import { syncLbCommand, type SyncLbOptions } from '../../src/commands/sync-lb.js';
import { MAX_ROUNDS } from '../../src/core/apply/lb-pass.js';
import { PartialFailureError } from '../../src/core/errors.js';
import { nodesSeed } from '../support/ccm.js';
import { createLoadBalancerService, uniqueName } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';

describe('sync-lb rounds', () => {
  const namespace = uniqueName('rounds');
  const prefix = uniqueName('rd');
  const options: SyncLbOptions = { ...FAST_PASS, namespace, concurrency: 1, dryRun: false };
  const deleteListeners = async () => {
    for (const listener of await harness.cloud.listeners.list()) await harness.cloud.deleteByHref(listener.href);
  };
  const { harness } = useLbWorld({ prefix, namespace, seed: nodesSeed({ prefix, count: 1, privateNet: '10.60.0' }), nodes: 1 });

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
