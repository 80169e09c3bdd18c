// @test-tools: node
// Issue 19's "done when", end to end: the CronJob of `cloudscale-ccm manifests`, with its own
// arguments as the CLI renders them (not a copy), holds a disruptive annotation change with one
// Warning Event per Service over passes, and each of its Jobs completes; only `apply FILE` or the
// approval annotation apply it; a saved plan whose change was applied meanwhile is stale and
// writes nothing.
//
// What runs where:
// - Every Job of the story is a real Job of the CronJob, on real parts (docs/real-node.md; as in
//   cronjob-e2e.test.ts):
//   created from the CronJob's template as `kubectl -n kube-system create job
//   --from=cronjob/cloudscale-ccm NAME` does (a test's extra arguments appended to the container's
//   args), made into a Pod by kube-controller-manager's Job controller, placed by kube-scheduler on
//   the kubelet's control-plane Node, run by a real kubelet on containerd + runc with the project's
//   image (npm run image) and the manifests' ServiceAccount, RBAC and security settings, the
//   cloudscale token from Secret kube-system/cloudscale. The test waits until the Job has ended
//   (Complete) and reads the Pod's logs as `kubectl logs` does, through the API server from the
//   kubelet: where the test read the CLI's stdout before, it reads the container's output now
//   (stdout and stderr together).
// - `plan`, `apply` and `kubectl annotate` are an operator's terminal: the built CLI and kubectl,
//   run by the test with the admin kubeconfig, as before.
// - The CronJob is applied suspended (spec.suspend: true, what `kubectl patch` right after the
//   apply would set, without the window in between): only the test's own Jobs run, never a
//   scheduled one between two steps of the story.
//
// What differs from a real cluster, and why:
// - No kube-proxy: the manifests are printed with --api-server-host/-port (docs/deploy.md).
// - The cloud is this file's simulator (useLbWorld, strict world): the CronJob's container gets
//   CLOUDSCALE_API_URL (as a kustomize patch would add it), the Secret holds the simulator's token.
// - The watch is off (--watch-for 0s): each Job is one pass.
// - The cluster id: in the cluster the Job's default is the uid of namespace kube-system; the
//   terminal's commands are given the harness's own (--cluster-id, unique per harness). Each Job
//   gets the same --cluster-id appended, so that the Job and the terminal tag and recognise the
//   same owner (with another id, plan would see the Job's load balancers as another cluster's).
// - The Nodes: the kubelet registers <prefix>-3, the simulated server whose public IPv4 is
//   127.0.0.1 (where the API server reaches the kubelet for the logs), marked control plane as
//   kubeadm does; the first Job initialises it. <prefix>-1 and -2 are hand-made (useLbWorld).
// - kube-controller-manager runs only during this file (other files assume no controller acts on
//   their objects): the cronjob, job, garbage collector and root CA publisher controllers.
import { BatchV1Api, type KubernetesObject, type V1CronJob } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CCM_NAME, CCM_NAMESPACE } from '../../src/core/deploy/manifests.js';
import { LB_ANNOTATIONS } from '../../src/core/lb/annotations.js';
import type { SimSeed } from '../../src/sim/index.js';
import { runBinary, TEST_TOKEN, type BinaryResult } from '../support/ccm.js';
import { applyManifests, createJobFromCronJob, createTokenSecret, CRONJOB_CONTROLLERS, deleteDeployment, endedAs, logsOf, markControlPlane, podsOfJob, waitForEnd } from '../support/cronjob.js';
import { createLoadBalancerService, ignoreNotFound, testConnection, testKubeconfig, uniqueName } from '../support/kube.js';
import { annotate, key, lbSeed, lbsNamed, readService, requireBuiltBinary, serverName, warningsOf, useLbWorld } from '../support/lb-scenarios.js';
import { buildProjectImage, nodeLogDir, realNodeSupport, startControllers, startNode, stopControllers, stopNode, type NodeImage } from '../support/real-node.js';
import { awaitSteady } from '../support/strict-world.js';

const APPROVE = LB_ANNOTATIONS.approveChange.key;
const ANNOUNCED = LB_ANNOTATIONS.announcedChanges.key;

const unsupported = realNodeSupport();
if (unsupported !== undefined) console.warn(`budget-cronjob-e2e.test.ts is skipped: ${unsupported}`);
const FIELD_MANAGER = 'cloudscale-ccm-budget-cronjob-e2e';
/** The server of the kubelet's Node; useLbWorld makes the Nodes of the servers before it. */
const KUBELET_SERVER = 3;

const batch = () => testConnection().config.makeApiClient(BatchV1Api);
const core = () => testConnection().core;

/** The container args of the CronJob in the manifests `cloudscale-ccm manifests ARGS` prints. */
async function cronJobArgs(args: readonly string[]): Promise<string[]> {
  const rendered = await runBinary(['manifests', ...args]);
  expect(rendered.code, rendered.stderr).toBe(0);
  const cronJob = parseAllDocuments(rendered.stdout)
    .map((document) => document.toJS() as { kind?: string })
    .find((object) => object.kind === 'CronJob') as V1CronJob;
  return cronJob.spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!;
}

/** lbSeed's servers, the last one (the kubelet's) with the public address 127.0.0.1. */
function kubeletSeed(prefix: string): SimSeed {
  const seed = lbSeed(prefix, KUBELET_SERVER);
  const kubeletServer = serverName(prefix, KUBELET_SERVER);
  return {
    ...seed,
    servers: seed.servers!.map((server) =>
      server.name !== kubeletServer
        ? server
        : { ...server, interfaces: server.interfaces!.map((i) => (i.type === 'public' ? { ...i, addresses: ['127.0.0.1'] } : i)) },
    ),
  };
}

describe.skipIf(unsupported !== undefined)("the CronJob's default budget, end to end: its Jobs on a real kubelet, plan and apply from a terminal", () => {
  let dir: string;
  /** The applied CronJob's container args: `run --wait` and the budget flags. */
  let jobArgs: string[];
  /** The budget flags alone, for plan (it takes no --wait). */
  let budgetArgs: string[];
  const namespace = uniqueName('budget-e2e');
  const prefix = uniqueName('be');
  const kubeletNode = serverName(prefix, KUBELET_SERVER);
  const { harness } = useLbWorld({ prefix, namespace, seed: kubeletSeed(prefix), nodes: KUBELET_SERVER - 1 });
  let image: (NodeImage & { remove(): void }) | undefined;
  let controllersStarted = false;
  let nodeStarted = false;
  const applied: KubernetesObject[] = [];
  let jobs = 0;

  beforeAll(async () => {
    requireBuiltBinary();
    dir = await mkdtemp(join(tmpdir(), 'ccm-budget-e2e-'));
    image = buildProjectImage();
    await startControllers(CRONJOB_CONTROLLERS);
    controllersStarted = true;
    await startNode(kubeletNode, { images: [image] });
    nodeStarted = true;
    await markControlPlane(kubeletNode);
    await createTokenSecret(TEST_TOKEN);
    applied.push(...(await applyManifests({ apiUrl: harness.sim.url, args: ['--watch-for', '0s'], fieldManager: FIELD_MANAGER, suspend: true })));

    // The Job's arguments are the defaults'; only the watch is turned off (--watch-for 0s) so
    // that each Job is one pass: the budget flags are the defaults'.
    const defaults = await cronJobArgs([]);
    expect(defaults).toContain('--max-downtime');
    const cronJob = await batch().readNamespacedCronJob({ namespace: CCM_NAMESPACE, name: CCM_NAME });
    expect(cronJob.spec?.suspend).toBe(true);
    jobArgs = cronJob.spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!;
    const watch = defaults.indexOf('--watch-for');
    expect(jobArgs).toEqual(watch === -1 ? defaults : [...defaults.slice(0, watch), ...defaults.slice(watch + 2)]);
    expect(jobArgs.slice(0, 2)).toEqual(['run', '--wait']);
    budgetArgs = jobArgs.slice(2);
  }, 300_000);

  afterAll(async () => {
    if (nodeStarted) await stopNode();
    if (controllersStarted) await stopControllers();
    await deleteDeployment(applied);
    await ignoreNotFound(core().deleteNode({ name: kubeletNode }));
    image?.remove();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }, 180_000);

  /** The operator's terminal: the built CLI with the admin kubeconfig and the harness's cluster id. */
  const cli = (args: readonly string[]): Promise<BinaryResult> => runBinary(['--cluster-id', harness.clusterId, ...args], { apiUrl: harness.sim.url });
  /**
   * One Job of the CronJob (`kubectl create job --from=cronjob/cloudscale-ccm`; its arguments,
   * the harness's --cluster-id, then `extra`), on the kubelet: completes; its Pod's logs.
   */
  async function job(extra: readonly string[] = []): Promise<string> {
    jobs += 1;
    const name = `${prefix}-job-${jobs}`;
    const created = await createJobFromCronJob(name, (spec) => {
      const container = spec.template.spec!.containers[0]!;
      // In the cluster the pass's default cluster id is the uid of kube-system; the terminal's
      // plan and apply use the harness's (see the header).
      container.args = [...container.args!, '--cluster-id', harness.clusterId, ...extra];
    });
    const ended = await waitForEnd(created);
    const [pod] = await podsOfJob(created);
    const logs = pod === undefined ? '(no pod)' : await logsOf(pod);
    expect(endedAs(ended, 'Complete'), `job ${name} did not complete: ${JSON.stringify(ended.status?.conditions)}\n${logs}\n(node logs in ${nodeLogDir()})`).toBeDefined();
    expect(pod?.spec?.nodeName).toBe(kubeletNode);
    expect(pod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    return logs;
  }
  async function algorithmServing(name: string): Promise<string | undefined> {
    const service = await readService(namespace, name);
    const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
    const listener = (await harness.cloud.listeners.list()).find((l) => l.load_balancer.uuid === lb!.uuid && l.protocol_port === 80);
    return (await harness.cloud.pools.list()).find((p) => p.uuid === listener?.pool?.uuid)?.algorithm;
  }
  const heldId = (out: string, name: string) => new RegExp(`held: service/${namespace}/${name} change ([0-9a-f]{10})`).exec(out)?.[1];
  const writesSince = (count: number) => harness.sim.admin.requests().slice(count).filter((r) => r.method !== 'GET');
  /** `plan service/NAME --out FILE` with the Job's budget flags (then `extra`): the id of the change it shows held back. */
  async function savePlan(name: string, file: string, extra: readonly string[] = []): Promise<string | undefined> {
    const saved = await cli(['plan', `service/${name}`, '-n', namespace, ...budgetArgs, ...extra, '--out', file]);
    expect(saved.code, saved.stderr).toBe(0);
    const id = /held back: change ([0-9a-f]{10})/.exec(saved.stdout)?.[1];
    expect(id, saved.stdout).toBeDefined();
    return id;
  }
  /** `apply FILE` of a stale plan: exit 1 naming what changed, nothing written to the cloud or the Services. */
  async function expectStale(file: string, changed: RegExp): Promise<void> {
    const before = harness.sim.admin.requests().length;
    const versions = await Promise.all(['reviewed', 'approved'].map(async (name) => (await readService(namespace, name)).metadata!.resourceVersion));
    const stale = await cli(['apply', file]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/is stale: .*nothing was applied/);
    expect(stale.stderr).toMatch(changed);
    expect(writesSince(before)).toEqual([]);
    expect(await Promise.all(['reviewed', 'approved'].map(async (name) => (await readService(namespace, name)).metadata!.resourceVersion))).toEqual(versions);
  }

  it('holds a pool swap with one Warning Event, applies it only through apply FILE or the approval, and never applies a stale plan', { timeout: 420_000 }, async () => {
    await createLoadBalancerService(namespace, 'reviewed');
    await createLoadBalancerService(namespace, 'approved');
    await job();
    expect(await algorithmServing('reviewed')).toBe('round_robin');

    // The same disruptive change on both Services. A plan saved before the next Job is stale
    // after it: the Job builds the successor pool of the held swap (it serves no port yet).
    for (const name of ['reviewed', 'approved']) await annotate(namespace, name, { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    const early = join(dir, 'early.plan.json');
    const plannedId = await savePlan('approved', early);

    // Two Jobs hold both changes: they complete, nothing swapped, one ChangeHeld per Service, ids differ (the UID is hashed).
    const first = await job();
    const ids = { reviewed: heldId(first, 'reviewed'), approved: heldId(first, 'approved') };
    expect(ids.reviewed).toBeDefined();
    expect(ids.approved).toBeDefined();
    expect(ids.reviewed).not.toBe(ids.approved);
    // plan shows the id the Job holds the change under, though the Job built the successor pool since.
    expect(ids.approved).toBe(plannedId);
    // Saved while the successor's members may still be checked: their monitor status moves in the
    // strict world, and a reviewed plan must not go stale for that (health is not fingerprinted).
    const reviewedPlan = join(dir, 'reviewed.plan.json');
    expect(await savePlan('reviewed', reviewedPlan)).toBe(ids.reviewed);
    const second = await job();
    expect(heldId(second, 'reviewed')).toBe(ids.reviewed);
    expect(second).toContain('2 changes held back');
    for (const name of ['reviewed', 'approved'] as const) {
      expect(await algorithmServing(name)).toBe('round_robin');
      const held = (await warningsOf(await readService(namespace, name))).filter((e) => e.reason === 'ChangeHeld');
      expect(held.map((e) => e.message)).toEqual([expect.stringContaining(`Held back change ${ids[name]}`)]);
    }
    await expectStale(early, /pool tcp\/http .* appeared/);

    // apply FILE of the plan saved after the Job held the change: applied.
    const applied = await cli(['apply', reviewedPlan]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await algorithmServing('reviewed')).toBe('least_connections');
    expect(await algorithmServing('approved')).toBe('round_robin');

    // The approval annotation with the id the Job printed: the next Job applies that change; a
    // plan of it saved before is stale now.
    const approvedPlan = join(dir, 'approved.plan.json');
    await savePlan('approved', approvedPlan);
    // The command the Event and the Job's output give, run as written.
    const command = new RegExp(`kubectl annotate service -n ${namespace} approved --overwrite ${APPROVE}=${ids.approved}(?= )`).exec(first)?.[0];
    expect(command, first).toBeDefined();
    const held = (await warningsOf(await readService(namespace, 'approved'))).find((e) => e.reason === 'ChangeHeld');
    expect(held?.message).toContain(command);
    execFileSync('kubectl', command!.split(' ').slice(1), { env: { ...process.env, KUBECONFIG: testKubeconfig() }, stdio: 'pipe' });
    expect((await readService(namespace, 'approved')).metadata!.annotations![APPROVE]).toBe(ids.approved);
    const third = await job();
    expect(heldId(third, 'approved')).toBeUndefined();
    expect(await algorithmServing('approved')).toBe('least_connections');
    await expectStale(approvedPlan, /is stale/);

    // Nothing pending: the next Job holds nothing and clears the records; no second ChangeHeld.
    const last = await job();
    expect(last).not.toContain('held');
    for (const name of ['reviewed', 'approved'] as const) {
      const service = await readService(namespace, name);
      expect(service.metadata!.annotations?.[ANNOUNCED]).toBeUndefined();
      expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toHaveLength(1);
    }
  });

  it("a plan saved right after the edit is not made stale by the Job's record of its announcement (the members of a selector that matches no Node: the Job writes nothing else)", { timeout: 300_000 }, async () => {
    // Every other change held under the Job's defaults makes the Job write (a pool swap builds its
    // successor pool; a removed port leaves at once), and with their drain period the members of a
    // pool no Node is left for keep serving, held by nothing. Without a drain period their removal
    // leaves the port serving nothing: held under 0s, and the Job writes only its record.
    const drainless = ['--drain-seconds', '0'];
    const service = await createLoadBalancerService(namespace, 'unselected');
    await job(drainless);
    // The members' health is in the plan's fingerprint: the plan is made once they are judged.
    await awaitSteady(harness, service);
    await annotate(namespace, 'unselected', { [key('loadbalancer-node-selector')]: 'role=none' });
    const file = join(dir, 'unselected.plan.json');
    const plannedId = await savePlan('unselected', file, drainless);

    const before = harness.sim.admin.requests().length;
    const held = await job(drainless);
    const id = heldId(held, 'unselected');
    expect(id).toBe(plannedId);
    expect(writesSince(before)).toEqual([]);
    expect((await readService(namespace, 'unselected')).metadata!.annotations![ANNOUNCED]).toBe(id);

    const applied = await cli(['apply', file]);
    expect(applied.code, applied.stderr).toBe(0);
    const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
    const pools = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb!.uuid);
    expect(pools).toHaveLength(1);
    expect(await harness.cloud.poolMembers.list(pools[0]!.uuid)).toEqual([]);
  });
});
