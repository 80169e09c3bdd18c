// `run --watch-for`: after its full pass, `run` watches Nodes and Services until a deadline and
// hands each batch of relevant changes to a reaction pass. The loop owns the timing: a change
// is collected for `debounceMs` so that a burst (a Service and its annotations, a Node and its
// labels) makes one pass; changes arriving during a pass make the next one. A watch that the
// server closes resumes from the last version seen; one that expired (410) or failed is
// re-established from a fresh list, whose differences count as changes (nothing missed in
// between goes unseen); one that cannot be re-established within `reestablishWithinMs` ends the
// loop with an error, never silently. The signal (SIGTERM, a lost Lease) ends it: between passes
// at once; a reaction pass in progress stops at its next step outside a step pair (SIGTERM
// waits for the pair, src/core/stop.ts; a lost Lease does not: the write fence refuses its
// writes), and the loop ends after it.
//
// A reaction pass that fails for a Node or Service is run again for it while the watch lasts,
// also when nothing changes meanwhile: after RETRY_PASS_FIRST_MS, then twice as long each time,
// up to RETRY_PASS_MAX_MS (an API that keeps failing is asked at most every half minute, never
// in a tight loop). A retry that would start after the deadline is not scheduled: the next run
// passes that object anyway. A new change of a failed object (or one whose pass covers it: a
// Node's, over every load balancer) takes its retry along at once, without resetting the
// backoff; a pass in which the object succeeds ends its retries.
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { KubeApiError, errorMessage } from '../errors.js';
import type { ListedCollection, RunningWatch, WatchEnd, WatchHandlers, WatchedKind } from '../kube/watch.js';
import { ChangeTracker, changesByObject, joinChanges, reactionScope, type ChangeSet } from './watch-changes.js';

/** The two operations of src/core/kube/watch.ts, injectable for unit tests. */
export interface WatchSource {
  list(kind: WatchedKind): Promise<ListedCollection>;
  watch(kind: WatchedKind, resourceVersion: string, timeoutSeconds: number, handlers: WatchHandlers): Promise<RunningWatch>;
}

export interface WatchClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Resolves after `ms`, or early (without error) once `wake` is called or the signal aborts. */
  pause(ms: number, wake: Promise<void>, signal: AbortSignal): Promise<void>;
}

export interface WatchLoopOptions {
  readonly source: WatchSource;
  /** Nodes and Services as listed before the full pass began: the watches continue from there. */
  readonly start: { readonly nodes: ListedCollection; readonly services: ListedCollection };
  /** When to stop watching, on `clock`. */
  readonly untilMs: number;
  readonly debounceMs: number;
  /** How long a broken watch may take to come back before the loop fails. */
  readonly reestablishWithinMs: number;
  readonly signal: AbortSignal;
  /**
   * Runs one reaction pass and says what failed in it (nothing: it succeeded); the failures are
   * the caller's to record, the loop schedules their retries and goes on.
   */
  readonly react: (changes: ChangeSet) => Promise<readonly ReactionFailure[]>;
  /** Told about broken and re-established watches, for the log. */
  readonly onNote?: (message: string) => void;
  readonly clock?: WatchClock;
}

/** A reaction pass failed for an object: what makes a pass over it again, and why it failed. */
export interface ReactionFailure {
  /** The failed Node or Service; for a failure that names neither, all the pass was given. */
  readonly again: ChangeSet;
  readonly problem: string;
}

export interface WatchLoopReport {
  /** Reaction passes run, retries included. */
  readonly reactions: number;
  /** Of those, the passes that ran a failed object again. */
  readonly retried: number;
  /** Times a watch was listed afresh after it expired or failed. */
  readonly reestablished: number;
  readonly endedBy: 'deadline' | 'signal';
}

/** A broken watch is listed again after this long, then twice as long each time, up to RELIST_MAX_MS. */
const RELIST_FIRST_MS = 250;
const RELIST_MAX_MS = 4000;
/** A watch the server closes sooner than this is opened again only after this long (no busy loop). */
const MIN_WATCH_MS = 1000;

/** The wait before the first retry of a failed object's pass; each further one waits twice as long. */
export const RETRY_PASS_FIRST_MS = 2000;
/** The longest wait between two passes of a failed object. */
export const RETRY_PASS_MAX_MS = 30_000;

/** The wait before the pass after `failuresInRow` failed passes of an object. */
export function retryPassDelayMs(failuresInRow: number): number {
  return Math.min(RETRY_PASS_FIRST_MS * 2 ** Math.max(0, failuresInRow - 1), RETRY_PASS_MAX_MS);
}

export const realClock: WatchClock = {
  now: () => performance.now(),
  pause: (ms, wake, signal) =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener('abort', done, { once: true });
      void wake.then(done);
    }),
};

export class WatchBrokenError extends KubeApiError {}

function brokenWatch(kind: WatchedKind, when: string, problem: string, cause?: unknown): WatchBrokenError {
  return new WatchBrokenError(`the watch of ${kind} broke and could not be re-established ${when}: ${problem}`, {
    status: cause instanceof KubeApiError ? cause.status : 0,
    cause,
    hint: 'changes after the break wait for the next run; check the API server',
  });
}

/** Watches until the deadline or the signal; rejects only with WatchBrokenError (or a reaction's error). */
export async function watchAndReact(options: WatchLoopOptions): Promise<WatchLoopReport> {
  const clock = options.clock ?? realClock;
  const tracker = new ChangeTracker();
  tracker.baseline(options.start.nodes.items as V1Node[], options.start.services.items as V1Service[]);
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let wake: () => void = () => undefined;
  let woken = new Promise<void>((resolve) => (wake = resolve));
  const notify = (): void => {
    const previous = wake;
    woken = new Promise<void>((resolve) => (wake = resolve));
    previous();
  };
  let broken: WatchBrokenError | undefined;
  /** Watches broken right now, with their last problem: at the deadline they fail the loop. */
  const down = new Map<WatchedKind, string>();
  let reestablished = 0;

  const keepWatching = async (kind: WatchedKind, startVersion: string): Promise<void> => {
    let version = startVersion;
    let brokenSince: number | undefined;
    let retryMs = RELIST_FIRST_MS;
    let lastProblem = '';
    while (!signal.aborted) {
      if (brokenSince !== undefined) {
        // Re-established only by a list: the watch may have missed changes.
        try {
          const listed = await options.source.list(kind);
          if (kind === 'nodes') tracker.relisted('nodes', listed.items as V1Node[]);
          else tracker.relisted('services', listed.items as V1Service[]);
          version = listed.resourceVersion;
          reestablished += 1;
          options.onNote?.(`watch of ${kind} re-established after: ${lastProblem}`);
          brokenSince = undefined;
          down.delete(kind);
          retryMs = RELIST_FIRST_MS;
          notify();
        } catch (error) {
          lastProblem = errorMessage(error);
          down.set(kind, lastProblem);
          const since = brokenSince ?? clock.now();
          const tooLong = clock.now() - since >= options.reestablishWithinMs;
          if (tooLong || clock.now() >= options.untilMs) {
            const when = tooLong ? `within ${Math.round(options.reestablishWithinMs / 1000)} s` : 'before the watch was to end';
            throw brokenWatch(kind, when, lastProblem, error);
          }
          await clock.pause(retryMs, new Promise(() => undefined), signal);
          retryMs = Math.min(retryMs * 2, RELIST_MAX_MS);
          continue;
        }
      }
      const remainingSeconds = Math.ceil((options.untilMs - clock.now()) / 1000);
      if (remainingSeconds <= 0) return;
      const openedAt = clock.now();
      const ended = await watchOnce(kind, version, remainingSeconds);
      if (ended === undefined) return; // stopped
      version = ended.resourceVersion;
      if (ended.end.how === 'closed') {
        const openMs = clock.now() - openedAt;
        if (openMs < MIN_WATCH_MS) await clock.pause(MIN_WATCH_MS - openMs, new Promise(() => undefined), signal);
        continue;
      }
      lastProblem = ended.end.how === 'expired' ? `410 Gone (${ended.end.message})` : ended.end.error.message;
      options.onNote?.(`watch of ${kind} broke: ${lastProblem}; listing again`);
      down.set(kind, lastProblem);
      brokenSince = clock.now();
    }
  };

  /** One watch request until it ends; undefined when the loop stopped it. */
  const watchOnce = (kind: WatchedKind, version: string, timeoutSeconds: number) =>
    new Promise<{ end: WatchEnd; resourceVersion: string } | undefined>((resolve, reject) => {
      let running: RunningWatch | undefined;
      let finished = false;
      const onAbort = (): void => {
        finished = true;
        running?.stop();
        resolve(undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      options.source
        .watch(kind, version, timeoutSeconds, {
          onChange: (type, object) => {
            if (kind === 'nodes') tracker.nodeChanged(object as V1Node, type === 'DELETED');
            else tracker.serviceChanged(object as V1Service, type === 'DELETED');
            if (tracker.hasPending) notify();
          },
          onEnd: (end) => {
            if (finished) return;
            finished = true;
            signal.removeEventListener('abort', onAbort);
            resolve({ end, resourceVersion: running?.resourceVersion ?? version });
          },
        })
        .then((handle) => {
          running = handle;
          if (finished) handle.stop();
        }, reject);
    });

  const watchers = (['nodes', 'services'] as const).map((kind) =>
    keepWatching(kind, options.start[kind].resourceVersion).catch((error: unknown) => {
      broken ??= error instanceof WatchBrokenError ? error : new WatchBrokenError(`the watch of ${kind} stopped: ${errorMessage(error)}`, { status: 0, cause: error });
      notify();
    }),
  );

  const retries = new RetrySchedule();
  let reactions = 0;
  let retried = 0;
  try {
    for (;;) {
      if (broken !== undefined) throw broken;
      if (signal.aborted) return { reactions, retried, reestablished, endedBy: 'signal' };
      if (clock.now() >= options.untilMs) {
        // Blind since the break: that is no success, whatever the passes did.
        const [kind, problem] = [...down][0] ?? [];
        if (kind !== undefined) throw brokenWatch(kind, 'before the watch was to end', problem ?? '');
        return { reactions, retried, reestablished, endedBy: 'deadline' };
      }
      if (!tracker.hasPending && !retries.anyDue(clock.now())) {
        await clock.pause(Math.min(options.untilMs, retries.nextDueAt ?? Number.POSITIVE_INFINITY) - clock.now(), woken, signal);
        continue;
      }
      if (tracker.hasPending) {
        // A burst settles first: the changes of the next debounceMs join this pass.
        await clock.pause(options.debounceMs, new Promise(() => undefined), signal);
        if (signal.aborted) continue;
      }
      const fresh = tracker.take();
      // No retry starts after the deadline; changes seen before it still get their pass.
      const again = clock.now() < options.untilMs ? retries.joining(fresh, clock.now()) : [];
      reactions += 1;
      if (again.length > 0) retried += 1;
      const changes = joinChanges([...again, fresh]);
      const failures = await options.react(changes);
      for (const note of retries.settle(changes, failures, clock.now(), options.untilMs)) options.onNote?.(note);
    }
  } finally {
    stop.abort();
    await Promise.all(watchers);
  }
}

interface PendingRetry {
  readonly changes: ChangeSet;
  /** Passes of the object that failed in a row. */
  readonly failuresInRow: number;
  readonly dueAt: number;
}

/** The failed objects waiting for their next pass, by object (`service/default/web`), each with its own backoff. */
class RetrySchedule {
  private readonly pending = new Map<string, PendingRetry>();

  get nextDueAt(): number | undefined {
    const dues = [...this.pending.values()].map((retry) => retry.dueAt);
    return dues.length === 0 ? undefined : Math.min(...dues);
  }

  anyDue(now: number): boolean {
    return (this.nextDueAt ?? Number.POSITIVE_INFINITY) <= now;
  }

  /**
   * The retries that join a pass over `fresh` now: those due, those of an object it names, and
   * those its pass covers anyway (a Node's or a relist's: everything; a deleted Service's: every
   * load balancer).
   */
  joining(fresh: ChangeSet, now: number): ChangeSet[] {
    const scope = reactionScope(fresh).kind;
    const named = changesByObject(fresh);
    return [...this.pending]
      .filter(([object, retry]) =>
        retry.dueAt <= now ||
        named.has(object) ||
        scope === 'all' ||
        (scope === 'all-load-balancers' && object.startsWith('service/')))
      .map(([, retry]) => retry.changes);
  }

  /**
   * After a pass over `handed`: the retries of its objects are done with, and each object that
   * failed waits for its next pass by its backoff, or is left to the next run when that would
   * start after `untilMs`. Returns a line per failed object for the log.
   */
  settle(handed: ChangeSet, failures: readonly ReactionFailure[], now: number, untilMs: number): string[] {
    const before = new Map(this.pending);
    for (const object of changesByObject(handed).keys()) this.pending.delete(object);
    const settled = new Set<string>();
    const notes: string[] = [];
    for (const failure of failures) {
      for (const [object, changes] of changesByObject(failure.again)) {
        if (settled.has(object)) continue;
        settled.add(object);
        const failuresInRow = (before.get(object)?.failuresInRow ?? 0) + 1;
        const delayMs = retryPassDelayMs(failuresInRow);
        const what = object === 'relist' ? 'every Node and Service' : object;
        if (now + delayMs >= untilMs) {
          this.pending.delete(object);
          notes.push(`not retrying ${what}: the watch ends before its next try, the next run passes it again; it failed: ${failure.problem}`);
          continue;
        }
        this.pending.set(object, { changes, failuresInRow, dueAt: now + delayMs });
        notes.push(`retrying ${what} in ${Math.round(delayMs / 1000)} s after: ${failure.problem}`);
      }
    }
    return notes;
  }
}
