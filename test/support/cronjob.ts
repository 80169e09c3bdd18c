// The CronJob of `cloudscale-ccm manifests` in a test's cluster, on a real node
// (test/support/real-node.ts): deployed as an operator deploys it, and its Jobs, Pods and logs as
// kubectl shows them. For the files that run the CronJob's Jobs for real (cronjob-e2e,
// budget-cronjob-e2e).
import { BatchV1Api, KubernetesObjectApi, PatchStrategy, setHeaderOptions, type KubernetesObject, type V1CronJob, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { CCM_NAME, CCM_NAMESPACE, TOKEN_SECRET_KEY, TOKEN_SECRET_NAME } from '../../src/core/deploy/manifests.js';
import { runBinary } from './ccm.js';
import { ignoreNotFound, statusOf, testConnection, waitUntil } from './kube.js';

/** What kube-controller-manager must run for a CronJob's Pods (kube-root-ca.crt: a projected token's CA). */
export const CRONJOB_CONTROLLERS = ['cronjob-controller', 'job-controller', 'garbage-collector-controller', 'root-ca-certificate-publisher-controller'];
export const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';
const SELECTOR = `app.kubernetes.io/name=${CCM_NAME}`;

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const batch = () => testConnection().config.makeApiClient(BatchV1Api);
const objects = () => KubernetesObjectApi.makeApiClient(testConnection().config);
const core = () => testConnection().core;

/** kubeadm's control plane: its label and taint, set with the admin's rights (NodeRestriction keeps a kubelet from it). */
export async function markControlPlane(nodeName: string): Promise<void> {
  const registered = await core().readNode({ name: nodeName });
  await core().patchNode(
    {
      name: nodeName,
      body: {
        metadata: { labels: { [CONTROL_PLANE_LABEL]: '' } },
        spec: { taints: [...(registered.spec?.taints ?? []), { key: CONTROL_PLANE_LABEL, effect: 'NoSchedule' }] },
      },
    },
    mergePatch(),
  );
}

/** `kubectl -n kube-system create secret generic cloudscale --from-literal=access-token=TOKEN`. */
export async function createTokenSecret(token: string): Promise<void> {
  const body = { metadata: { name: TOKEN_SECRET_NAME, namespace: CCM_NAMESPACE }, stringData: { [TOKEN_SECRET_KEY]: token } };
  try {
    await core().createNamespacedSecret({ namespace: CCM_NAMESPACE, body });
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
    await core().replaceNamespacedSecret({ namespace: CCM_NAMESPACE, name: TOKEN_SECRET_NAME, body });
  }
}

/**
 * `cloudscale-ccm manifests --api-server-host … ARGS -o json | kubectl apply --server-side -f -`,
 * with the simulator's URL in the CronJob's container (as a kustomize patch would add it) and,
 * with `suspend`, the CronJob applied suspended. Returns the applied objects, for `deleteDeployment`.
 */
export async function applyManifests(options: { apiUrl: string; args: readonly string[]; fieldManager: string; suspend?: boolean }): Promise<KubernetesObject[]> {
  const apiServer = new URL(testConnection().config.getCurrentCluster()!.server);
  const printed = await runBinary(['manifests', '--api-server-host', apiServer.hostname, '--api-server-port', apiServer.port, ...options.args, '-o', 'json']);
  expect(printed.code, printed.stderr).toBe(0);
  const applied: KubernetesObject[] = [];
  for (const object of (JSON.parse(printed.stdout) as { items: KubernetesObject[] }).items) {
    if (object.kind === 'CronJob') {
      const cronJob = object as unknown as V1CronJob;
      if (options.suspend === true) cronJob.spec!.suspend = true;
      const container = cronJob.spec!.jobTemplate.spec!.template.spec!.containers[0]!;
      container.env = [...(container.env ?? []), { name: 'CLOUDSCALE_API_URL', value: options.apiUrl }];
    }
    await objects().patch(object, undefined, undefined, options.fieldManager, true, PatchStrategy.ServerSideApply);
    applied.push(object);
  }
  return applied;
}

export async function podsOfJob(job: V1Job): Promise<V1Pod[]> {
  const selector = `batch.kubernetes.io/job-name=${job.metadata!.name!}`;
  return (await core().listNamespacedPod({ namespace: CCM_NAMESPACE, labelSelector: selector })).items;
}

/** Until the Job has a Complete or Failed condition; the Job as it ended. */
export async function waitForEnd(job: V1Job, timeoutMs = 150_000): Promise<V1Job> {
  const name = job.metadata!.name!;
  let current: V1Job | undefined;
  await waitUntil(
    `job ${name} ended`,
    async () => {
      current = await batch().readNamespacedJob({ namespace: CCM_NAMESPACE, name });
      return (current.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    },
    timeoutMs,
  );
  return current!;
}

export const endedAs = (job: V1Job, type: 'Complete' | 'Failed') => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** `kubectl -n kube-system logs POD`: through the API server, from the kubelet; printed too. */
export async function logsOf(pod: V1Pod): Promise<string> {
  const logs = await core().readNamespacedPodLog({ namespace: CCM_NAMESPACE, name: pod.metadata!.name! });
  console.log(`---- kubectl -n ${CCM_NAMESPACE} logs ${pod.metadata!.name!} ----\n${logs}`);
  return logs;
}

/** A Job of the CronJob's template, as `kubectl create job --from=cronjob/…` makes it, changed by `edit`. */
export async function createJobFromCronJob(name: string, edit: (spec: V1Job['spec'] & object) => void): Promise<V1Job> {
  const cronJob = await batch().readNamespacedCronJob({ namespace: CCM_NAMESPACE, name: CCM_NAME });
  const spec = structuredClone(cronJob.spec!.jobTemplate.spec!);
  edit(spec);
  return batch().createNamespacedJob({
    namespace: CCM_NAMESPACE,
    body: {
      metadata: {
        name,
        labels: cronJob.spec!.jobTemplate.metadata?.labels ?? {},
        annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: CCM_NAME, uid: cronJob.metadata!.uid!, controller: true }],
      },
      spec,
    },
  });
}

/**
 * Removes what the manifests, the controllers and the kubelet left: Jobs, Pods, the `applied`
 * objects, the token Secret and `secrets`. Run after the node and the controllers stopped.
 */
export async function deleteDeployment(applied: KubernetesObject[], secrets: readonly string[] = []): Promise<void> {
  for (const job of (await batch().listNamespacedJob({ namespace: CCM_NAMESPACE, labelSelector: SELECTOR })).items) {
    await ignoreNotFound(batch().deleteNamespacedJob({ namespace: CCM_NAMESPACE, name: job.metadata!.name!, propagationPolicy: 'Background' }));
  }
  // The kubelet is gone and the garbage collector too: the Pods go one by one, without the Job
  // tracking finalizer, at once.
  for (const pod of (await core().listNamespacedPod({ namespace: CCM_NAMESPACE, labelSelector: SELECTOR })).items) {
    const name = pod.metadata!.name!;
    await ignoreNotFound(core().patchNamespacedPod({ namespace: CCM_NAMESPACE, name, body: { metadata: { finalizers: null } } }, mergePatch()));
    await ignoreNotFound(core().deleteNamespacedPod({ namespace: CCM_NAMESPACE, name, gracePeriodSeconds: 0 }));
  }
  for (const object of applied.splice(0).reverse()) {
    await ignoreNotFound(objects().delete(object, undefined, undefined, undefined, undefined, 'Background'));
  }
  for (const name of [TOKEN_SECRET_NAME, ...secrets]) await ignoreNotFound(core().deleteNamespacedSecret({ namespace: CCM_NAMESPACE, name }));
}
