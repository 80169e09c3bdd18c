// How a running pass reports itself: a live ink view in a terminal, plain lines otherwise (a
// CronJob's log), nothing with -o json/yaml (the document at the end says it all).
import type { ExecutorEvent } from '../apply/lb-executor.js';
import type { LiveView } from './progress-live.js';
import { counted } from '../text/wording.js';
import { escapeUnprintable } from '../text/untrusted.js';
import { describeProgress, initialProgress, progressReducer, type PassProgress, type ProgressEvent } from './progress-model.js';

export type ReporterMode = 'live' | 'lines' | 'silent';

export interface PassReporter {
  onProgress(service: string, event: ExecutorEvent): void;
  /** A failed Service's line says only that it failed: the pass's error at the end says why. */
  onServiceDone(service: string, status: 'changed' | 'unchanged' | 'failed'): void;
  /** The Service gets another round of `total` actions (its re-read state still differs). */
  onRequeued(service: string, total: number): void;
  /** Draws the final state and releases the terminal. */
  close(): Promise<void>;
}

export function reporterMode(output: string, isTTY: boolean | undefined): ReporterMode {
  if (output !== 'text') return 'silent';
  return isTTY === true ? 'live' : 'lines';
}

export function createPassReporter(
  plans: readonly { service: string; total: number }[],
  stream: { write(text: string): unknown },
  options: { mode: ReporterMode; color: boolean; now?: () => number },
): PassReporter {
  const { color } = options;
  // A pass with nothing to do has nothing to animate: its lines are printed plainly, so a
  // terminal gets no cursor or synchronised-output codes around them.
  const mode = options.mode === 'live' && !plans.some((p) => p.total > 0) ? 'lines' : options.mode;
  const now = options.now ?? Date.now;
  let state: PassProgress = initialProgress(plans);
  const apply = (event: ProgressEvent) => {
    state = progressReducer(state, event);
  };
  if (mode === 'silent') {
    return { onProgress: () => {}, onServiceDone: () => {}, onRequeued: () => {}, close: async () => {} };
  }
  if (mode === 'lines') {
    const writeLine = (text: string) => stream.write(`${escapeUnprintable(text)}\n`);
    return {
      onProgress(service, event) {
        const wasWaiting = state.services.find((s) => s.service === service)?.status === 'waiting';
        apply({ type: 'executor', service, event, at: now() });
        if (event.type === 'done') writeLine(`${service}: ${event.action.kind} ${event.action.object} (${event.ms} ms)`);
        // One line per wait, not one per poll: a log line every few seconds for minutes says nothing.
        if (event.type === 'waiting' && !wasWaiting) {
          writeLine(`${service}: waiting for ${event.loadBalancer} (${event.status})`);
        }
      },
      onServiceDone(service, status) {
        apply({ type: 'finished', service, status, at: now() });
        const line = state.services.find((s) => s.service === service);
        if (line) stream.write(`${describeProgress(line, now())}\n`);
      },
      onRequeued(service, total) {
        apply({ type: 'requeued', service, total, at: now() });
        writeLine(`${service}: the state read back still differs: ${counted(total, 'more action')}`);
      },
      close: async () => {},
    };
  }
  // ink and react load here, in a terminal only; events until then update the state, and the
  // first frame shows it.
  let view: LiveView | undefined;
  const loading = import('./progress-live.js').then(({ renderLiveView }) => {
    view = renderLiveView(stream, color, state, now());
  });
  loading.catch(() => {}); // reported by close(), which awaits it
  const redraw = () => view?.redraw(state, now());
  // Elapsed times tick while load balancers provision (minutes on the real cloud).
  const ticker = setInterval(redraw, 500);
  ticker.unref();
  return {
    onProgress(service, event) {
      apply({ type: 'executor', service, event, at: now() });
      redraw();
    },
    onServiceDone(service, status) {
      apply({ type: 'finished', service, status, at: now() });
      redraw();
    },
    onRequeued(service, total) {
      apply({ type: 'requeued', service, total, at: now() });
      redraw();
    },
    async close() {
      clearInterval(ticker);
      await loading;
      redraw();
      await view?.close();
    },
  };
}
