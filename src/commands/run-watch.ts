// `run --watch-for`: the part of `run` after its full pass. Nodes and Services are listed before
// the pass (so a change made while it runs is not missed), then watched until the deadline;
// each batch of changes gets a reaction pass with the steps of `run` itself, limited to what
// changed (src/core/apply/watch-changes.ts says what that is). Everything runs under the Lease
// `run` holds: a lost Lease aborts the step signal and the loop ends before any further write.
// A pass that fails for a Node or Service is run again for it while the watch lasts, with
// backoff (src/core/apply/watch-loop.ts); each retry is announced on stderr.
import { changeOfFailedObject, reactionScope, describeChanges, type ChangeSet } from '../core/apply/watch-changes.js';
import { watchAndReact, type ReactionFailure, type WatchLoopReport } from '../core/apply/watch-loop.js';
import { listForWatch, startWatch, type ListedCollection } from '../core/kube/watch.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { CommandContext } from './context.js';
import { reactionText, type PassWork, type RunSummary } from './run-summary.js';

/** A change is collected this long, so that a burst of them makes one pass. */
export const WATCH_DEBOUNCE_MS = 300;
/** A broken watch that cannot be listed again for this long ends the run with an error. */
export const WATCH_REESTABLISH_MS = 30_000;

export interface WatchStart {
  readonly nodes: ListedCollection;
  readonly services: ListedCollection;
}

/**
 * The steps of a reaction pass: the node pass or not, then `sync-lb` for every Service (`all`)
 * or for the named ones of one namespace (sync-lb takes names of one namespace; changes in
 * several namespaces at once make a pass over all).
 */
export type ReactionSteps = {
  readonly nodes: boolean;
  readonly services: 'all' | { readonly namespace: string; readonly args: readonly string[] };
};

export interface ReactionOutcome {
  /** What changed, as logged: `node/a, service/default/web`. */
  readonly changes: string;
  readonly durationMs: number;
  /** Failures of this reaction pass (in the run's failures until a later pass of the same object succeeds). */
  readonly failures: number;
  readonly summary: RunSummary;
  /** What it wrote beyond the changes it completed. */
  readonly work: PassWork;
}

/** A failure of a pass, as the run records it: the object (`service/default/web`) and why. */
export interface PassFailure {
  readonly object: string;
  readonly message: string;
}

export interface RunWatchReport extends WatchLoopReport {
  readonly forSeconds: number;
  readonly reactionPasses: readonly ReactionOutcome[];
}

export async function listWatchStart(ctx: CommandContext): Promise<WatchStart> {
  const conn = ctx.kube();
  const [nodes, services] = await Promise.all([listForWatch(conn, 'nodes'), listForWatch(conn, 'services')]);
  return { nodes, services };
}

/**
 * Watches until `untilMs` (performance.now()) and runs `pass` for each batch of changes; returns
 * early when the signal aborts (SIGTERM, the Lease lost). `pass` gets the steps and what changed
 * (as logged), and says what it did and how many failures it had.
 */
export async function watchAfterPass(
  start: WatchStart,
  options: { readonly untilMs: number; readonly forSeconds: number; readonly debounceMs?: number },
  ctx: CommandContext,
  pass: (steps: ReactionSteps, changes: string) => Promise<{ failures: readonly PassFailure[]; summary: RunSummary; work: PassWork }>,
): Promise<RunWatchReport> {
  const conn = ctx.kube();
  const reactionPasses: ReactionOutcome[] = [];
  const log = (line: string): void => void ctx.stderr.write(`${escapeUnprintable(line)}\n`);
  const seconds = Math.max(0, Math.round((options.untilMs - performance.now()) / 1000));
  log(`watch: watching Nodes and Services for ${seconds} s (until ${options.forSeconds} s after the start)`);
  const report = await watchAndReact({
    source: {
      list: (kind) => listForWatch(conn, kind),
      watch: (kind, version, timeoutSeconds, handlers) => startWatch(conn, kind, version, timeoutSeconds, handlers),
    },
    start,
    untilMs: options.untilMs,
    debounceMs: options.debounceMs ?? WATCH_DEBOUNCE_MS,
    reestablishWithinMs: WATCH_REESTABLISH_MS,
    signal: ctx.signal,
    onNote: (message) => log(`watch: ${message}`),
    react: async (changes: ChangeSet) => {
      const steps = stepsFor(changes);
      if (steps === undefined) return [];
      const started = performance.now();
      const described = describeChanges(changes);
      const { failures, summary, work } = await pass(steps, described);
      const outcome = { changes: described, durationMs: Math.round(performance.now() - started), failures: failures.length, summary, work };
      reactionPasses.push(outcome);
      if (ctx.globals.output === 'text') {
        ctx.stdout.write(
          `${escapeUnprintable(`watch: ${outcome.changes}: ${reactionText(summary, work, failures.length)} (${(outcome.durationMs / 1000).toFixed(1)} s)`)}\n`,
        );
      }
      return failures.map((failure) => toRetry(failure, changes));
    },
  });
  return { ...report, forSeconds: options.forSeconds, reactionPasses };
}

/** What passes a failed object again: the Node or Service it names, else all this pass was given. */
function toRetry(failure: PassFailure, handed: ChangeSet): ReactionFailure {
  return { again: changeOfFailedObject(failure.object) ?? handed, problem: failure.message };
}

function stepsFor(changes: ChangeSet): ReactionSteps | undefined {
  const scope = reactionScope(changes);
  switch (scope.kind) {
    case 'nothing':
      return undefined;
    case 'all':
      return { nodes: true, services: 'all' };
    case 'all-load-balancers':
      return { nodes: false, services: 'all' };
    case 'services': {
      const namespaces = new Set(scope.services.map((s) => s.namespace));
      if (namespaces.size > 1) return { nodes: false, services: 'all' };
      return {
        nodes: false,
        services: { namespace: scope.services[0]!.namespace, args: scope.services.map((s) => `service/${s.name}`) },
      };
    }
  }
}
