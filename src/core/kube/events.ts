// Kubernetes Events about the objects the tool changes, so `kubectl describe` shows what happened.
// Events are best-effort: recording one never throws; a failure is returned so the caller can
// report it (once) instead of losing it silently.
import { randomBytes } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import { KubeApiError } from '../errors.js';
import { kubeCall, type KubeConnection } from './connection.js';

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

/** Messages are cut to 1 KiB, the note limit of the events API. */
const MAX_MESSAGE_LENGTH = 1024;
const MAX_NAME_LENGTH = 253;

/**
 * Creates one core/v1 Event about `subject` (count 1, no series) in the subject's namespace;
 * events about cluster-scoped objects go to `default`. Returns the stored Event, or the
 * KubeApiError that prevented it.
 *
 * For Nodes the involvedObject uid is the node name, as kubelet and the node controllers write
 * it: `kubectl describe node` searches for exactly that.
 */
export async function recordEvent(
  conn: KubeConnection,
  subject: EventSubject,
  content: EventContent,
): Promise<{ event: CoreV1Event; error?: undefined } | { event?: undefined; error: KubeApiError }> {
  const clusterScoped = subject.namespace === undefined || subject.namespace === '';
  const namespace = clusterScoped ? 'default' : (subject.namespace as string);
  const uid = subject.kind === 'Node' ? subject.name : subject.uid;
  const component = content.component ?? DEFAULT_EVENT_COMPONENT;
  const now = new Date();
  const body: CoreV1Event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(subject.name), namespace },
    involvedObject: {
      kind: subject.kind,
      name: subject.name,
      ...(clusterScoped ? {} : { namespace: subject.namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(subject.apiVersion === undefined ? {} : { apiVersion: subject.apiVersion }),
    },
    type: content.type,
    reason: content.reason,
    message: truncate(content.message, MAX_MESSAGE_LENGTH),
    source: { component },
    reportingComponent: component,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  try {
    const event = await kubeCall(`record ${content.reason} event for ${subject.kind} ${subject.name}`, () =>
      conn.core.createNamespacedEvent({ namespace, body }),
    );
    return { event };
  } catch (error) {
    if (error instanceof KubeApiError) return { error };
    return { error: new KubeApiError(`record event: ${String(error)}`, { status: 0, cause: error }) };
  }
}

/** `<object>.<hex>` like client-go's recorder, with random bits so parallel runs never clash. */
function eventName(objectName: string): string {
  const suffix = `${Date.now().toString(16)}${randomBytes(4).toString('hex')}`;
  return `${objectName.slice(0, MAX_NAME_LENGTH - suffix.length - 1)}.${suffix}`;
}

function truncate(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let cut = text.slice(0, maxBytes - 3);
  while (Buffer.byteLength(cut) > maxBytes - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}
