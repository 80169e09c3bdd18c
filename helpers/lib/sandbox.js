// Populates the sandbox cluster the way a real one looks when its CCM is installed, and runs the
// CronJob once (helpers/run-in-test-cluster; docs/real-node.md):
//
//   node helpers/lib/sandbox.js prepare KUBECONFIG CLOUDSCALE_API_URL SERVICE_MANIFEST KUBELET_NODE
//       the Nodes of the other simulated servers, hand-made as kubelets with
//       --cloud-provider=external register them (tainted uninitialized, Ready: no kubelet runs
//       for them); the kubelet's own Node marked control plane as kubeadm marks it; the example
//       Service; the Secret with the API token; the manifests of `cloudscale-ccm manifests`
//       (the CronJob with the simulator's URL). Idempotent: what exists is left as it is, the
//       manifests are applied again.
//   node helpers/lib/sandbox.js job KUBECONFIG
//       `kubectl -n kube-system create job --from=cronjob/cloudscale-ccm`: waits until the Job
//       has ended and prints its Pod's logs (through the API server and the kubelet); exit 1
//       when it failed.
import {
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const NAMESPACE = 'kube-system';
const CRONJOB = 'cloudscale-ccm';
const UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';
const CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';
/** Waiting reasons the kubelet retries without end: the Pod will not start by itself. */
const STUCK = new Set(['CreateContainerError', 'CreateContainerConfigError', 'ErrImageNeverPull', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'RunContainerError']);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const [step, kubeconfig, ...rest] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const batch = kc.makeApiClient(BatchV1Api);

const status = (error) => error?.code ?? error?.statusCode ?? error?.response?.statusCode;
async function ignoreConflict(promise) {
  try {
    return await promise;
  } catch (error) {
    if (status(error) !== 409) throw error;
  }
}

if (step === 'prepare') await prepare(...rest);
else if (step === 'job') process.exitCode = await runJob();
else throw new Error(`usage: sandbox.js prepare|job KUBECONFIG …, got ${step}`);

async function prepare(apiUrl, manifest, kubeletNode) {
  const token = process.env.CLOUDSCALE_API_TOKEN;
  const response = await fetch(`${apiUrl}/v1/servers`, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET ${apiUrl}/v1/servers answered ${response.status}`);
  const servers = await response.json();
  if (!servers.some((server) => server.name === kubeletNode)) {
    throw new Error(`the simulator has no server named ${kubeletNode}, the name the kubelet registers`);
  }

  const existing = new Set((await core.listNode()).items.map((n) => n.metadata.name));
  for (const server of servers) {
    if (server.name === kubeletNode || existing.has(server.name)) continue;
    await core.createNode({
      body: {
        metadata: { name: server.name, labels: { 'kubernetes.io/hostname': server.name } },
        spec: { taints: [{ key: UNINITIALIZED, value: 'true', effect: 'NoSchedule' }] },
      },
    });
    const now = new Date().toISOString();
    await core.patchNodeStatus(
      {
        name: server.name,
        body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'sandbox node', lastHeartbeatTime: now, lastTransitionTime: now }] } },
      },
      mergePatch,
    );
    process.stdout.write(`registered node ${server.name} by hand (tainted uninitialized)\n`);
  }

  // kubeadm's control plane: the label and taint the CronJob's affinity and tolerations name. A
  // kubelet may not label itself node-role.kubernetes.io/* (NodeRestriction): the admin does.
  const node = await core.readNode({ name: kubeletNode });
  const taints = node.spec?.taints ?? [];
  if (node.metadata?.labels?.[CONTROL_PLANE] === undefined || !taints.some((t) => t.key === CONTROL_PLANE)) {
    await core.patchNode(
      {
        name: kubeletNode,
        body: {
          metadata: { labels: { [CONTROL_PLANE]: '' } },
          spec: { taints: [...taints.filter((t) => t.key !== CONTROL_PLANE), { key: CONTROL_PLANE, effect: 'NoSchedule' }] },
        },
      },
      mergePatch,
    );
    process.stdout.write(`marked node ${kubeletNode} (the kubelet's) as control plane\n`);
  }

  const service = parse(readFileSync(manifest, 'utf8'));
  const namespace = service.metadata.namespace ?? 'default';
  if ((await ignoreNotFound(core.readNamespacedService({ name: service.metadata.name, namespace }))) === undefined) {
    await core.createNamespacedService({ namespace, body: service });
    process.stdout.write(`created service ${namespace}/${service.metadata.name}\n`);
  }

  // `kubectl -n kube-system create secret generic cloudscale --from-literal=access-token=…`
  const secret = await ignoreConflict(
    core.createNamespacedSecret({ namespace: NAMESPACE, body: { metadata: { name: 'cloudscale' }, stringData: { 'access-token': token } } }),
  );
  if (secret !== undefined) process.stdout.write('created secret kube-system/cloudscale (the API token)\n');
  else await core.patchNamespacedSecret({ namespace: NAMESPACE, name: 'cloudscale', body: { stringData: { 'access-token': token } } }, mergePatch);

  // `cloudscale-ccm manifests --api-server-host … | kubectl apply --server-side -f -`: no
  // kube-proxy serves the kubernetes ClusterIP here, so the Pod reaches the API server directly
  // (docs/deploy.md). The one setting a real cluster does not need: the simulator's URL.
  const apiServer = new URL(kc.getCurrentCluster().server);
  const printed = execFileSync(
    process.execPath,
    ['bin/cloudscale-ccm.js', 'manifests', '--api-server-host', apiServer.hostname, '--api-server-port', apiServer.port, '-o', 'json'],
    { encoding: 'utf8' },
  );
  const objects = KubernetesObjectApi.makeApiClient(kc);
  for (const object of JSON.parse(printed).items) {
    if (object.kind === 'CronJob') {
      const container = object.spec.jobTemplate.spec.template.spec.containers[0];
      container.env = [...(container.env ?? []), { name: 'CLOUDSCALE_API_URL', value: apiUrl }];
    }
    await objects.patch(object, undefined, undefined, 'cloudscale-ccm-sandbox', true, PatchStrategy.ServerSideApply);
  }
  process.stdout.write(`applied the manifests of cloudscale-ccm manifests (CronJob ${NAMESPACE}/${CRONJOB}, its RBAC, the status ConfigMap)\n`);
}

async function ignoreNotFound(promise) {
  try {
    return await promise;
  } catch (error) {
    if (status(error) !== 404) throw error;
    return undefined;
  }
}

/** As `kubectl create job --from=cronjob/…` makes it: the template, owned by the CronJob. */
async function runJob() {
  const cronJob = await batch.readNamespacedCronJob({ namespace: NAMESPACE, name: CRONJOB });
  const name = `${CRONJOB}-sandbox-${Math.floor(Date.now() / 1000)}`;
  const template = cronJob.spec.jobTemplate;
  await batch.createNamespacedJob({
    namespace: NAMESPACE,
    body: {
      metadata: {
        name,
        labels: template.metadata?.labels,
        annotations: { ...template.metadata?.annotations, 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: CRONJOB, uid: cronJob.metadata.uid, controller: true }],
      },
      spec: template.spec,
    },
  });
  process.stdout.write(`created job ${NAMESPACE}/${name} from cronjob/${CRONJOB}\n`);
  const deadline = Date.now() + 300_000;
  let job;
  let reported = '';
  let since = Date.now();
  for (;;) {
    job = await batch.readNamespacedJob({ namespace: NAMESPACE, name });
    const ended = (job.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    if (ended !== undefined) break;
    const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `batch.kubernetes.io/job-name=${name}` })).items;
    const line = pods.map((p) => `pod ${p.metadata.name} on ${p.spec.nodeName ?? '(not scheduled)'}: ${podState(p)}`).join('; ');
    if (line !== reported) {
      if (line !== '') process.stdout.write(`${line}\n`);
      reported = line;
      since = Date.now();
    }
    // A container that cannot be created stays so: its reason does not change on retries.
    if (pods.some((p) => STUCK.has(p.status?.containerStatuses?.[0]?.state?.waiting?.reason)) && Date.now() - since > 30_000) {
      process.stderr.write(`job ${NAMESPACE}/${name}: its container has not started for 30 s: ${line}\n`);
      return 1;
    }
    if (Date.now() > deadline) throw new Error(`job ${NAMESPACE}/${name} has not ended after 300 s (${line || 'no pod'})`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `batch.kubernetes.io/job-name=${name}` })).items;
  for (const pod of pods) {
    process.stdout.write(`---- kubectl -n ${NAMESPACE} logs ${pod.metadata.name} (${podState(pod)}) ----\n`);
    process.stdout.write(await core.readNamespacedPodLog({ namespace: NAMESPACE, name: pod.metadata.name }));
    process.stdout.write('----\n');
  }
  const failed = (job.status?.conditions ?? []).find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed !== undefined) {
    process.stderr.write(`job ${NAMESPACE}/${name} failed: ${failed.reason}: ${failed.message}\n`);
    return 1;
  }
  process.stdout.write(`job ${NAMESPACE}/${name} complete\n`);
  return 0;
}

function podState(pod) {
  const container = pod.status?.containerStatuses?.[0];
  const state = container?.state ?? {};
  if (state.waiting !== undefined) return `${pod.status.phase}, waiting: ${state.waiting.reason}${state.waiting.message ? ` (${state.waiting.message})` : ''}`;
  if (state.terminated !== undefined) return `${pod.status.phase}, exit code ${state.terminated.exitCode} (${state.terminated.reason})`;
  return pod.status?.phase ?? 'Pending';
}
