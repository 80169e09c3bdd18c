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
