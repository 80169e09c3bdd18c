// The numeric ranges the simulated API accepts, field by field; a value outside answers 400 with
// DRF's text ("Ensure this value is …"). This is the simulator's own statement of the API: the
// client keeps its table of what it refuses before writing (src/core/cloudscale/limits.ts), and
// neither reads the other's, so the simulator can catch a client whose ranges are wrong.
// test/unit/sim-limits.test.ts holds the two equal for the fields both know. Most ranges are
// guesses (docs/cloudscale-api.md, "Rules the API enforces"; docs/sim.md, "Where the simulator
// guesses").

export interface ApiRange {
  readonly min: number;
  /** Absent: the API states no upper bound. */
  readonly max?: number;
}

export const API_LIMITS = {
  /** Network: its MTU. */
  mtu: { min: 1280, max: 9000 },
  /** Server: its root volume (GB). */
  volume_size_gb: { min: 10 },
  /** Listener and member ports (a member's `monitor_port` too). */
  protocol_port: { min: 1, max: 65_535 },
  /** Listener: idle timeout on the client side (ms; 86 400 000 is one day). */
  timeout_client_data_ms: { min: 1, max: 86_400_000 },
  /** Listener: timeout for connecting to a member (ms). */
  timeout_member_connect_ms: { min: 1, max: 86_400_000 },
  /** Listener: idle timeout on the member side (ms). */
  timeout_member_data_ms: { min: 1, max: 86_400_000 },
  /** Health monitor: seconds between checks. */
  delay_s: { min: 1 },
  /** Health monitor: seconds one check may take. */
  timeout_s: { min: 1 },
  /** Health monitor: successful checks before a member is up. */
  up_threshold: { min: 1, max: 10 },
  /** Health monitor: failed checks before a member is down. */
  down_threshold: { min: 1, max: 10 },
} as const satisfies Record<string, ApiRange>;
