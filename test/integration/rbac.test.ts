// The RBAC of deploy/ against a real kube-apiserver, with a ServiceAccount token bound to
// exactly the generated roles:
// - every request the tool makes (REQUIRED_STEPS) is allowed, and the listed extras are not;
// - a real `run` pass with that token (Nodes, a gone Node, a LoadBalancer Service, the Lease,
//   the cluster identity) succeeds without a single warning;
// - the role is minimal: without any one verb of any one rule, some required step is refused.
//
// Each required step is checked twice: by a SelfSubjectAccessReview with the step's attributes
// and by the real request (writes as server-side dry runs, on objects that need not exist: the
// answer then is 404 or 409, which proves the request got past authorization). Minimality is
// proven on the step table, not with `run`: some requests happen only on a conflict (re-reading
// a Node) or for named arguments, which one pass does not provoke.
import {
  ApiException,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubernetesObject,
  type V1PolicyRule,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCommand } from '../../src/commands/run.js';
import { connectKube, type KubeConnection } from '../../src/core/kube/connection.js';
import { namespaceUid } from '../../src/core/kube/cluster.js';
import {
  buildManifests,
  CCM_LEASE_NAME,
  CCM_NAME,
  CCM_NAMESPACE,
  CLUSTER_RULES,
  DEFAULT_SCHEDULE,
  GO_CCM_LEASE_NAME,
  KUBE_SYSTEM_RULES,
  renderTokenSecretTemplate,
  buildTokenSecretTemplate,
} from '../../src/core/deploy/manifests.js';
import { VERSION } from '../../src/version.js';
import { startHarness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  testConnection,
  testKubeconfig,
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
} from '../support/kube.js';
import { eventsOf, lbSeed, serverName } from '../support/lb-scenarios.js';

/** A name no object of the test cluster has: writes to it end in 404 after authorization. */
const PROBE = 'rbac-probe-does-not-exist';
const FIELD_MANAGER = 'cloudscale-ccm-rbac-test';
const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface Clients {
  core: CoreV1Api;
  coordination: CoordinationV1Api;
}

interface Step {
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
const REQUIRED_STEPS: readonly Step[] = [
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
    name: 'run: check whether the Go CCM holds its Lease',
    attributes: { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: CCM_NAMESPACE, name: GO_CCM_LEASE_NAME },
    call: ({ coordination }) => coordination.readNamespacedLease({ namespace: CCM_NAMESPACE, name: GO_CCM_LEASE_NAME }),
  },
];

/** Requests the role must refuse: the token, other Leases and namespaces, verbs it never needs. */
const NOT_GRANTED: readonly V1ResourceAttributes[] = [
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
  { verb: 'watch', resource: 'nodes' },
  { verb: 'update', resource: 'services', namespace: 'default', name: PROBE },
  { verb: 'delete', resource: 'services', namespace: 'default', name: PROBE },
  { verb: 'create', resource: 'services', namespace: 'default' },
  { verb: 'watch', resource: 'services' },
  { verb: 'get', resource: 'configmaps', namespace: CCM_NAMESPACE, name: 'kube-root-ca.crt' },
  { verb: 'create', resource: 'pods', namespace: CCM_NAMESPACE },
];

const admin = new KubeConfig();
let adminCore: CoreV1Api;
let adminObjects: KubernetesObjectApi;
const created: KubernetesObject[] = [];

beforeAll(async () => {
  admin.loadFromFile(testKubeconfig());
  adminCore = admin.makeApiClient(CoreV1Api);
  adminObjects = KubernetesObjectApi.makeApiClient(admin);
  await ensureLeaseExists();
});

const scratch = mkdtempSync(join(tmpdir(), 'ccm-rbac-'));

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  if (createdLeaseVersion !== undefined) {
    // Deleted only while nobody took it since (the precondition fails otherwise).
    await admin
      .makeApiClient(CoordinationV1Api)
      .deleteNamespacedLease({
        namespace: CCM_NAMESPACE,
        name: CCM_LEASE_NAME,
        body: { preconditions: { resourceVersion: createdLeaseVersion } },
      })
      .catch((error: unknown) => {
        if (!(error instanceof ApiException && (error.code === 404 || error.code === 409))) throw error;
      });
  }
  for (const object of created.reverse()) {
    await adminObjects.delete(object).catch((error: unknown) => {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    });
  }
});

let createdLeaseVersion: string | undefined;

/**
 * `run` renews a Lease that exists, and a PUT to a missing Lease is authorized as a create.
 * So the renew step needs the Lease to exist: created here without a holder (the state of a
 * released Lease) unless a run of another test holds it already.
 */
async function ensureLeaseExists(): Promise<void> {
  try {
    const lease = await admin.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: CCM_NAMESPACE,
      body: { metadata: { name: CCM_LEASE_NAME } },
    });
    createdLeaseVersion = lease.metadata?.resourceVersion;
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
}

/** Server-side apply as the test's field manager; remembered for deletion if it is new. */
async function apply(object: KubernetesObject): Promise<void> {
  const existed = await adminObjects.read(object as KubernetesObject & { metadata: { name: string } }).then(
    () => true,
    (error: unknown) => {
      if (error instanceof ApiException && error.code === 404) return false;
      throw error;
    },
  );
  await adminObjects.patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  if (!existed) created.push(object);
}

async function tokenFor(serviceAccount: string): Promise<string> {
  const request = await adminCore.createNamespacedServiceAccountToken({
    namespace: CCM_NAMESPACE,
    name: serviceAccount,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const token = request.status?.token;
  if (token === undefined) throw new Error(`TokenRequest for ${serviceAccount} returned no token`);
  return token;
}

/** API clients authenticated as the ServiceAccount, against the same API server. */
function clientsWithToken(token: string): Clients & { authorization: AuthorizationV1Api } {
  const cluster = admin.getCurrentCluster();
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

/** A KubeConnection as `run` builds it, from a kubeconfig holding only the token. */
function connectionWithToken(token: string): KubeConnection {
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('the test kubeconfig has no current cluster');
  const file = join(scratch, `kubeconfig-${Math.random().toString(36).slice(2)}`);
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

async function allowed(authorization: AuthorizationV1Api, attributes: V1ResourceAttributes): Promise<boolean> {
  const review = await authorization.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: attributes } } });
  return review.status?.allowed === true;
}

/**
 * 'allowed' when the request got past authorization: it succeeded, or was answered 404 (the
 * probe object does not exist) or 409 (exists already / changed). 'forbidden' on 403.
 */
async function outcomeOf(step: Step, clients: Clients): Promise<'allowed' | 'forbidden'> {
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
async function eventually(what: string, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`still not so after 60 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const rbacObjects = () =>
  buildManifests({ version: VERSION, schedule: DEFAULT_SCHEDULE })
    .map((m) => m.object)
    .filter((o) => o.kind !== 'CronJob');

describe('the generated manifests', () => {
  test('are accepted by the API server (server-side dry run), the Secret template too', async () => {
    const objects = [
      ...buildManifests({ version: VERSION, schedule: '*/5 * * * *', apiServer: { host: '10.0.0.10', port: 6443 } }),
      buildTokenSecretTemplate(),
    ].map((m) => m.object);
    for (const object of objects) {
      const answer = await adminObjects.create(object, undefined, 'All', FIELD_MANAGER).catch((error: unknown) => {
        // The real objects may exist already (applied below or by another test).
        if (error instanceof ApiException && error.code === 409) return object;
        throw error;
      });
      expect(answer.kind).toBe(object.kind);
    }
    expect(renderTokenSecretTemplate()).toContain('access-token');
  });
});

describe('a token bound to exactly the generated RBAC', () => {
  let clients: ReturnType<typeof clientsWithToken>;

  beforeAll(async () => {
    for (const object of rbacObjects()) await apply(object);
    clients = clientsWithToken(await tokenFor(CCM_NAME));
    await eventually('every required step is allowed', async () =>
      (await Promise.all(REQUIRED_STEPS.map((s) => allowed(clients.authorization, s.attributes)))).every(Boolean),
    );
  });

  test.each(REQUIRED_STEPS.map((step) => [step.name, step] as const))('may: %s', async (_name, step) => {
    expect(await allowed(clients.authorization, step.attributes)).toBe(true);
    expect(await outcomeOf(step, clients)).toBe('allowed');
  });

  test.each(NOT_GRANTED.map((a) => [describeAttributes(a), a] as const))('may not: %s', async (_name, attributes) => {
    expect(await allowed(clients.authorization, attributes)).toBe(false);
  });
});

describe('`run` with a token bound to exactly the generated RBAC', () => {
  afterAll(() => deleteCreatedObjects());

  test('initialises Nodes, deletes a Node whose server is gone, creates a load balancer, records events', async () => {
    for (const object of rbacObjects()) await apply(object);
    const conn = connectionWithToken(await tokenFor(CCM_NAME));
    const prefix = uniqueName('rbac-run');
    const harness = await startHarness({ seed: lbSeed(prefix, 2) });
    try {
      const uninitialized = [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }];
      for (const i of [1, 2]) await createNode(serverName(prefix, i), { ready: true, taints: uninitialized });
      const gone = uniqueName('rbac-run-gone');
      await createNode(gone, { ready: false, providerID: 'cloudscale://0badc0de-0000-4000-8000-000000000000' });
      const service = await createLoadBalancerService('default', uniqueName('rbac-run-web'));

      // The context the CronJob's pod gets: the kube connection and cluster identity of the
      // ServiceAccount token; the cloud is the harness's simulator.
      const ctx = { ...harness.context(), kube: () => conn, clusterId: () => namespaceUid(conn, CCM_NAMESPACE) };
      await runCommand(
        { wait: false, force: false, concurrency: 2, waitTimeout: 30, settleSeconds: 0, pollSeconds: 0.05, leaseSeconds: 30 },
        ctx,
      );
      // Nothing went wrong on the side either (an Event refused, a Lease not released …).
      expect(ctx.err()).toBe('');

      const core = testConnection().core;
      for (const i of [1, 2]) {
        const node = await core.readNode({ name: serverName(prefix, i) });
        expect(node.spec?.providerID).toMatch(/^cloudscale:\/\/[0-9a-f-]{36}$/);
        expect(node.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: UNINITIALIZED_TAINT_KEY }));
        expect(node.status?.addresses?.length ?? 0).toBeGreaterThan(0);
      }
      await expect(core.readNode({ name: gone })).rejects.toMatchObject({ code: 404 });
      const stored = await core.readNamespacedService({ namespace: 'default', name: service.metadata?.name ?? '' });
      expect(stored.status?.loadBalancer?.ingress?.length ?? 0).toBeGreaterThan(0);
      expect(stored.metadata?.finalizers).toContain('service.kubernetes.io/load-balancer-cleanup');
      expect((await eventsOf(stored)).length).toBeGreaterThan(0);
    } finally {
      await harness.stop();
    }
  });
});

interface Variant {
  readonly removed: string;
  readonly clusterRules: V1PolicyRule[];
  readonly kubeSystemRules: V1PolicyRule[];
}

/** The role with one verb of one rule taken away (a rule left without verbs disappears). */
function variantsWithoutOneVerb(): Variant[] {
  const variants: Variant[] = [];
  const tables = { cluster: CLUSTER_RULES, 'kube-system': KUBE_SYSTEM_RULES } as const;
  for (const [scope, table] of Object.entries(tables)) {
    table.forEach(({ rule }, ruleIndex) => {
      for (const verb of rule.verbs) {
        const without = table.flatMap(({ rule: other }, index) => {
          if (index !== ruleIndex) return [structuredClone(other)];
          const verbs = other.verbs.filter((v) => v !== verb);
          return verbs.length === 0 ? [] : [{ ...structuredClone(other), verbs }];
        });
        variants.push({
          removed: `${scope} rule ${ruleIndex} (${rule.resources?.join(',')}${rule.resourceNames ? ` ${rule.resourceNames.join(',')}` : ''}) without ${verb}`,
          clusterRules: scope === 'cluster' ? without : CLUSTER_RULES.map((r) => structuredClone(r.rule)),
          kubeSystemRules: scope === 'kube-system' ? without : KUBE_SYSTEM_RULES.map((r) => structuredClone(r.rule)),
        });
      }
    });
  }
  return variants;
}

// A rule every variant role carries on top, touching nothing the steps use: once the variant's
// token may read this ConfigMap name through both roles, both roles and bindings are in force.
const SENTINEL = 'ccm-rbac-test-sentinel';
const sentinelRule = (): V1PolicyRule => ({ apiGroups: [''], resources: ['configmaps'], resourceNames: [SENTINEL], verbs: ['get'] });

function variantObjects(name: string, variant: Variant): KubernetesObject[] {
  const subjects = [{ kind: 'ServiceAccount', name, namespace: CCM_NAMESPACE }];
  const labels = { 'app.kubernetes.io/name': 'cloudscale-ccm-rbac-test' };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: CCM_NAMESPACE, labels } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules: [...variant.clusterRules, sentinelRule()] },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: CCM_NAMESPACE, labels },
      rules: [...variant.kubeSystemRules, { ...sentinelRule(), resourceNames: [`${SENTINEL}-role`] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: CCM_NAMESPACE, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    },
  ] as KubernetesObject[];
}

describe('the role is minimal', () => {
  const variants = variantsWithoutOneVerb();

  test('there is one variant per verb of every rule', () => {
    const verbCount = [...CLUSTER_RULES, ...KUBE_SYSTEM_RULES].reduce((sum, { rule }) => sum + rule.verbs.length, 0);
    expect(variants).toHaveLength(verbCount);
  });

  test.each(variants.map((variant, index) => [variant.removed, index, variant] as const))(
    '%s: some required step is refused',
    async (_removed, index, variant) => {
      const name = `ccm-rbac-test-minus-${index}`;
      for (const object of variantObjects(name, variant)) await apply(object);
      const clients = clientsWithToken(await tokenFor(name));
      await eventually(`both roles of ${name} are in force`, async () =>
        (await allowed(clients.authorization, { verb: 'get', resource: 'configmaps', namespace: 'default', name: SENTINEL })) &&
        (await allowed(clients.authorization, { verb: 'get', resource: 'configmaps', namespace: CCM_NAMESPACE, name: `${SENTINEL}-role` })),
      );

      const refusedByReview: string[] = [];
      const refusedByServer: string[] = [];
      for (const step of REQUIRED_STEPS) {
        if (!(await allowed(clients.authorization, step.attributes))) refusedByReview.push(step.name);
        if ((await outcomeOf(step, clients)) === 'forbidden') refusedByServer.push(step.name);
      }
      expect(refusedByReview).not.toEqual([]);
      expect(refusedByServer).toEqual(refusedByReview);
      // Only steps using the removed verb can have lost their permission.
      const removedVerb = variant.removed.split(' ').at(-1);
      for (const refused of refusedByReview) {
        expect(REQUIRED_STEPS.find((s) => s.name === refused)?.attributes.verb).toBe(removedVerb);
      }
    },
  );
});

function describeAttributes(a: V1ResourceAttributes): string {
  const resource = [a.group, a.resource].filter(Boolean).join('/') + (a.subresource ? `/${a.subresource}` : '');
  const where = [a.namespace, a.name].filter(Boolean).join('/');
  return `${a.verb} ${resource}${where ? ` ${where}` : ''}`;
}
