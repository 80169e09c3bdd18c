// @test-tools: helm
// @kube-versions: all — installs the chart: each object's API version and fields must be accepted by each server
// The Helm chart deploy/chart against `cloudscale-ccm manifests`, with a real helm built from Go
// modules (test/cluster/build-helm.sh, which npm test runs):
// - `helm template` renders the same objects as `manifests` (parsed YAML, deep-equal, object by
//   object) for every option set: the defaults, each flag alone with each sample, all at once.
//   The flags come from the commander definition, so a new flag without a chart value fails here;
// - what `manifests` refuses, the chart refuses too, naming the value; an unknown value as well;
// - `helm lint --strict` passes, and the chart's version and appVersion are the package's;
// - `helm install` into the test cluster: the live objects are the manifests' objects with the
//   same RBAC rules (test/integration/rbac.test.ts proves those sufficient and minimal), a token
//   of the installed ServiceAccount may make every request of that test's table and none it must
//   refuse, a real `run` pass with the token succeeds; `helm uninstall` leaves nothing behind;
// - a deployment applied from `manifests` is taken over by `helm install` once labelled and
//   annotated as docs/deploy.md says (the same objects, not recreated), and refused before.
import { ApiException, BatchV1Api, KubernetesObjectApi, PatchStrategy, setHeaderOptions, type KubernetesObject } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import {
  CCM_NAME,
  CCM_NAMESPACE,
  CLUSTER_RULES,
  KUBE_SYSTEM_RULES,
  STATUS_CONFIGMAP_NAME,
} from '../../src/core/deploy/manifests.js';
import { programDefinition } from '../../src/cli.js';
import { VERSION } from '../../src/version.js';
import { outputOf, runBinary, startHarness, type BinaryResult as Result } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  testConnection,
  testKubeconfig,
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
} from '../support/kube.js';
import { lbSeed, serverName } from '../support/lb-scenarios.js';
import * as rbac from '../support/rbac.js';

const chartDir = fileURLToPath(new URL('../../deploy/chart', import.meta.url));
const helmBinary = fileURLToPath(new URL('../cluster/bin/helm/helm', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ccm-helm-chart-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs helm with its homes in the scratch directory, so nothing is read from or left in ~. */
function helm(args: readonly string[]): Promise<Result> {
  if (!existsSync(helmBinary)) {
    throw new Error(`${helmBinary} is missing: build it with bash test/cluster/build-helm.sh (npm test does)`);
  }
  const child = spawn(helmBinary, args, {
    env: {
      PATH: process.env.PATH,
      HOME: scratch,
      HELM_CACHE_HOME: join(scratch, 'helm-cache'),
      HELM_CONFIG_HOME: join(scratch, 'helm-config'),
      HELM_DATA_HOME: join(scratch, 'helm-data'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 90_000,
  });
  return outputOf(child);
}

function succeeded(result: Result, what: string): string {
  expect(result.code, `${what}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** The objects of a multi-document YAML stream, keyed `Kind namespace/name` (comment-only documents dropped). */
function objectsOf(yamlText: string): Map<string, KubernetesObject> {
  const objects = new Map<string, KubernetesObject>();
  for (const document of parseAllDocuments(yamlText)) {
    if (document.errors.length > 0) throw new Error(`unparsable YAML: ${document.errors[0]?.message}`);
    const object = document.toJS() as KubernetesObject | null;
    if (object === null) continue;
    const key = `${object.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
    if (objects.has(key)) throw new Error(`${key} appears twice`);
    objects.set(key, object);
  }
  return objects;
}

async function manifestsOutput(args: readonly string[]): Promise<Result> {
  return runBinary(['manifests', ...args]);
}

async function chartOutput(values: Record<string, unknown>, extraArgs: readonly string[] = []): Promise<Result> {
  const file = join(scratch, `values-${uniqueName('v')}.json`);
  writeFileSync(file, JSON.stringify(values));
  return helm(['template', 'cloudscale-ccm', chartDir, '--namespace', CCM_NAMESPACE, '-f', file, ...extraArgs]);
}

/** The chart value of each flag, as a path into values.yaml: what the chart's errors name. */
const VALUE_PATH: Readonly<Record<string, string>> = {
  '--image': 'image',
  '--schedule': 'schedule',
  '--watch-for': 'watchFor',
  '--max-downtime': 'maxDowntime',
  '--window': 'window',
  '--pushgateway': 'pushgateway',
  '--api-server-host': 'apiServer.host',
  '--api-server-port': 'apiServer.port',
  '--admission-policy': 'admissionPolicy',
};

/** One way to give a flag: its command-line words and the chart values meaning the same. */
interface Sample {
  readonly args: readonly string[];
  readonly values: Record<string, unknown>;
}

function mergeValues(target: Record<string, unknown>, source: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    target[key] =
      typeof value === 'object' && value !== null && typeof existing === 'object' && existing !== null
        ? mergeValues({ ...(existing as Record<string, unknown>) }, value as Record<string, unknown>)
        : value;
  }
  return target;
}

/** `flag input` on the command line and the same input at the flag's value path, after `also`. */
function given(flag: string, input: string | number, ...also: readonly Sample[]): Sample {
  const path = VALUE_PATH[flag];
  if (path === undefined) throw new Error(`${flag} has no chart value in VALUE_PATH`);
  const own = path.split('.').reduceRight<unknown>((inner, key) => ({ [key]: inner }), input) as Record<string, unknown>;
  return {
    args: [...also.flatMap((sample) => sample.args), flag, String(input)],
    values: [...also.map((sample) => sample.values), own].reduce<Record<string, unknown>>((all, values) => mergeValues(all, values), {}),
  };
}

const API_SERVER_HOST = given('--api-server-host', '10.0.0.10');

/** Every flag of `manifests` with samples of it; a flag that needs another is given with it. */
const CHART_VALUE_OF_FLAG: Readonly<Record<string, readonly Sample[]>> = {
  '--image': [given('--image', 'registry.example.com/cloudscale-ccm:1.2.3')],
  '--schedule': ['*/5 * * * *', '@hourly', ' 0 3 1-15 jan,Jul MON-FRI '].map((input) => given('--schedule', input)),
  '--watch-for': [0, '2m', '0s'].map((input) => given('--watch-for', input)),
  '--max-downtime': ['90s', '1h0m30s', '500ms', '2d'].map((input) => given('--max-downtime', input)),
  '--window': ['Mon-Fri 02:00-04:00 Europe/Zurich=5m', ' sat,SUN-mon 22:30-24:00 UTC = 1.5m '].map((input) => given('--window', input)),
  '--pushgateway': [given('--pushgateway', 'http://pushgateway.monitoring:9091')],
  '--api-server-host': ['10.0.0.10', 'api.example.com', 'fd00::a'].map((input) => given('--api-server-host', input)),
  '--api-server-port': [given('--api-server-port', 7443, API_SERVER_HOST)],
  '--admission-policy': ['warn', 'none', 'deny'].map((input) => given('--admission-policy', input)),
};

/** The options of the `manifests` command as commander defines them (not the global ones). */
function manifestsFlags(): string[] {
  const manifests = programDefinition().commands.find((command) => command.name() === 'manifests');
  if (manifests === undefined) throw new Error('cloudscale-ccm has no manifests command');
  return manifests.options.map((option) => option.long ?? option.flags);
}

/** The defaults, each sample alone, and the first sample of every flag together. */
function optionSets(): { name: string; sample: Sample }[] {
  const sets = [{ name: 'defaults', sample: { args: [], values: {} } as Sample }];
  for (const [flag, samples] of Object.entries(CHART_VALUE_OF_FLAG)) {
    for (const sample of samples) sets.push({ name: `${flag}: ${sample.args.join(' ')}`, sample });
  }
  const firsts = Object.values(CHART_VALUE_OF_FLAG).map((samples) => samples[0] as Sample);
  sets.push({
    name: 'every flag',
    sample: {
      args: firsts.flatMap((sample) => sample.args),
      values: firsts.reduce<Record<string, unknown>>((all, sample) => mergeValues(all, sample.values), {}),
    },
  });
  return sets;
}

describe('helm template renders what manifests prints', () => {
  test('every flag of manifests has a chart value', () => {
    const flags = manifestsFlags().sort();
    expect(flags).toEqual(Object.keys(CHART_VALUE_OF_FLAG).sort());
    expect(flags).toEqual(Object.keys(VALUE_PATH).sort());
  });

  test.each(optionSets().map((set) => [set.name, set.sample] as const))('%s', async (_name, sample) => {
    const expected = objectsOf(succeeded(await manifestsOutput(sample.args), 'manifests'));
    const rendered = objectsOf(succeeded(await chartOutput(sample.values), 'helm template'));
    expect([...rendered.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [key, object] of expected) expect(rendered.get(key), key).toStrictEqual(object);
  });
});

/** Input `manifests` refuses, as flags and as chart values, and words both errors contain. */
interface Refusal {
  readonly name: string;
  readonly args: readonly string[];
  readonly values: Record<string, unknown>;
  readonly flag: string;
  /** What the chart's error names: the value's path, or the schema's pointer to it. */
  readonly value: string;
  readonly says: string;
}

/** `flag input` given to both, and what both errors say. */
function refusal(name: string, flag: string, input: string | number, says: string, differently: Partial<Refusal> = {}): Refusal {
  return { name, flag, says, ...given(flag, input), value: VALUE_PATH[flag] as string, ...differently };
}

const REFUSED: readonly Refusal[] = [
  refusal('a schedule of four fields', '--schedule', '* * * *', 'expected 5 fields'),
  refusal('a minute out of range', '--schedule', '61 * * * *', 'minute field "61"'),
  refusal('a weekday name that is none', '--schedule', '0 0 * * FUN', 'day-of-week field "FUN"'),
  refusal('a step of 0', '--schedule', '*/0 * * * *', 'minute field "*/0"'),
  refusal('a time zone', '--schedule', 'TZ=UTC * * * * *', 'time zones are not accepted'),
  refusal('an unknown macro', '--schedule', '@every 5m', 'unknown macro'),
  refusal('an empty schedule', '--schedule', ' ', 'empty'),
  refusal('a watch of part of a second', '--watch-for', '1.5s', 'whole seconds under an hour'),
  refusal('a watch of an hour', '--watch-for', '1h', 'whole seconds under an hour'),
  refusal('a watch without unit', '--watch-for', 90, 'has no unit'),
  refusal('a budget without unit', '--max-downtime', '10', 'has no unit'),
  // `--set maxDowntime=20` gives a number, not a string: the same message, not a schema error.
  refusal('a budget given as a number', '--max-downtime', 20, 'write a duration like 0s, 15s'),
  refusal('a watch given as a number', '--watch-for', 1.5, 'has no unit'),
  refusal('a negative budget', '--max-downtime', '-5s', 'a negative duration', { args: ['--max-downtime=-5s'] }),
  refusal('a window without times', '--window', 'Mon-Fri Europe/Zurich=5m', 'not a window'),
  refusal('a window on unknown days', '--window', 'Mon-Fry 02:00-04:00 UTC=5m', 'unknown days'),
  refusal('a window at 25 o’clock', '--window', 'daily 02:00-25:00 UTC=5m', 'not a time of day'),
  refusal('an empty window', '--window', 'daily 02:00-02:00 UTC=5m', 'the window is empty'),
  refusal('a window budget without unit', '--window', 'daily 02:00-04:00 UTC=5', 'has no unit'),
  refusal('a Pushgateway that is no http URL', '--pushgateway', 'ftp://pg:9091', 'must be an http:// or https:// URL'),
  refusal('a Pushgateway with a query', '--pushgateway', 'http://pg:9091/?job=x', 'query'),
  refusal('an image with a space', '--image', 'a b', 'is not an image reference'),
  refusal('a host with a scheme', '--api-server-host', 'https://10.0.0.10', 'neither an IP address nor a DNS name'),
  refusal('a host with a port', '--api-server-host', 'api.example.com:6443', 'neither an IP address nor a DNS name'),
  refusal('a port without host', '--api-server-port', 7443, 'needs'),
  refusal('an admission policy mode that is none', '--admission-policy', 'block', 'deny, warn, none'),
  refusal('a port out of range', '--api-server-port', 70000, '65535', { ...given('--api-server-port', 70000, API_SERVER_HOST), value: 'apiServer/port' }),
];

describe('what manifests refuses, the chart refuses', () => {
  test.each(REFUSED.map((c) => [c.name, c] as const))('%s', async (_name, refused) => {
    const cli = await manifestsOutput(refused.args);
    expect(cli.code, cli.stdout).toBe(1);
    expect(cli.stderr).toContain(refused.flag);
    expect(cli.stderr.replaceAll('–', '-').replaceAll(',', '')).toContain(refused.says.replaceAll(',', ''));
    const chart = await chartOutput(refused.values);
    expect(chart.code, chart.stdout).not.toBe(0);
    expect(chart.stdout).toBe('');
    expect(chart.stderr).toContain(refused.value);
    expect(chart.stderr.replaceAll(',', '')).toContain(refused.says.replaceAll(',', ''));
  });

  test('a value the chart does not know (a typo) is refused, naming it', async () => {
    const chart = await chartOutput({ schedul: '*/5 * * * *' });
    expect(chart.code).not.toBe(0);
    expect(chart.stderr).toContain('schedul');
  });
});

describe('the chart itself', () => {
  test('helm lint --strict passes', async () => {
    const lint = succeeded(await helm(['lint', '--strict', chartDir]), 'helm lint');
    expect(lint).toContain('0 chart(s) failed');
    expect(lint).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  test("its version and appVersion are the package's", () => {
    const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    expect({ version: chart.version, appVersion: chart.appVersion }).toEqual({ version: VERSION, appVersion: VERSION });
  });
});

/**
 * The schedule of the CronJobs installed here: February 31st never comes, so no Job starts even
 * in a cluster with controllers (TEST_KUBECONFIG, or while the CronJob test runs its own).
 */
const NEVER = { args: ['--schedule', '0 0 31 2 *'], helm: ['--set', 'schedule=0 0 31 2 *'] } as const;

/** The object as the API server has it now, or undefined when it does not exist. */
function live(object: KubernetesObject): Promise<KubernetesObject | undefined> {
  return KubernetesObjectApi.makeApiClient(rbac.adminConfig())
    .read(object as KubernetesObject & { metadata: { name: string } })
    .then(
      (found) => found as KubernetesObject,
      (error: unknown) => {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw error;
      },
    );
}

async function objectsLeft(objects: Iterable<[string, KubernetesObject]>): Promise<string[]> {
  const left: string[] = [];
  for (const [key, object] of objects) if ((await live(object)) !== undefined) left.push(key);
  return left;
}

/** The release of the chart a describe installs: its record in a namespace of its own. */
function chartRelease(prefix: string) {
  const release = 'cloudscale-ccm';
  const namespace = uniqueName(prefix);
  const where = () => ['--namespace', namespace, '--kubeconfig', testKubeconfig()];
  let installed = false;
  return {
    namespace,
    async install(...extra: string[]): Promise<Result> {
      await ensureNamespace(namespace);
      const result = await helm(['install', release, chartDir, ...where(), ...NEVER.helm, ...extra]);
      installed ||= result.code === 0;
      return result;
    },
    upgrade: (...extra: string[]) => helm(['upgrade', release, chartDir, ...where(), ...extra]),
    async uninstall(): Promise<Result> {
      installed = false;
      return helm(['uninstall', release, ...where()]);
    },
    /** For afterAll: uninstalls what a failed test left installed. */
    async cleanUp(): Promise<void> {
      if (installed) await helm(['uninstall', release, ...where()]);
    },
  };
}

/**
 * Passes of earlier test files (run with the admin's credentials) leave the status ConfigMap in
 * kube-system; a fresh install expects none, as on a cluster where no pass ran from a terminal
 * (the describe 'a status record written before the install' covers the other case).
 */
async function removeLeftoverStatusRecord(): Promise<void> {
  await testConnection()
    .core.deleteNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME })
    .catch((error: unknown) => {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    });
}

describe('helm install into the test cluster', () => {
  const chart = chartRelease('helm-chart');
  let expected: Map<string, KubernetesObject>;
  let createdLeaseVersion: string | undefined;

  beforeAll(async () => {
    expected = objectsOf(succeeded(await manifestsOutput(NEVER.args), 'manifests'));
    createdLeaseVersion = await rbac.ensureLeaseExists();
    await removeLeftoverStatusRecord();
    succeeded(await chart.install(), 'helm install');
  });

  afterAll(async () => {
    await deleteCreatedObjects();
    await rbac.deleteLeaseIfUnchanged(createdLeaseVersion);
    await chart.cleanUp();
  });

  test('the live objects are the manifests’ objects, the RBAC rules exactly', async () => {
    for (const [key, object] of expected) expect(await live(object), key).toMatchObject(object as object);
    const clusterRole = [...expected.values()].find((o) => o.kind === 'ClusterRole') as KubernetesObject;
    const role = [...expected.values()].find((o) => o.kind === 'Role') as KubernetesObject;
    expect(((await live(clusterRole)) as { rules: unknown }).rules).toEqual(CLUSTER_RULES.map((r) => r.rule));
    expect(((await live(role)) as { rules: unknown }).rules).toEqual(KUBE_SYSTEM_RULES.map((r) => r.rule));
  });

  test('a token of its ServiceAccount may make every request of the RBAC test, and none it must refuse', async () => {
    const clients = rbac.clientsWithToken(await rbac.tokenFor(CCM_NAME));
    await rbac.eventually('every required step is allowed', async () =>
      (await Promise.all(rbac.REQUIRED_STEPS.map((s) => rbac.allowed(clients.authorization, s.attributes)))).every(Boolean),
    );
    const refused: string[] = [];
    for (const step of rbac.REQUIRED_STEPS) {
      if ((await rbac.outcomeOf(step, clients)) !== 'allowed') refused.push(step.name);
    }
    expect(refused).toEqual([]);
    const granted: string[] = [];
    for (const attributes of rbac.NOT_GRANTED) {
      if (await rbac.allowed(clients.authorization, attributes)) granted.push(rbac.describeAttributes(attributes));
    }
    expect(granted).toEqual([]);
  });

  test('`run` with that token initialises a Node and gives a Service its load balancer', async () => {
    const conn = rbac.connectionWithToken(await rbac.tokenFor(CCM_NAME), scratch);
    const prefix = uniqueName('helm-run');
    const harness = await startHarness({ seed: lbSeed(prefix, 1) });
    try {
      await createNode(serverName(prefix, 1), { ready: true, taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] });
      const service = await createLoadBalancerService('default', uniqueName('helm-run-web'));
      expect((await rbac.runPassAs(conn, harness)).err()).toBe('');
      const core = testConnection().core;
      expect((await core.readNode({ name: serverName(prefix, 1) })).spec?.providerID).toMatch(/^cloudscale:\/\//);
      const stored = await core.readNamespacedService({ namespace: 'default', name: service.metadata?.name ?? '' });
      expect(stored.status?.loadBalancer?.ingress?.length ?? 0).toBeGreaterThan(0);
    } finally {
      await harness.stop();
    }
  });

  test('helm upgrade changes the CronJob and keeps what the pass recorded in the status ConfigMap', async () => {
    const core = testConnection().core;
    const recorded = (await core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME })).data ?? {};
    expect(Object.keys(recorded)).toContain('run');
    succeeded(await chart.upgrade('--reuse-values', '--set', 'schedule=0 0 30 2 *'), 'helm upgrade');
    const cronJob = await rbac.adminConfig().makeApiClient(BatchV1Api).readNamespacedCronJob({ namespace: CCM_NAMESPACE, name: CCM_NAME });
    expect(cronJob.spec?.schedule).toBe('0 0 30 2 *');
    expect((await core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME })).data).toEqual(recorded);
  });

  test('helm uninstall removes every object', async () => {
    succeeded(await chart.uninstall(), 'helm uninstall');
    expect(await objectsLeft(expected)).toEqual([]);
  });
});

describe('switching a deployment of manifests over to the chart', () => {
  const chart = chartRelease('helm-adopt');
  let applied: Map<string, KubernetesObject>;

  beforeAll(async () => {
    applied = objectsOf(succeeded(await manifestsOutput(NEVER.args), 'manifests'));
    const api = KubernetesObjectApi.makeApiClient(rbac.adminConfig());
    for (const object of applied.values()) {
      await api.patch(object, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
    }
  });

  afterAll(async () => {
    await chart.cleanUp();
    const api = KubernetesObjectApi.makeApiClient(rbac.adminConfig());
    for (const object of applied.values()) {
      await api.delete(object).catch((error: unknown) => {
        if (!(error instanceof ApiException && error.code === 404)) throw error;
      });
    }
  });

  test('helm install refuses objects it does not own yet, naming one', async () => {
    const refused = await chart.install();
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/exists and cannot be imported into the current release/);
  });

  test('labelled and annotated as docs/deploy.md says, they are taken over in place', async () => {
    const uids = new Map<string, string | undefined>();
    for (const [key, object] of applied) uids.set(key, (await live(object))?.metadata?.uid);
    // What `kubectl label -f -` and `kubectl annotate -f -` of the manifests do to each object.
    const api = KubernetesObjectApi.makeApiClient(rbac.adminConfig());
    for (const object of applied.values()) {
      const { apiVersion, kind, metadata } = object;
      await api.patch(
        {
          apiVersion,
          kind,
          metadata: {
            name: metadata?.name,
            namespace: metadata?.namespace,
            labels: { 'app.kubernetes.io/managed-by': 'Helm' },
            annotations: { 'meta.helm.sh/release-name': 'cloudscale-ccm', 'meta.helm.sh/release-namespace': chart.namespace },
          },
        },
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch,
      );
    }
    succeeded(await chart.install(), 'helm install after labelling and annotating');
    for (const [key, object] of applied) {
      const now = await live(object);
      expect(now?.metadata?.uid, `${key} was recreated`).toBe(uids.get(key));
      expect(now, key).toMatchObject(object as object);
    }
    succeeded(await chart.uninstall(), 'helm uninstall');
    expect(await objectsLeft(applied)).toEqual([]);
  });
});

describe('a status record written before the install (a terminal pass, as after the quick start)', () => {
  const chart = chartRelease('helm-record');
  const record = { 'run-before-helm': '{"command":"run","result":"succeeded"}' };

  beforeAll(async () => {
    const core = testConnection().core;
    await core
      .createNamespacedConfigMap({ namespace: CCM_NAMESPACE, body: { metadata: { name: STATUS_CONFIGMAP_NAME }, data: record } })
      .catch(async (error: unknown) => {
        if (!(error instanceof ApiException && error.code === 409)) throw error;
        await core.patchNamespacedConfigMap(
          { namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME, body: { data: record } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      });
  });

  afterAll(() => chart.cleanUp());

  test('the README’s helm install succeeds and leaves the ConfigMap with its record; uninstall leaves it too', async () => {
    succeeded(await chart.install(), 'helm install');
    const read = () => testConnection().core.readNamespacedConfigMap({ namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME });
    expect((await read()).data).toMatchObject(record);
    succeeded(await chart.upgrade('--reuse-values', '--set', 'schedule=0 0 30 2 *'), 'helm upgrade');
    succeeded(await chart.uninstall(), 'helm uninstall');
    expect((await read()).data).toMatchObject(record);
  });
});
