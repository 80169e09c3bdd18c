// What the data plane shows of itself through the admin API: a port's serving history, where a
// probe went, the connections clients opened; and the records these are read from.

import type { ListenerProtocol } from '../core/cloudscale/types.js';
import { longestOutageMs, servingIntervals, type Transition } from './health-checks.js';

/** The member a probe or connection reached. */
export interface ReachedMember {
  uuid: string;
  address: string;
  protocol_port: number;
}

/** A connection a client opened through a listener to a member: it lives on until closed. */
export interface ConnectionPlane {
  id: string;
  lbUuid: string;
  listenerUuid: string;
  protocol: ListenerProtocol;
  port: number;
  member: ReachedMember;
  openedAt: number;
  closed?: { at: number; reason: string };
}

/** Every change of a listener port's (protocol and port's) serving state, from its first listener on. */
export interface PortHistory {
  protocol: ListenerProtocol;
  port: number;
  transitions: Transition[];
}

/** A port's serving history as the admin API shows it. */
export interface PortServing {
  protocol: ListenerProtocol;
  port: number;
  intervals: { from: string; to: string | null; serving: boolean }[];
  longestOutageMs: number;
}

export type ProbeResult =
  | { served: true; member: ReachedMember }
  | { served: false; reason: string };

/** A simulated client connection as the admin API shows it. */
export interface ConnectionInfo {
  id: string;
  protocol: ListenerProtocol;
  port: number;
  member: ReachedMember;
  openedAt: string;
  open: boolean;
  closedAt: string | null;
  /** Why it closed: the client closed it, its listener left the data plane, its server stopped. */
  closedReason: string | null;
}

export type ConnectResult = { opened: true; connection: ConnectionInfo } | { opened: false; reason: string };

/** The port's history within [from, now] as the admin API shows it. */
export function portServing(history: PortHistory, from: number, now: number): PortServing {
  return {
    protocol: history.protocol,
    port: history.port,
    intervals: servingIntervals(history.transitions, from, now).map((interval) => ({
      from: new Date(interval.from).toISOString(),
      to: interval.to === null ? null : new Date(interval.to).toISOString(),
      serving: interval.serving,
    })),
    longestOutageMs: longestOutageMs(history.transitions, from, now),
  };
}

export function connectionInfo(connection: ConnectionPlane): ConnectionInfo {
  return {
    id: connection.id,
    protocol: connection.protocol,
    port: connection.port,
    member: { ...connection.member },
    openedAt: new Date(connection.openedAt).toISOString(),
    open: connection.closed === undefined,
    closedAt: connection.closed === undefined ? null : new Date(connection.closed.at).toISOString(),
    closedReason: connection.closed?.reason ?? null,
  };
}
