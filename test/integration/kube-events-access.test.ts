// @kube-versions: all — the Events API (events.k8s.io/v1) and the server's RBAC answers to a user without rights
// Events, cluster facts and the no-access user against the real apiserver.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KubeApiError } from '../../src/core/errors.js';
import { namespaceUid, parseServerVersion, readSecretValue, serverVersion } from '../../src/core/kube/cluster.js';
import { connectKube, kubeCall } from '../../src/core/kube/connection.js';
import { EVENT_REFRESH_MS, recordEvent } from '../../src/core/kube/events.js';
import { listServices } from '../../src/core/kube/services.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  ignoreNotFound,
  testConnection,
  testNoAccessKubeconfig,
  uniqueName,
} from '../support/kube.js';

const conn = testConnection();
const namespace = uniqueName('events');
const secrets: string[] = [];

beforeAll(() => ensureNamespace(namespace));
afterAll(async () => {
  for (const name of secrets) await ignoreNotFound(conn.core.deleteNamespacedSecret({ namespace, name }));
  await deleteCreatedObjects();
});

/** Events as `kubectl describe` finds them: field selector on the involved object, all namespaces. */
async function describedEvents(kind: string, name: string, objectNamespace: string, uid: string) {
  const selector = [
    `involvedObject.kind=${kind}`,
    `involvedObject.name=${name}`,
    `involvedObject.namespace=${objectNamespace}`,
    `involvedObject.uid=${uid}`,
  ].join(',');
  return (await conn.core.listEventForAllNamespaces({ fieldSelector: selector })).items;
}

describe('events', () => {
  test('a Service event lands in its namespace and is found the way kubectl describe looks', async () => {
    const name = uniqueName('lb');
    const service = await createLoadBalancerService(namespace, name);
    const uid = service.metadata?.uid ?? '';
    const result = await recordEvent(
      conn,
      { kind: 'Service', namespace, name, uid, apiVersion: 'v1' },
      { type: 'Normal', reason: 'EnsuredLoadBalancer', message: 'Ensured load balancer', component: 'service-controller' },
    );
    expect(result.error).toBeUndefined();
    expect(result.event?.metadata?.name).toMatch(new RegExp(`^${name}\\.[0-9a-f]+$`));

    const found = await describedEvents('Service', name, namespace, uid);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      type: 'Normal',
      reason: 'EnsuredLoadBalancer',
      message: 'Ensured load balancer',
      count: 1,
      source: { component: 'service-controller' },
      metadata: { namespace },
    });
    expect(found[0]?.series).toBeUndefined();
  });

  test('the same event again is aggregated on the first one: written again only once per refresh window', async () => {
    const name = uniqueName('lb');
    const service = await createLoadBalancerService(namespace, name);
    const subject = { kind: 'Service', namespace, name, uid: service.metadata?.uid ?? '', apiVersion: 'v1' };
    const failed = { type: 'Warning' as const, reason: 'SyncLoadBalancerFailed', message: 'Error syncing load balancer: x', component: 'service-controller' };
    const start = Date.now();
    const at = (minutes: number) => ({ now: new Date(start + minutes * 60_000) });
    const first = await recordEvent(conn, subject, failed, at(0));
    // Every minute, as under the CronJob: nothing is written while the Event is fresh.
    const repeats = [];
    for (const minute of [1, 2, 29]) repeats.push(await recordEvent(conn, subject, failed, at(minute)));
    expect([first.error, ...repeats.map((r) => r.error)]).toEqual([undefined, undefined, undefined, undefined]);
    for (const repeat of repeats) expect(repeat.event?.metadata?.resourceVersion).toBe(first.event?.metadata?.resourceVersion);
    // Past the window since the last write: one write, count 2, last seen moves.
    const refreshed = await recordEvent(conn, subject, failed, at(31));
    expect(refreshed.event?.metadata?.resourceVersion).not.toBe(first.event?.metadata?.resourceVersion);
    const quiet = await recordEvent(conn, subject, failed, at(32));
    expect(quiet.event?.metadata?.resourceVersion).toBe(refreshed.event?.metadata?.resourceVersion);
    expect(EVENT_REFRESH_MS).toBe(30 * 60_000);
    const other = await recordEvent(conn, subject, { ...failed, message: 'Error syncing load balancer: y' });

    const found = await describedEvents('Service', name, namespace, subject.uid);
    expect(found.map((e) => [e.message, e.count]).sort()).toEqual([
      ['Error syncing load balancer: x', 2],
      ['Error syncing load balancer: y', 1],
    ]);
    const repeated = found.find((e) => e.count === 2)!;
    expect(repeated.metadata?.name).toBe(first.event?.metadata?.name);
    expect(new Date(repeated.lastTimestamp!).getTime() - new Date(repeated.firstTimestamp!).getTime()).toBe(31 * 60_000);
    expect(other.event?.metadata?.name).not.toBe(first.event?.metadata?.name);
  });

  test('a Node event goes to namespace default with the node name as uid, the default component', async () => {
    const name = uniqueName('node-ev');
    const node = await createNode(name);
    const result = await recordEvent(
      conn,
      { kind: 'Node', name, uid: node.metadata?.uid ?? '' },
      { type: 'Warning', reason: 'InstanceNotFound', message: 'x'.repeat(3000) },
    );
    expect(result.error).toBeUndefined();
    const found = await describedEvents('Node', name, '', name);
    expect(found).toHaveLength(1);
    expect(found[0]?.metadata?.namespace).toBe('default');
    expect(found[0]?.source?.component).toBe('cloudscale-ccm');
    expect(found[0]?.type).toBe('Warning');
    expect(Buffer.byteLength(found[0]?.message ?? '')).toBeLessThanOrEqual(1024);
  });

  test('a failed event is returned as KubeApiError, not thrown', async () => {
    const result = await recordEvent(
      conn,
      { kind: 'Service', namespace: uniqueName('no-such-ns'), name: 'x', uid: 'u' },
      { type: 'Normal', reason: 'Test', message: 'never stored' },
    );
    expect(result.event).toBeUndefined();
    expect(result.error).toBeInstanceOf(KubeApiError);
    expect((result.error as KubeApiError).status).toBe(404);
  });
});

describe('cluster facts', () => {
  test('namespaceUid gives the stored uid of kube-system', async () => {
    const uid = await namespaceUid(conn, 'kube-system');
    expect(uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(uid).toBe((await conn.core.readNamespace({ name: 'kube-system' })).metadata?.uid);
    await expect(namespaceUid(conn, uniqueName('absent'))).rejects.toMatchObject({ status: 404 });
  });

  test('serverVersion parses the apiserver version', async () => {
    const version = await serverVersion(conn);
    const raw = await conn.version.getCode();
    expect(version).toEqual({ major: Number(raw.major), minor: Number(raw.minor), gitVersion: raw.gitVersion });
    expect(version.major).toBe(1);
    expect(version.minor).toBeGreaterThanOrEqual(30);
  });

  test.each([
    ['1', '36', 'v1.36.3', { major: 1, minor: 36 }],
    ['1', '30+', 'v1.30.2-gke.1', { major: 1, minor: 30 }],
    ['', '', 'v1.29.0-eks-1234', { major: 1, minor: 29 }],
  ])('parseServerVersion(%j, %j, %j)', (major, minor, gitVersion, expected) => {
    expect(parseServerVersion(major, minor, gitVersion)).toEqual({ ...expected, gitVersion });
  });

  test('parseServerVersion refuses a version it cannot read', () => {
    expect(() => parseServerVersion('', 'x', 'devel')).toThrow(/cannot understand the server version/);
  });

  test('readSecretValue decodes a key; a missing Secret or key is undefined', async () => {
    const name = uniqueName('cloudscale');
    secrets.push(name);
    await conn.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name }, data: { 'access-token': Buffer.from('s3cr3t-tök3n\n').toString('base64') } },
    });
    expect(await readSecretValue(conn, namespace, name, 'access-token')).toBe('s3cr3t-tök3n');
    expect(await readSecretValue(conn, namespace, name, 'other-key')).toBeUndefined();
    expect(await readSecretValue(conn, namespace, uniqueName('absent'), 'access-token')).toBeUndefined();
  });
});

describe('a user without rights', () => {
  const kubeconfig = testNoAccessKubeconfig();

  test.skipIf(kubeconfig === undefined)('gets 403 Forbidden as KubeApiError from every adapter call', async () => {
    const noAccess = connectKube({ kubeconfig: kubeconfig as string });
    const denied = await kubeCall('list nodes', () => noAccess.core.listNode()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(denied).toBeInstanceOf(KubeApiError);
    expect(denied).toMatchObject({ status: 403, reason: 'Forbidden', isNotFound: false });
    expect((denied as KubeApiError).message).toMatch(/^list nodes: .*test-noaccess.*cannot list resource "nodes"/);

    await expect(listServices(noAccess)).rejects.toMatchObject({ name: 'KubeApiError', status: 403 });
    await expect(readSecretValue(noAccess, 'kube-system', 'cloudscale', 'access-token')).rejects.toMatchObject({
      status: 403,
    });
    const event = await recordEvent(
      noAccess,
      { kind: 'Node', name: 'any' },
      { type: 'Normal', reason: 'Test', message: 'refused' },
    );
    expect((event.error as KubeApiError).status).toBe(403);
  });
});
