// The listener re-creation: a listener whose protocol changed, or whose port number another
// listener holds (two ports swapping numbers), is deleted and created again on the same pool.
// The port is down between the two; every listener delete runs before every create, so a
// number two ports swap is free when its new listener comes.
//
// Applies to: a pool's listener that no longer matches, with the wanted one missing, when the
// port move (listener-port-move.ts, earlier in the list) does not apply. Resumes: a pass that
// stopped after the delete leaves the listener missing; the next pass creates it
// (`listener-missing`). No gate: the pool and its members stay.
import type { Reason } from '../actions.js';
import { LB_ANNOTATIONS } from '../annotations.js';
import type { ChangeStrategy, ListenerChange, Taken } from './strategy.js';

export const listenerRecreation: ChangeStrategy = {
  name: 'listener re-creation',
  listener(change: ListenerChange): Taken | undefined {
    const { created, removed, steps, target } = change;
    if (created.length === 0 || removed.length === 0) return undefined;
    const pool = target.desired;
    const wanted = pool.listener;
    const old = removed[0]!;
    const reason: Reason =
      old.protocol_port !== wanted.protocol_port
        ? {
            text: `the Service port changed, the pool ${pool.name} is kept`,
            field: `spec.ports[${pool.port.name || 0}].port`,
            from: String(old.protocol_port),
            to: String(wanted.protocol_port),
          }
        : { text: 'the listener protocol changed', field: LB_ANNOTATIONS.listenerProtocol.key, from: old.protocol, to: wanted.protocol };
    return {
      steps: {
        listenerDeletes: removed.map((listener) => steps.deleteListener(listener, { reason, impact: 'listener-recreation' })),
        // One listener re-created is put back as it was if its replacement cannot be created;
        // several (two ports swapping numbers) cannot all be: the next pass completes them.
        listenerCreates: [
          steps.createListener(
            target,
            { impact: 'listener-recreation', reason },
            removed.length === 1 ? { listener: old, poolName: pool.name } : undefined,
          ),
        ],
      },
    };
  },
};
