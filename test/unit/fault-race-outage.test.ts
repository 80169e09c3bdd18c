// The fault-and-race invariant "no outage beyond the prediction" over made-up serving histories:
// it holds an outage within what the plan predicted (plus the documented propagation
// tolerance), and names a port that was down longer than a wrong prediction allowed.
import { describe, expect, it } from 'vitest';
import { outagesWithinPrediction, portsTouched, predictionByPort, PROPAGATION_TOLERANCE_MS, swapBoundMs, type SwapFacts } from '../support/fault-race/invariants.js';

const T0 = Date.parse('2026-11-27T06:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** One port's facts: down from `downFrom` for `downMs`, up before and after (or down to the end). */
function port(options: {
  predictedMaxSeconds: number | null;
  downMs: number;
  listenerAfterSchedule?: boolean;
  downToTheEnd?: boolean;
  servedAtChange?: boolean;
  /** The port checked, and what the Service's other port was predicted (443). */
  number?: number;
  otherPortSeconds?: number | null;
}): SwapFacts['ports'][number] {
  const { predictedMaxSeconds, downMs } = options;
  const number = options.number ?? 80;
  const predictedByPort: Record<number, number | null> = { [number]: predictedMaxSeconds };
  if (options.otherPortSeconds !== undefined) predictedByPort[443] = options.otherPortSeconds;
  const intervals = [
    { from: at(0), to: at(1000), serving: true },
    { from: at(1000), to: options.downToTheEnd ? null : at(1000 + downMs), serving: false },
    ...(options.downToTheEnd ? [] : [{ from: at(1000 + downMs), to: null, serving: true }]),
  ];
  return {
    service: 'fr-web',
    swap: { service: 'fr-web', change: 'algorithm', at: T0, predictedByPort, servedAtChange: options.servedAtChange ?? true },
    lbUuid: 'lb-1',
    port: number,
    listenerAfterSchedule: options.listenerAfterSchedule ?? true,
    serving: { protocol: 'tcp', port: number, intervals, longestOutageMs: downMs },
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
    expect(swapBoundMs({ writersEndedAt: writers.endedAt, firstPassEndedAt: writers.firstPassEndedAt }, within.swap, within.port, false)).toBe(10_000 + PROPAGATION_TOLERANCE_MS);
    expect(outagesWithinPrediction(facts(within, writers))).toEqual([]);
    expect(outagesWithinPrediction(facts(beyond, writers))[0]?.evidence).toMatch(/until pass 1 had run/);
  });

  it('one failed request may not leave a port without its listener: no allowance until pass 1, a violation of its own', () => {
    const writers = { endedAt: T0 + 5_000, firstPassEndedAt: T0 + 15_000 };
    const stranded = port({ predictedMaxSeconds: 45, downMs: 3_000, listenerAfterSchedule: false });
    expect(outagesWithinPrediction(facts(stranded, writers))).toEqual([]);
    const found = outagesWithinPrediction({ ...facts(stranded, writers), writersMayStrand: false });
    expect(found.map((v) => v.evidence)).toEqual([expect.stringMatching(/port 80: left without a listener by a writer that met one failed request/)]);
    expect(outagesWithinPrediction({ ...facts(port({ predictedMaxSeconds: 45, downMs: 3_000 }), writers), writersMayStrand: false })).toEqual([]);
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

  it("a port is held to its own prediction, not to another port's: a node-port change of port 80 predicts nothing for 443", () => {
    const other = port({ number: 80, predictedMaxSeconds: 0, otherPortSeconds: 20, downMs: 12_000 });
    expect(outagesWithinPrediction(facts(other)).map((v) => v.evidence)).toEqual([expect.stringMatching(/port 80: down for 12000 ms, more than 1600 ms \(predicted 0 s for this port/)]);
    const own = port({ number: 443, predictedMaxSeconds: 20, otherPortSeconds: 20, downMs: 12_000 });
    expect(outagesWithinPrediction(facts(own))).toEqual([]);
  });
});

describe('which ports an action touches', () => {
  const ports = [
    { name: 'http', protocol: 'TCP', port: 80 },
    { name: 'https', protocol: 'TCP', port: 443 },
  ];
  it.for([
    { object: 'listener tcp/443', touched: [443] },
    { object: 'pool tcp/http', touched: [80] },
    { object: 'member 10.20.0.1:30080 of pool tcp/http', touched: [80] },
    { object: 'health monitor of pool tcp/https', touched: [443] },
    { object: '2 members of pool tcp/https healthy', touched: [443] },
    { object: 'member 10.20.0.1:30080 of pool tcp/gone', touched: [80, 443] },
    { object: 'load balancer k8s-service-uid', touched: [80, 443] },
    { object: 'floating IP 192.0.2.1/32', touched: [80, 443] },
  ])('$object → $touched', ({ object, touched }) => {
    expect(portsTouched(object, ports)).toEqual(touched);
  });

  it('a port without a name is served by the pool named after its protocol alone', () => {
    expect(portsTouched('pool tcp', [{ protocol: 'TCP', port: 80 }])).toEqual([80]);
  });

  it('each port gets the largest prediction of the actions touching it; open-ended wins; an untouched port 0', () => {
    const action = (object: string, maxSeconds: number | null) => ({ object, downtime: { maxSeconds } });
    expect(predictionByPort([action('listener tcp/80', 20), action('pool tcp/http', 5)], ports)).toEqual({ 80: 20, 443: 0 });
    expect(predictionByPort([action('pool tcp/https', null), action('listener tcp/443', 20)], ports)).toEqual({ 80: 0, 443: null });
    expect(predictionByPort([action('load balancer x', 3)], ports)).toEqual({ 80: 3, 443: 3 });
  });
});
