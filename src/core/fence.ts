// The write fence. Every cloud and Kubernetes write a pass sends (create, update, delete; each
// attempt of a retried one) asks the fence first, immediately before the request leaves. While
// the pass holds the writers' Lease the fence is armed with it, and it refuses once this process
// can no longer prove the Lease is its own (renewal overdue, taken over, frozen past the renew
// deadline). The check is at the write, not at the step: a process frozen between two requests
// of one step is caught too. The Lease's own writes do not pass through it: each carries the
// resourceVersion it was based on, so a stale one is refused by the API server.

/** Throws (a LeaseLostError) when this process may no longer write; `what` names the write. */
export interface WriteFence {
  check(what: string): void;
}

/**
 * One per invocation, handed to the cloudscale client and the Kubernetes connection when they
 * are built; the pass that takes the Lease arms it for as long as it holds it. Unarmed, it
 * lets every write through: commands that never write (plan, dry runs) hold no Lease.
 */
export interface ArmableFence extends WriteFence {
  /** Puts `guard` in front of every write until the returned function is called. */
  arm(guard: WriteFence): () => void;
}

export function createWriteFence(): ArmableFence {
  let guard: WriteFence | undefined;
  return {
    check(what) {
      guard?.check(what);
    },
    arm(next) {
      guard = next;
      return () => {
        if (guard === next) guard = undefined;
      };
    },
  };
}
