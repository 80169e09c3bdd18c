// Types of bench/downtime-scenarios.js for the unit test that checks its coverage.
export interface Scenario {
  readonly impact: string;
  readonly change: string;
  readonly goCcm: string;
}
export const DRAIN_SECONDS: number;
export const SCENARIOS: readonly Scenario[];
export const NOT_PLANNED: Readonly<Record<string, { readonly reason: string; readonly goCcm: string }>>;
export function scenarioProblems(classes: readonly string[]): string[];
export const FAILED_REQUEST_SCENARIOS: readonly (Scenario & { readonly failure: string; readonly via: 'sync-lb' | 'run --watch-for'; readonly fault: object })[];
