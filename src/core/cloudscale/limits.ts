// The numeric ranges of the load-balancer fields this tool sends, in one table for the
// annotation parsers and the admission policy: they refuse a value before anything is written.
// The API documentation gives no ranges: these follow the guesses in docs/cloudscale-api.md
// ("Rules the API enforces"). The simulator states the API's ranges on its own
// (src/sim/limits.ts) and test/unit/sim-limits.test.ts holds the two equal.

export interface IntegerRange {
  readonly min: number;
  /** Absent: no upper bound is known. */
  readonly max?: number;
}

export const LB_LIMITS = {
  /** Health monitor: seconds between checks. */
  delay_s: { min: 1 },
  /** Health monitor: seconds one check may take. */
  timeout_s: { min: 1 },
  /** Health monitor: successful checks before a member is up. */
  up_threshold: { min: 1, max: 10 },
  /** Health monitor: failed checks before a member is down. */
  down_threshold: { min: 1, max: 10 },
  /** Listener: idle timeout on the client side (ms; 86 400 000 is one day). */
  timeout_client_data_ms: { min: 1, max: 86_400_000 },
  /** Listener: timeout for connecting to a member (ms). */
  timeout_member_connect_ms: { min: 1, max: 86_400_000 },
  /** Listener: idle timeout on the member side (ms). */
  timeout_member_data_ms: { min: 1, max: 86_400_000 },
  /** Listener and member ports. */
  protocol_port: { min: 1, max: 65_535 },
} as const satisfies Record<string, IntegerRange>;

export type LbLimitField = keyof typeof LB_LIMITS;
