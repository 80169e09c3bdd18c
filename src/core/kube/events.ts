// Kubernetes Events about the objects the tool changes, so `kubectl describe` shows what happened.
// Events are best-effort: recording one never throws; a failure is returned so the caller can
// report it (once) instead of losing it silently.
import { createHash, randomUUID } from 'node:crypto';
import { PatchStrategy, setHeaderOptions, type CoreV1Event } from '@kubernetes/client-node';
import { KubeApiError, LeaseLostError } from '../errors.js';
import { kubeCall, kubeWrite, type KubeConnection } from './connection.js';
import { escapeUnprintable } from '../text/untrusted.js';

export const DEFAULT_EVENT_COMPONENT = 'cloudscale-ccm';

export interface EventSubject {
  kind: string;
  /** Empty or absent for cluster-scoped objects such as Nodes. */
  namespace?: string;
  name: string;
  uid?: string;
  apiVersion?: string;
}

export interface EventContent {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. EnsuredLoadBalancer. */
  reason: string;
  message: string;
  /** Source component shown by kubectl; defaults to DEFAULT_EVENT_COMPONENT. */
  component?: string;
}

/**
 * A repeat of an Event whose lastTimestamp is younger than this is not written again: client-go's
 * events library refreshes an event series at this interval too. Under the CronJob a problem
 * repeats every minute; one write per half hour says "still happening" and keeps the Event alive
 * (the API server drops Events an hour after their last write, by default).
 */
export const EVENT_REFRESH_MS = 30 * 60 * 1000;

/** Messages are cut to 1 KiB, the note limit of the events API. */
const MAX_MESSAGE_LENGTH = 1024;
const MAX_NAME_LENGTH = 253;

/**
 * Creates one core/v1 Event about `subject` (count 1, no series) in the subject's namespace;
 * events about cluster-scoped objects go to `default`. Returns the stored Event, or the
 * KubeApiError that prevented it.
 *
 * By default the same event again is aggregated on the first (see countRepeat): right for a
 * problem that repeats. `aggregate: false` records each call as an Event of its own: a change
 * made again is news, and folding it into an Event of half an hour ago would hide it.
 *
 * For Nodes the involvedObject uid is the node name, as kubelet and the node controllers write
 * it: `kubectl describe node` searches for exactly that.
 */
export async function recordEvent(
  conn: KubeConnection,
  subject: EventSubject,
  content: EventContent,
  /** `now`: the time of this occurrence (tests move it to cross EVENT_REFRESH_MS). */
  options: { readonly now?: Date; readonly aggregate?: boolean } = {},
): Promise<{ event: CoreV1Event; error?: undefined } | { event?: undefined; error: KubeApiError | LeaseLostError }> {
  const clusterScoped = subject.namespace === undefined || subject.namespace === '';
  const namespace = clusterScoped ? 'default' : (subject.namespace as string);
  const uid = subject.kind === 'Node' ? subject.name : subject.uid;
  const component = content.component ?? DEFAULT_EVENT_COMPONENT;
  const now = options.now ?? new Date();
  // kubectl describe prints the message as it is: names read from outside must not reach it raw.
  const message = truncate(escapeUnprintable(content.message), MAX_MESSAGE_LENGTH);
  const identity = [subject.kind, subject.name, uid, content.type, content.reason, message, component];
  const name = eventName(subject.name, options.aggregate === false ? [...identity, now.toISOString(), randomUUID()] : identity);
  const body: CoreV1Event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace },
    involvedObject: {
      kind: subject.kind,
      name: subject.name,
      ...(clusterScoped ? {} : { namespace: subject.namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(subject.apiVersion === undefined ? {} : { apiVersion: subject.apiVersion }),
    },
    type: content.type,
    reason: content.reason,
    message,
    source: { component },
    reportingComponent: component,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  const what = `record ${content.reason} event for ${subject.kind} ${subject.name}`;
  try {
    const event = await kubeWrite(conn, what, () => conn.core.createNamespacedEvent({ namespace, body }));
    return { event };
  } catch (error) {
    // A closed fence: the Event was not sent. The pass's signal carries the loss and reports it.
    if (error instanceof LeaseLostError) return { error };
    if (error instanceof KubeApiError && error.status === 409 && options.aggregate !== false) return countRepeat(conn, namespace, body, what);
    if (error instanceof KubeApiError) return { error };
    return { error: new KubeApiError(`record event: ${String(error)}`, { status: 0, cause: error }) };
  }
}

/**
 * The same event again (same object, type, reason, message and component: the same name) is
 * aggregated on the first one, as client-go's recorder does, so a Service that fails every
 * minute under the CronJob shows one Warning, not sixty. Within EVENT_REFRESH_MS of its
 * lastTimestamp nothing is written (a read only); after that its count goes up by one and
 * lastTimestamp moves to now. So `count` counts refreshes, at most one per window, and "last
 * seen" is at most one window old while the problem lasts.
 */
async function countRepeat(
  conn: KubeConnection,
  namespace: string,
  body: CoreV1Event,
  what: string,
): Promise<{ event: CoreV1Event; error?: undefined } | { event?: undefined; error: KubeApiError | LeaseLostError }> {
  const name = body.metadata!.name!;
  try {
    const existing = await kubeCall(what, () => conn.core.readNamespacedEvent({ namespace, name }));
    const last = existing.lastTimestamp ?? existing.eventTime ?? existing.firstTimestamp;
    const age = body.lastTimestamp!.getTime() - (last === undefined ? 0 : new Date(last).getTime());
    if (age < EVENT_REFRESH_MS) return { event: existing };
    const event = await kubeWrite(conn, what, () =>
      conn.core.patchNamespacedEvent(
        { namespace, name, body: { count: (existing.count ?? 1) + 1, lastTimestamp: body.lastTimestamp } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    return { event };
  } catch (error) {
    if (error instanceof LeaseLostError) return { error };
    if (error instanceof KubeApiError) return { error };
    return { error: new KubeApiError(`record event: ${String(error)}`, { status: 0, cause: error }) };
  }
}

/**
 * `<object>.<hex>` like client-go's recorder; the hex is a digest of what makes two events the
 * same (object, type, reason, message, component), so a repeat finds the first one by name.
 */
function eventName(objectName: string, identity: readonly (string | undefined)[]): string {
  const suffix = createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
  return `${objectName.slice(0, MAX_NAME_LENGTH - suffix.length - 1)}.${suffix}`;
}

function truncate(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let cut = text.slice(0, maxBytes - 3);
  while (Buffer.byteLength(cut) > maxBytes - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}
