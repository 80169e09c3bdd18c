// Two clusters configured with one --cluster-id, in one cloudscale project: the run's control
// plane (cluster A) and a second one started here (cluster B), both against one simulator. The
// cluster id is only a string; the kube-system uid tag tells the clusters apart, so B's cleanup
// lists none of A's load balancers as orphans and deletes none, and B's sync-lb warns. A load
// balancer of A without the tag (an older version's) is kept too, even when B has Nodes for A's
// servers: only --include-untagged lets cleanup take it for its own.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCommand, type CleanupReport } from '../../src/commands/cleanup.js';
import type { OutputFormat } from '../../src/commands/context.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { createCommandContext } from '../../src/composition.js';
import { connectKube, type KubeConnection } from '../../src/core/kube/connection.js';
import { startHarness, TEST_TOKEN, type Harness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  testKubeconfig,
  uniqueName,
} from '../support/kube.js';
import { FAST_PASS } from '../support/lb-scenarios.js';

const helper = fileURLToPath(new URL('../../helpers/test-cluster', import.meta.url));
const SHARED_ID = `shared-${uniqueName('id')}`;
/** The tag that tells the clusters apart (src/core/lb/cluster-identity.ts); its key must never change. */
const OWNER_KUBE_SYSTEM_UID_TAG = 'k8s.cloudscale.ch/kube-system-uid';

function testCluster(command: 'start' | 'stop', dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [helper, command, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`helpers/test-cluster ${command} exited ${code}: ${stderr}`))));
  });
}

describe('two clusters share one --cluster-id', () => {
  let harness: Harness;
  const clusterB = mkdtempSync(join(tmpdir(), 'ccm-second-cluster-'));
  let connB: KubeConnection;
  const namespace = uniqueName('shared');
  const prefix = uniqueName('sh');
  const sync = { ...FAST_PASS, namespace, dryRun: false };
  const lbsOfA: Record<'web' | 'api', string> = { web: '', api: '' };
  let orphanOfB = '';
  let warnedA: unknown;

  /** A command context as the CLI builds it (src/composition.ts), for one of the two clusters. */
  async function cluster(kubeconfig: string, output: OutputFormat = 'json') {
    let out = '';
    let err = '';
    const sink = (append: (text: string) => void) =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          append(chunk.toString());
          done();
        },
      });
    const ctx = await createCommandContext(
      { kubeconfig, clusterId: SHARED_ID, apiUrl: harness.sim.url, output, color: false, verbose: false },
      {
        stdin: Readable.from([]),
        stdout: sink((text) => (out += text)),
        stderr: sink((text) => (err += text)),
        env: { CLOUDSCALE_API_TOKEN: TEST_TOKEN },
        signal: new AbortController().signal,
      },
    );
    return { ctx, out: () => out, err: () => err };
  }
  const clusterA = () => cluster(testKubeconfig());
  const inClusterB = (output?: OutputFormat) => cluster(join(clusterB, 'kubeconfig'), output);
  const lbUuids = async () => (await harness.cloud.loadBalancers.list()).map((lb) => lb.uuid).sort();

  async function createInB(kind: 'node' | 'service', name: string): Promise<void> {
    if (kind === 'node') {
      await connB.core.createNode({ body: { metadata: { name } } });
      return;
    }
    await connB.core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
      },
    });
  }

  beforeAll(async () => {
    [harness] = await Promise.all([
      startHarness({
        seed: `
networks: [{name: p, zone: rma1, subnets: [{cidr: 10.70.0.0/24}]}]
servers:
  - {name: ${prefix}-a1, flavor: flex-4-2, zone: rma1, interfaces: [{type: private, network: p, addresses: [10.70.0.1]}]}
  - {name: ${prefix}-a2, flavor: flex-4-2, zone: rma1, interfaces: [{type: private, network: p, addresses: [10.70.0.2]}]}
  - {name: ${prefix}-b1, flavor: flex-4-2, zone: rma1, interfaces: [{type: private, network: p, addresses: [10.70.0.11]}]}
`,
      }),
      testCluster('start', clusterB),
    ]);
    connB = connectKube({ kubeconfig: join(clusterB, 'kubeconfig') });

    // Cluster A: two Services on two Nodes, synced with the shared cluster id.
    await ensureNamespace(namespace);
    await createNode(`${prefix}-a1`, { ready: true });
    await createNode(`${prefix}-a2`, { ready: true });
    await createLoadBalancerService(namespace, 'web');
    await createLoadBalancerService(namespace, 'api');
    const a = await clusterA();
    const report = await syncLbCommand([], sync, a.ctx);
    expect(report.services.map((s) => s.status)).toEqual(['changed', 'changed']);
    for (const s of report.services) lbsOfA[s.service === `${namespace}/web` ? 'web' : 'api'] = s.loadBalancer!.uuid!;
    warnedA = report.sharedClusterId;
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await harness?.stop();
    await testCluster('stop', clusterB);
  });

  it("A's load balancers carry A's kube-system uid beside the shared cluster id; A is not warned", async () => {
    const uid = await (await clusterA()).ctx.kubeSystemUid();
    for (const uuid of Object.values(lbsOfA)) {
      expect((await harness.cloud.loadBalancers.get(uuid)).tags).toMatchObject({
        'k8s.cloudscale.ch/cluster': SHARED_ID,
        [OWNER_KUBE_SYSTEM_UID_TAG]: uid,
      });
    }
    expect(warnedA).toBeNull();
  });

  it("B's sync-lb warns about A's load balancers and leaves them alone", async () => {
    await createInB('node', `${prefix}-b1`);
    await createInB('service', 'gone');
    await createInB('service', 'live');
    const before = await harness.cloud.loadBalancers.list();
    const b = await inClusterB();
    const report = await syncLbCommand([], { ...sync, namespace: 'default' }, b.ctx);
    expect(report.services.map((s) => [s.service, s.status])).toEqual([
      ['default/gone', 'changed'],
      ['default/live', 'changed'],
    ]);
    orphanOfB = report.services[0]!.loadBalancer!.uuid!;
    expect(report.sharedClusterId?.loadBalancers.toSorted()).toEqual([lbsOfA.web, lbsOfA.api].sort());
    expect(b.err()).toMatch(
      new RegExp(`^warning: 2 load balancer\\(s\\) tagged with cluster id ${SHARED_ID} belong to another cluster .*give each cluster its own --cluster-id$`, 'm'),
    );
    const after = await harness.cloud.loadBalancers.list();
    for (const uuid of Object.values(lbsOfA)) {
      expect(after.find((lb) => lb.uuid === uuid)).toEqual(before.find((lb) => lb.uuid === uuid));
    }
  });

  it("B's cleanup --dry-run lists only B's orphan, and A's load balancers as kept, also without the uid tag", async () => {
    // B's Service disappears without its load balancer (finalizer removed by force).
    await connB.core.patchNamespacedService(
      { namespace: 'default', name: 'gone', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await connB.core.deleteNamespacedService({ namespace: 'default', name: 'gone' });
    // A's api as an older version left it: no kube-system uid tag.
    const { [OWNER_KUBE_SYSTEM_UID_TAG]: _dropped, ...olderTags } = (await harness.cloud.loadBalancers.get(lbsOfA.api)).tags;
    await harness.cloud.loadBalancers.update(lbsOfA.api, { tags: olderTags });

    const b = await inClusterB('text');
    const report = await cleanupCommand({ all: false, yes: false, dryRun: true }, b.ctx);
    expect(report.candidates.map((c) => c.uuid)).toEqual([orphanOfB]);
    expect(Object.fromEntries(report.withoutProof.map((k) => [k.uuid, k.why]))).toEqual({
      [lbsOfA.web]: expect.stringMatching(`^belongs to another cluster that shares the cluster id ${SHARED_ID} \\(its kube-system UID `),
      [lbsOfA.api]: expect.stringMatching(`^has no ${OWNER_KUBE_SYSTEM_UID_TAG} tag, so nothing proves it is this cluster's: .*--include-untagged$`),
    });
    expect(b.out()).toContain(`kept load balancer k8s-service-`);
    expect(b.out()).toMatch(new RegExp(`\\(${lbsOfA.web}\\): belongs to another cluster that shares the cluster id ${SHARED_ID}`));
  });

  it("B's cleanup --yes deletes B's orphan and none of A's", async () => {
    const before = await lbUuids();
    const b = await inClusterB();
    const report: CleanupReport = await cleanupCommand({ all: false, yes: true, dryRun: false }, b.ctx);
    expect(report.deleted).toEqual([orphanOfB]);
    expect(await lbUuids()).toEqual(before.filter((uuid) => uuid !== orphanOfB));
    expect(await lbUuids()).toEqual(expect.arrayContaining(Object.values(lbsOfA)));
  });

  it("B with Nodes for A's servers too: B's cleanup --all deletes only B's own, A's load balancer without the uid tag stays", async () => {
    // Every member of A's api is now on a server of one of B's Nodes, and on no other server.
    await createInB('node', `${prefix}-a1`);
    await createInB('node', `${prefix}-a2`);
    const b = await inClusterB();
    const report = await cleanupCommand({ all: true, yes: true, dryRun: false }, b.ctx);
    expect(report.deleted).toHaveLength(1);
    expect(report.withoutProof.map((k) => k.uuid).sort()).toEqual(Object.values(lbsOfA).sort());
    expect(await lbUuids()).toEqual(Object.values(lbsOfA).sort());
  });

  it("--include-untagged is the operator's word: B's cleanup --all --dry-run then lists A's api, never A's web", async () => {
    const b = await inClusterB();
    const report = await cleanupCommand({ all: true, includeUntagged: true, yes: false, dryRun: true }, b.ctx);
    expect(report.candidates.map((c) => c.uuid)).toEqual([lbsOfA.api]);
    expect(report.withoutProof.map((k) => k.uuid)).toEqual([lbsOfA.web]);
    expect(await lbUuids()).toEqual(Object.values(lbsOfA).sort());
  });

  it("A's next sync-lb adds the missing uid tag in place (impact none), and writes nothing else", async () => {
    const a = await clusterA();
    const report = await syncLbCommand([], sync, a.ctx);
    const actions = Object.fromEntries(report.services.map((s) => [s.service, s.actions.map((x) => x.kind)]));
    expect(actions).toEqual({ [`${namespace}/web`]: [], [`${namespace}/api`]: ['tag-lb'] });
    const api = await harness.cloud.loadBalancers.get(lbsOfA.api);
    expect(api.tags[OWNER_KUBE_SYSTEM_UID_TAG]).toBe(await a.ctx.kubeSystemUid());
    expect(await a.ctx.kubeSystemUid()).not.toBe(await (await inClusterB()).ctx.kubeSystemUid());
  });
});
