// @kube-versions: all — Service status and ipMode (dropped by 1.30 without the gate), finalizers, allocations
// What the load balancer controller relies on for Services, and the services adapter itself,
// against the real apiserver.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { KubeConnection } from '../../src/core/kube/connection.js';
import {
  getService,
  listServices,
  patchServiceMetadata,
  patchServiceStatus,
} from '../../src/core/kube/services.js';
import {
  createLoadBalancerService,
  deleteCreatedObjects,
  ensureNamespace,
  testConnection,
  uniqueName,
  waitUntil,
} from '../support/kube.js';
import { serverKeepsIpMode } from '../support/ip-mode.js';

const CLEANUP = 'service.kubernetes.io/load-balancer-cleanup';
const conn = testConnection();
const namespace = uniqueName('svc');
const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(() => ensureNamespace(namespace));
afterAll(deleteCreatedObjects);

describe('Services on the test apiserver', () => {
  test('type LoadBalancer gets a clusterIP and one nodePort per port in the default range', async () => {
    const service = await createLoadBalancerService(namespace, uniqueName('lb'), {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
        { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
      ],
    });
    expect(service.spec?.clusterIP).toMatch(/^10\.0\.[0-3]\.\d+$/); // the test cluster's Service range is 10.0.0.0/22
    const nodePorts = service.spec?.ports?.map((p) => p.nodePort) ?? [];
    expect(nodePorts).toHaveLength(2);
    for (const port of nodePorts) {
      expect(port).toBeGreaterThanOrEqual(30000);
      expect(port).toBeLessThanOrEqual(32767);
    }
    expect(new Set(nodePorts).size).toBe(2);
    expect(service.spec?.externalTrafficPolicy).toBe('Cluster');
    expect(service.spec?.healthCheckNodePort).toBeUndefined();
  });

  test('externalTrafficPolicy Local gets a healthCheckNodePort', async () => {
    const service = await createLoadBalancerService(namespace, uniqueName('lb-local'), {
      externalTrafficPolicy: 'Local',
    });
    const healthCheckNodePort = service.spec?.healthCheckNodePort;
    expect(healthCheckNodePort).toBeGreaterThanOrEqual(30000);
    expect(healthCheckNodePort).toBeLessThanOrEqual(32767);
    expect(healthCheckNodePort).not.toBe(service.spec?.ports?.[0]?.nodePort);
  });

  test('a finalizer holds the deletion until it is removed', async () => {
    const name = uniqueName('lb-final');
    await createLoadBalancerService(namespace, name, { finalizers: [CLEANUP] });
    await conn.core.deleteNamespacedService({ namespace, name });
    const terminating = await getService(conn, namespace, name);
    expect(terminating?.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(terminating?.metadata?.finalizers).toEqual([CLEANUP]);

    await patchServiceMetadata(conn, namespace, name, { removeFinalizer: CLEANUP });
    await waitUntil(`service ${name} gone`, async () => (await getService(conn, namespace, name)) === undefined);
  });

  test('status.loadBalancer.ingress with ipMode is written and read back; unset ipMode becomes VIP', async (context) => {
    if (!(await serverKeepsIpMode())) context.skip(); // this API server drops ipMode
    const name = uniqueName('lb-status');
    await createLoadBalancerService(namespace, name);
    const written = await patchServiceStatus(conn, namespace, name, {
      ingress: [
        { ip: '192.0.2.10', ipMode: 'Proxy' },
        { ip: '2001:db8::10' },
        { hostname: 'lb.example.com' },
      ],
    });
    const expected = [
      { ip: '192.0.2.10', ipMode: 'Proxy' },
      { ip: '2001:db8::10', ipMode: 'VIP' },
      { hostname: 'lb.example.com' },
    ];
    expect(written.status?.loadBalancer?.ingress).toEqual(expected);
    expect((await getService(conn, namespace, name))?.status?.loadBalancer?.ingress).toEqual(expected);

    // The main resource ignores status.
    await conn.core.patchNamespacedService(
      { namespace, name, body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.99' }] } } } },
      mergePatch(),
    );
    expect((await getService(conn, namespace, name))?.status?.loadBalancer?.ingress).toEqual(expected);

    const cleared = await patchServiceStatus(conn, namespace, name, { ingress: [] });
    expect(cleared.status?.loadBalancer?.ingress ?? []).toEqual([]);
  });

  test('ipMode without ip is rejected', async (context) => {
    if (!(await serverKeepsIpMode())) context.skip(); // this API server drops ipMode before validating it
    const name = uniqueName('lb-badmode');
    await createLoadBalancerService(namespace, name);
    const error = await patchServiceStatus(conn, namespace, name, {
      ingress: [{ hostname: 'lb.example.com', ipMode: 'Proxy' }],
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'KubeApiError', status: 422 });
  });
});

describe('services adapter', () => {
  test('listServices pages through all namespaces', async () => {
    const other = uniqueName('svc-other');
    await ensureNamespace(other);
    const names = [uniqueName('page'), uniqueName('page'), uniqueName('page')];
    await createLoadBalancerService(namespace, names[0] as string);
    await createLoadBalancerService(namespace, names[1] as string);
    await createLoadBalancerService(other, names[2] as string);
    const listed = await listServices(conn, { pageSize: 2 });
    const keys = listed.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        `${namespace}/${names[0]}`,
        `${namespace}/${names[1]}`,
        `${other}/${names[2]}`,
        'default/kubernetes',
      ]),
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(listed.length).toBe((await listServices(conn)).length);
  });

  test('getService answers undefined for a missing Service', async () => {
    expect(await getService(conn, namespace, uniqueName('missing'))).toBeUndefined();
  });

  test('annotations are set and removed without touching others', async () => {
    const name = uniqueName('lb-annot');
    await createLoadBalancerService(namespace, name, { annotations: { keep: 'me', drop: 'me' } });
    const patched = await patchServiceMetadata(conn, namespace, name, {
      annotations: { 'example.com/new': 'value', drop: null },
    });
    expect(patched.metadata?.annotations).toEqual({ keep: 'me', 'example.com/new': 'value' });
  });

  test('adding a present finalizer or removing an absent one writes nothing', async () => {
    const name = uniqueName('lb-noop');
    const created = await createLoadBalancerService(namespace, name, { finalizers: [CLEANUP] });
    const added = await patchServiceMetadata(conn, namespace, name, { addFinalizer: CLEANUP });
    const removed = await patchServiceMetadata(conn, namespace, name, { removeFinalizer: 'example.com/absent' });
    expect(added.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    expect(removed.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });

  test('a finalizer written between our read and our write is kept (409, re-read, retry)', async () => {
    const name = uniqueName('lb-race');
    await createLoadBalancerService(namespace, name, { finalizers: ['example.com/first'] });
    // A connection whose first read is followed by another writer's change before we write.
    let interfered = 0;
    const racing = withReadHook(conn, async () => {
      if (interfered > 0) return;
      interfered += 1;
      await conn.core.patchNamespacedService(
        { namespace, name, body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/other' }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
    });
    const added = await patchServiceMetadata(racing, namespace, name, { addFinalizer: CLEANUP });
    expect(interfered).toBe(1);
    expect(added.metadata?.finalizers).toEqual(['example.com/first', 'example.com/other', CLEANUP]);

    interfered = 0;
    const racingRemove = withReadHook(conn, async () => {
      if (interfered > 0) return;
      interfered += 1;
      await conn.core.patchNamespacedService(
        { namespace, name, body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/late' }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
    });
    const removed = await patchServiceMetadata(racingRemove, namespace, name, { removeFinalizer: 'example.com/first' });
    expect(removed.metadata?.finalizers).toEqual(['example.com/other', CLEANUP, 'example.com/late']);
  });

  test('parallel finalizer writers all succeed and none is lost', async () => {
    const name = uniqueName('lb-parallel');
    await createLoadBalancerService(namespace, name);
    const finalizers = ['example.com/a', 'example.com/b', 'example.com/c'];
    await Promise.all(finalizers.map((f) => patchServiceMetadata(conn, namespace, name, { addFinalizer: f })));
    const stored = await getService(conn, namespace, name);
    expect([...(stored?.metadata?.finalizers ?? [])].sort()).toEqual(finalizers);
    await Promise.all(finalizers.map((f) => patchServiceMetadata(conn, namespace, name, { removeFinalizer: f })));
    expect((await getService(conn, namespace, name))?.metadata?.finalizers ?? []).toEqual([]);
  });

  test('a write to a missing Service fails with a KubeApiError 404', async () => {
    const error = await patchServiceMetadata(conn, namespace, uniqueName('missing'), {
      addFinalizer: CLEANUP,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'KubeApiError', status: 404, isNotFound: true });
  });
});

/**
 * The same connection, except that after each readNamespacedService `hook` runs (a real write
 * by another client) before the result is handed back.
 */
function withReadHook(base: KubeConnection, hook: () => Promise<void>): KubeConnection {
  const core = new Proxy(base.core, {
    get(target, property, receiver) {
      if (property === 'readNamespacedService') {
        return async (...args: Parameters<CoreV1Api['readNamespacedService']>) => {
          const result = await target.readNamespacedService(...args);
          await hook();
          return result;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...base, core };
}
