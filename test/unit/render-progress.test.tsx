import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { ExecutorEvent } from '../../src/core/apply/lb-executor.js';
import type { PlannedAction } from '../../src/core/lb/actions.js';
import { createPassReporter } from '../../src/core/render/progress.js';
import { describeProgress, initialProgress, progressReducer, type PassProgress } from '../../src/core/render/progress-model.js';
import { PassProgressView } from '../../src/core/render/progress-view.js';

const action = (kind: PlannedAction['kind'], object: string) => ({ kind, object }) as PlannedAction;
const at = (ms: number) => 1_000_000 + ms;

function run(events: [string, ExecutorEvent | { finished: 'changed' | 'unchanged' | 'failed' }, number][]): PassProgress {
  let state = initialProgress([
    { service: 'service/a/web', total: 2 },
    { service: 'service/a/api', total: 1 },
  ]);
  for (const [service, event, ms] of events) {
    state = progressReducer(
      state,
      'finished' in event
        ? { type: 'finished', service, status: event.finished, at: at(ms) }
        : { type: 'executor', service, event, at: at(ms) },
    );
  }
  return state;
}

describe('progress model', () => {
  it('follows a Service from queued through waiting to done', () => {
    const create = action('create-lb', 'load balancer lb-web');
    const steps: [string, ExecutorEvent, number][] = [
      ['service/a/web', { type: 'start', action: create, index: 0 }, 0],
      ['service/a/web', { type: 'done', action: create, index: 0, ms: 100 }, 100],
      ['service/a/web', { type: 'waiting', loadBalancer: 'lb-web', status: 'changing' }, 1500],
    ];
    const waiting = run(steps);
    expect(waiting.services.map((s) => describeProgress(s, at(2000)))).toEqual([
      'service/a/web: 1/2 waiting for lb-web (changing) (2.0 s)',
      'service/a/api: queued (1 action)',
    ]);
    const done = run([...steps, ['service/a/web', { finished: 'changed' }, 3000], ['service/a/api', { finished: 'failed' }, 3100]]);
    expect(done.services.map((s) => describeProgress(s, at(9999)))).toEqual([
      'service/a/web: done, 1 action in 3.0 s',
      'service/a/api: failed after 0/1',
    ]);
  });
});

describe('live view (ink)', () => {
  it('shows Services in flight and the queue, then finished ones as permanent lines', () => {
    const create = action('create-pool', 'pool tcp/http');
    const inFlight = run([['service/a/web', { type: 'start', action: create, index: 1 }, 0]]);
    const view = render(<PassProgressView progress={inFlight} now={at(1200)} color={false} />);
    expect(view.lastFrame()).toBe('› service/a/web: 0/2 create-pool pool tcp/http (1.2 s)\n1 Service queued');
    const finished = run([
      ['service/a/web', { finished: 'changed' }, 2000],
      ['service/a/api', { finished: 'unchanged' }, 2100],
    ]);
    view.rerender(<PassProgressView progress={finished} now={at(3000)} color={false} />);
    expect(view.frames.join('\n')).toContain('✓ service/a/web: done, 0 actions in 0.0 s');
    expect(view.frames.join('\n')).toContain('= service/a/api: in sync');
    view.unmount();
  });

  it('prints each finished Service once, in the order they finished, whatever their order in the pass', () => {
    const names = ['web', 'web2', 'web3', 'web4', 'web5', 'web6'].map((n) => `service/a/${n}`);
    let state = initialProgress(names.map((service) => ({ service, total: 1 })));
    for (const service of names) state = progressReducer(state, { type: 'executor', service, event: { type: 'start', action: action('create-lb', 'load balancer x'), index: 0 }, at: at(0) });
    const view = render(<PassProgressView progress={state} now={at(0)} color={false} />);
    const order = [2, 0, 4, 1, 5, 3].map((i) => names[i]!);
    for (const [i, service] of order.entries()) {
      state = progressReducer(state, { type: 'finished', service, status: 'changed', at: at(1000 + i) });
      view.rerender(<PassProgressView progress={state} now={at(2000)} color={false} />);
    }
    const lines = view.lastFrame()!.split('\n').filter((l) => l.startsWith('✓'));
    expect(lines.map((l) => l.slice(2, l.indexOf(':')))).toEqual(order);
    view.unmount();
  });

  it('a Service given another round gets a second line when it finishes again; the earlier lines stay as they were', () => {
    let state = initialProgress([{ service: 'service/a/web', total: 1 }, { service: 'service/a/api', total: 1 }]);
    const view = render(<PassProgressView progress={state} now={at(0)} color={false} />);
    const step = (event: Parameters<typeof progressReducer>[1]) => {
      state = progressReducer(state, event);
      view.rerender(<PassProgressView progress={state} now={at(5000)} color={false} />);
    };
    step({ type: 'finished', service: 'service/a/web', status: 'changed', at: at(1000) });
    step({ type: 'requeued', service: 'service/a/web', total: 2, at: at(1100) });
    step({ type: 'finished', service: 'service/a/api', status: 'unchanged', at: at(1200) });
    step({ type: 'finished', service: 'service/a/web', status: 'failed', at: at(1300) });
    expect(view.lastFrame()!.split('\n').filter((l) => l !== '')).toEqual(['✓ service/a/web: done, 0 actions in 0.0 s', '= service/a/api: in sync', '✗ service/a/web: failed after 0/2']);
    view.unmount();
  });
});

describe('plain-line reporter (not a terminal)', () => {
  it('writes one line per finished action and per Service, without escape codes', async () => {
    let out = '';
    let clock = at(0);
    const reporter = createPassReporter([{ service: 'service/a/web', total: 1 }], { write: (t: string) => (out += t) }, { mode: 'lines', color: false, now: () => clock });
    const update = action('update-listener', 'listener tcp/80');
    reporter.onProgress('service/a/web', { type: 'start', action: update, index: 0 });
    clock = at(40);
    reporter.onProgress('service/a/web', { type: 'done', action: update, index: 0, ms: 40 });
    reporter.onServiceDone('service/a/web', 'changed');
    await reporter.close();
    expect(out).toBe('service/a/web: update-listener listener tcp/80 (40 ms)\nservice/a/web: done, 1 action in 0.0 s\n');
    expect(out).not.toMatch(/\u001b\[/);
  });
});
