// The step pairs a signal does not split (src/core/apply/step-pairs.ts), and the stop gate that
// holds a signal back while one runs (src/core/stop.ts).
import { describe, expect, test } from 'vitest';
import { stepPairs } from '../../src/core/apply/step-pairs.js';
import type { PlannedAction } from '../../src/core/lb/actions.js';
import type { ImpactClass } from '../../src/core/lb/impact.js';
import { StopGate } from '../../src/core/stop.js';

const POOL = '0a0a0a0a-0000-4000-8000-00000000000a';
const OTHER_POOL = '0b0b0b0b-0000-4000-8000-00000000000b';

// Only the fields step-pairs.ts reads; the planner's actions carry more.
const deleteListener = (impact: ImpactClass) => ({ kind: 'delete-listener', impact, listener: { uuid: 'l', href: 'h', name: 'tcp/80' } });
const createListener = (impact: ImpactClass) => ({ kind: 'create-listener', impact, pool: { ref: 'pool:tcp/http' }, body: { name: 'tcp/80' } });
const deleteMember = (name: string, pool = POOL) => ({ kind: 'delete-member', impact: 'minimal', pool: { uuid: pool }, member: { uuid: 'm', href: 'h', name } });
const createMember = (name: string, pool: { uuid: string } | { ref: string } = { uuid: POOL }) => ({ kind: 'create-member', impact: 'minimal', pool, body: { name } });
const other = (kind: string) => ({ kind, impact: 'none' });

describe('stepPairs', () => {
  test.each([
    {
      name: 'a pool swap: the listener move',
      steps: [other('create-pool'), createMember('a'), other('create-monitor'), other('await-members'), deleteListener('pool-swap'), createListener('pool-swap'), other('delete-pool')],
      pairs: [{ first: 4, last: 5 }],
    },
    {
      name: 'a listener re-created for a port change, monitor changes in between',
      steps: [deleteListener('listener-recreation'), other('create-monitor'), createListener('listener-recreation')],
      pairs: [{ first: 0, last: 2 }],
    },
    { name: 'a port removed: nothing comes back', steps: [deleteListener('port-removal'), createListener('none')], pairs: [] },
    { name: 'a listener that served nothing (its pool gone)', steps: [deleteListener('none'), createListener('none')], pairs: [] },
    { name: 'a listener delete without its create (the plan is cut)', steps: [deleteListener('pool-swap'), other('delete-pool')], pairs: [] },
    {
      name: 'members replaced at the same address: overlapping pairs merge',
      steps: [deleteMember('10.0.0.1:30080'), deleteMember('10.0.0.2:30080'), createMember('10.0.0.1:30080'), createMember('10.0.0.2:30080')],
      pairs: [{ first: 0, last: 3 }],
    },
    { name: 'a member leaving, another joining', steps: [deleteMember('10.0.0.1:30080'), createMember('10.0.0.3:30080')], pairs: [] },
    { name: 'the same name in another pool', steps: [deleteMember('10.0.0.1:30080'), createMember('10.0.0.1:30080', { uuid: OTHER_POOL })], pairs: [] },
    { name: 'the same name in a pool this plan creates', steps: [deleteMember('10.0.0.1:30080'), createMember('10.0.0.1:30080', { ref: 'pool:x' })], pairs: [] },
    {
      name: 'two pairs apart',
      steps: [deleteMember('a'), createMember('a'), other('await-members'), deleteListener('pool-swap'), createListener('pool-swap')],
      pairs: [{ first: 0, last: 1 }, { first: 3, last: 4 }],
    },
  ])('$name', ({ steps, pairs }) => {
    expect(stepPairs(steps as unknown as PlannedAction[])).toEqual(pairs);
  });
});

describe('StopGate', () => {
  const reason = new Error('interrupted by SIGTERM');

  test('no pair in progress: the stop aborts at once', () => {
    const gate = new StopGate();
    let aborted = 0;
    expect(gate.request({ reason, abort: () => (aborted += 1) })).toEqual({ deferred: false });
    expect(aborted).toBe(1);
    expect(gate.hold()).toBeUndefined();
    expect(gate.reason).toBe(reason);
  });

  test('pairs in progress: the abort waits for the last to finish; no pair begins meanwhile; once only', () => {
    const gate = new StopGate();
    let aborted = 0;
    const first = gate.hold()!;
    const second = gate.hold()!;
    expect(gate.request({ reason, abort: () => (aborted += 1) })).toEqual({ deferred: true });
    expect(gate.hold()).toBeUndefined();
    first();
    first();
    expect(aborted).toBe(0);
    second();
    expect(aborted).toBe(1);
    expect(gate.request({ reason, abort: () => (aborted += 1) })).toEqual({ deferred: false });
    expect(aborted).toBe(1);
  });

  test('a pair that does not finish within the deferral: the abort comes anyway', async () => {
    const gate = new StopGate();
    const release = gate.hold()!;
    const aborted = new Promise<void>((resolve) => gate.request({ reason, abort: resolve, maxDeferMs: 1 }));
    await aborted;
    release();
  });
});
