// SIGTERM and SIGINT never strand a port. A pass stops between two steps, but some steps come in
// pairs whose first half takes serving capacity away and whose second half puts it back — a
// listener deleted to be re-created on its successor pool or with another port, a member deleted
// to make room for its replacement at the same address (src/core/apply/step-pairs.ts). Stopping
// between the two would leave the port without a listener (or without that member) until the
// next pass. So the first signal does not abort the process's signal while a pair runs: the gate
// holds it until every pair in progress has finished, for at most STOP_DEFER_MS, and no new pair
// begins meanwhile (its executor stops before the pair's first step instead). Everything else —
// waits, requests, the Lease — keeps using the one abort signal, which aborts once the gate opens.
//
// One gate per process, as there is one set of signals per process: bin/ asks it to stop, every
// executor of the process holds it around its pairs. In-process callers (tests) never ask it to
// stop, so for them it only counts.

/**
 * The longest a signal waits for the pairs in progress: the settle pause before a re-create
 * (5 s by default), the wait for the API to release what the delete freed (up to 30 s,
 * lb-executor.ts) and one request within its timeout (20 s), with a margin. Past it the signal
 * aborts what is still in flight. The CronJob's terminationGracePeriodSeconds
 * (src/core/deploy/manifests.ts) is this plus the time to release the Lease and write the record.
 */
export const STOP_DEFER_MS = 60_000;

export interface StopRequest {
  /** Why the process stops (`interrupted by SIGTERM`): what a pair refused meanwhile fails with. */
  readonly reason: Error;
  /** Aborts the process's signal; called once, when no pair is in progress (or the deferral ran out). */
  readonly abort: () => void;
  /** How long the abort may wait for the pairs in progress; STOP_DEFER_MS unless a test says otherwise. */
  readonly maxDeferMs?: number;
}

export class StopGate {
  private holds = 0;
  private requested: StopRequest | undefined;
  private aborted = false;
  private timer: NodeJS.Timeout | undefined;

  /** Why a stop was asked for; undefined while none was. */
  get reason(): Error | undefined {
    return this.requested?.reason;
  }

  /**
   * Asks the process to stop: aborts at once when no pair is in progress, else once the last one
   * has finished (or after `maxDeferMs`). Answers whether the abort was deferred; a second
   * request changes nothing (bin/ exits at once on a second signal).
   */
  request(stop: StopRequest): { readonly deferred: boolean } {
    if (this.requested !== undefined) return { deferred: !this.aborted };
    this.requested = stop;
    if (this.holds === 0) {
      this.fire();
      return { deferred: false };
    }
    this.timer = setTimeout(() => this.fire(), stop.maxDeferMs ?? STOP_DEFER_MS);
    this.timer.unref();
    return { deferred: true };
  }

  /**
   * Holds a stop back while a pair runs. Undefined when a stop was asked for already: the pair
   * must not begin. The returned release is idempotent.
   */
  hold(): (() => void) | undefined {
    if (this.requested !== undefined) return undefined;
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds === 0 && this.requested !== undefined) this.fire();
    };
  }

  private fire(): void {
    if (this.aborted) return;
    this.aborted = true;
    clearTimeout(this.timer);
    this.requested?.abort();
  }
}

/** The process's gate: bin/ asks it to stop on SIGTERM and SIGINT; executors hold it around their pairs. */
export const processStop = new StopGate();

/**
 * A test seam for a real process and a real signal: when set (bin/ sets it from the environment
 * variable CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS), every executor awaits it after each step, so that
 * a test can send its signal at an exact step boundary. Unset, nothing pauses.
 */
export const stepBoundaries: { afterStep?: (step: string) => Promise<void> } = {};
