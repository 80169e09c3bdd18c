// The state of a running load-balancer pass, as the progress views show it. Pure: events in,
// a new state out; the live (ink) view and the plain-line view both read it.
import type { ExecutorEvent } from '../apply/lb-executor.js';
import { escapeUnprintable } from '../text/untrusted.js';

export type ServiceProgressStatus = 'pending' | 'running' | 'waiting' | 'changed' | 'unchanged' | 'failed';

export interface ServiceProgress {
  readonly service: string;
  readonly status: ServiceProgressStatus;
  /** Actions finished / planned. */
  readonly done: number;
  readonly total: number;
  /** What is happening now: the action in flight, or the load balancer being waited for. */
  readonly current: string | null;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
}

export interface PassProgress {
  readonly services: readonly ServiceProgress[];
  /**
   * Every Service that finished, as it was then, in the order they finished. Append-only: the
   * live view prints each entry once, as a permanent line, when it is appended (a Service given
   * another round and finished again is appended again, with its new total).
   */
  readonly finished: readonly ServiceProgress[];
}

export function initialProgress(plans: readonly { service: string; total: number }[]): PassProgress {
  return {
    services: plans.map(({ service, total }) => ({
      service,
      status: 'pending',
      done: 0,
      total,
      current: null,
      startedAt: null,
      endedAt: null,
    })),
    finished: [],
  };
}

export type ProgressEvent =
  | { readonly type: 'executor'; readonly service: string; readonly event: ExecutorEvent; readonly at: number }
  /** Another round for a Service whose re-read state still differs; `total` more actions. */
  | { readonly type: 'requeued'; readonly service: string; readonly total: number; readonly at: number }
  | {
      readonly type: 'finished';
      readonly service: string;
      readonly status: 'changed' | 'unchanged' | 'failed';
      readonly at: number;
    };

export function progressReducer(state: PassProgress, event: ProgressEvent): PassProgress {
  const services = state.services.map((s) => (s.service === event.service ? applyTo(s, event) : s));
  if (event.type !== 'finished') return { services, finished: state.finished };
  const now = services.find((s) => s.service === event.service);
  return { services, finished: now === undefined ? state.finished : [...state.finished, now] };
}

function applyTo(s: ServiceProgress, event: ProgressEvent): ServiceProgress {
  if (event.type === 'requeued') {
    return { ...s, status: 'pending', total: s.done + event.total, current: null, endedAt: null };
  }
  if (event.type === 'finished') {
    return { ...s, status: event.status, current: null, endedAt: event.at, startedAt: s.startedAt ?? event.at };
  }
  const e = event.event;
  const startedAt = s.startedAt ?? event.at;
  switch (e.type) {
    case 'start':
      return { ...s, status: 'running', current: `${e.action.kind} ${e.action.object}`, startedAt };
    case 'done':
      return { ...s, status: 'running', done: s.done + 1, current: null, startedAt };
    case 'waiting':
      return { ...s, status: 'waiting', current: `waiting for ${e.loadBalancer} (${e.status})`, startedAt };
  }
}

/** The one-line text of a Service's progress, shared by both views; never with a raw control character. */
export function describeProgress(s: ServiceProgress, now: number): string {
  return escapeUnprintable(progressText(s, now));
}

function progressText(s: ServiceProgress, now: number): string {
  const seconds = (((s.endedAt ?? now) - (s.startedAt ?? now)) / 1000).toFixed(1);
  switch (s.status) {
    case 'pending':
      return `${s.service}: queued (${s.total} action${s.total === 1 ? '' : 's'})`;
    case 'running':
    case 'waiting':
      return `${s.service}: ${s.done}/${s.total} ${s.current ?? ''} (${seconds} s)`.replace(/ +\(/, ' (');
    case 'unchanged':
      return `${s.service}: in sync`;
    case 'changed':
      return `${s.service}: done, ${s.done} action${s.done === 1 ? '' : 's'} in ${seconds} s`;
    case 'failed':
      // Why is said once, in the error at the end of the pass (src/core/render/error.ts).
      return `${s.service}: failed after ${s.done}/${s.total}`;
  }
}
