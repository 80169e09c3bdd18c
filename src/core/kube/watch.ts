// Watches of Nodes and Services: a list that returns the collection's resourceVersion, and a
// watch from such a version that reports every change and then how it ended. A watch ends in
// one of three ways, and the caller needs to tell them apart: closed (the server's timeout, or
// ours: resume from the last version seen), expired (410 Gone: that version is no longer kept,
// so list again) and failed (no answer, an error answer: list again once the server answers).
// Bookmarks keep the version current while nothing changes, so a resumed watch rarely expires.
import { Watch, type KubernetesObject, type V1Node, type V1Service } from '@kubernetes/client-node';
import { kubeCall, toKubeApiError, type KubeConnection } from './connection.js';
import { KubeApiError, errorMessage } from '../errors.js';

export type WatchedKind = 'nodes' | 'services';

export type WatchedObject = V1Node | V1Service;

export interface ListedCollection {
  readonly items: readonly WatchedObject[];
  /** Where a watch continues from without missing or repeating a change. */
  readonly resourceVersion: string;
}

export type WatchChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export type WatchEnd =
  | { readonly how: 'closed' }
  | { readonly how: 'expired'; readonly message: string }
  | { readonly how: 'failed'; readonly error: KubeApiError };

export interface WatchHandlers {
  onChange(type: WatchChangeType, object: WatchedObject): void;
  /** Called once, after the last onChange. */
  onEnd(end: WatchEnd): void;
}

export interface RunningWatch {
  /** The version of the last change or bookmark seen: where a closed watch resumes. */
  readonly resourceVersion: string;
  /** Ends the watch; onEnd is not called after stop. */
  stop(): void;
}

const LIST_PAGE_SIZE = 500;

const PATHS: Record<WatchedKind, string> = { nodes: '/api/v1/nodes', services: '/api/v1/services' };

/** Every object of the kind, read page by page, and the version of that consistent read. */
export async function listForWatch(conn: KubeConnection, kind: WatchedKind): Promise<ListedCollection> {
  const items: WatchedObject[] = [];
  let resourceVersion: string | undefined;
  let continueToken: string | undefined;
  do {
    const page: { items: WatchedObject[]; metadata?: { resourceVersion?: string; _continue?: string } } = await kubeCall(
      `list ${kind} to watch them`,
      (): Promise<{ items: WatchedObject[]; metadata?: { resourceVersion?: string; _continue?: string } }> => {
        const params = { limit: LIST_PAGE_SIZE, ...(continueToken === undefined ? {} : { _continue: continueToken }) };
        return kind === 'nodes' ? conn.core.listNode(params) : conn.core.listServiceForAllNamespaces(params);
      },
    );
    items.push(...page.items);
    // Every page of one list is read at the first page's version.
    resourceVersion ??= page.metadata?.resourceVersion;
    continueToken = page.metadata?._continue || undefined;
  } while (continueToken !== undefined);
  if (resourceVersion === undefined) {
    throw toKubeApiError(`list ${kind} to watch them`, new Error('the API server sent no resourceVersion'));
  }
  return { items, resourceVersion };
}

/** client-node ends a watch that sent nothing for 30 s; the server must close it first. */
export const MAX_WATCH_SECONDS = 25;

/**
 * Watches `kind` from `resourceVersion` for at most `timeoutSeconds` (the server closes the watch
 * then; at most MAX_WATCH_SECONDS, since client-node takes 30 s of silence for a dead connection). Resolves once the request is sent; every outcome after that reaches `handlers.onEnd`.
 */
export async function startWatch(
  conn: KubeConnection,
  kind: WatchedKind,
  resourceVersion: string,
  timeoutSeconds: number,
  handlers: WatchHandlers,
): Promise<RunningWatch> {
  let current = resourceVersion;
  let ended = false;
  let stopped = false;
  const end = (outcome: WatchEnd): void => {
    if (ended || stopped) return;
    ended = true;
    handlers.onEnd(outcome);
  };
  const watch = new Watch(conn.config);
  const controller = await watch.watch(
    PATHS[kind],
    { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: Math.min(timeoutSeconds, MAX_WATCH_SECONDS) },
    (type: string, object: unknown) => {
      if (ended || stopped) return;
      if (type === 'ERROR') {
        const status = object as { code?: number; message?: string };
        if (status.code === 410) end({ how: 'expired', message: status.message ?? '410 Gone' });
        else end({ how: 'failed', error: toKubeApiError(`watch ${kind}`, new Error(status.message ?? `error ${status.code}`)) });
        return;
      }
      const version = (object as KubernetesObject).metadata?.resourceVersion;
      if (version !== undefined) current = version;
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') handlers.onChange(type, object as WatchedObject);
    },
    (error: unknown) => {
      if (error === null || error === undefined) return end({ how: 'closed' });
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 410) return end({ how: 'expired', message: '410 Gone' });
      if (status === undefined) return end({ how: 'failed', error: toKubeApiError(`watch ${kind}`, error) });
      const hint =
        status === 403
          ? 'this identity may not watch: apply the RBAC `cloudscale-ccm manifests` prints (it grants watch on nodes and services)'
          : 'the watch is tried again; check the API server';
      end({ how: 'failed', error: new KubeApiError(`watch ${kind}: HTTP ${status} ${errorMessage(error)}`, { status, hint }) });
    },
  );
  return {
    get resourceVersion() {
      return current;
    },
    stop() {
      stopped = true;
      controller.abort();
    },
  };
}
