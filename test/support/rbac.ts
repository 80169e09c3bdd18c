// The RBAC test's table of every Kubernetes request `run` makes, the requests its role must
// refuse, and how to ask the API server about them as a ServiceAccount. Shared by
// test/integration/rbac.test.ts (the manifests' role is sufficient and minimal) and
// test/integration/helm-chart.test.ts (the role the Helm chart installs is the same in force).
import {
  ApiException,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CCM_LEASE_NAME, CCM_NAMESPACE, GO_CCM_LEASE_NAME, STATUS_CONFIGMAP_NAME } from '../../src/core/deploy/manifests.js';
import { runCommand } from '../../src/commands/run.js';
import { namespaceUid } from '../../src/core/kube/cluster.js';
import { connectKube, type KubeConnection } from '../../src/core/kube/connection.js';
import type { Harness } from './ccm.js';
import { testKubeconfig } from './kube.js';
import { FAST_PASS } from './lb-scenarios.js';

let admin: KubeConfig | undefined;

/** The admin KubeConfig of the test cluster (one per test file). */
export function adminConfig(): KubeConfig {
  if (admin === undefined) {
    admin = new KubeConfig();
    admin.loadFromFile(testKubeconfig());
  }
  return admin;
}

/**
 * A watch request through the typed client, which cannot read the event stream it is answered
 * with: an ApiException (403 among them) is the answer, anything else means the server accepted
 * the watch (it answered 200) and the client failed to parse the stream.
 */
async function watchBriefly(request: Promise<unknown>): Promise<void> {
  await request.catch((error: unknown) => {
    if (error instanceof ApiException) throw error;
  });
}

/** A name no object of the test cluster has: writes to it end in 404 after authorization. */
export const PROBE = 'rbac-probe-does-not-exist';
const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface Clients {
  core: CoreV1Api;
  coordination: CoordinationV1Api;
}

export interface Step {
  /** What the tool does, in its words. */
  readonly name: string;
  readonly attributes: V1ResourceAttributes;
  /** The request the tool sends for this step; must not change anything (dry run or read). */
  readonly call: (clients: Clients) => Promise<unknown>;
}

/**
 * Every Kubernetes request `run` (init-nodes + sync-lb under the Lease) makes, as the
 * RBAC sees it. Keep it in step with src/core/kube/: a new request kind needs a row here and
 * perhaps a rule in src/core/deploy/manifests.ts.
 */
export const REQUIRED_STEPS: readonly Step[] = [
  {
    name: 'init-nodes: list Nodes',
    attributes: { verb: 'list', resource: 'nodes' },
    call: ({ core }) => core.listNode({ limit: 1 }),
  },
  {
    name: 'init-nodes: re-read a Node after a conflict',
    attributes: { verb: 'get', resource: 'nodes', name: PROBE },
    call: ({ core }) => core.readNode({ name: PROBE }),
  },
  {
    name: 'init-nodes: patch providerID, labels and taints',
    attributes: { verb: 'patch', resource: 'nodes', name: PROBE },
    call: ({ core }) =>
      core.patchNode({ name: PROBE, body: { spec: { providerID: 'cloudscale://probe' } }, dryRun: 'All' }, mergePatch()),
  },
  {
    name: 'init-nodes: patch node addresses',
    attributes: { verb: 'patch', resource: 'nodes', subresource: 'status', name: PROBE },
    call: ({ core }) =>
      core.patchNodeStatus(
        { name: PROBE, body: { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } }, dryRun: 'All' },
        mergePatch(),
      ),
  },
  {
    name: 'node lifecycle: delete a Node whose server is gone',
    attributes: { verb: 'delete', resource: 'nodes', name: PROBE },
    call: ({ core }) => core.deleteNode({ name: PROBE, dryRun: 'All' }),
  },
  {
    name: 'sync-lb: list Services in all namespaces',
    attributes: { verb: 'list', resource: 'services' },
    call: ({ core }) => core.listServiceForAllNamespaces({ limit: 1 }),
  },
  {
    name: 'run --watch-for: watch Nodes',
    attributes: { verb: 'watch', resource: 'nodes' },
    call: ({ core }) => watchBriefly(core.listNode({ watch: true, timeoutSeconds: 1, limit: 1 })),
  },
  {
    name: 'run --watch-for: watch Services in all namespaces',
    attributes: { verb: 'watch', resource: 'services' },
    call: ({ core }) => watchBriefly(core.listServiceForAllNamespaces({ watch: true, timeoutSeconds: 1, limit: 1 })),
  },
  {
    name: 'sync-lb: read a named Service',
    attributes: { verb: 'get', resource: 'services', namespace: 'default', name: PROBE },
    call: ({ core }) => core.readNamespacedService({ namespace: 'default', name: PROBE }),
  },
  {
    name: 'sync-lb: patch annotations and the finalizer',
    attributes: { verb: 'patch', resource: 'services', namespace: 'default', name: PROBE },
    call: ({ core }) =>
      core.patchNamespacedService(
        { namespace: 'default', name: PROBE, body: { metadata: { annotations: { probe: 'x' } } }, dryRun: 'All' },
        mergePatch(),
      ),
  },
  {
    name: 'sync-lb: patch status.loadBalancer',
    attributes: { verb: 'patch', resource: 'services', subresource: 'status', namespace: 'default', name: PROBE },
    call: ({ core }) =>
      core.patchNamespacedServiceStatus(
        { namespace: 'default', name: PROBE, body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } }, dryRun: 'All' },
        mergePatch(),
      ),
  },
  {
    name: 'sync-lb and init-nodes: record an Event',
    attributes: { verb: 'create', resource: 'events', namespace: 'default' },
    call: ({ core }) =>
      core.createNamespacedEvent({
        namespace: 'default',
        dryRun: 'All',
        body: {
          metadata: { generateName: `${PROBE}.` },
          involvedObject: { apiVersion: 'v1', kind: 'Service', namespace: 'default', name: PROBE },
          reason: 'RbacProbe',
          message: 'RBAC test',
          type: 'Normal',
          source: { component: 'cloudscale-ccm' },
        },
      }),
  },
  {
    name: 'sync-lb and init-nodes: read an Event recorded before (the same event again)',
    attributes: { verb: 'get', resource: 'events', namespace: 'default', name: PROBE },
    call: ({ core }) => core.readNamespacedEvent({ namespace: 'default', name: PROBE }),
  },
  {
    name: 'sync-lb and init-nodes: count a repeated Event',
    attributes: { verb: 'patch', resource: 'events', namespace: 'default', name: PROBE },
    call: ({ core }) =>
      core.patchNamespacedEvent({ namespace: 'default', name: PROBE, body: { count: 2 }, dryRun: 'All' }, mergePatch()),
  },
  {
    name: 'cluster identity: read namespace kube-system',
    attributes: { verb: 'get', resource: 'namespaces', name: CCM_NAMESPACE },
    call: ({ core }) => core.readNamespace({ name: CCM_NAMESPACE }),
  },
  {
    name: 'run: create the Lease',
    attributes: { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE },
    call: ({ coordination }) =>
      coordination.createNamespacedLease({
        namespace: CCM_NAMESPACE,
        dryRun: 'All',
        body: { metadata: { name: CCM_LEASE_NAME }, spec: { holderIdentity: 'rbac-test', leaseDurationSeconds: 60 } },
      }),
  },
  {
    name: 'run: read the Lease',
    attributes: { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: CCM_LEASE_NAME },
    call: ({ coordination }) => coordination.readNamespacedLease({ namespace: CCM_NAMESPACE, name: CCM_LEASE_NAME }),
  },
  {
    name: 'run: renew and release the Lease',
    attributes: { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: CCM_LEASE_NAME },
    call: ({ coordination }) =>
      coordination.replaceNamespacedLease({
        namespace: CCM_NAMESPACE,
        name: CCM_LEASE_NAME,
        dryRun: 'All',
        // The Lease exists (ensureLeaseExists); this resourceVersion is stale: 409, never written.
        body: { metadata: { name: CCM_LEASE_NAME, resourceVersion: '1' }, spec: { holderIdentity: '' } },
      }),
  },
  {
    name: 'every pass: read the status record',
    attributes: { verb: 'get', resource: 'configmaps', namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME },
    call: ({ core }) => core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME }),
  },
  {
    name: 'every pass: write its record (server-side apply of its own key)',
    attributes: { verb: 'patch', resource: 'configmaps', namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME },
    call: ({ core }) =>
      core.patchNamespacedConfigMap(
        {
          namespace: CCM_NAMESPACE,
          name: STATUS_CONFIGMAP_NAME,
          fieldManager: 'cloudscale-ccm-rbac-test',
          force: true,
          dryRun: 'All',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: STATUS_CONFIGMAP_NAME, namespace: CCM_NAMESPACE }, data: { probe: 'x' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
  },
  {
    name: 'run: check whether the Go CCM holds its Lease',
    attributes: { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: GO_CCM_LEASE_NAME },
    call: ({ coordination }) => coordination.readNamespacedLease({ namespace: CCM_NAMESPACE, name: GO_CCM_LEASE_NAME }),
  },
];

/** Requests the role must refuse: the token, other Leases and namespaces, verbs it never needs. */
export const NOT_GRANTED: readonly V1ResourceAttributes[] = [
  { verb: 'get', resource: 'secrets', namespace: CCM_NAMESPACE, name: 'cloudscale' },
  { verb: 'list', resource: 'secrets', namespace: CCM_NAMESPACE },
  { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: 'kube-scheduler' },
  { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: GO_CCM_LEASE_NAME },
  { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: CCM_LEASE_NAME },
  { verb: 'list', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE },
  { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' },
  { verb: 'get', resource: 'namespaces', name: 'default' },
  { verb: 'list', resource: 'namespaces' },
  { verb: 'create', resource: 'nodes' },
  { verb: 'update', resource: 'nodes', name: PROBE },
  { verb: 'update', resource: 'services', namespace: 'default', name: PROBE },
  { verb: 'delete', resource: 'services', namespace: 'default', name: PROBE },
  { verb: 'create', resource: 'services', namespace: 'default' },
  { verb: 'get', resource: 'configmaps', namespace: CCM_NAMESPACE, name: 'kube-root-ca.crt' },
  // The manifests create the status ConfigMap: the role never creates, replaces or deletes one.
  { verb: 'create', resource: 'configmaps', namespace: CCM_NAMESPACE },
  { verb: 'update', resource: 'configmaps', namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME },
  { verb: 'delete', resource: 'configmaps', namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME },
  { verb: 'create', resource: 'pods', namespace: CCM_NAMESPACE },
];

/** A short-lived token of ServiceAccount kube-system/`serviceAccount` (TokenRequest as admin). */
export async function tokenFor(serviceAccount: string): Promise<string> {
  const request = await adminConfig().makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace: CCM_NAMESPACE,
    name: serviceAccount,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const token = request.status?.token;
  if (token === undefined) throw new Error(`TokenRequest for ${serviceAccount} returned no token`);
  return token;
}

/** API clients authenticated as the ServiceAccount, against the same API server. */
export function clientsWithToken(token: string): Clients & { authorization: AuthorizationV1Api } {
  const cluster = adminConfig().getCurrentCluster();
  if (cluster === null) throw new Error('the test kubeconfig has no current cluster');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'service-account', token }],
    contexts: [{ name: 'service-account', cluster: cluster.name, user: 'service-account' }],
    currentContext: 'service-account',
  });
  return {
    core: config.makeApiClient(CoreV1Api),
    coordination: config.makeApiClient(CoordinationV1Api),
    authorization: config.makeApiClient(AuthorizationV1Api),
  };
}

/** A KubeConnection as `run` builds it, from a kubeconfig holding only the token (written into `dir`). */
export function connectionWithToken(token: string, dir: string): KubeConnection {
  const cluster = adminConfig().getCurrentCluster();
  if (cluster === null) throw new Error('the test kubeconfig has no current cluster');
  const file = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: cluster.server, 'certificate-authority': cluster.caFile } }],
    users: [{ name: 'service-account', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'service-account' } }],
    'current-context': 'test',
  };
  writeFileSync(file, JSON.stringify(kubeconfig), { mode: 0o600 });
  return connectKube({ kubeconfig: file });
}

export async function allowed(authorization: AuthorizationV1Api, attributes: V1ResourceAttributes): Promise<boolean> {
  const review = await authorization.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: attributes } } });
  return review.status?.allowed === true;
}

/**
 * 'allowed' when the request got past authorization: it succeeded, or was answered 404 (the
 * probe object does not exist) or 409 (exists already / changed). 'forbidden' on 403.
 */
export async function outcomeOf(step: Step, clients: Clients): Promise<'allowed' | 'forbidden'> {
  try {
    await step.call(clients);
    return 'allowed';
  } catch (error) {
    if (error instanceof ApiException && (error.code === 404 || error.code === 409)) return 'allowed';
    if (error instanceof ApiException && error.code === 403) return 'forbidden';
    throw error;
  }
}

/** RBAC changes reach the authorizer through a watch; poll until `ready` holds. */
export async function eventually(what: string, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`still not so after 60 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function describeAttributes(a: V1ResourceAttributes): string {
  const resource = [a.group, a.resource].filter(Boolean).join('/') + (a.subresource ? `/${a.subresource}` : '');
  const where = [a.namespace, a.name].filter(Boolean).join('/');
  return `${a.verb} ${resource}${where ? ` ${where}` : ''}`;
}

/**
 * `run` renews a Lease that exists, and a PUT to a missing Lease is authorized as a create.
 * So the renew step needs the Lease to exist: created here without a holder (the state of a
 * released Lease) unless a run of another test holds it already. Returns the resourceVersion of
 * the Lease it created, for {@link deleteLeaseIfUnchanged}.
 */
export async function ensureLeaseExists(): Promise<string | undefined> {
  try {
    const lease = await adminConfig().makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: CCM_NAMESPACE,
      body: { metadata: { name: CCM_LEASE_NAME } },
    });
    return lease.metadata?.resourceVersion;
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
    return undefined;
  }
}

/** Deletes the Lease ensureLeaseExists created, only while nobody took it since (else the precondition fails). */
export async function deleteLeaseIfUnchanged(createdVersion: string | undefined): Promise<void> {
  if (createdVersion === undefined) return;
  await adminConfig()
    .makeApiClient(CoordinationV1Api)
    .deleteNamespacedLease({
      namespace: CCM_NAMESPACE,
      name: CCM_LEASE_NAME,
      body: { preconditions: { resourceVersion: createdVersion } },
    })
    .catch((error: unknown) => {
      if (!(error instanceof ApiException && (error.code === 404 || error.code === 409))) throw error;
    });
}

/**
 * One `run` pass in the context the CronJob's pod gets: the kube connection and cluster identity
 * of the ServiceAccount token in `conn`; the cloud is the harness's simulator. Returns the
 * context: its err() holds every warning of the pass (an Event refused, a Lease not released …).
 */
export async function runPassAs(conn: KubeConnection, harness: Harness): Promise<ReturnType<Harness['context']>> {
  const ctx = { ...harness.context(), kube: () => conn, clusterId: () => namespaceUid(conn, CCM_NAMESPACE) };
  await runCommand({ ...FAST_PASS, wait: false, force: false, leaseSeconds: 30 }, ctx);
  return ctx;
}
