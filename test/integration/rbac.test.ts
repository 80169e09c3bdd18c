// @kube-versions: all — the shipped RBAC rules, as each server's authorizer grants and refuses them
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
  KubernetesObjectApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  type KubernetesObject,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  buildManifests,
  CCM_NAME,
  CCM_NAMESPACE,
  CLUSTER_RULES,
  DEFAULT_SCHEDULE,
  KUBE_SYSTEM_RULES,
  STATUS_CONFIGMAP_NAME,
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
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
} from '../support/kube.js';
import { eventsOf, lbSeed, serverName } from '../support/lb-scenarios.js';
import {
  adminConfig,
  allowed,
  clientsWithToken,
  connectionWithToken,
  deleteLeaseIfUnchanged,
  describeAttributes,
  ensureLeaseExists,
  eventually,
  NOT_GRANTED,
  outcomeOf,
  REQUIRED_STEPS,
  runPassAs,
  tokenFor,
} from '../support/rbac.js';

const FIELD_MANAGER = 'cloudscale-ccm-rbac-test';
let adminObjects: KubernetesObjectApi;
const created: KubernetesObject[] = [];
let createdLeaseVersion: string | undefined;

beforeAll(async () => {
  adminObjects = KubernetesObjectApi.makeApiClient(adminConfig());
  createdLeaseVersion = await ensureLeaseExists();
});

const scratch = mkdtempSync(join(tmpdir(), 'ccm-rbac-'));

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await deleteLeaseIfUnchanged(createdLeaseVersion);
  for (const object of created.reverse()) {
    await adminObjects.delete(object).catch((error: unknown) => {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    });
  }
});

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
    const conn = connectionWithToken(await tokenFor(CCM_NAME), scratch);
    const prefix = uniqueName('rbac-run');
    const harness = await startHarness({ seed: lbSeed(prefix, 2) });
    try {
      const uninitialized = [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }];
      for (const i of [1, 2]) await createNode(serverName(prefix, i), { ready: true, taints: uninitialized });
      const gone = uniqueName('rbac-run-gone');
      await createNode(gone, { ready: false, providerID: 'cloudscale://0badc0de-0000-4000-8000-000000000000' });
      const service = await createLoadBalancerService('default', uniqueName('rbac-run-web'));

      const ctx = await runPassAs(conn, harness);
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
      // The pass recorded itself in the ConfigMap the manifests created (get + patch by name only).
      const status = await core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME });
      expect(JSON.parse(status.data?.run ?? '{}')).toMatchObject({ command: 'run', result: 'succeeded' });

      // Deleted, the ConfigMap cannot come back through this role (no create): the next pass
      // says so with the fix, and does not fail for it.
      await core.deleteNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME });
      const next = await runPassAs(conn, harness);
      expect(next.err()).toMatch(
        /^warning: the status record of this pass was not written: configmap kube-system\/cloudscale-ccm-status does not exist and this identity may not create it \(apply the output of `cloudscale-ccm manifests` again: it creates the ConfigMap the role may only update\)$/m,
      );
      for (const object of rbacObjects().filter((o) => o.kind === 'ConfigMap')) await apply(object);
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
