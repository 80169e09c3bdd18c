// What tests see in the strict world (docs/sim.md, "Worlds") and not in the forgiving one.
// What the API answers keeps changing after the last write: a load balancer is `changing` while
// it is provisioned, a member's `monitor_status` says its old state until its change reached
// the data plane and its monitor judged it; a test that compares a state before and after
// something that must not write reads both once nothing moves any more (awaitSteady). And a
// create may be refused while a delete settles, then sent again (writesTaken).
import type { V1Service } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { PoolMember } from '../../src/core/cloudscale/types.js';
import type { RequestLogEntry } from '../../src/sim/index.js';
import type { Harness } from './ccm.js';
import { lbState, theLb, type LbState } from './lb-scenarios.js';

/**
 * A member whose monitor_status says what its `enabled` and its pool's monitor say: an enabled
 * one judged (not `changing`, not still `unknown` from before it was enabled, not `no_monitor`
 * from before its pool's monitor reached the data plane), a disabled one no longer judged
 * (`unknown`, or `no_monitor` in a pool without monitor) — until its change reached the data
 * plane, the status is the old one.
 */
function settled(member: Pick<PoolMember, 'enabled' | 'monitor_status'>, monitored: boolean): boolean {
  if (member.enabled) {
    return member.monitor_status !== 'changing' && member.monitor_status !== 'unknown' && (member.monitor_status !== 'no_monitor' || !monitored);
  }
  return member.monitor_status === 'unknown' || member.monitor_status === 'no_monitor';
}

/** What still moves in `state`: the load balancer's status and each member in motion; empty when steady. */
export function inMotion(state: LbState): string[] {
  const moving = state.lb.status === 'changing' ? [`load balancer ${state.lb.name} changing`] : [];
  for (const { pool, members, monitors } of Object.values(state.pools)) {
    for (const member of members) {
      if (!settled(member, monitors.length > 0)) moving.push(`member ${member.name} of pool ${pool.name} ${member.enabled ? 'enabled' : 'disabled'}, ${member.monitor_status}`);
    }
  }
  return moving;
}

/** A hang guard, not a speed assertion: the strict world at time scale 0.05 settles within a few seconds. */
const STEADY_GUARD_MS = 60_000;

/**
 * Reads the load balancer (by UUID, or the one of a Service) until nothing in it moves (inMotion
 * is empty) and returns that state; fails naming what still moves after STEADY_GUARD_MS. It
 * reads through the harness's assertion client, never the command's; call it before a pass, or
 * after one has been measured.
 */
export async function awaitSteady(harness: Harness, lb: string | V1Service): Promise<LbState> {
  const lbUuid = typeof lb === 'string' ? lb : (await theLb(harness, lb)).lb.uuid;
  const deadline = performance.now() + STEADY_GUARD_MS;
  for (;;) {
    const state = await lbState(harness, lbUuid);
    const moving = inMotion(state);
    if (moving.length === 0) return state;
    if (performance.now() >= deadline) expect(moving, `load balancer ${state.lb.name} still moving`).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The writes the API took, in their order. A write refused with 400 is left out, and must be sent
 * again later in `writes` and taken: how a pass creates what a delete that is still settling
 * holds (the executor's createWhenReleased). Any other status stays in.
 */
export function writesTaken(writes: readonly RequestLogEntry[]): RequestLogEntry[] {
  writes.forEach((write, i) => {
    if (write.status !== 400) return;
    const again = writes.slice(i + 1).find((w) => w.method === write.method && w.path === write.path && w.status !== 400);
    expect(again?.status, `${write.method} ${write.path} refused with 400 and sent again`).toBeLessThan(300);
  });
  return writes.filter((write) => write.status !== 400);
}
