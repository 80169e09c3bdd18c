// The live ink view of a pass in a terminal. Loaded only in that mode: ink and react are a few
// hundred modules that a pass logging plain lines (a CronJob's) never needs.
import { render } from 'ink';
import type { PassProgress } from './progress-model.js';
import { PassProgressView } from './progress-view.js';

export interface LiveView {
  redraw(progress: PassProgress, now: number): void;
  /** Releases the terminal after the last frame. */
  close(): Promise<void>;
}

export function renderLiveView(
  stream: { write(text: string): unknown },
  color: boolean,
  progress: PassProgress,
  now: number,
): LiveView {
  const instance = render(<PassProgressView progress={progress} now={now} color={color} />, {
    stdout: stream as NodeJS.WriteStream,
    patchConsole: false,
    exitOnCtrlC: false,
  });
  return {
    redraw: (next, at) => instance.rerender(<PassProgressView progress={next} now={at} color={color} />),
    async close() {
      instance.unmount();
      await instance.waitUntilExit();
    },
  };
}
