// `npm run bench:downtime` measures every impact class the planner can emit: the scenarios of
// bench/downtime-scenarios.js cover src/core/lb/impact.ts's IMPACT_CLASSES one to one (a class
// the planner never emits names its reason). A class added to the planner without a scenario
// fails here, before anyone waits for the benchmark.
import { describe, expect, it } from 'vitest';
import { NOT_PLANNED, SCENARIOS, scenarioProblems } from '../../bench/downtime-scenarios.js';
import { IMPACT_CLASSES } from '../../src/core/lb/impact.js';

describe('downtime benchmark scenarios', () => {
  it('cover every impact class of the planner, each once', () => {
    expect(scenarioProblems(IMPACT_CLASSES)).toEqual([]);
    expect(SCENARIOS.length + Object.keys(NOT_PLANNED).length).toBe(IMPACT_CLASSES.length);
  });

  it.for([
    { name: 'a class without a scenario', classes: [...IMPACT_CLASSES, 'listener-shuffle'], problem: 'impact class listener-shuffle has no scenario' },
    { name: 'a scenario of a class the planner lost', classes: IMPACT_CLASSES.filter((c) => c !== 'port-move'), problem: 'port-move is not an impact class of the planner' },
    { name: 'a reason for a class the planner lost', classes: IMPACT_CLASSES.filter((c) => c !== 'pool-recreation'), problem: 'pool-recreation is not an impact class of the planner' },
  ])('$name is named', ({ classes, problem }) => {
    expect(scenarioProblems(classes)).toEqual([expect.stringContaining(problem)]);
  });
});
