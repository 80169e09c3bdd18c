// The node side of a Pod, for a cluster without scheduler, kubelet or container engine: what
// kube-scheduler and the kubelet would do for a Pod of one container, done by the test.
//
//   schedulingProblems(pod, node)  why the scheduler would not place the Pod there (taints it does
//                                  not tolerate, required node affinity, nodeSelector)
//   bindPod(pod, node)             the scheduler's binding (pods/binding)
//   runPod(pod, image, options)    the kubelet: the Pod's volumes (service account token from the
//                                  TokenRequest API bound to the Pod, ConfigMap keys, downward
//                                  API), its environment (the `kubernetes` Service variables, then
//                                  env with secretKeyRef/configMapKeyRef resolved), command and
//                                  args over the image's entrypoint, run as the securityContext's
//                                  user in a private mount namespace (container-sandbox.sh); the
//                                  Pod's status (Running, then Succeeded or Failed) is written
//                                  through the status subresource, as the Job controller reads it.
//
// Running a container this way needs root (mount namespace, bind mounts, switching user):
// `containerSupport()` says whether this machine can.
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type V1Container,
  type V1Node,
  type V1NodeSelectorRequirement,
  type V1Pod,
  type V1PodStatus,
  type V1Volume,
} from '@kubernetes/client-node';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sandboxScript = fileURLToPath(new URL('./container-sandbox.sh', import.meta.url));

/** What a container image contributes: its entrypoint, default arguments, environment, directory. */
export interface ContainerImage {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly workingDir: string;
}

/** The PATH container runtimes give an image that sets none. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The final stage of a Containerfile as the image this machine stands in for: ENTRYPOINT, CMD,
 * ENV and WORKDIR, with paths under `appDir` (the image's copy of the repository) mapped to
 * `localAppDir` and `node` to this Node.js binary.
 */
export function imageFromContainerfile(
  path: string,
  appDir: string,
  localAppDir: string,
  localNode: string = process.execPath,
): ContainerImage {
  const lines = readFileSync(path, 'utf8').split('\n');
  const finalStage = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const instruction = (name: string): string[] =>
    finalStage.filter((line) => line.toUpperCase().startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
  const local = (word: string): string =>
    word === 'node' ? localNode : word.startsWith(appDir) ? localAppDir + word.slice(appDir.length) : word;
  const execForm = (name: string): string[] => {
    const value = instruction(name).at(-1);
    return value === undefined ? [] : (JSON.parse(value) as string[]).map(local);
  };
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const assignment of instruction('ENV')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/.exec(assignment);
    if (match === null) throw new Error(`${path}: ENV ${assignment} is not of the form KEY=VALUE`);
    env[match[1]!] = match[2]!;
  }
  const workingDir = instruction('WORKDIR').at(-1);
  return { entrypoint: execForm('ENTRYPOINT'), cmd: execForm('CMD'), env, workingDir: local(workingDir ?? '/') };
}

/**
 * The image's files for `imageFiles`: `dir` itself when others may enter and read it, as they
 * may an image's; otherwise (a checkout whose own directory is private, say one cloned into a
 * fresh mktemp directory) a copy made of hard links in a directory they may enter. `remove`
 * deletes such a copy.
 */
export function imageFilesOf(dir: string): { readonly source: string; remove(): void } {
  if ((statSync(dir).mode & 0o005) === 0o005) return { source: dir, remove: () => undefined };
  const parent = mkdtempSync(join(tmpdir(), 'ccm-test-image-'));
  chmodSync(parent, 0o755);
  const source = join(parent, 'app');
  try {
    execFileSync('cp', ['-al', dir, source], { stdio: 'pipe' });
  } catch {
    // Another file system than the checkout's: hard links cannot cross it, a copy can.
    rmSync(source, { recursive: true, force: true });
    execFileSync('cp', ['-a', dir, source], { stdio: 'pipe' });
  }
  chmodSync(source, 0o755);
  return { source, remove: () => rmSync(parent, { recursive: true, force: true }) };
}

/** Undefined when this machine can run a container the test kubelet's way, else why not. */
export function containerSupport(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (a private mount namespace, bind mounts, another user)';
  const probe = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true'], { encoding: 'utf8' });
  if (probe.status !== 0) return `unshare --mount does not work here: ${probe.error?.message ?? probe.stderr.trim()}`;
  return undefined;
}

// ---- the scheduler's part --------------------------------------------------------------------

/** Why kube-scheduler would not place `pod` on `node`; empty when it would. */
export function schedulingProblems(pod: V1Pod, node: V1Node): string[] {
  const spec = pod.spec ?? { containers: [] };
  const labels = node.metadata?.labels ?? {};
  const problems: string[] = [];
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect === 'PreferNoSchedule') continue;
    const tolerated = (spec.tolerations ?? []).some(
      (t) =>
        (t.key === undefined ? t.operator === 'Exists' : t.key === taint.key) &&
        (t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '')) &&
        (t.effect === undefined || t.effect === '' || t.effect === taint.effect),
    );
    if (!tolerated) problems.push(`taint ${taint.key}=${taint.value ?? ''}:${taint.effect} is not tolerated`);
  }
  for (const [key, value] of Object.entries(spec.nodeSelector ?? {})) {
    if (labels[key] !== value) problems.push(`nodeSelector ${key}=${value} does not match`);
  }
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms !== undefined && !terms.some((term) => (term.matchExpressions ?? []).every((e) => matches(e, labels)))) {
    problems.push('no term of the required node affinity matches the node labels');
  }
  return problems;
}

function matches(requirement: V1NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const value = labels[requirement.key];
  switch (requirement.operator) {
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'In':
      return value !== undefined && (requirement.values ?? []).includes(value);
    case 'NotIn':
      return value === undefined || !(requirement.values ?? []).includes(value);
    default:
      throw new Error(`test scheduler: node selector operator ${requirement.operator} is not supported`);
  }
}

/** Binds the Pod to the Node, as kube-scheduler does once it chose one. */
export async function bindPod(core: CoreV1Api, pod: V1Pod, nodeName: string): Promise<void> {
  const { name, namespace } = podKey(pod);
  await core.createNamespacedPodBinding({
    name,
    namespace,
    body: { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } },
  });
}

// ---- the kubelet's part ----------------------------------------------------------------------

export interface PodRun {
  readonly exitCode: number;
  /** stdout and stderr of the container, interleaved as `kubectl logs` shows them. */
  readonly logs: string;
  /** The environment the container got, for assertions (no secrets are printed by the test). */
  readonly env: Readonly<Record<string, string>>;
}

export interface RunPodOptions {
  /**
   * Variables beyond the Pod's own; where the test's world differs from a real one (the
   * cloud API's address). Applied last.
   */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** How long the container may run before it is stopped (SIGTERM). */
  readonly timeoutMs?: number;
  /**
   * The image's files: a local directory the container sees, read-only, at `mountPath` (under
   * /run, see container-sandbox.sh), as a runtime provides an image's root. Its own mode counts,
   * not that of the directories above it (a clone in a private temporary directory).
   */
  readonly imageFiles?: { readonly source: string; readonly mountPath: string };
}

/** Runs the Pod's only container to its end and reports the outcome in the Pod's status. */
export async function runPod(core: CoreV1Api, pod: V1Pod, image: ContainerImage, options: RunPodOptions = {}): Promise<PodRun> {
  const containers = pod.spec?.containers ?? [];
  if (containers.length !== 1 || (pod.spec?.initContainers ?? []).length > 0) {
    throw new Error(`test kubelet: pod ${podKey(pod).name} has ${containers.length} containers; only one (and no init containers) is supported`);
  }
  const container = containers[0]!;
  const volumeRoot = mkdtempSync(join(tmpdir(), 'ccm-test-pod-'));
  try {
    const user = containerUser(pod, container);
    const mounts = await materialiseVolumes(core, pod, container, volumeRoot, user);
    const env = { ...image.env, ...(await kubernetesServiceEnv(core)), ...(await resolveEnv(core, pod, container)), ...options.extraEnv };
    const argv = [...(container.command ?? image.entrypoint), ...(container.args ?? (container.command === undefined ? image.cmd : []))];
    const readOnlyRoot = container.securityContext?.readOnlyRootFilesystem === true;

    const startedAt = new Date();
    await writePodStatus(core, pod, {
      phase: 'Running',
      startTime: startedAt,
      containerStatuses: [
        { name: container.name, image: container.image ?? '', imageID: '', ready: true, started: true, restartCount: 0, state: { running: { startedAt } } },
      ],
    });
    const { exitCode, logs } = await runInSandbox(
      [
        String(user.uid),
        String(user.gid),
        readOnlyRoot ? 'ro' : 'rw',
        image.workingDir,
        ...(options.imageFiles === undefined ? [] : [`${options.imageFiles.source}:${options.imageFiles.mountPath}`]),
        ...mounts.map((m) => `${m.source}:${m.mountPath}`),
        '--',
        ...argv,
      ],
      env,
      options.timeoutMs ?? 120_000,
    );
    const finishedAt = new Date();
    await writePodStatus(core, pod, {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      startTime: startedAt,
      containerStatuses: [
        {
          name: container.name,
          image: container.image ?? '',
          imageID: '',
          ready: false,
          started: false,
          restartCount: 0,
          state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt } },
        },
      ],
    });
    return { exitCode, logs, env };
  } finally {
    rmSync(volumeRoot, { recursive: true, force: true });
  }
}

function podKey(pod: V1Pod): { name: string; namespace: string } {
  const name = pod.metadata?.name;
  const namespace = pod.metadata?.namespace;
  if (name === undefined || namespace === undefined) throw new Error('test kubelet: the pod has no name or namespace');
  return { name, namespace };
}

/** The user the container runs as: the container's securityContext over the Pod's. */
function containerUser(pod: V1Pod, container: V1Container): { uid: number; gid: number } {
  const uid = container.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
  const gid = container.securityContext?.runAsGroup ?? pod.spec?.securityContext?.runAsGroup ?? uid;
  if (uid === undefined || gid === undefined) {
    throw new Error('test kubelet: the pod sets no runAsUser; the image user is not modelled');
  }
  const runAsNonRoot = container.securityContext?.runAsNonRoot ?? pod.spec?.securityContext?.runAsNonRoot;
  if (runAsNonRoot === true && uid === 0) throw new Error('test kubelet: runAsNonRoot with runAsUser 0 would not start');
  return { uid, gid };
}

/** The variables the kubelet sets for the `kubernetes` Service in every container. */
async function kubernetesServiceEnv(core: CoreV1Api): Promise<Record<string, string>> {
  const service = await core.readNamespacedService({ namespace: 'default', name: 'kubernetes' });
  const host = service.spec?.clusterIP ?? '';
  const port = String(service.spec?.ports?.find((p) => p.name === 'https')?.port ?? 443);
  return {
    KUBERNETES_SERVICE_HOST: host,
    KUBERNETES_SERVICE_PORT: port,
    KUBERNETES_SERVICE_PORT_HTTPS: port,
    KUBERNETES_PORT: `tcp://${host}:${port}`,
  };
}

/** The container's env in order, with values from Secrets, ConfigMaps and the Pod resolved. */
async function resolveEnv(core: CoreV1Api, pod: V1Pod, container: V1Container): Promise<Record<string, string>> {
  const { namespace } = podKey(pod);
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (from === undefined) {
      env[variable.name] = variable.value ?? '';
    } else if (from.secretKeyRef !== undefined) {
      const { name, key } = from.secretKeyRef;
      const secret = await core.readNamespacedSecret({ namespace, name: name ?? '' });
      const value = secret.data?.[key];
      if (value === undefined) throw new Error(`test kubelet: secret ${namespace}/${name} has no key ${key} (CreateContainerConfigError)`);
      env[variable.name] = Buffer.from(value, 'base64').toString('utf8');
    } else if (from.configMapKeyRef !== undefined) {
      const { name, key } = from.configMapKeyRef;
      const value = (await core.readNamespacedConfigMap({ namespace, name: name ?? '' })).data?.[key];
      if (value === undefined) throw new Error(`test kubelet: configmap ${namespace}/${name} has no key ${key} (CreateContainerConfigError)`);
      env[variable.name] = value;
    } else if (from.fieldRef !== undefined) {
      env[variable.name] = podField(pod, from.fieldRef.fieldPath);
    } else {
      throw new Error(`test kubelet: env ${variable.name}: only value, secretKeyRef, configMapKeyRef and fieldRef are supported`);
    }
  }
  return env;
}

function podField(pod: V1Pod, fieldPath: string): string {
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata?.name,
    'metadata.namespace': pod.metadata?.namespace,
    'metadata.uid': pod.metadata?.uid,
    'spec.nodeName': pod.spec?.nodeName,
    'spec.serviceAccountName': pod.spec?.serviceAccountName,
  };
  const value = fields[fieldPath];
  if (value === undefined) throw new Error(`test kubelet: field ${fieldPath} of the pod is not supported or not set`);
  return value;
}

interface Mount {
  readonly source: string;
  readonly mountPath: string;
}

/** Writes each mounted volume's files into a directory of its own, owned by the container's user. */
async function materialiseVolumes(
  core: CoreV1Api,
  pod: V1Pod,
  container: V1Container,
  root: string,
  user: { uid: number; gid: number },
): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const volumeMount of container.volumeMounts ?? []) {
    const volume = (pod.spec?.volumes ?? []).find((v) => v.name === volumeMount.name);
    if (volume === undefined) throw new Error(`test kubelet: volume ${volumeMount.name} is mounted but not defined`);
    const dir = join(root, volume.name);
    mkdirSync(dir, { recursive: true });
    const files = await volumeFiles(core, pod, volume);
    const mode = volume.projected?.defaultMode ?? 0o644;
    for (const [path, content] of Object.entries(files)) {
      const file = join(dir, path);
      writeFileSync(file, content, { mode });
      chmodSync(file, mode);
      chownSync(file, user.uid, user.gid);
    }
    chmodSync(dir, 0o755);
    chmodSync(root, 0o755);
    mounts.push({ source: dir, mountPath: volumeMount.mountPath });
  }
  return mounts;
}

/** The files of a projected volume (what the ServiceAccount admission plugin adds to a Pod). */
async function volumeFiles(core: CoreV1Api, pod: V1Pod, volume: V1Volume): Promise<Record<string, string>> {
  if (volume.projected === undefined) {
    throw new Error(`test kubelet: volume ${volume.name}: only projected volumes are supported`);
  }
  const { name, namespace } = podKey(pod);
  const files: Record<string, string> = {};
  for (const source of volume.projected.sources ?? []) {
    if (source.serviceAccountToken !== undefined) {
      const { audience, expirationSeconds, path } = source.serviceAccountToken;
      const request = await core.createNamespacedServiceAccountToken({
        namespace,
        name: pod.spec?.serviceAccountName ?? 'default',
        body: {
          spec: {
            audiences: audience === undefined || audience === '' ? [] : [audience],
            expirationSeconds: expirationSeconds ?? 3600,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid ?? '' },
          },
        },
      });
      files[path] = request.status?.token ?? '';
    } else if (source.configMap !== undefined) {
      const configMap = await core.readNamespacedConfigMap({ namespace, name: source.configMap.name ?? '' });
      for (const item of source.configMap.items ?? []) {
        const value = configMap.data?.[item.key];
        if (value === undefined) throw new Error(`test kubelet: configmap ${namespace}/${configMap.metadata?.name} has no key ${item.key}`);
        files[item.path] = value;
      }
    } else if (source.downwardAPI !== undefined) {
      for (const item of source.downwardAPI.items ?? []) {
        if (item.fieldRef === undefined) throw new Error(`test kubelet: downward API item ${item.path}: only fieldRef is supported`);
        files[item.path] = podField(pod, item.fieldRef.fieldPath);
      }
    } else {
      throw new Error(`test kubelet: volume ${volume.name}: only serviceAccountToken, configMap and downwardAPI sources are supported`);
    }
  }
  return files;
}

function runInSandbox(
  sandboxArgs: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ exitCode: number; logs: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['--mount', '--propagation', 'private', 'bash', sandboxScript, ...sandboxArgs], {
      env,
      // The sandbox enters the working directory itself, once the image's files are mounted.
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let logs = '';
    child.stdout.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ exitCode: code ?? (signal === null ? 1 : 128 + 15), logs }));
  });
}

async function writePodStatus(core: CoreV1Api, pod: V1Pod, status: V1PodStatus): Promise<void> {
  const { name, namespace } = podKey(pod);
  await core.patchNamespacedPodStatus(
    { name, namespace, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
