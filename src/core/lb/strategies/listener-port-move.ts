// The listener port move: a new port number for the same pool and protocol moves the listener
// in place (one PATCH of `protocol_port`, its name and other fields with it), so the pool and
// its members stay and only the old number stops serving.
//
// Applies to: a pool's one listener whose port number changed, its protocol the same, while no
// other listener holds the new number (two ports swapping numbers are re-created instead:
// listener-recreation.ts). Resumes: the PATCH is whole or not done; a later pass finds the
// listener at its new port, or moves it then. It frees the old port before listeners are
// created (one may need it: a re-creation a pass left half done, or a new port taking the old
// number). No gate: the members serving the port stay.
import type { PlannedAction } from '../actions.js';
import type { ChangeStrategy, ListenerChange, Taken } from './strategy.js';

export const listenerPortMove: ChangeStrategy = {
  name: 'listener port move',
  listener(change: ListenerChange): Taken | undefined {
    const { created, removed, steps } = change;
    const pool = change.target.desired;
    const wanted = pool.listener;
    const old = removed[0];
    if (created.length !== 1 || removed.length !== 1 || old!.protocol !== wanted.protocol || change.portTaken(old!, wanted)) return undefined;
    const moves: PlannedAction[] = [
      steps.act({
        kind: 'update-listener',
        object: `listener ${old!.name}`,
        reason: {
          text: `the Service port changed: the listener of pool ${pool.name} moves to the new port in place`,
          field: `spec.ports[${pool.port.name || 0}].port`,
          from: String(old!.protocol_port),
          to: String(wanted.protocol_port),
        },
        impact: 'port-move',
        listener: { uuid: old!.uuid },
        patch: { protocol_port: wanted.protocol_port },
      }),
    ];
    if (old!.name !== wanted.name) {
      moves.push(
        steps.act({
          kind: 'update-listener',
          object: `listener ${old!.name}`,
          reason: { text: 'the listener is named after its port', field: 'name', from: old!.name, to: wanted.name },
          impact: 'none',
          listener: { uuid: old!.uuid },
          patch: { name: wanted.name },
        }),
      );
    }
    // Beside the move: one PATCH with it.
    moves.push(...change.fieldUpdates({ ...old!, name: wanted.name }, wanted));
    return { steps: { listenerDeletes: moves } };
  },
};
