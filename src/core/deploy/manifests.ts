// The in-cluster deployment as data: ServiceAccount, least-privilege RBAC and the CronJob that
// runs `cloudscale-ccm run`, plus the template of the token Secret. Pure builders; rendering to
// YAML keeps a short comment on every RBAC rule and on each non-obvious CronJob field, so the
// applied manifests explain themselves. deploy/cloudscale-ccm.yaml is this module's output.
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1CronJob,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1ServiceAccount,
  V1Toleration,
} from '@kubernetes/client-node';
import { Document, isMap, isNode, isScalar, isSeq, visit, type Node } from 'yaml';
import { InternalError } from '../errors.js';
import { STOP_DEFER_MS } from '../stop.js';
import { UNINITIALIZED_TAINT_KEY } from '../nodes/well-known.js';
import {
  buildAdmissionPolicy,
  buildAdmissionPolicyBinding,
  DEFAULT_ADMISSION_MODE,
  toolOnlyAnnotations,
  type AdmissionMode,
} from './admission-policy.js';

/** Everything the tool deploys lives here; the Leases it takes and reads too. */
export const CCM_NAMESPACE = 'kube-system';
/** Name of the ServiceAccount, ClusterRole, Role, both bindings and the CronJob. */
export const CCM_NAME = 'cloudscale-ccm';
/** The Lease a pass holds. MUST match what `run` takes: the Role grants it by name. */
export const CCM_LEASE_NAME = 'cloudscale-ccm';
/**
 * The ConfigMap every writing pass records its outcome in (`cloudscale-ccm status` reads it).
 * Part of the manifests because the role may only get and patch it by name.
 */
export const STATUS_CONFIGMAP_NAME = 'cloudscale-ccm-status';
/** The Go CCM's leader-election Lease; `run` refuses to act while it has a live holder. */
export const GO_CCM_LEASE_NAME = 'cloud-controller-manager';
/** The Secret and key the Go CCM already reads; kept so a switch-over needs no new Secret. */
export const TOKEN_SECRET_NAME = 'cloudscale';
export const TOKEN_SECRET_KEY = 'access-token';
export const DEFAULT_SCHEDULE = '* * * * *';
/**
 * Each one-minute Job watches until 50 s after its start: with the pod's start (a few seconds
 * after the minute) and the shutdown it ends before the next minute, so Jobs follow each other
 * instead of queueing behind concurrencyPolicy: Forbid.
 */
export const DEFAULT_WATCH_FOR_SECONDS = 50;
/** The UID and GID the image runs as (the conventional "nonroot" of distroless images). */
export const RUN_AS_USER = 65532;

const CONTROL_PLANE_ROLE_LABEL = 'node-role.kubernetes.io/control-plane';
const LABELS = { 'app.kubernetes.io/name': CCM_NAME } as const;

/**
 * The CronJob's downtime budget: nothing that interrupts a serving port is applied unattended;
 * changes without downtime and new load balancers proceed, the rest waits for approval
 * (README "Changes with downtime").
 */
export const DEFAULT_CRONJOB_MAX_DOWNTIME = '0s';

/** `--max-downtime D [--window W]` of the CronJob's `run`. */
/** `--pushgateway URL` when the Jobs push their metrics, else nothing. */
function pushArgs(options: Pick<ManifestOptions, 'pushgateway'>): string[] {
  return options.pushgateway === undefined ? [] : ['--pushgateway', options.pushgateway];
}

function budgetArgs(options: Pick<ManifestOptions, 'maxDowntime' | 'window'>): string[] {
  return ['--max-downtime', options.maxDowntime ?? DEFAULT_CRONJOB_MAX_DOWNTIME, ...(options.window === undefined ? [] : ['--window', options.window])];
}

export interface ManifestOptions {
  /** The package version: names the default image. */
  version: string;
  /** Container image; default {@link defaultImage}. */
  image?: string;
  /** Five-field cron schedule; the caller validated it (cronScheduleProblem). */
  schedule: string;
  /** `run --max-downtime` of each Job, as the flag takes it; default DEFAULT_CRONJOB_MAX_DOWNTIME. */
  maxDowntime?: string;
  /** `run --window` of each Job, as the flag takes it (validated by the caller); none by default. */
  window?: string;
  /** `run --pushgateway` of each Job (checked by the caller): where the Jobs push their metrics. */
  pushgateway?: string;
  /**
   * `run --watch-for` of each Job, in seconds: after its pass a Job watches and reacts until this
   * long after it started; 0: one pass per Job. Default DEFAULT_WATCH_FOR_SECONDS.
   */
  watchForSeconds?: number;
  /**
   * Where the pod reaches the API server, replacing the kubelet-injected Service address.
   * Needed when the `kubernetes` ClusterIP does not work on the host network before the CNI
   * runs (clusters without kube-proxy). The serving certificate must name `host`.
   */
  apiServer?: { host: string; port: number };
  /**
   * The admission policy refusing malformed load-balancer annotations: `deny` (default), `warn`
   * (accepted with a warning), `none` (not deployed).
   */
  admissionPolicy?: AdmissionMode;
}

/** A rule of the tool's RBAC with the reason it exists; the docs and the RBAC test use both. */
export interface RuleWithPurpose {
  readonly rule: V1PolicyRule;
  readonly purpose: string;
}

/** A manifest and the comments its YAML rendering carries (path into the object → text). */
export interface Manifest {
  readonly object: KubernetesObject;
  readonly comments: readonly { path: readonly (string | number)[]; text: string }[];
}

/**
 * Cluster-wide permissions: exactly the reads and writes of `init-nodes` and `sync-lb`.
 * Events are written through core/v1 (what `kubectl describe` lists).
 */
export const CLUSTER_RULES: readonly RuleWithPurpose[] = [
  {
    rule: { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    purpose: 'read Nodes: init-nodes, node lifecycle, and the pool members of every load balancer; watch: run --watch-for',
  },
  {
    rule: { apiGroups: [''], resources: ['nodes'], verbs: ['patch'] },
    purpose: 'init-nodes: providerID, zone/region/instance-type labels, uninitialized and shutdown taints',
  },
  {
    rule: { apiGroups: [''], resources: ['nodes'], verbs: ['delete'] },
    purpose: 'node lifecycle: delete a Node whose server no longer exists',
  },
  {
    rule: { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
    purpose: 'init-nodes: node addresses from the server interfaces',
  },
  {
    rule: { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'] },
    purpose: 'sync-lb: read Services of type LoadBalancer (and the Floating IP conflict scan); watch: run --watch-for',
  },
  {
    rule: { apiGroups: [''], resources: ['services'], verbs: ['patch'] },
    purpose: 'sync-lb: load balancer UUID annotation and the cleanup finalizer',
  },
  {
    rule: { apiGroups: [''], resources: ['services/status'], verbs: ['patch'] },
    purpose: 'sync-lb: status.loadBalancer.ingress',
  },
  {
    rule: { apiGroups: [''], resources: ['events'], verbs: ['create', 'get', 'patch'] },
    purpose: 'events on Services and Nodes (kubectl describe shows them); get + patch count repeats of the same event',
  },
  {
    rule: { apiGroups: [''], resources: ['namespaces'], resourceNames: [CCM_NAMESPACE], verbs: ['get'] },
    purpose: `cluster identity for ownership tags: the uid of namespace ${CCM_NAMESPACE}`,
  },
];

/**
 * Permissions in kube-system only. RBAC cannot restrict `create` by resourceNames (the name
 * is not part of a create request's URL), so creating the Lease is granted for any name;
 * reading and renewing it are granted for its name only.
 */
export const KUBE_SYSTEM_RULES: readonly RuleWithPurpose[] = [
  {
    rule: { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    purpose: `take the ${CCM_LEASE_NAME} Lease the first time (create cannot be limited by name)`,
  },
  {
    rule: {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [CCM_LEASE_NAME],
      verbs: ['get', 'update'],
    },
    purpose: `hold, renew and release the ${CCM_LEASE_NAME} Lease for the duration of a pass`,
  },
  {
    rule: {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [GO_CCM_LEASE_NAME],
      verbs: ['get'],
    },
    purpose: `refuse to act while another CCM (the Go CCM) holds ${GO_CCM_LEASE_NAME}`,
  },
  {
    rule: { apiGroups: [''], resources: ['configmaps'], resourceNames: [STATUS_CONFIGMAP_NAME], verbs: ['get', 'patch'] },
    purpose: `record each pass in the ${STATUS_CONFIGMAP_NAME} ConfigMap (these manifests create it: create cannot be limited by name)`,
  },
];

export function defaultImage(version: string): string {
  return `localhost/cloudscale-ccm:${version}`;
}

/**
 * ServiceAccount, ClusterRole and binding, Role and binding, CronJob, status ConfigMap, and the
 * admission policy with its binding (unless `admissionPolicy: none`): in apply order.
 */
export function buildManifests(options: ManifestOptions): readonly Manifest[] {
  const admission = options.admissionPolicy ?? DEFAULT_ADMISSION_MODE;
  return [
    { object: serviceAccount(), comments: [] },
    withRuleComments(clusterRole(), CLUSTER_RULES),
    { object: clusterRoleBinding(), comments: [] },
    withRuleComments(role(), KUBE_SYSTEM_RULES),
    { object: roleBinding(), comments: [] },
    cronJob(options),
    statusConfigMap(),
    ...(admission === 'none' ? [] : admissionPolicyManifests(admission)),
  ];
}

/** Where the chart takes the policy from: generated, kept up to date by test/unit/admission-policy.test.ts. */
export const CHART_ADMISSION_TEMPLATE = 'deploy/chart/templates/admission-policy.yaml';

/**
 * deploy/chart/templates/admission-policy.yaml: the policy and binding `manifests` prints, with
 * the binding's action and whether both are there from the chart value `admissionPolicy`.
 */
export function renderAdmissionPolicyChartTemplate(): string {
  const rendered = renderManifestsYaml(admissionPolicyManifests('deny'));
  if (rendered.includes('{{') || rendered.includes('}}')) {
    throw new InternalError('the admission policy contains "{{" or "}}", which helm would read as a template action');
  }
  const deny = 'validationActions: [Deny]';
  if (rendered.split(deny).length !== 2) throw new InternalError(`the admission policy binding has no single "${deny}"`);
  return [
    `{{- /* Generated from src/core/lb/annotations.ts (renderAdmissionPolicyChartTemplate in src/core/deploy/manifests.ts); do not edit: UPDATE_DEPLOY=1 npx vitest run test/unit/admission-policy.test.ts rewrites it. */}}`,
    '{{- if ne (include "cloudscale-ccm.admissionPolicy" .) "none" }}',
    rendered.replace(deny, 'validationActions: [{{ include "cloudscale-ccm.admissionPolicy" . | title }}]').trimEnd(),
    '{{- end }}',
    '',
  ].join('\n');
}

/** The policy and its binding, each explained in comments. */
export function admissionPolicyManifests(mode: Exclude<AdmissionMode, 'none'>): readonly Manifest[] {
  const toolOnly = toolOnlyAnnotations().map(({ key, reason }) => `${key} (${reason})`);
  return [
    {
      object: buildAdmissionPolicy(LABELS),
      comments: [
        { path: ['metadata'], text: 'refuses a Service of type LoadBalancer whose load-balancer annotations the tool would refuse, with its message (generated from src/core/lb/annotations.ts)' },
        { path: ['spec', 'variables', 2], text: "only values new or changed by the request, every value of a Service that becomes a load balancer of the tool: a value it already had as one is left to the tool's check, so the tool's own writes to it keep being accepted" },
        { path: ['spec', 'validations'], text: `one per checked annotation; only the tool checks ${toolOnly.join(', ')}` },
      ],
    },
    {
      object: buildAdmissionPolicyBinding(mode, LABELS),
      comments: [{ path: ['spec', 'validationActions'], text: 'Deny: refused at kubectl apply; Warn (manifests --admission-policy warn): accepted, kubectl prints the message' }],
    },
  ];
}

/**
 * The token Secret with a placeholder. Never part of buildManifests: applying it would replace a
 * real token (for instance the Go CCM's) with the placeholder.
 */
export function buildTokenSecretTemplate(): Manifest {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: TOKEN_SECRET_NAME, namespace: CCM_NAMESPACE },
    type: 'Opaque',
    stringData: { [TOKEN_SECRET_KEY]: 'REPLACE-WITH-A-READ-WRITE-CLOUDSCALE-API-TOKEN' },
  };
  return {
    object: secret,
    comments: [{ path: ['stringData', TOKEN_SECRET_KEY], text: 'a read/write token from the cloudscale control panel (API tokens)' }],
  };
}

export function tokenSecretCreateCommand(): string {
  return `kubectl -n ${CCM_NAMESPACE} create secret generic ${TOKEN_SECRET_NAME} --from-literal=${TOKEN_SECRET_KEY}=YOUR_TOKEN`;
}

/** The comment that opens the rendered manifests: what they are and how to add the token. */
export function manifestsHeader(version: string): string[] {
  return [
    `cloudscale-ccm ${version}: ServiceAccount, RBAC and the CronJob running \`cloudscale-ccm run\` in ${CCM_NAMESPACE}.`,
    'Printed by `cloudscale-ccm manifests`; apply with `kubectl apply -f -`. docs/deploy.md explains each part.',
    'The admission policy at the end refuses Services with malformed load-balancer annotations at',
    '`kubectl apply` (`manifests --admission-policy warn` only warns, `none` leaves it out).',
    '',
    `The CronJob reads the cloudscale API token from Secret ${CCM_NAMESPACE}/${TOKEN_SECRET_NAME}, key ${TOKEN_SECRET_KEY}`,
    '(the Secret the Go CCM uses). It is not included here, so applying never replaces a token.',
    'Create it once:',
    `  ${tokenSecretCreateCommand()}`,
  ];
}

/** deploy/secret.example.yaml: the Secret template with how to create it without a file. */
export function renderTokenSecretTemplate(): string {
  return renderManifestsYaml(
    [buildTokenSecretTemplate()],
    [
      `Template of the Secret the CronJob reads the cloudscale API token from. Simpler, and no`,
      'token in a file:',
      `  ${tokenSecretCreateCommand()}`,
      'With this file: put the token in, `kubectl apply -f`, and never commit it with the token.',
    ],
  );
}

/** Multi-document YAML; `header` (lines without "#") opens the first document. */
export function renderManifestsYaml(manifests: readonly Manifest[], header: readonly string[] = []): string {
  return manifests
    .map((manifest, index) => {
      const document = new Document(manifest.object, { aliasDuplicateObjects: false });
      // Lists of plain values read best on one line: `verbs: [get, list]`.
      visit(document, {
        Seq(_, node) {
          if (node.items.every(isScalar)) node.flow = true;
        },
      });
      for (const { path, text } of manifest.comments) {
        commentTarget(document, path, manifest.object.kind).commentBefore = ` ${text}`;
      }
      if (index === 0 && header.length > 0) {
        document.commentBefore = header.map((line) => (line === '' ? '' : ` ${line}`)).join('\n');
      }
      return document.toString({ lineWidth: 0, flowCollectionPadding: false });
    })
    .join('---\n');
}

/** The node a comment attaches to: the key of a map entry, or the item of a list. */
function commentTarget(document: Document, path: readonly (string | number)[], kind: string | undefined): Node {
  const parent = document.getIn(path.slice(0, -1), true);
  const last = path.at(-1);
  if (isMap(parent)) {
    const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
    if (pair !== undefined && isScalar(pair.key)) return pair.key;
  } else if (isSeq(parent) && typeof last === 'number') {
    const item = parent.items[last];
    if (isNode(item)) return item;
  }
  throw new InternalError(`comment path ${path.join('.')} does not exist in the ${kind ?? 'object'}`);
}

/** The manifests as one `v1` List, for `-o json` (kubectl apply accepts it). */
export function manifestsAsList(manifests: readonly Manifest[]): KubernetesObject & { items: KubernetesObject[] } {
  return { apiVersion: 'v1', kind: 'List', items: manifests.map((m) => m.object) };
}

function serviceAccount(): V1ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: CCM_NAME, namespace: CCM_NAMESPACE, labels: { ...LABELS } },
  };
}

function clusterRole(): V1ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: CCM_NAME, labels: { ...LABELS } },
    rules: CLUSTER_RULES.map(({ rule }) => structuredClone(rule)),
  };
}

function clusterRoleBinding(): V1ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: CCM_NAME, labels: { ...LABELS } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CCM_NAME },
    subjects: [{ kind: 'ServiceAccount', name: CCM_NAME, namespace: CCM_NAMESPACE }],
  };
}

function role(): V1Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: CCM_NAME, namespace: CCM_NAMESPACE, labels: { ...LABELS } },
    rules: KUBE_SYSTEM_RULES.map(({ rule }) => structuredClone(rule)),
  };
}

function roleBinding(): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: CCM_NAME, namespace: CCM_NAMESPACE, labels: { ...LABELS } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: CCM_NAME },
    subjects: [{ kind: 'ServiceAccount', name: CCM_NAME, namespace: CCM_NAMESPACE }],
  };
}

/**
 * Created empty: each pass writes its own key by server-side apply, and applying these manifests
 * again leaves those keys alone (they belong to other field managers).
 */
function statusConfigMap(): Manifest {
  const configMap: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: STATUS_CONFIGMAP_NAME, namespace: CCM_NAMESPACE, labels: { ...LABELS } },
  };
  return {
    object: configMap,
    comments: [{ path: ['metadata'], text: 'each pass records its outcome here: `cloudscale-ccm status` prints it' }],
  };
}

function withRuleComments(object: V1ClusterRole | V1Role, rules: readonly RuleWithPurpose[]): Manifest {
  return { object, comments: rules.map(({ purpose }, index) => ({ path: ['rules', index], text: purpose })) };
}

/**
 * Must schedule before any CNI exists and on control-plane nodes that no CCM initialised yet:
 * host network (a pod network needs the CNI), the taints such nodes carry, and DNS from the
 * node (cluster DNS runs on the pod network, which may not exist yet).
 */
const TOLERATIONS: readonly V1Toleration[] = [
  { key: UNINITIALIZED_TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: CONTROL_PLANE_ROLE_LABEL, operator: 'Exists', effect: 'NoSchedule' },
  { key: 'CriticalAddonsOnly', operator: 'Exists' },
];

/** Longest a pass may run; above `run --wait-timeout` (600 s) plus the node pass. */
const ACTIVE_DEADLINE_SECONDS = 900;
/**
 * SIGTERM (the Job deleted, activeDeadlineSeconds) lets the step pair in progress finish, for at
 * most STOP_DEFER_MS (src/core/stop.ts); then the pass releases the Lease and writes its record.
 */
const TERMINATION_GRACE_SECONDS = STOP_DEFER_MS / 1000 + 30;

/** `--watch-for Ns`, or nothing for a Job of one pass. */
function watchArgs(seconds: number): string[] {
  return seconds > 0 ? ['--watch-for', `${seconds}s`] : [];
}

function cronJob(options: ManifestOptions): Manifest {
  const env = [
    {
      name: 'CLOUDSCALE_API_TOKEN',
      valueFrom: { secretKeyRef: { name: TOKEN_SECRET_NAME, key: TOKEN_SECRET_KEY } },
    },
    ...(options.apiServer === undefined
      ? []
      : [
          { name: 'KUBERNETES_SERVICE_HOST', value: options.apiServer.host },
          { name: 'KUBERNETES_SERVICE_PORT', value: String(options.apiServer.port) },
        ]),
  ];
  const object: V1CronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: CCM_NAME, namespace: CCM_NAMESPACE, labels: { ...LABELS } },
    spec: {
      schedule: options.schedule,
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 50,
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels: { ...LABELS } },
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: ACTIVE_DEADLINE_SECONDS,
          template: {
            metadata: { labels: { ...LABELS } },
            spec: {
              serviceAccountName: CCM_NAME,
              restartPolicy: 'Never',
              terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
              priorityClassName: 'system-cluster-critical',
              hostNetwork: true,
              dnsPolicy: 'Default',
              enableServiceLinks: false,
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [
                      { matchExpressions: [{ key: CONTROL_PLANE_ROLE_LABEL, operator: 'Exists' }] },
                    ],
                  },
                },
              },
              tolerations: TOLERATIONS.map((t) => ({ ...t })),
              securityContext: {
                runAsNonRoot: true,
                runAsUser: RUN_AS_USER,
                runAsGroup: RUN_AS_USER,
                seccompProfile: { type: 'RuntimeDefault' },
              },
              containers: [
                {
                  name: CCM_NAME,
                  image: options.image ?? defaultImage(options.version),
                  imagePullPolicy: 'IfNotPresent',
                  args: ['run', '--wait', ...watchArgs(options.watchForSeconds ?? DEFAULT_WATCH_FOR_SECONDS), ...budgetArgs(options), ...pushArgs(options)],
                  env,
                  resources: {
                    // Measured (docs/deploy.md): a pass with nothing to do over 200 Services x 300
                    // Nodes peaks at 212-215 MiB; one creating those 60,000 pool members at up to 575 MiB,
                    // one creating 90,000 (300 x 300) at 671 MiB.
                    requests: { cpu: '50m', memory: '224Mi' },
                    limits: { cpu: '1', memory: '1Gi' },
                  },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ['ALL'] },
                  },
                },
              ],
            },
          },
        },
      },
    },
  };
  const job = ['spec', 'jobTemplate', 'spec'];
  const pod = [...job, 'template', 'spec'];
  return {
    object,
    comments: [
      { path: ['spec', 'concurrencyPolicy'], text: 'a pass still running skips the next one; the Lease also keeps terminal runs apart' },
      { path: ['spec', 'startingDeadlineSeconds'], text: 'a start missed by this much is skipped, not queued' },
      { path: [...job, 'backoffLimit'], text: 'no retry inside a Job: the next scheduled pass is the retry' },
      { path: [...job, 'activeDeadlineSeconds'], text: 'above run --wait-timeout (600 s) plus the node pass' },
      { path: [...pod, 'terminationGracePeriodSeconds'], text: `SIGTERM lets the step pair in progress finish (at most ${STOP_DEFER_MS / 1000} s: a listener re-created), then the Lease is released` },
      { path: [...pod, 'hostNetwork'], text: 'runs before any CNI exists: a pod network would need one' },
      {
        path: [...pod, 'containers', 0, 'args'],
        text:
          '--wait: a Job started while another pass holds the Lease waits for it instead of failing' +
          ((options.watchForSeconds ?? DEFAULT_WATCH_FOR_SECONDS) > 0
            ? '; after its pass, it reacts to Node and Service changes until this long after its start, so each Job covers its minute'
            : ''),
      },
      { path: [...pod, 'dnsPolicy'], text: "the node's resolver: cluster DNS runs on the pod network, which may not exist yet" },
      { path: [...pod, 'affinity'], text: `control-plane nodes, whether ${CONTROL_PLANE_ROLE_LABEL} is "" (kubeadm) or "true" (k3s)` },
      { path: [...pod, 'tolerations'], text: 'schedulable on uninitialised, not-ready and control-plane nodes' },
      ...(options.apiServer === undefined
        ? []
        : [{ path: [...pod, 'containers', 0, 'env', 1], text: 'the API server directly: the kubernetes ClusterIP may not work on the host network yet' }]),
    ],
  };
}
