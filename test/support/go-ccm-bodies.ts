// The bodies cloudscale's Go CCM writes for one TCP port (docs/go-ccm-compatibility.md): what
// the client and simulator tests send, and what a load balancer built the Go CCM's way holds.
// No Kubernetes here, so the simulator-only files can use it.
import type { HealthMonitorCreate, ListenerCreate } from '../../src/core/cloudscale/types.js';

/** A listener's timeouts when no annotation sets them. */
export const LISTENER_TIMEOUTS = {
  timeout_client_data_ms: 50000,
  timeout_member_connect_ms: 5000,
  timeout_member_data_ms: 50000,
} as const;

/** The listener `tcp/<port>` of `pool`: open to all, the default timeouts. */
export function tcpListener(pool: string, port = 80): ListenerCreate {
  return { pool, name: `tcp/${port}`, protocol: 'tcp', protocol_port: port, allowed_cidrs: [], ...LISTENER_TIMEOUTS };
}

/** The TCP monitor of `pool` with the default checks, `http: {}` as the Go CCM sends it. */
export function tcpMonitor(pool: string): HealthMonitorCreate {
  return { pool, type: 'tcp', delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3, http: {} };
}
