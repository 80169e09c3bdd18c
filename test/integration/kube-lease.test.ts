// The Lease lock against the real apiserver: create, renew, refuse while held, take over after
// expiry, release, and exactly one winner when two start at once.
import { afterAll, describe, expect, test } from 'vitest';
import { LockHeldError } from '../../src/core/errors.js';
import { acquireLease, readLease } from '../../src/core/kube/lease.js';
import { ignoreNotFound, testConnection, uniqueName, waitUntil } from '../support/kube.js';

const conn = testConnection();
const namespace = 'kube-system';
const leases: string[] = [];

function leaseName(): string {
  const name = uniqueName('lease');
  leases.push(name);
  return name;
}

afterAll(async () => {
  for (const name of leases) await ignoreNotFound(conn.coordination.deleteNamespacedLease({ namespace, name }));
});

async function waitUntilExpired(name: string): Promise<void> {
  await waitUntil(`lease ${name} expired`, async () => {
    const state = await readLease(conn, namespace, name);
    return state?.expiresAt !== undefined && state.expiresAt.getTime() < Date.now();
  });
}

describe('lease lock', () => {
  test('readLease answers undefined for a missing Lease', async () => {
    expect(await readLease(conn, namespace, uniqueName('absent'))).toBeUndefined();
  });

  test('created when absent, refused to others while held, renewed by its holder', async () => {
    const name = leaseName();
    const first = await acquireLease(conn, { namespace, name, holderIdentity: 'run-a', leaseDurationSeconds: 30 });
    const stored = await readLease(conn, namespace, name);
    expect(stored).toMatchObject({ holderIdentity: 'run-a', leaseDurationSeconds: 30 });
    expect(stored?.expiresAt?.getTime()).toBe(first.expiresAt.getTime());

    const refused = await acquireLease(conn, { namespace, name, holderIdentity: 'run-b', leaseDurationSeconds: 30 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(LockHeldError);
    expect((refused as LockHeldError).message).toContain('"run-a"');
    expect((refused as LockHeldError).message).toContain(first.expiresAt.toISOString());

    const renewTimeBefore = stored?.renewTime?.getTime() ?? 0;
    await waitUntil('the clock to move on', () => Date.now() > renewTimeBefore + 5);
    await first.renew();
    const renewed = await readLease(conn, namespace, name);
    expect(renewed?.holderIdentity).toBe('run-a');
    expect(renewed?.renewTime?.getTime()).toBeGreaterThan(renewTimeBefore);
    expect(first.expiresAt.getTime()).toBe(renewed?.expiresAt?.getTime());
  });

  test('an expired Lease is taken over; the old holder can no longer renew', async () => {
    const name = leaseName();
    const old = await acquireLease(conn, { namespace, name, holderIdentity: 'run-old', leaseDurationSeconds: 1 });
    await waitUntilExpired(name);

    const taker = await acquireLease(conn, { namespace, name, holderIdentity: 'run-new', leaseDurationSeconds: 30 });
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('run-new');
    const raw = await conn.coordination.readNamespacedLease({ namespace, name });
    expect(raw.spec?.leaseTransitions).toBe(1);

    await expect(old.renew()).rejects.toBeInstanceOf(LockHeldError);
    // A lost Lease is not released by its former holder.
    await old.release();
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('run-new');
    await taker.release();
  });

  test('release frees the Lease at once for the next holder', async () => {
    const name = leaseName();
    const first = await acquireLease(conn, { namespace, name, holderIdentity: 'run-1', leaseDurationSeconds: 60 });
    await first.release();
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('');
    const second = await acquireLease(conn, { namespace, name, holderIdentity: 'run-2', leaseDurationSeconds: 60 });
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('run-2');
    await second.release();
  });

  test('two acquirers at once: exactly one wins, the other gets LockHeldError', async () => {
    for (const existing of [false, true]) {
      const name = leaseName();
      if (existing) {
        const released = await acquireLease(conn, { namespace, name, holderIdentity: 'setup', leaseDurationSeconds: 1 });
        await released.release();
      }
      const results = await Promise.allSettled(
        ['racer-1', 'racer-2'].map((holderIdentity) =>
          acquireLease(conn, { namespace, name, holderIdentity, leaseDurationSeconds: 30 }),
        ),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(LockHeldError);
      const holder = (won[0] as PromiseFulfilledResult<{ holderIdentity: string }>).value.holderIdentity;
      expect((await readLease(conn, namespace, name))?.holderIdentity).toBe(holder);
    }
  });
});
