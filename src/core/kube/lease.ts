// coordination.k8s.io/v1 Leases as a run lock, judged as client-go's leader election judges them:
// never by comparing another host's renewTime with this host's clock (clocks disagree), only by
// what this process's own monotonic clock observed (see LeaseTimings). Every write of the Lease
// carries the resourceVersion it was based on, so of two racing writers exactly one wins.
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { KubeApiError, LeaseLostError, LockHeldError } from '../errors.js';
import type { WriteFence } from '../fence.js';
import { kubeCall, type KubeConnection } from './connection.js';
import { abortableSleep } from '../sleep.js';
import { processStop, type StopGate } from '../stop.js';

export interface LeaseState {
  /** Empty when the Lease was released. */
  holderIdentity: string;
  /** The holder's clock when it last renewed: a hint for messages, never evidence of expiry. */
  renewTime: Date | undefined;
  leaseDurationSeconds: number;
  /** renewTime + leaseDurationSeconds by the holder's clock; undefined when never renewed. */
  expiresAt: Date | undefined;
}

/**
 * How a Lease of `durationSeconds` is kept and judged. No two hosts compare clocks: a candidate
 * takes a held Lease only after its own monotonic clock saw the record unchanged for the whole
 * duration, and a holder stops writing once its own monotonic clock says that its last
 * successful renewal was sent longer than the renew deadline ago. Between the two lies half a
 * Lease (30 s by default) for a write that passed the fence to reach its API, so the holder's
 * last write lands before any candidate can take over, whatever the wall clocks say.
 */
export interface LeaseTimings {
  readonly durationMs: number;
  /** A holder renews this often. */
  readonly renewEveryMs: number;
  /** A holder whose last successful renewal was sent longer ago than this writes nothing more. */
  readonly renewDeadlineMs: number;
  /** Renewal after a failed one, and polling while watching another holder's Lease. */
  readonly retryMs: number;
}

/** Writes of a release, each after reading the record again when the one before met a newer one of ours. */
const RELEASE_ATTEMPTS = 3;

export function leaseTimings(durationSeconds: number): LeaseTimings {
  const durationMs = durationSeconds * 1000;
  return {
    durationMs,
    renewEveryMs: durationMs / 6,
    renewDeadlineMs: durationMs / 2,
    retryMs: Math.min(2000, durationMs / 12),
  };
}

export interface LeaseOptions {
  namespace: string;
  name: string;
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** Keep watching a held Lease until it is released or confirmed abandoned, instead of failing. */
  wait?: boolean;
  /** Stops watching. */
  signal?: AbortSignal;
  /** Told what it watches and why, whenever that changes. */
  onWaiting?: (message: string) => void;
  /** The wall clock written into the Lease (renewTime) and used in messages; Date.now by default. */
  now?: () => number;
  /** The clock every decision is made on; performance.now by default. */
  monotonicNow?: () => number;
}

export interface LeaseHandle extends WriteFence {
  readonly namespace: string;
  readonly name: string;
  readonly holderIdentity: string;
  /** When the Lease expires unless renewed, as written (by this host's clock). */
  readonly expiresAt: Date;
  /**
   * Extends the Lease. Throws LeaseLostError, and the handle stays lost, when another holder
   * took it meanwhile or the renew deadline has already passed (no renewal is sent then).
   */
  renew(): Promise<void>;
  /**
   * Gives the Lease up (empty holder) so the next acquirer need not wait; a lost Lease is left
   * alone. From the moment it is called the fence refuses every write and no renewal is sent:
   * a write after the release could meet the next holder's.
   */
  release(): Promise<void>;
  /** Why the handle was lost, once it was. */
  readonly lostReason: LeaseLostError | undefined;
  /** Called once when the handle is lost (fence, renewal, takeover). */
  onLost(listener: (reason: LeaseLostError) => void): void;
}

/** The Lease's holder and expiry, or undefined if it does not exist. */
export async function readLease(conn: KubeConnection, namespace: string, name: string): Promise<LeaseState | undefined> {
  const lease = await readLeaseObject(conn, namespace, name);
  return lease === undefined ? undefined : leaseState(lease);
}

/**
 * Takes the Lease: creates it if absent, takes it if released (or already ours). A Lease another
 * holder keeps is refused at once (LockHeldError naming it) when its renewTime looks recent by
 * this host's clock; otherwise, and always with `wait`, it is watched: a renewal seen while
 * watching proves the holder alive (refused, or watched on with `wait`), and a record unchanged
 * for the Lease's whole duration by this host's monotonic clock is taken over. Every write
 * carries the resourceVersion it was based on, so of two racing candidates exactly one wins.
 */
export async function acquireLease(conn: KubeConnection, options: LeaseOptions): Promise<LeaseHandle> {
  const { namespace, name, holderIdentity, leaseDurationSeconds } = options;
  const now = options.now ?? Date.now;
  const monotonicNow = options.monotonicNow ?? (() => performance.now());
  const where = `${namespace}/${name}`;
  let watched: { resourceVersion: string; since: number; message: string; firstAgeMs: number | undefined } | undefined;

  for (;;) {
    const existing = await readLeaseObject(conn, namespace, name);
    const sentAt = monotonicNow();
    const acquired = new V1MicroTime(now());
    if (existing === undefined) {
      const create = () =>
        conn.coordination.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: { holderIdentity, leaseDurationSeconds, acquireTime: acquired, renewTime: acquired, leaseTransitions: 0 },
          },
        });
      const stored = await lostRaceOrWait(options, () => winOrLockHeld(conn, where, create));
      if (stored === undefined) continue;
      return heldLease(conn, options, stored, sentAt);
    }

    const state = leaseState(existing);
    const resourceVersion = existing.metadata?.resourceVersion ?? '';
    const heldByOther = state.holderIdentity !== '' && state.holderIdentity !== holderIdentity;
    if (heldByOther) {
      // The holder's own promise: how long it may go without renewing before it stops writing.
      const timings = leaseTimings(state.leaseDurationSeconds > 0 ? state.leaseDurationSeconds : leaseDurationSeconds);
      const renewedWhileWatched = watched !== undefined && watched.resourceVersion !== resourceVersion;
      if (watched === undefined || renewedWhileWatched) {
        if (renewedWhileWatched && !options.wait) {
          throw lockHeld(where, state, { renewedWhileWatched: watched!.firstAgeMs ?? 0, nowMs: now() });
        }
        if (watched === undefined && !options.wait && looksRecentlyRenewed(state, timings, now())) {
          throw lockHeld(where, state, { nowMs: now() });
        }
        const firstAgeMs = watched?.firstAgeMs ?? (state.renewTime === undefined ? undefined : now() - state.renewTime.getTime());
        watched = { resourceVersion, since: monotonicNow(), message: '', firstAgeMs };
      }
      const unchangedForMs = monotonicNow() - watched.since;
      if (unchangedForMs < timings.durationMs) {
        const message = watchingMessage(where, state, timings, unchangedForMs);
        if (message !== watched.message) options.onWaiting?.(message);
        watched.message = message;
        await abortableSleep(timings.retryMs, options.signal);
        continue;
      }
    }

    const takeover = state.holderIdentity !== holderIdentity;
    const transitions = existing.spec?.leaseTransitions ?? 0;
    const take = () =>
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
      });
    const stored = await lostRaceOrWait(options, () => winOrLockHeld(conn, where, take));
    if (stored === undefined) continue;
    return heldLease(conn, options, stored, sentAt);
  }
}

/** Another candidate won the write: LockHeldError, or undefined (read and judge again) with `wait`. */
async function lostRaceOrWait(options: LeaseOptions, write: () => Promise<V1Lease>): Promise<V1Lease | undefined> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof LockHeldError) || !options.wait) throw error;
    options.signal?.throwIfAborted();
    return undefined;
  }
}

/** The handle of a Lease just written by this process; `sentAt` is when that write was sent. */
function heldLease(conn: KubeConnection, options: LeaseOptions, stored: V1Lease, sentAt: number): LeaseHandle {
  const { namespace, name, holderIdentity } = options;
  const now = options.now ?? Date.now;
  const monotonicNow = options.monotonicNow ?? (() => performance.now());
  const where = `${namespace}/${name}`;
  const timings = leaseTimings(options.leaseDurationSeconds);
  let current = stored;
  let renewedSentAt = sentAt;
  let lostReason: LeaseLostError | undefined;
  let released = false;
  const listeners: ((reason: LeaseLostError) => void)[] = [];

  const lose = (reason: LeaseLostError): LeaseLostError => {
    if (lostReason === undefined) {
      lostReason = reason;
      for (const listener of listeners) listener(reason);
    }
    return lostReason;
  };
  const overdue = (): LeaseLostError | undefined => {
    const silentMs = monotonicNow() - renewedSentAt;
    if (silentMs <= timings.renewDeadlineMs) return undefined;
    return lose(
      new LeaseLostError(
        `this pass last renewed the Lease ${where} ${seconds(silentMs)} s ago, past its renew deadline of ` +
          `${seconds(timings.renewDeadlineMs)} s (the process was paused or could not reach the Kubernetes API): ` +
          'another writer may hold it by now, so this pass writes nothing more',
        {
          hint:
            'the next pass repairs what this one left; if it repeats, check the load of this host and its ' +
            'connection to the API server, or pass a longer --lease-seconds',
        },
      ),
    );
  };

  return {
    namespace,
    name,
    holderIdentity,
    get expiresAt() {
      return leaseState(current).expiresAt ?? new Date(now());
    },
    get lostReason() {
      return lostReason;
    },
    onLost(listener) {
      if (lostReason !== undefined) listener(lostReason);
      else listeners.push(listener);
    },
    check(what) {
      if (released) {
        throw new LeaseLostError(`${what} was not sent: this pass has released the Lease ${where}`, {
          hint: 'the pass was ending; the next pass repairs what this one left',
        });
      }
      const reason = lostReason ?? overdue();
      if (reason === undefined) return;
      // Each refused write names itself; the reason is the one the Lease was lost for.
      throw new LeaseLostError(`${what} was not sent: ${reason.message}`, { cause: reason, ...(reason.hint === undefined ? {} : { hint: reason.hint }) });
    },
    async renew() {
      if (released) return;
      const reason = lostReason ?? overdue();
      if (reason !== undefined) throw reason;
      const attemptSentAt = monotonicNow();
      const renewed = new V1MicroTime(now());
      try {
        current = await winOrLockHeld(conn, where, () =>
          conn.coordination.replaceNamespacedLease({
            namespace,
            name,
            body: { ...current, spec: { ...current.spec, renewTime: renewed } },
          }),
        );
        renewedSentAt = attemptSentAt;
      } catch (error) {
        if (error instanceof LockHeldError) {
          throw lose(
            new LeaseLostError(`the Lease was taken over during the pass: ${error.message}`, {
              cause: error,
              hint: 'the new holder goes on; the next pass repairs whatever this one left unfinished',
            }),
          );
        }
        throw error;
      }
    },
    async release() {
      released = true;
      if (lostReason !== undefined) return;
      // A 409 is not proof that the Lease is another's: a renewal of ours may have been written
      // while its answer was still on the way (the pass ended right then), and the record moved
      // on under our name. Left alone, it would stay held for its whole duration and refuse the
      // next pass (the CronJob's next Job). So the record is read again and freed while it still
      // names this holder; one that names another holder, or is gone, is not ours to free.
      for (let attempt = 1; ; attempt += 1) {
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
          return;
        } catch (error) {
          if (error instanceof KubeApiError && error.isNotFound) return;
          // A record that keeps moving under our name past a few attempts expires by itself.
          if (!(error instanceof KubeApiError && error.isConflict) || attempt === RELEASE_ATTEMPTS) throw error;
        }
        const latest = await readLeaseObject(conn, namespace, name);
        if (latest === undefined || leaseState(latest).holderIdentity !== holderIdentity) return;
        current = latest;
      }
    },
  };
}

export interface HeldLeaseOptions extends Omit<LeaseOptions, 'now' | 'monotonicNow' | 'wait' | 'signal'> {
  /** Wait for another holder to finish or its Lease to be confirmed abandoned instead of failing. */
  readonly wait: boolean;
  /** Stops waiting, and is passed on to the work. */
  readonly signal: AbortSignal;
  /**
   * A renewal that failed for another reason than a takeover (tried again soon), or a release
   * that failed (the Lease then expires by itself): worth a warning, not a failure.
   */
  readonly onWarning?: (message: string) => void;
  /** Where the release is registered as a last word while the Lease is held (the process's gate by default). */
  readonly stopGate?: StopGate;
}

/**
 * Runs `work` while holding the Lease: acquired first (see acquireLease), renewed every sixth of
 * its duration (sooner again after a failure), released afterwards. The handle given to `work`
 * is the fence its writes must pass. Once the Lease is lost (taken over, or not renewed within
 * its renew deadline), the fence refuses every write and the signal given to `work` aborts with
 * the LeaseLostError: the work stops before its next write. While held, its release is a last
 * word of the stop gate: a process that a second signal ends at once still frees it.
 */
export async function holdLease<T>(
  conn: KubeConnection,
  options: HeldLeaseOptions,
  work: (signal: AbortSignal, lease: LeaseHandle) => Promise<T>,
): Promise<T> {
  const lease = await acquireLease(conn, options);
  const timings = leaseTimings(options.leaseDurationSeconds);
  const lost = new AbortController();
  lease.onLost((reason) => lost.abort(reason));
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const renewLater = (ms: number): void => {
    if (stopped || lost.signal.aborted) return;
    timer = setTimeout(() => {
      lease.renew().then(
        () => renewLater(timings.renewEveryMs),
        (error: unknown) => {
          if (error instanceof LeaseLostError) return;
          options.onWarning?.(`could not renew the Lease (trying again): ${(error as Error).message}`);
          renewLater(timings.retryMs);
        },
      );
    }, ms);
    timer.unref();
  };
  renewLater(timings.renewEveryMs);
  // One release, whichever comes first: the end of the work, or a second signal's last words.
  let releasing: Promise<void> | undefined;
  const release = (): Promise<void> => (releasing ??= lease.release());
  const unregister = (options.stopGate ?? processStop).beforeExit({
    what: `release the Lease ${options.namespace}/${options.name}`,
    otherwise: `it stays held until it expires, ${options.leaseDurationSeconds} s after its last renewal`,
    say: release,
  });
  try {
    return await work(AbortSignal.any([options.signal, lost.signal]), lease);
  } finally {
    stopped = true;
    clearTimeout(timer);
    // Not released when lost: it may belong to another holder now (release leaves it alone anyway).
    await release().catch((error: unknown) => {
      options.onWarning?.(`could not release the Lease (it expires by itself): ${(error as Error).message}`);
    });
    unregister();
  }
}

/**
 * Whether another controller's Lease (the Go CCM's) is in use, judged without trusting clocks
 * where it matters: a holder whose renewTime looks current by this host's clock is taken at its
 * word; one that looks expired but was renewed within `recentMs` by this clock (the clocks may
 * disagree) is watched for `watchMs`, and counts as in use when its record changes meanwhile.
 * Older than `recentMs`, the holder is taken as gone: skews of that size break TLS anyway.
 */
export async function leaseInUse(
  conn: KubeConnection,
  lease: { namespace: string; name: string },
  options: { watchMs: number; recentMs: number; signal?: AbortSignal },
): Promise<LeaseState | undefined> {
  const first = await readLeaseObject(conn, lease.namespace, lease.name);
  const state = first === undefined ? undefined : leaseState(first);
  if (state === undefined || state.holderIdentity === '' || state.renewTime === undefined) return undefined;
  const nowMs = Date.now();
  if (state.expiresAt !== undefined && state.expiresAt.getTime() > nowMs) return state;
  if (nowMs - state.renewTime.getTime() > options.recentMs) return undefined;
  const pollMs = Math.min(500, options.watchMs);
  for (let watched = 0; watched < options.watchMs; watched += pollMs) {
    await abortableSleep(pollMs, options.signal);
    const again = await readLeaseObject(conn, lease.namespace, lease.name);
    if (again === undefined) return undefined;
    if (again.metadata?.resourceVersion !== first!.metadata?.resourceVersion) {
      const renewed = leaseState(again);
      return renewed.holderIdentity === '' ? undefined : renewed;
    }
  }
  return undefined;
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
    throw lockHeld(where, winner === undefined ? undefined : leaseState(winner), { cause: error });
  }
}

/** A renewTime within two renewals by this host's clock (and not far in its future): a pass in progress. */
function looksRecentlyRenewed(state: LeaseState, timings: LeaseTimings, nowMs: number): boolean {
  if (state.renewTime === undefined) return false;
  const ageMs = nowMs - state.renewTime.getTime();
  return ageMs <= 2 * timings.renewEveryMs && ageMs >= -timings.durationMs;
}

function watchingMessage(where: string, state: LeaseState, timings: LeaseTimings, unchangedForMs: number): string {
  const holder = `"${state.holderIdentity}"`;
  // Two renewals missed by this host's own clock: the holder has probably died (its clock may
  // say anything about when it last renewed).
  if (unchangedForMs > 2 * timings.renewEveryMs) {
    return (
      `lease ${where} is held by ${holder}, which has not renewed it for the ${seconds(unchangedForMs)} s watched here ` +
      `(it renews every ${seconds(timings.renewEveryMs)} s) and has probably died; taking it over once it stays ` +
      `unrenewed for ${seconds(timings.durationMs)} s`
    );
  }
  return (
    `lease ${where} is held by ${holder}; watching it: taken over only if it stays unrenewed for ` +
    `${seconds(timings.durationMs)} s as measured here`
  );
}

function lockHeld(
  where: string,
  state: LeaseState | undefined,
  context: {
    cause?: unknown;
    /** Set when a renewal was seen while watching: how old its renewTime first looked here (ms). */
    renewedWhileWatched?: number;
    nowMs?: number;
  } = {},
): LockHeldError {
  const nowMs = context.nowMs ?? Date.now();
  const holder = state?.holderIdentity ? `"${state.holderIdentity}"` : 'another writer';
  const watched = context.renewedWhileWatched;
  const expires =
    state?.expiresAt === undefined || watched !== undefined
      ? ''
      : `; it expires at ${state.expiresAt.toISOString()} (in ${Math.max(0, Math.ceil((state.expiresAt.getTime() - nowMs) / 1000))} s) unless renewed`;
  const evidence =
    watched === undefined
      ? ''
      : `, which renewed it while this pass watched (its renewTime had looked ${seconds(Math.abs(watched))} s ` +
        `${watched >= 0 ? 'old' : 'ahead'} by this host's clock: the two clocks disagree, and only renewals seen here count)`;
  return new LockHeldError(`lease ${where} is held by ${holder}${evidence}, a pass in progress${expires}`, {
    ...(context.cause === undefined ? {} : { cause: context.cause }),
    hint: 'another cloudscale-ccm pass (a terminal run or the CronJob) is writing; pass --wait to wait for it to finish',
  });
}

function seconds(ms: number): number {
  return Math.round(ms / 1000);
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
