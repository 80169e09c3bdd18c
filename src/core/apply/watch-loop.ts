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
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { KubeApiError, errorMessage } from '../errors.js';
import type { ListedCollection, RunningWatch, WatchEnd, WatchHandlers, WatchedKind } from '../kube/watch.js';
import { ChangeTracker, type ChangeSet } from './watch-changes.js';

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
  /** Runs one reaction pass; its failures are the caller's to record (the loop goes on). */
  readonly react: (changes: ChangeSet) => Promise<void>;
  /** Told about broken and re-established watches, for the log. */
  readonly onNote?: (message: string) => void;
  readonly clock?: WatchClock;
}

export interface WatchLoopReport {
  readonly reactions: number;
  /** Times a watch was listed afresh after it expired or failed. */
  readonly reestablished: number;
  readonly endedBy: 'deadline' | 'signal';
}

const RETRY_FIRST_MS = 250;
/** A watch the server closes sooner than this is opened again only after this long (no busy loop). */
const MIN_WATCH_MS = 1000;
const RETRY_MAX_MS = 4000;

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
    let retryMs = RETRY_FIRST_MS;
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
          retryMs = RETRY_FIRST_MS;
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
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
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

  let reactions = 0;
  try {
    for (;;) {
      if (broken !== undefined) throw broken;
      if (signal.aborted) return { reactions, reestablished, endedBy: 'signal' };
      if (clock.now() >= options.untilMs) {
        // Blind since the break: that is no success, whatever the passes did.
        const [kind, problem] = [...down][0] ?? [];
        if (kind !== undefined) throw brokenWatch(kind, 'before the watch was to end', problem ?? '');
        return { reactions, reestablished, endedBy: 'deadline' };
      }
      if (!tracker.hasPending) {
        await clock.pause(options.untilMs - clock.now(), woken, signal);
        continue;
      }
      // A burst settles first: the changes of the next debounceMs join this pass.
      await clock.pause(options.debounceMs, new Promise(() => undefined), signal);
      if (signal.aborted) continue;
      reactions += 1;
      await options.react(tracker.take());
    }
  } finally {
    stop.abort();
    await Promise.all(watchers);
  }
}
