// coordination.k8s.io/v1 Leases as a run lock, compatible with client-go leader election: a Lease
// is held while renewTime + leaseDurationSeconds lies in the future, and every write carries the
// resourceVersion it was based on, so of two racing writers exactly one wins.
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { KubeApiError, LockHeldError } from '../errors.js';
import { kubeCall, type KubeConnection } from './connection.js';
import { abortableSleep } from '../sleep.js';

export interface LeaseState {
  /** Empty when the Lease was released. */
  holderIdentity: string;
  renewTime: Date | undefined;
  leaseDurationSeconds: number;
  /** renewTime + leaseDurationSeconds; undefined when the Lease was never renewed. */
  expiresAt: Date | undefined;
}

export interface LeaseOptions {
  namespace: string;
  name: string;
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** Clock, for tests of expiry arithmetic; defaults to Date.now. */
  now?: () => number;
}

export interface LeaseHandle {
  readonly namespace: string;
  readonly name: string;
  readonly holderIdentity: string;
  /** When the Lease expires unless renewed. */
  readonly expiresAt: Date;
  /** Extends the Lease; throws LockHeldError if another holder took it meanwhile. */
  renew(): Promise<void>;
  /** Gives the Lease up (empty holder) so the next acquirer need not wait; a lost Lease is left alone. */
  release(): Promise<void>;
}

/** The Lease's holder and expiry, or undefined if it does not exist. */
export async function readLease(conn: KubeConnection, namespace: string, name: string): Promise<LeaseState | undefined> {
  const lease = await readLeaseObject(conn, namespace, name);
  return lease === undefined ? undefined : leaseState(lease);
}

/**
 * Takes the Lease: creates it if absent, takes it over if released or expired (or already ours),
 * otherwise throws LockHeldError naming the holder and when the Lease expires.
 */
export async function acquireLease(conn: KubeConnection, options: LeaseOptions): Promise<LeaseHandle> {
  const { namespace, name, holderIdentity, leaseDurationSeconds } = options;
  const now = options.now ?? Date.now;
  const where = `${namespace}/${name}`;
  const existing = await readLeaseObject(conn, namespace, name);

  let stored: V1Lease;
  const acquired = new V1MicroTime(now());
  if (existing === undefined) {
    stored = await winOrLockHeld(conn, where, () =>
      conn.coordination.createNamespacedLease({
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity, leaseDurationSeconds, acquireTime: acquired, renewTime: acquired, leaseTransitions: 0 },
        },
      }),
    );
  } else {
    const state = leaseState(existing);
    const free = state.holderIdentity === '' || state.holderIdentity === holderIdentity || isExpired(state, now());
    if (!free) throw lockHeld(where, state, undefined, now());
    const transitions = existing.spec?.leaseTransitions ?? 0;
    const takeover = state.holderIdentity !== holderIdentity;
    stored = await winOrLockHeld(conn, where, () =>
      conn.coordination.replaceNamespacedLease({
        namespace,
        name,
        body: {
          ...existing,
          spec: {
            ...existing.spec,
            holderIdentity,
            leaseDurationSeconds,
            acquireTime: takeover ? acquired : asMicroTime(existing.spec?.acquireTime) ?? acquired,
            renewTime: acquired,
            leaseTransitions: takeover ? transitions + 1 : transitions,
          },
        },
      }),
    );
  }

  let current = stored;
  const handle: LeaseHandle = {
    namespace,
    name,
    holderIdentity,
    get expiresAt() {
      return leaseState(current).expiresAt ?? new Date(now());
    },
    async renew() {
      const renewed = new V1MicroTime(now());
      current = await winOrLockHeld(conn, where, () =>
        conn.coordination.replaceNamespacedLease({
          namespace,
          name,
          body: { ...current, spec: { ...current.spec, renewTime: renewed } },
        }),
      );
    },
    async release() {
      try {
        current = await kubeCall(`release lease ${where}`, () =>
          conn.coordination.replaceNamespacedLease({
            namespace,
            name,
            body: {
              ...current,
              spec: {
                ...current.spec,
                holderIdentity: undefined,
                leaseDurationSeconds: 1,
                renewTime: new V1MicroTime(now()),
              },
            },
          }),
        );
      } catch (error) {
        // 409: someone else holds it now; 404: it was deleted. Either way it is not ours to free.
        if (error instanceof KubeApiError && (error.isConflict || error.isNotFound)) return;
        throw error;
      }
    },
  };
  return handle;
}

export interface HeldLeaseOptions extends Omit<LeaseOptions, 'now'> {
  /** Wait for another holder to finish or its Lease to expire instead of failing at once. */
  readonly wait: boolean;
  /** Stops waiting, and is passed on to the work. */
  readonly signal: AbortSignal;
  /** How long between attempts while waiting (ms). */
  readonly retryMs?: number;
  /** Told why it waits, once per attempt. */
  readonly onWaiting?: (error: LockHeldError) => void;
  /**
   * A renewal that failed for another reason than a takeover (tried again next interval), or a
   * release that failed (the Lease then expires by itself): worth a warning, not a failure.
   */
  readonly onWarning?: (message: string) => void;
}

/**
 * Runs `work` while holding the Lease: acquired first (waiting for it with `wait`, else
 * LockHeldError naming the holder), renewed every third of its duration, released afterwards.
 * If another holder takes it over meanwhile, the signal given to `work` aborts with a
 * LockHeldError: the work must stop before its next write.
 */
export async function holdLease<T>(
  conn: KubeConnection,
  options: HeldLeaseOptions,
  work: (signal: AbortSignal, lease: LeaseHandle) => Promise<T>,
): Promise<T> {
  const lease = await acquireWaiting(conn, options);
  const lost = new AbortController();
  const renewal = setInterval(() => {
    lease.renew().catch((error: unknown) => {
      if (error instanceof LockHeldError) {
        lost.abort(new LockHeldError(`the Lease was taken over during the pass: ${error.message}`, { hint: error.hint }));
      } else {
        options.onWarning?.(`could not renew the Lease (tried again at the next interval): ${(error as Error).message}`);
      }
    });
  }, (options.leaseDurationSeconds * 1000) / 3);
  renewal.unref();
  try {
    return await work(AbortSignal.any([options.signal, lost.signal]), lease);
  } finally {
    clearInterval(renewal);
    // Not released when lost: it belongs to the new holder now (release leaves it alone anyway).
    if (!lost.signal.aborted) {
      await lease.release().catch((error: unknown) => {
        options.onWarning?.(`could not release the Lease (it expires by itself): ${(error as Error).message}`);
      });
    }
  }
}

async function acquireWaiting(conn: KubeConnection, options: HeldLeaseOptions): Promise<LeaseHandle> {
  for (;;) {
    try {
      return await acquireLease(conn, options);
    } catch (error) {
      if (!(error instanceof LockHeldError) || !options.wait) throw error;
      options.onWaiting?.(error);
      await abortableSleep(options.retryMs ?? 2000, options.signal);
    }
  }
}

async function readLeaseObject(conn: KubeConnection, namespace: string, name: string): Promise<V1Lease | undefined> {
  try {
    return await kubeCall(`read lease ${namespace}/${name}`, () =>
      conn.coordination.readNamespacedLease({ namespace, name }),
    );
  } catch (error) {
    if (error instanceof KubeApiError && error.isNotFound) return undefined;
    throw error;
  }
}

/** Runs a write that carries a resourceVersion (or creates); losing the race means LockHeldError. */
async function winOrLockHeld(conn: KubeConnection, where: string, write: () => Promise<V1Lease>): Promise<V1Lease> {
  try {
    return await kubeCall(`write lease ${where}`, write);
  } catch (error) {
    if (!(error instanceof KubeApiError && error.isConflict)) throw error;
    const [namespace = '', name = ''] = where.split('/');
    const winner = await readLeaseObject(conn, namespace, name);
    throw lockHeld(where, winner === undefined ? undefined : leaseState(winner), error);
  }
}

/**
 * A holder renews every third of the Lease duration; one that has not renewed for two thirds of
 * it missed two renewals and has most likely died (its Lease still blocks until it expires).
 */
export function holderProbablyDied(state: LeaseState, nowMs: number): boolean {
  if (state.renewTime === undefined || state.leaseDurationSeconds <= 0) return false;
  return nowMs - state.renewTime.getTime() > (state.leaseDurationSeconds * 1000 * 2) / 3;
}

function lockHeld(where: string, state: LeaseState | undefined, cause?: unknown, nowMs = Date.now()): LockHeldError {
  const holder = state?.holderIdentity ? `"${state.holderIdentity}"` : 'another writer';
  const expires =
    state?.expiresAt === undefined
      ? ''
      : `; it expires at ${state.expiresAt.toISOString()} (in ${Math.max(0, Math.ceil((state.expiresAt.getTime() - nowMs) / 1000))} s)`;
  if (state !== undefined && holderProbablyDied(state, nowMs)) {
    const silentFor = Math.round((nowMs - state.renewTime!.getTime()) / 1000);
    return new LockHeldError(
      `lease ${where} is held by ${holder}, which stopped renewing it ${silentFor} s ago and has probably died${expires}`,
      {
        ...(cause === undefined ? {} : { cause }),
        hint: 'a dead holder\'s Lease expires by itself: run again after it expires, or pass --wait to wait for it',
      },
    );
  }
  return new LockHeldError(`lease ${where} is held by ${holder}, a pass in progress${expires}`, {
    ...(cause === undefined ? {} : { cause }),
    hint: 'another cloudscale-ccm pass (a terminal run or the CronJob) is writing; pass --wait to wait for it to finish',
  });
}

function leaseState(lease: V1Lease): LeaseState {
  const spec = lease.spec ?? {};
  const renewTime = toDate(spec.renewTime) ?? toDate(spec.acquireTime);
  const leaseDurationSeconds = spec.leaseDurationSeconds ?? 0;
  return {
    holderIdentity: spec.holderIdentity ?? '',
    renewTime,
    leaseDurationSeconds,
    expiresAt: renewTime === undefined ? undefined : new Date(renewTime.getTime() + leaseDurationSeconds * 1000),
  };
}

function isExpired(state: LeaseState, nowMs: number): boolean {
  return state.expiresAt === undefined || state.expiresAt.getTime() < nowMs;
}

/**
 * client-node types MicroTime fields as V1MicroTime but does not deserialize them: at runtime
 * they arrive as RFC 3339 strings.
 */
function toDate(value: Date | string | undefined): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Writes need microsecond precision on the wire; V1MicroTime serializes that way, Date does not. */
function asMicroTime(value: Date | string | undefined): V1MicroTime | undefined {
  const date = toDate(value);
  return date === undefined ? undefined : new V1MicroTime(date.getTime());
}
