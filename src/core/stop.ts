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
// A second signal does not wait for the pair: the process exits 130 at once, leaving the pair
// half done (a port without its listener, a pool without the member being replaced) for the
// next pass, which resumes it. What must not be left behind is the writers' Lease: held on, it
// would refuse the next pass for its whole duration while the port serves nothing. So whatever
// holds something of that kind registers its last word here (the Lease: its release), and bin/
// has them said, bounded by LAST_WORDS_MS, before it exits; a third signal exits without them.
//
// One gate per process, as there is one set of signals per process: bin/ asks it to stop, every
// executor of the process holds it around its pairs, the held Lease registers its release. In-
// process callers (tests) never ask it to stop nor for last words, so for them it only counts.

import { errorMessage } from './errors.js';

/**
 * The longest a signal waits for the pairs in progress: the pair's create sent again for up to
 * 25 s (src/core/apply/pair-completion.ts), its last attempt within the request timeout (20 s),
 * with a margin; a listener put back after a create that never succeeded may be cut short. Past
 * it the signal aborts what is still in flight. The CronJob's terminationGracePeriodSeconds
 * (src/core/deploy/manifests.ts) is this plus the time to release the Lease and write the record.
 */
export const STOP_DEFER_MS = 60_000;

/**
 * How long a second signal waits for the last words (one Lease write, which the API server
 * answers in milliseconds when it is reachable at all) before the process exits regardless.
 */
export const LAST_WORDS_MS = 2500;

/** Something the process still does when a second signal ends it at once. */
export interface LastWord {
  /** What it does, for a warning when it fails: `release the Lease kube-system/cloudscale-ccm`. */
  readonly what: string;
  /** What is left when it does not happen, for the same warning. */
  readonly otherwise: string;
  readonly say: () => Promise<void>;
}

/** A last word that failed or did not finish in time. */
export interface UnsaidWord {
  readonly word: LastWord;
  readonly problem: string;
}

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
  private readonly lastWords = new Set<LastWord>();

  /** Why a stop was asked for; undefined while none was. */
  get reason(): Error | undefined {
    return this.requested?.reason;
  }

  /**
   * Asks the process to stop: aborts at once when no pair is in progress, else once the last one
   * has finished (or after `maxDeferMs`). Answers whether the abort was deferred; a second
   * request changes nothing (on a second signal bin/ has the last words said and exits).
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

  /** Registers a last word for as long as what it concerns is held; returns its removal. */
  beforeExit(word: LastWord): () => void {
    this.lastWords.add(word);
    return () => void this.lastWords.delete(word);
  }

  /**
   * Says every registered last word at once and resolves once all have finished or `withinMs`
   * has passed, with those that failed or did not finish; never rejects.
   */
  async sayLastWords(withinMs: number): Promise<readonly UnsaidWord[]> {
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<'out of time'>((resolve) => {
      timer = setTimeout(() => resolve('out of time'), withinMs);
    });
    const said = await Promise.all(
      [...this.lastWords].map(async (word): Promise<UnsaidWord | undefined> => {
        try {
          const outcome = await Promise.race([word.say().then(() => 'said' as const), outOfTime]);
          return outcome === 'said' ? undefined : { word, problem: `no answer within ${withinMs / 1000} s` };
        } catch (error) {
          return { word, problem: errorMessage(error) };
        }
      }),
    );
    clearTimeout(timer);
    return said.filter((unsaid) => unsaid !== undefined);
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
