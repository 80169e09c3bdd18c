// The fault-and-race invariant "no outage beyond the prediction" over made-up serving histories:
// it holds an outage within what the plan predicted (plus the documented propagation
// tolerance), and names a port that was down longer than a wrong prediction allowed.
import { describe, expect, it } from 'vitest';
import { outagesWithinPrediction, PROPAGATION_TOLERANCE_MS, swapBoundMs, type SwapFacts } from '../support/fault-race/invariants.js';

const T0 = Date.parse('2026-11-27T06:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** One port's facts: down from `downFrom` for `downMs`, up before and after (or down to the end). */
function port(options: { predictedMaxSeconds: number | null; downMs: number; listenerAfterSchedule?: boolean; downToTheEnd?: boolean; servedAtChange?: boolean }): SwapFacts['ports'][number] {
  const { predictedMaxSeconds, downMs } = options;
  const intervals = [
    { from: at(0), to: at(1000), serving: true },
    { from: at(1000), to: options.downToTheEnd ? null : at(1000 + downMs), serving: false },
    ...(options.downToTheEnd ? [] : [{ from: at(1000 + downMs), to: null, serving: true }]),
  ];
  return {
    service: 'fr-web',
    swap: { service: 'fr-web', change: 'algorithm', at: T0, predictedMaxSeconds, servedAtChange: options.servedAtChange ?? true },
    lbUuid: 'lb-1',
    port: 80,
    listenerAfterSchedule: options.listenerAfterSchedule ?? true,
    serving: { protocol: 'tcp', port: 80, intervals, longestOutageMs: downMs },
  };
}

const facts = (p: SwapFacts['ports'][number], writers?: { endedAt: number; firstPassEndedAt: number }) => ({
  ports: [p],
  writersEndedAt: writers?.endedAt,
  firstPassEndedAt: writers?.firstPassEndedAt ?? 0,
});

describe('no outage beyond the prediction', () => {
  it.for([
    { name: 'no interruption predicted, none seen', predictedMaxSeconds: 0, downMs: 0, violations: 0 },
    { name: 'no interruption predicted, a gap within the propagation tolerance', predictedMaxSeconds: 0, downMs: PROPAGATION_TOLERANCE_MS, violations: 0 },
    { name: 'a wrong prediction: none predicted, 2 s down', predictedMaxSeconds: 0, downMs: PROPAGATION_TOLERANCE_MS + 400, violations: 1 },
    { name: 'up to 20 s predicted, 12 s down', predictedMaxSeconds: 20, downMs: 12_000, violations: 0 },
    { name: 'a wrong prediction: up to 5 s predicted, 12 s down', predictedMaxSeconds: 5, downMs: 12_000, violations: 1 },
    { name: 'an open-ended outage predicted holds no bound', predictedMaxSeconds: null, downMs: 600_000, violations: 0 },
  ])('$name', ({ predictedMaxSeconds, downMs, violations }) => {
    const found = outagesWithinPrediction(facts(port({ predictedMaxSeconds, downMs })));
    expect(found, JSON.stringify(found)).toHaveLength(violations);
    for (const v of found) expect(v.evidence).toMatch(/Service fr-web, load balancer lb-1 port 80: down for \d+ ms, more than \d+ ms \(predicted/);
  });

  it('a port left without a listener by the schedule may stay down until pass 1 has run, no longer', () => {
    const writers = { endedAt: T0 + 5_000, firstPassEndedAt: T0 + 15_000 };
    const within = port({ predictedMaxSeconds: 0, downMs: 10_000 + PROPAGATION_TOLERANCE_MS, listenerAfterSchedule: false });
    const beyond = port({ predictedMaxSeconds: 0, downMs: 10_000 + PROPAGATION_TOLERANCE_MS + 1, listenerAfterSchedule: false });
    expect(swapBoundMs({ writersEndedAt: writers.endedAt, firstPassEndedAt: writers.firstPassEndedAt }, within.swap, false)).toBe(10_000 + PROPAGATION_TOLERANCE_MS);
    expect(outagesWithinPrediction(facts(within, writers))).toEqual([]);
    expect(outagesWithinPrediction(facts(beyond, writers))[0]?.evidence).toMatch(/until pass 1 had run/);
  });

  it('a change that repairs a pool already down is held to serving at the end, not to its prediction', () => {
    expect(outagesWithinPrediction(facts(port({ predictedMaxSeconds: 0, downMs: 30_000, servedAtChange: false })))).toEqual([]);
    const stillDown = outagesWithinPrediction(facts(port({ predictedMaxSeconds: 0, downMs: 30_000, servedAtChange: false, downToTheEnd: true })));
    expect(stillDown.map((v) => v.evidence)).toEqual([expect.stringMatching(/not serving after the final passes/)]);
  });

  it('a port that does not serve at the end breaks it, whatever was predicted', () => {
    const found = outagesWithinPrediction(facts(port({ predictedMaxSeconds: null, downMs: 3_000, downToTheEnd: true })));
    expect(found.map((v) => v.evidence)).toEqual([expect.stringMatching(/not serving after the final passes/)]);
  });
});
