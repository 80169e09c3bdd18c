// Which propagation delay a configuration change of one load balancer is due (docs/sim.md,
// "Data plane"). It depends on what the API took before, in the order it took it, not on what
// has reached the data plane yet: a listener on a port the load balancer never had is a
// `newListener`; one on a port whose pool was created anew after the port lost its listener (the
// pool re-created, as cloudscale's Go CCM does for an algorithm change) is a `newPool`; one
// re-created on a pool that existed before is a `listener`.

import type { ListenerProtocol } from '../core/cloudscale/types.js';
import type { PropagationKind } from './dataplane-timings.js';

/** One configuration change of a load balancer, with the values it had when the API took it. */
export type ConfigChange =
  | {
      kind: 'listener';
      uuid: string;
      protocol: ListenerProtocol;
      port: number;
      poolUuid: string | null;
      /** CIDR texts; empty or absent: every source is allowed. */
      allowedCidrs?: readonly string[];
    }
  | { kind: 'listener-deleted'; uuid: string }
  | { kind: 'pool-deleted'; uuid: string; keepListeners: boolean }
  | {
      kind: 'member';
      uuid: string;
      poolUuid: string;
      address: string;
      port: number;
      monitorPort: number | null;
      enabled: boolean;
    }
  | { kind: 'member-deleted'; uuid: string }
  | { kind: 'monitor'; uuid: string; poolUuid: string; delayS: number; upThreshold: number; downThreshold: number }
  | { kind: 'monitor-deleted'; uuid: string }
  | { kind: 'lb-deleted' };

export const portKey = (protocol: ListenerProtocol, port: number): string => `${protocol}/${port}`;

type PortKeys = Pick<ReadonlySet<string>, 'has'>;

/** The changes the API took of one load balancer, as far as they decide a propagation kind. */
export class TakenChanges {
  private readonly listeners = new Map<string, { key: string; poolUuid: string | null }>();
  /** Per pool created through the API, its place in `order`. */
  private readonly poolsCreated = new Map<string, number>();
  /** Per port key, the place in `order` where it last lost its listener (or, keeping it, its pool). */
  private readonly portsVacated = new Map<string, number>();
  private order = 0;

  poolCreated(poolUuid: string): void {
    this.poolsCreated.set(poolUuid, ++this.order);
  }

  /**
   * The kind of delay `change` is due (`portsWithListener`: the ports the load balancer ever
   * had a listener on, before this change), then takes it.
   */
  take(change: ConfigChange, portsWithListener: PortKeys): PropagationKind {
    const kind = this.kindOf(change, portsWithListener);
    this.remember(change);
    return kind;
  }

  private kindOf(change: ConfigChange, portsWithListener: PortKeys): PropagationKind {
    switch (change.kind) {
      case 'listener': {
        const key = portKey(change.protocol, change.port);
        if (!portsWithListener.has(key)) return 'newListener';
        const vacated = this.portsVacated.get(key);
        const created = change.poolUuid === null ? undefined : this.poolsCreated.get(change.poolUuid);
        return vacated !== undefined && created !== undefined && created > vacated ? 'newPool' : 'listener';
      }
      case 'member':
      case 'member-deleted':
        return 'member';
      case 'monitor':
      case 'monitor-deleted':
        return 'monitor';
      case 'listener-deleted':
      case 'pool-deleted':
      case 'lb-deleted':
        return 'delete';
    }
  }

  private remember(change: ConfigChange): void {
    const vacate = (key: string): void => void this.portsVacated.set(key, ++this.order);
    switch (change.kind) {
      case 'listener': {
        const key = portKey(change.protocol, change.port);
        const before = this.listeners.get(change.uuid);
        if (before !== undefined && before.key !== key) vacate(before.key);
        this.listeners.set(change.uuid, { key, poolUuid: change.poolUuid });
        return;
      }
      case 'listener-deleted': {
        const before = this.listeners.get(change.uuid);
        if (before !== undefined) vacate(before.key);
        this.listeners.delete(change.uuid);
        return;
      }
      case 'pool-deleted':
        this.poolsCreated.delete(change.uuid);
        for (const [uuid, listener] of this.listeners) {
          if (listener.poolUuid !== change.uuid) continue;
          vacate(listener.key);
          if (change.keepListeners) listener.poolUuid = null;
          else this.listeners.delete(uuid);
        }
        return;
      default:
        return;
    }
  }
}
