// @test-tools: node
// The CronJob of `cloudscale-ccm manifests`, end to end on real parts (docs/real-node.md):
// kube-controller-manager's CronJob and Job controllers make the Job and its Pod, kube-scheduler
// places the Pod, and a real kubelet on containerd + runc runs the project's image (npm run image,
// imported into containerd) with the manifests' security settings (UID 65532, read-only root
// filesystem, seccomp RuntimeDefault, no capabilities), the token from Secret
// kube-system/cloudscale and a projected ServiceAccount token. The kubelet registers the control
// plane's Node itself (--cloud-provider=external: tainted uninitialized, NotReady, no addresses);
// the other Nodes are hand-made. The Job's pass must initialise them all, the kubelet's own
// included, and converge the example Service; it then watches (`run --watch-for`, 20 s here)
// and initialises a Node that registers meanwhile; the next scheduled Job (a pass that changes
// nothing) follows. `kubectl logs` of each Pod is read through the API server and the kubelet.
// Then the ways an image fails in its Pod, each visible in the Job's status and its logs: a user
// the kubelet refuses (root under runAsNonRoot), a token file the user cannot read, a write to
// the read-only root.
//
// What differs from a real cluster, and why:
// - No kube-proxy: the `kubernetes` ClusterIP leads nowhere here. The manifests are printed with
//   --api-server-host/-port (what docs/deploy.md says for clusters without kube-proxy).
// - The cloud is the simulator: the CronJob's container gets CLOUDSCALE_API_URL (as a kustomize
//   patch would add it).
// - The kubelet's server has the public address 127.0.0.1: where the API server reaches it.
//
// kube-controller-manager runs only during this file (other files assume no controller acts on
// their objects): the cronjob, job, garbage collector and root CA publisher controllers.
import { BatchV1Api, PatchStrategy, setHeaderOptions, type KubernetesObject, type V1Job, type V1Pod, type V1Service } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { CCM_NAME, CCM_NAMESPACE, STATUS_CONFIGMAP_NAME } from '../../src/core/deploy/manifests.js';
import { startSimulator, type SimSeed, type Simulator } from '../../src/sim/index.js';
import { applyManifests, CONTROL_PLANE_LABEL, createJobFromCronJob, createTokenSecret, CRONJOB_CONTROLLERS, deleteDeployment, endedAs, logsOf, markControlPlane, podsOfJob, waitForEnd } from '../support/cronjob.js';
import { createNode, deleteCreatedObjects, deleteServiceForced, ignoreNotFound, testConnection, uniqueName, UNINITIALIZED_TAINT_KEY, waitUntil } from '../support/kube.js';
import { buildProjectImage, nodeLogDir, realNodeSupport, startControllers, startNode, stopControllers, stopNode, type NodeImage } from '../support/real-node.js';
import { testSimWorld } from '../support/sim-world.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const unsupported = realNodeSupport();
if (unsupported !== undefined) console.warn(`cronjob-e2e.test.ts is skipped: ${unsupported}`);
const TOKEN = 'cronjob-e2e-token-0123456789';
const SELECTOR = `app.kubernetes.io/name=${CCM_NAME}`;
const FIELD_MANAGER = 'cloudscale-ccm-cronjob-e2e';
/** The Job annotation that names the schedule time it was created for (CronJob controller). */
const SCHEDULED_AT = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

const prefix = uniqueName('cron');
const nodeNames = [1, 2, 3].map((i) => `${prefix}-${i}`);
/** The kubelet's Node: the control plane, where the CronJob's Pods run. */
const kubeletNode = nodeNames[0]!;
/** A worker that registers while the first Job watches. */
const lateNode = `${prefix}-4`;
/** The manifests' default is 50 s; shorter here so that two Jobs fit the test's time. */
const WATCH_FOR = '20s';
const exampleService = parse(readFileSync(join(repo, 'examples', 'hello-service.yaml'), 'utf8')) as V1Service;
const seed: SimSeed = {
  networks: [{ name: 'private', zone: 'rma1', subnets: [{ cidr: '10.77.0.0/24' }] }],
  servers: [1, 2, 3, 4].map((i) => ({
    name: `${prefix}-${i}`,
    flavor: 'flex-4-2',
    zone: 'rma1',
    interfaces: [
      // The kubelet's server: 127.0.0.1 is where the API server reaches the kubelet (kubectl logs).
      { type: 'public' as const, addresses: [i === 1 ? '127.0.0.1' : `192.0.2.${i}`] },
      { type: 'private' as const, network: 'private', addresses: [`10.77.0.${i}`] },
    ],
  })),
};

let sim: Simulator | undefined;
let image: (NodeImage & { remove(): void }) | undefined;
let controllersStarted = false;
let nodeStarted = false;
const applied: KubernetesObject[] = [];

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const batch = () => testConnection().config.makeApiClient(BatchV1Api);
const core = () => testConnection().core;

async function jobsOfCronJob(): Promise<V1Job[]> {
  const jobs = await batch().listNamespacedJob({ namespace: CCM_NAMESPACE, labelSelector: SELECTOR });
  return jobs.items.filter((job) => job.metadata?.ownerReferences?.some((o) => o.kind === 'CronJob' && o.name === CCM_NAME));
}

function scheduledTime(job: V1Job): Date {
  const stamp = job.metadata?.annotations?.[SCHEDULED_AT];
  if (stamp === undefined) throw new Error(`job ${job.metadata?.name} has no ${SCHEDULED_AT} annotation`);
  return new Date(stamp);
}

/**
 * Records the CronJob's last schedule a minute before the current one, as if the controller had
 * run it then: the controller owes the start of the current minute and creates its Job at once
 * (within startingDeadlineSeconds) instead of after up to a minute's wait.
 */
async function backdateLastSchedule(): Promise<void> {
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const lastScheduleTime = new Date(minute - 60_000).toISOString().replace('.000Z', 'Z');
  await batch().patchNamespacedCronJobStatus({ namespace: CCM_NAMESPACE, name: CCM_NAME, body: { status: { lastScheduleTime } } }, mergePatch());
}

/** Waits for a Job the CronJob controller creates for a time after `after` (any, if undefined). */
async function waitForJob(what: string, after?: Date): Promise<V1Job> {
  let found: V1Job | undefined;
  await waitUntil(
    what,
    async () => {
      found = (await jobsOfCronJob()).find((job) => job.metadata?.annotations?.[SCHEDULED_AT] !== undefined && (after === undefined || scheduledTime(job) > after));
      return found !== undefined;
    },
    // A schedule of every minute: the next start is at most 60 s away, or 120 s when a pass
    // still ran at the next minute (concurrencyPolicy: Forbid skips that start).
    150_000,
  );
  return found!;
}

async function podOfJob(job: V1Job): Promise<V1Pod> {
  let pod: V1Pod | undefined;
  await waitUntil(`the pod of job ${job.metadata!.name!}`, async () => (pod = (await podsOfJob(job))[0]) !== undefined);
  return pod!;
}

describe.skipIf(unsupported !== undefined)('the CronJob of `cloudscale-ccm manifests` on a real kubelet', () => {
  beforeAll(async () => {
    sim = await startSimulator({ seed, token: TOKEN, lbProvisionMs: 0, ...testSimWorld() });
    image = buildProjectImage();
    await startControllers(CRONJOB_CONTROLLERS);
    controllersStarted = true;
    await startNode(kubeletNode, { images: [image] });
    nodeStarted = true;
    await markControlPlane(kubeletNode);
    // The workers, as kubelets with --cloud-provider=external register them.
    for (const name of nodeNames.slice(1)) {
      await createNode(name, { labels: { 'kubernetes.io/hostname': name }, taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }], ready: true });
    }
    await core().createNamespacedService({ namespace: exampleService.metadata!.namespace!, body: exampleService });
    await createTokenSecret(TOKEN);
    applied.push(...(await applyManifests({ apiUrl: sim.url, args: ['--watch-for', WATCH_FOR], fieldManager: FIELD_MANAGER })));
  });

  afterAll(async () => {
    await ignoreNotFound(batch().patchNamespacedCronJob({ namespace: CCM_NAMESPACE, name: CCM_NAME, body: { spec: { suspend: true } } }, mergePatch()));
    if (nodeStarted) await stopNode();
    if (controllersStarted) await stopControllers();
    await deleteDeployment(applied, [`${prefix}-token`]);
    await ignoreNotFound(core().deleteNode({ name: kubeletNode }));
    await deleteServiceForced(exampleService.metadata!.namespace!, exampleService.metadata!.name!);
    await deleteCreatedObjects();
    await sim?.stop();
    image?.remove();
  });

  test('the scheduler places the Pod on the kubelet\'s uninitialised Node, the kubelet runs the image, its pass initialises every Node and converges the Service; a Job created meanwhile waits for the Lease; the next Job follows', { timeout: 360_000 }, async () => {
    const registered = await core().readNode({ name: kubeletNode });
    expect(registered.spec?.taints?.map((t) => t.key)).toEqual(expect.arrayContaining([UNINITIALIZED_TAINT_KEY, 'node.kubernetes.io/not-ready', CONTROL_PLANE_LABEL]));
    expect(registered.status?.conditions?.find((c) => c.type === 'Ready')?.status).not.toBe('True');

    await backdateLastSchedule();
    const first = await waitForJob('the first job of the cronjob');
    const pod = await podOfJob(first);
    expect(pod.spec!.containers[0]!.args?.slice(0, 4)).toEqual(['run', '--wait', '--watch-for', WATCH_FOR]);
    // kube-scheduler's choice, not the test's: the only Node the affinity and tolerations allow.
    await waitUntil('the pod scheduled', async () => (await core().readNamespacedPod({ namespace: CCM_NAMESPACE, name: pod.metadata!.name! })).spec?.nodeName !== undefined);
    expect((await core().readNamespacedPod({ namespace: CCM_NAMESPACE, name: pod.metadata!.name! })).spec?.nodeName).toBe(kubeletNode);

    // Once the pass has converged the Service, a worker registers: the watching Job initialises
    // it before it ends, without waiting for the next Job.
    await waitUntil(
      'the example Service converged by the first pass',
      async () => {
        const converged = await core().readNamespacedService({ namespace: exampleService.metadata!.namespace!, name: exampleService.metadata!.name! });
        return (converged.status?.loadBalancer?.ingress ?? []).length > 0;
      },
      120_000,
    );
    await createNode(lateNode, { labels: { 'kubernetes.io/hostname': lateNode }, taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }], ready: true });
    await waitUntil(`node ${lateNode} initialised`, async () => !((await core().readNode({ name: lateNode })).spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY));
    // `kubectl create job --from=cronjob/cloudscale-ccm now` while that Job still watches (and
    // holds the Lease): it waits for the Lease (run --wait) instead of failing, then completes.
    const manual = await createJobFromCronJob(`${prefix}-now`, () => undefined);
    expect((await batch().readNamespacedJob({ namespace: CCM_NAMESPACE, name: first.metadata!.name! })).status?.completionTime).toBeUndefined();

    const completed = await waitForEnd(first);
    expect(endedAs(completed, 'Complete'), `job failed: ${JSON.stringify(completed.status?.conditions)} (node logs in ${nodeLogDir()})`).toBeDefined();
    expect(completed.status?.succeeded).toBe(1);
    const [ran] = await podsOfJob(first);
    const terminated = ran!.status?.containerStatuses?.[0]?.state?.terminated;
    expect(terminated?.exitCode).toBe(0);
    // The kubelet ran the image containerd holds (its ID is the image's, not a name the test made up).
    expect(ran!.status?.containerStatuses?.[0]?.imageID).toMatch(/sha256:[0-9a-f]{64}/);
    const logs = await logsOf(ran!);
    expect(logs).toMatch(new RegExp(`^node/${kubeletNode} initialized: providerID cloudscale://`, 'm'));
    expect(logs).toMatch(/nodes 3 initialized, 0 refreshed, 0 deleted; load balancers 1 created/);
    expect(logs).toMatch(new RegExp(`^watch: node/${lateNode}: 1 node initialized`, 'm'));
    expect(logs).not.toContain('warning: the status record');
    const status = await core().readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME });
    expect(JSON.parse(status.data?.run ?? '{}')).toMatchObject({ command: 'run', result: 'succeeded' });

    // The kubelet's own Node, initialised by the Pod it runs: providerID, addresses, taint gone.
    const own = await core().readNode({ name: kubeletNode });
    expect(own.spec?.providerID).toMatch(/^cloudscale:\/\/[0-9a-f-]{36}$/);
    expect(own.status?.addresses).toEqual(expect.arrayContaining([{ type: 'ExternalIP', address: '127.0.0.1' }, { type: 'InternalIP', address: '10.77.0.1' }]));
    for (const name of [...nodeNames, lateNode]) {
      const node = await core().readNode({ name });
      expect(node.spec?.providerID, name).toMatch(/^cloudscale:\/\/[0-9a-f-]{36}$/);
      expect(node.spec?.taints?.map((t) => t.key) ?? [], name).not.toContain(UNINITIALIZED_TAINT_KEY);
    }
    const service = await core().readNamespacedService({ namespace: exampleService.metadata!.namespace!, name: exampleService.metadata!.name! });
    const answer = await fetch(`${sim!.url}/v1/load-balancers`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const loadBalancers = (await answer.json()) as { status: string; vip_addresses: { address: string }[] }[];
    expect(loadBalancers.map((lb) => lb.status)).toEqual(['running']);
    expect(service.status?.loadBalancer?.ingress?.map((entry) => entry.ip)).toEqual(loadBalancers[0]!.vip_addresses.map((vip) => vip.address));

    const manualEnded = await waitForEnd(manual);
    expect(endedAs(manualEnded, 'Complete'), JSON.stringify(manualEnded.status?.conditions)).toBeDefined();
    const manualLogs = await logsOf((await podsOfJob(manual))[0]!);
    expect(manualLogs).toMatch(/^waiting: lease kube-system\/cloudscale-ccm is held by "[^"]+\/run\//m);
    expect(manualLogs).toMatch(/^run: nodes 0 initialized, 0 refreshed, 0 deleted; load balancers 0 created/m);

    // The next run: created for the next minute, a pass that finds nothing to do.
    const scheduledAt = scheduledTime(first);
    const second = await waitForJob(`the job scheduled after ${scheduledAt.toISOString()}`, scheduledAt);
    expect(scheduledTime(second).getTime() - scheduledAt.getTime()).toBeOneOf([60_000, 120_000]);
    const secondEnded = await waitForEnd(second);
    expect(endedAs(secondEnded, 'Complete'), JSON.stringify(secondEnded.status?.conditions)).toBeDefined();
    expect(await logsOf((await podsOfJob(second))[0]!)).toMatch(/nodes 0 initialized, 0 refreshed, 0 deleted; load balancers 0 created, 0 updated, 0 deleted/);
    // successfulJobsHistoryLimit: 1 — the controller removes the first Job.
    await waitUntil(`job ${first.metadata!.name!} removed by the history limit`, async () => (await jobsOfCronJob()).every((job) => job.metadata?.name !== first.metadata!.name));
  });

  test('an image that fails in its Pod shows in the Job\'s status and its logs: a refused user, an unreadable token, a write to the read-only root', { timeout: 300_000 }, async () => {
    // No scheduled Job in the way: the CronJob suspended, its Jobs gone.
    await batch().patchNamespacedCronJob({ namespace: CCM_NAMESPACE, name: CCM_NAME, body: { spec: { suspend: true } } }, mergePatch());
    for (const job of await jobsOfCronJob()) await ignoreNotFound(batch().deleteNamespacedJob({ namespace: CCM_NAMESPACE, name: job.metadata!.name!, propagationPolicy: 'Foreground' }));
    await waitUntil('the jobs of the cronjob gone', async () => (await jobsOfCronJob()).length === 0, 120_000);

    // Root under runAsNonRoot: the kubelet refuses to create the container; the Job fails at its deadline.
    const root = await createJobFromCronJob(`${prefix}-root`, (spec) => {
      spec.activeDeadlineSeconds = 20;
      spec.template.spec!.securityContext = { ...spec.template.spec!.securityContext, runAsUser: 0 };
    });
    await waitUntil(
      'the container refused',
      async () => (await podsOfJob(root)).some((p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError'),
      60_000,
    );
    const refused = (await podsOfJob(root))[0]!;
    expect(refused.status!.containerStatuses![0]!.state!.waiting!.message).toMatch(/runAsUser breaks non-root policy/);
    const rootEnded = await waitForEnd(root, 90_000);
    expect(endedAs(rootEnded, 'Failed')?.reason).toBe('DeadlineExceeded');

    // A token file only root may read: the CLI says which file and why; exit 1, the Job fails.
    await core().createNamespacedSecret({ namespace: CCM_NAMESPACE, body: { metadata: { name: `${prefix}-token` }, stringData: { token: TOKEN } } });
    const unreadable = await createJobFromCronJob(`${prefix}-token`, (spec) => {
      const podSpec = spec.template.spec!;
      podSpec.volumes = [...(podSpec.volumes ?? []), { name: 'token', secret: { secretName: `${prefix}-token`, defaultMode: 0o400 } }];
      const container = podSpec.containers[0]!;
      container.volumeMounts = [...(container.volumeMounts ?? []), { name: 'token', mountPath: '/var/run/cloudscale', readOnly: true }];
      container.args = ['--token-file', '/var/run/cloudscale/token', ...container.args!];
    });
    const tokenEnded = await waitForEnd(unreadable, 90_000);
    expect(endedAs(tokenEnded, 'Failed')?.reason).toBe('BackoffLimitExceeded');
    const tokenPod = (await podsOfJob(unreadable))[0]!;
    expect(tokenPod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    expect(await logsOf(tokenPod)).toMatch(/^error: cannot read the token file \/var\/run\/cloudscale\/token: .*(EACCES|permission denied)/m);

    // A program of the image that writes to its read-only root: EROFS, exit 1, the Job fails.
    const readOnly = await createJobFromCronJob(`${prefix}-rofs`, (spec) => {
      const container = spec.template.spec!.containers[0]!;
      container.command = ['node', '-e', "require('node:fs').writeFileSync('/app/written-at-runtime', 'x')"];
      container.args = [];
    });
    const rofsEnded = await waitForEnd(readOnly, 90_000);
    expect(endedAs(rofsEnded, 'Failed')?.reason).toBe('BackoffLimitExceeded');
    const rofsPod = (await podsOfJob(readOnly))[0]!;
    expect(rofsPod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    expect(await logsOf(rofsPod)).toMatch(/EROFS: read-only file system, open '\/app\/written-at-runtime'/);

    // The tool itself writes nothing there unless told to; a metrics file it cannot write is a
    // warning (docs/metrics.md: the status record is the check), so this Job completes.
    const metrics = await createJobFromCronJob(`${prefix}-metrics`, (spec) => {
      const container = spec.template.spec!.containers[0]!;
      container.args = [...container.args!.filter((arg, i, all) => arg !== '--watch-for' && all[i - 1] !== '--watch-for'), '--metrics-file', '/metrics.prom'];
    });
    const metricsEnded = await waitForEnd(metrics, 90_000);
    expect(endedAs(metricsEnded, 'Complete'), JSON.stringify(metricsEnded.status?.conditions)).toBeDefined();
    expect(await logsOf((await podsOfJob(metrics))[0]!)).toMatch(/^warning: cannot write the metrics file \/metrics\.prom: .*EROFS/m);
  });
});
