// @kube-versions: all — the Lease API (coordination.k8s.io/v1): the server's conflicts and resourceVersions decide who holds it
// The Lease lock against the real apiserver: create, renew, refuse while held, take over after
// expiry, release, and exactly one winner when two start at once.
import { V1MicroTime } from '@kubernetes/client-node';
import { afterAll, describe, expect, test } from 'vitest';
import { LeaseLostError, LockHeldError } from '../../src/core/errors.js';
import { acquireLease, holdLease, readLease, type LeaseHandle } from '../../src/core/kube/lease.js';
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

  test.each([
    // A renewal of ours written while its answer was on the way (the pass ended right then): still ours, freed.
    ['a renewal of its own it did not see', 'freed', 'worker', ''],
    // Taken over behind its back (it has not noticed yet): not ours to free.
    ['a takeover it did not see', 'left to the new holder', 'thief', 'thief'],
  ])('release after %s: the Lease is %s', async (_what, _verdict, writtenBy, holderAfter) => {
    const name = leaseName();
    const handle = await acquireLease(conn, { namespace, name, holderIdentity: 'worker', leaseDurationSeconds: 60 });
    const stored = await conn.coordination.readNamespacedLease({ namespace, name });
    await conn.coordination.replaceNamespacedLease({
      namespace,
      name,
      body: { ...stored, spec: { ...stored.spec, holderIdentity: writtenBy, renewTime: new V1MicroTime(Date.now()) } },
    });
    await handle.release();
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe(holderAfter);
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

describe('lease lock without clock agreement', () => {
  /** A holder renewing every `everyMs` with its own clock `skewMs` off; stop() ends it. */
  function renewing(holder: LeaseHandle, everyMs: number): { stop(): void } {
    const timer = setInterval(() => void holder.renew().catch(() => undefined), everyMs);
    return { stop: () => clearInterval(timer) };
  }

  test.each([
    ['ahead', 70_000],
    ['behind', -70_000],
  ])('a live holder whose clock is 70 s %s: refused once a renewal is seen, never taken over, never called dead', async (_, skewMs) => {
    const name = leaseName();
    const holder = await acquireLease(conn, { namespace, name, holderIdentity: 'skewed-holder', leaseDurationSeconds: 3, now: () => Date.now() + skewMs });
    const renewals = renewing(holder, 500);
    try {
      const refused = await acquireLease(conn, { namespace, name, holderIdentity: 'candidate', leaseDurationSeconds: 3 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(LockHeldError);
      expect((refused as Error).message).toMatch(/held by "skewed-holder", which renewed it while this pass watched \(its renewTime had looked 7\d s (old|ahead)/);

      // Waiting, it watches as long as the holder renews: 5 s, longer than the Lease.
      const messages: string[] = [];
      const waited = await acquireLease(conn, {
        namespace,
        name,
        holderIdentity: 'patient',
        leaseDurationSeconds: 3,
        wait: true,
        signal: AbortSignal.timeout(5000),
        onWaiting: (message) => messages.push(message),
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((waited as Error).name).toBe('TimeoutError');
      expect(messages.join('\n')).not.toContain('probably died');
      expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('skewed-holder');
    } finally {
      renewals.stop();
      await holder.release();
    }
  });

  test('an abandoned Lease is taken over only after this process watched it unrenewed for its whole duration', async () => {
    const name = leaseName();
    // Its renewTime looks 10 minutes old here: by the clock it expired long ago.
    await acquireLease(conn, { namespace, name, holderIdentity: 'dead', leaseDurationSeconds: 2, now: () => Date.now() - 600_000 });
    const started = performance.now();
    const messages: string[] = [];
    const taker = await acquireLease(conn, { namespace, name, holderIdentity: 'heir', leaseDurationSeconds: 30, onWaiting: (m) => messages.push(m) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(2000);
    expect(messages[0]).toMatch(/held by "dead"; watching it: taken over only if it stays unrenewed for 2 s/);
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('heir');
    await taker.release();
  });

  test('the holder: its fence closes once its own clock passes the renew deadline; nothing more is sent', async () => {
    const name = leaseName();
    let monotonicMs = 0;
    const holder = await acquireLease(conn, { namespace, name, holderIdentity: 'frozen', leaseDurationSeconds: 60, monotonicNow: () => monotonicMs });
    const lost: LeaseLostError[] = [];
    holder.onLost((reason) => lost.push(reason));
    monotonicMs = 30_000; // exactly the renew deadline (half the Lease): still ours
    expect(() => holder.check('create load balancer')).not.toThrow();
    monotonicMs = 30_001; // a frozen process wakes up past it
    expect(() => holder.check('create load balancer')).toThrow(
      /^create load balancer was not sent: this pass last renewed the Lease kube-system\/.+ 30 s ago, past its renew deadline of 30 s .* writes nothing more$/,
    );
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseLostError);
    // A later write names itself, not the first one refused.
    expect(() => holder.check('patch service')).toThrow(/^patch service was not sent: this pass last renewed/);
    const before = await conn.coordination.readNamespacedLease({ namespace, name });
    await expect(holder.renew()).rejects.toBeInstanceOf(LeaseLostError);
    const after = await conn.coordination.readNamespacedLease({ namespace, name });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    // A lost handle does not release: the Lease may be another's by now.
    await holder.release();
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('frozen');
  });

  test('holdLease: a takeover aborts the work\'s signal with LeaseLostError and closes the fence', async () => {
    const name = leaseName();
    const outcome = await holdLease(
      conn,
      { namespace, name, holderIdentity: 'worker', leaseDurationSeconds: 3, wait: false, signal: new AbortController().signal },
      async (signal, lease) => {
        // Someone takes the Lease behind its back (as a candidate would after watching it).
        const stolen = await conn.coordination.readNamespacedLease({ namespace, name });
        await conn.coordination.replaceNamespacedLease({ namespace, name, body: { ...stolen, spec: { ...stolen.spec, holderIdentity: 'thief' } } });
        await waitUntil('the renewal notices', () => signal.aborted);
        return { reason: signal.reason as unknown, fence: (() => { try { lease.check('patch service'); return undefined; } catch (e) { return e; } })() };
      },
    );
    expect(outcome.reason).toBeInstanceOf(LeaseLostError);
    expect((outcome.reason as Error).message).toContain('the Lease was taken over during the pass');
    expect(outcome.fence).toBeInstanceOf(LeaseLostError);
    expect((outcome.fence as LeaseLostError).cause).toBe(outcome.reason);
    expect((outcome.fence as Error).message).toMatch(/^patch service was not sent: the Lease was taken over during the pass/);
    expect((await readLease(conn, namespace, name))?.holderIdentity).toBe('thief');
  });
});

