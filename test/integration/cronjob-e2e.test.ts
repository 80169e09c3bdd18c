// @test-tools: kube-controller-manager
// The CronJob of `cloudscale-ccm manifests`, end to end: kube-controller-manager's CronJob and
// Job controllers create the Job and its Pod from the applied manifests; the test plays the
// scheduler and the kubelet (test/support/kubelet.ts) and runs the Pod's container with the
// built CLI as the image would (deploy/Containerfile: entrypoint, env, workdir), with the Pod's
// env (the token from Secret kube-system/cloudscale), a ServiceAccount token from the
// TokenRequest API and the in-cluster configuration the tool reads in a Pod
// (/var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST/PORT). The pass must
// initialise the Nodes and converge the example Service; the Job then watches (`run --watch-for`,
// 20 s here to keep the test short) and initialises a Node that registers after its pass before
// it completes; the next scheduled run (a second pass that changes nothing) follows and
// completes too. The first Job starts at once (backdateLastSchedule), not up to a minute later.
//
// What differs from a real cluster, and why:
// - No kube-proxy: the `kubernetes` ClusterIP the kubelet puts into KUBERNETES_SERVICE_HOST
//   leads nowhere here. The manifests are therefore printed with --api-server-host/-port (what
//   docs/deploy.md says for clusters without kube-proxy); the container's env overrides the
//   kubelet's, exactly as in a cluster.
// - The cloud is the simulator: the one variable the Pod does not carry is CLOUDSCALE_API_URL.
// - The "container" is a process in a private mount namespace (needs root): its /run holds the
//   service account volume, the root filesystem is read-only, it runs as UID/GID 65532 without
//   capabilities. No image, no seccomp profile, no cgroup limits.
//
// kube-controller-manager runs only during this file, with the cronjob, job and root CA
// publisher controllers: other test files assume that no controller acts on their objects.
import {
  BatchV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Job,
  type V1Node,
  type V1Pod,
  type V1Service,
} from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { CCM_NAME, CCM_NAMESPACE, STATUS_CONFIGMAP_NAME, TOKEN_SECRET_KEY, TOKEN_SECRET_NAME } from '../../src/core/deploy/manifests.js';
import { parseSeed, startSimulator, type Simulator } from '../../src/sim/index.js';
import { nodesSeed, runBinary } from '../support/ccm.js';
import {
  createNode,
  deleteCreatedObjects,
  deleteServiceForced,
  ignoreNotFound,
  statusOf,
  testClusterDir,
  testConnection,
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
  waitUntil,
} from '../support/kube.js';
import {
  bindPod,
  containerSupport,
  imageFilesOf,
  imageFromContainerfile,
  runPod,
  schedulingProblems,
  type ContainerImage,
} from '../support/kubelet.js';
import { testSimWorld } from '../support/sim-world.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
/** Where the container sees the image's files (the repository); the sandbox mounts under /run. */
const IMAGE_MOUNT = '/run/app';
const clusterDir = testClusterDir() ?? '';
const unsupported =
  clusterDir === ''
    ? 'needs the cluster of this run (helpers/test-cluster), not TEST_KUBECONFIG: it adds a kube-controller-manager'
    : containerSupport();
if (unsupported !== undefined) console.warn(`cronjob-e2e.test.ts is skipped: ${unsupported}`);
const CONTROLLERS = ['cronjob-controller', 'job-controller', 'root-ca-certificate-publisher-controller'];
const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';
const TOKEN = 'cronjob-e2e-token-0123456789';
const SELECTOR = `app.kubernetes.io/name=${CCM_NAME}`;
const FIELD_MANAGER = 'cloudscale-ccm-cronjob-e2e';
/** The Job annotation that names the schedule time it was created for (CronJob controller). */
const SCHEDULED_AT = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

const prefix = uniqueName('cron');
const nodeNames = [1, 2, 3].map((i) => `${prefix}-${i}`);
/** A worker that registers while the first Job watches. */
const lateNode = `${prefix}-4`;
/** The manifests' default is 50 s; shorter here so that two Jobs fit the test's time. */
const WATCH_FOR = '20s';
const controlPlaneNode = nodeNames[0]!;
const exampleService = parse(readFileSync(join(repo, 'examples', 'hello-service.yaml'), 'utf8')) as V1Service;

let sim: Simulator | undefined;
let controllersStarted = false;
const applied: KubernetesObject[] = [];

function helper(...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(repo, 'helpers', 'test-cluster'), ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`helpers/test-cluster ${args.join(' ')} exited with ${code}`))));
  });
}

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const batch = () => testConnection().config.makeApiClient(BatchV1Api);
const objects = () => KubernetesObjectApi.makeApiClient(testConnection().config);

/** `cloudscale-ccm manifests … -o json | kubectl apply --server-side -f -`. */
async function applyManifests(apiServer: URL): Promise<void> {
  const printed = await runBinary(['manifests', '--api-server-host', apiServer.hostname, '--api-server-port', apiServer.port, '--watch-for', WATCH_FOR, '-o', 'json']);
  expect(printed.code, printed.stderr).toBe(0);
  const list = JSON.parse(printed.stdout) as { items: KubernetesObject[] };
  for (const object of list.items) {
    await objects().patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    applied.push(object);
  }
}

/** `kubectl -n kube-system create secret generic cloudscale --from-literal=access-token=…`. */
async function createTokenSecret(): Promise<void> {
  const body = { metadata: { name: TOKEN_SECRET_NAME, namespace: CCM_NAMESPACE }, stringData: { [TOKEN_SECRET_KEY]: TOKEN } };
  try {
    await testConnection().core.createNamespacedSecret({ namespace: CCM_NAMESPACE, body });
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
    await testConnection().core.replaceNamespacedSecret({ namespace: CCM_NAMESPACE, name: TOKEN_SECRET_NAME, body });
  }
}

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
 * run it then. The controller then owes the start of the current minute and creates its Job at
 * once (within startingDeadlineSeconds, 50 s; later in the minute it skips that start and the
 * next minute's follows) instead of after up to a minute's wait for the schedule, which is not
 * what this test is about. The next Job still comes from the schedule.
 */
async function backdateLastSchedule(): Promise<void> {
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const lastScheduleTime = new Date(minute - 60_000).toISOString().replace('.000Z', 'Z');
  await batch().patchNamespacedCronJobStatus(
    { namespace: CCM_NAMESPACE, name: CCM_NAME, body: { status: { lastScheduleTime } } },
    mergePatch(),
  );
}

/** Waits for a Job the CronJob controller creates for a time after `after` (any, if undefined). */
async function waitForJob(what: string, after?: Date): Promise<V1Job> {
  let found: V1Job | undefined;
  await waitUntil(
    what,
    async () => {
      found = (await jobsOfCronJob()).find((job) => after === undefined || scheduledTime(job) > after);
      return found !== undefined;
    },
    // A schedule of every minute: the next start is at most 60 s away, or 120 s when a pass
    // still ran at the next minute (concurrencyPolicy: Forbid skips that start).
    150_000,
  );
  return found!;
}

async function podOfJob(job: V1Job): Promise<V1Pod> {
  const selector = `batch.kubernetes.io/job-name=${job.metadata!.name!}`;
  let pod: V1Pod | undefined;
  await waitUntil(`the pod of job ${job.metadata!.name!}`, async () => {
    pod = (await testConnection().core.listNamespacedPod({ namespace: CCM_NAMESPACE, labelSelector: selector })).items[0];
    return pod !== undefined;
  });
  return pod!;
}

async function waitForCompletion(job: V1Job): Promise<V1Job> {
  const name = job.metadata!.name!;
  let current: V1Job | undefined;
  await waitUntil(`job ${name} complete`, async () => {
    current = await batch().readNamespacedJob({ namespace: CCM_NAMESPACE, name });
    return (current.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  });
  const failed = current!.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  expect(failed, `job ${name} failed: ${failed?.reason}: ${failed?.message}`).toBeUndefined();
  return current!;
}

/** Schedules the Job's Pod onto the control-plane Node and runs it; prints its logs. */
async function schedulePodAndRun(job: V1Job, image: ContainerImage, nodes: V1Node[]): Promise<{ exitCode: number; logs: string }> {
  const core = testConnection().core;
  const pod = await podOfJob(job);
  const [controlPlane, ...workers] = nodes;
  expect(schedulingProblems(pod, controlPlane!)).toEqual([]);
  for (const worker of workers) {
    expect(schedulingProblems(pod, worker)).toContain('no term of the required node affinity matches the node labels');
  }
  await bindPod(core, pod, controlPlane!.metadata!.name!);
  const bound = await core.readNamespacedPod({ namespace: CCM_NAMESPACE, name: pod.metadata!.name! });
  const files = imageFilesOf(repo.replace(/\/$/, ''));
  const result = await runPod(core, bound, image, {
    extraEnv: { CLOUDSCALE_API_URL: sim!.url },
    imageFiles: { source: files.source, mountPath: IMAGE_MOUNT },
  }).finally(() => files.remove());
  console.log(`---- logs of pod ${CCM_NAMESPACE}/${pod.metadata!.name!} (exit code ${result.exitCode}) ----\n${result.logs}`);
  expect(result.env.CLOUDSCALE_API_TOKEN).toBe(TOKEN);
  return result;
}

describe.skipIf(unsupported !== undefined)('the CronJob of `cloudscale-ccm manifests` in a cluster', () => {
  beforeAll(async () => {
    sim = await startSimulator({
      seed: parseSeed(nodesSeed({ prefix, count: 4, privateNet: '10.77.0', publicNet: '192.0.2' }), 'cronjob-e2e seed'),
      token: TOKEN,
      lbProvisionMs: 0,
      ...testSimWorld(),
    });
    // As kubelets with --cloud-provider=external register: uninitialized; kubeadm's control plane.
    for (const name of nodeNames) {
      const controlPlane = name === controlPlaneNode;
      await createNode(name, {
        labels: { 'kubernetes.io/hostname': name, ...(controlPlane ? { [CONTROL_PLANE_LABEL]: '' } : {}) },
        taints: [
          { key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' },
          ...(controlPlane ? [{ key: CONTROL_PLANE_LABEL, effect: 'NoSchedule' }] : []),
        ],
        ready: true,
      });
    }
    await testConnection().core.createNamespacedService({ namespace: exampleService.metadata!.namespace!, body: exampleService });
    await createTokenSecret();
    await applyManifests(new URL(testConnection().config.getCurrentCluster()!.server));
    await helper('start-controllers', clusterDir, CONTROLLERS.join(','));
    controllersStarted = true;
  });

  afterAll(async () => {
    if (controllersStarted) await helper('stop-controllers', clusterDir);
    await deleteDeployment();
    await deleteServiceForced(exampleService.metadata!.namespace!, exampleService.metadata!.name!);
    await deleteCreatedObjects();
    await sim?.stop();
  });

  test('the CronJob runs `cloudscale-ccm run` in a Pod: Nodes initialised, example Service converged, Job complete, next run on schedule', { timeout: 300_000 }, async () => {
    const core = testConnection().core;
    // The repository stands in for the image's /app, mounted where the container sees it, so
    // the container's user reaches it wherever the clone lies (a private temporary directory too).
    const local = repo.replace(/\/$/, '');
    const node = process.execPath.startsWith(`${local}/`) ? IMAGE_MOUNT + process.execPath.slice(local.length) : process.execPath;
    const image = imageFromContainerfile(join(repo, 'deploy', 'Containerfile'), '/app', IMAGE_MOUNT, node);
    const nodes = await Promise.all(nodeNames.map((name) => core.readNode({ name })));

    // The root CA publisher writes the ca.crt of the Pod's service account volume.
    await waitUntil('configmap kube-system/kube-root-ca.crt', async () =>
      (await ignoreNotFound(core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: 'kube-root-ca.crt' }))) !== undefined,
    );

    await backdateLastSchedule();
    const first = await waitForJob('the first job of the cronjob');
    const pod = await podOfJob(first);
    const container = pod.spec!.containers[0]!;
    expect(container.args?.slice(0, 3)).toEqual(['run', '--watch-for', WATCH_FOR]);
    // The ServiceAccount admission plugin mounted the in-cluster configuration.
    expect(container.volumeMounts?.map((m) => m.mountPath)).toContain('/var/run/secrets/kubernetes.io/serviceaccount');

    let podEnded = false;
    const running = schedulePodAndRun(first, image, nodes).finally(() => (podEnded = true));
    // Once the pass has converged the Service, a worker registers: the watching Job initialises
    // it before it ends, without waiting for the next Job.
    await waitUntil('the example Service converged by the first pass', async () => {
      const converged = await core.readNamespacedService({ namespace: exampleService.metadata!.namespace!, name: exampleService.metadata!.name! });
      return (converged.status?.loadBalancer?.ingress ?? []).length > 0 || podEnded;
    });
    await createNode(lateNode, { labels: { 'kubernetes.io/hostname': lateNode }, taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }], ready: true });
    await waitUntil(`node ${lateNode} initialised`, async () => {
      const late = await core.readNode({ name: lateNode });
      return !(late.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY) || podEnded;
    });
    expect(podEnded, 'the Job ended before the new Node was initialised').toBe(false);
    const pass = await running;
    expect(pass.exitCode, pass.logs).toBe(0);
    expect(pass.logs).toMatch(new RegExp(`^watch: node/${lateNode}: 1 node initialized`, 'm'));
    expect(pass.logs).toMatch(/nodes 3 initialized, 0 refreshed, 0 deleted; load balancers 1 created/);
    // The Job's pass recorded itself, as the ServiceAccount, in the ConfigMap the manifests created.
    expect(pass.logs).not.toContain('warning: the status record');
    const status = await core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME });
    expect(JSON.parse(status.data?.run ?? '{}')).toMatchObject({ command: 'run', result: 'succeeded', holder: expect.stringContaining('/run/') });

    for (const name of nodeNames) {
      const node = await core.readNode({ name });
      expect(node.spec?.providerID, name).toMatch(/^cloudscale:\/\/[0-9a-f-]{36}$/);
      expect(node.spec?.taints?.map((t) => t.key) ?? [], name).not.toContain(UNINITIALIZED_TAINT_KEY);
    }
    const service = await core.readNamespacedService({ namespace: exampleService.metadata!.namespace!, name: exampleService.metadata!.name! });
    const ingress = service.status?.loadBalancer?.ingress ?? [];
    expect(ingress.length).toBeGreaterThan(0);
    const answer = await fetch(`${sim!.url}/v1/load-balancers`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const loadBalancers = (await answer.json()) as { status: string; vip_addresses: { address: string }[] }[];
    expect(loadBalancers.map((lb) => lb.status)).toEqual(['running']);
    expect(ingress.map((entry) => entry.ip)).toEqual(loadBalancers[0]!.vip_addresses.map((vip) => vip.address));

    const completed = await waitForCompletion(first);
    expect(completed.status?.succeeded).toBe(1);
    const cronJob = await batch().readNamespacedCronJob({ namespace: CCM_NAMESPACE, name: CCM_NAME });
    const scheduledAt = scheduledTime(first);
    expect(cronJob.spec?.schedule).toBe('* * * * *');
    const next = new Date(scheduledAt.getTime() + 60_000);
    console.log(
      `job ${CCM_NAMESPACE}/${first.metadata!.name!} (scheduled ${scheduledAt.toISOString()}) complete at ` +
        `${completed.status?.completionTime?.toISOString()}, succeeded ${completed.status?.succeeded}; ` +
        `cronjob last schedule ${cronJob.status?.lastScheduleTime?.toISOString()}, next schedule ${next.toISOString()}`,
    );

    // The next run: created for the next minute, and a pass that finds nothing to do.
    const second = await waitForJob(`the job scheduled after ${scheduledAt.toISOString()}`, scheduledAt);
    expect(scheduledTime(second).getTime() - scheduledAt.getTime()).toBeOneOf([60_000, 120_000]);
    const again = await schedulePodAndRun(second, image, nodes);
    expect(again.exitCode, again.logs).toBe(0);
    expect(again.logs).toMatch(/nodes 0 initialized, 0 refreshed, 0 deleted; load balancers 0 created, 0 updated, 0 deleted/);
    const secondCompleted = await waitForCompletion(second);
    console.log(
      `job ${CCM_NAMESPACE}/${second.metadata!.name!} (scheduled ${scheduledTime(second).toISOString()}) complete at ` +
        `${secondCompleted.status?.completionTime?.toISOString()}`,
    );
    // successfulJobsHistoryLimit: 1 — the controller removes the first Job.
    await waitUntil(`job ${first.metadata!.name!} removed by the history limit`, async () =>
      (await jobsOfCronJob()).every((job) => job.metadata?.name !== first.metadata!.name),
    );
  });
});

/** Removes what the manifests, the controllers and the test kubelet left: Pods, Jobs, CronJob, RBAC, Secret. */
async function deleteDeployment(): Promise<void> {
  const core = testConnection().core;
  // No garbage collector runs: dependents go one by one, Pods without the Job tracking finalizer.
  for (const pod of (await core.listNamespacedPod({ namespace: CCM_NAMESPACE, labelSelector: SELECTOR })).items) {
    const name = pod.metadata!.name!;
    await ignoreNotFound(
      core.patchNamespacedPod({ namespace: CCM_NAMESPACE, name, body: { metadata: { finalizers: null } } }, mergePatch()),
    );
    await ignoreNotFound(core.deleteNamespacedPod({ namespace: CCM_NAMESPACE, name, gracePeriodSeconds: 0 }));
  }
  for (const job of (await batch().listNamespacedJob({ namespace: CCM_NAMESPACE, labelSelector: SELECTOR })).items) {
    await ignoreNotFound(batch().deleteNamespacedJob({ namespace: CCM_NAMESPACE, name: job.metadata!.name!, propagationPolicy: 'Background' }));
  }
  for (const object of applied.splice(0).reverse()) {
    await ignoreNotFound(objects().delete(object, undefined, undefined, undefined, undefined, 'Background'));
  }
  await ignoreNotFound(core.deleteNamespacedSecret({ namespace: CCM_NAMESPACE, name: TOKEN_SECRET_NAME }));
}
