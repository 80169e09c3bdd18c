import { STOP_DEFER_MS } from '../../src/core/stop.js';
import type { V1ClusterRole, V1CronJob, V1Role } from '@kubernetes/client-node';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { CommandContext, OutputFormat } from '../../src/commands/context.js';
import { manifestOptionsFrom, manifestsCommand } from '../../src/commands/manifests.js';
import { cronScheduleProblem } from '../../src/core/deploy/cron.js';
import {
  buildManifests,
  CLUSTER_RULES,
  DEFAULT_SCHEDULE,
  KUBE_SYSTEM_RULES,
  manifestsHeader,
  renderManifestsYaml,
  renderTokenSecretTemplate,
} from '../../src/core/deploy/manifests.js';
import { UsageError } from '../../src/core/errors.js';
import { parseWindow } from '../../src/core/plan/budget-window.js';
import { VERSION } from '../../src/version.js';

const deployFile = (name: string) => fileURLToPath(new URL(`../../deploy/${name}`, import.meta.url));

function cronJobOf(options = manifestOptionsFrom({ schedule: DEFAULT_SCHEDULE })): V1CronJob {
  const found = buildManifests(options).find((m) => m.object.kind === 'CronJob');
  if (found === undefined) throw new Error('no CronJob built');
  return found.object as V1CronJob;
}

/** A context for a command that only prints: any use of the cluster, cloud or stdin fails. */
function captureContext(output: OutputFormat): { ctx: CommandContext; text: () => string } {
  let written = '';
  const notUsed = () => {
    throw new Error('manifests must not talk to a cluster or the cloud');
  };
  const ctx = {
    globals: { output, color: false, verbose: false },
    stdout: { write: (text: string) => (written += text) },
    stderr: { write: () => true },
    env: {},
    signal: new AbortController().signal,
    kube: notUsed,
    cloudscale: notUsed,
    clusterId: notUsed,
    readStdin: notUsed,
  } as unknown as CommandContext;
  return { ctx, text: () => written };
}

describe('cronScheduleProblem', () => {
  test.each([
    '* * * * *',
    '*/2 * * * *',
    '0,15,30,45 * * * *',
    '5-55/10 1-5 * JAN-MAR mon-fri',
    '0 3 1 * ?',
    '  * * * * *  ',
    '@hourly',
    '@DAILY',
  ])('accepts %j', (schedule) => {
    expect(cronScheduleProblem(schedule)).toBeUndefined();
  });

  test.each([
    ['', 'the schedule is empty'],
    ['* * * *', 'expected 5 fields (minute hour day-of-month month day-of-week), got 4'],
    ['* * * * * *', 'expected 5 fields (minute hour day-of-month month day-of-week), got 6'],
    ['60 * * * *', 'minute field "60": "60" is not in 0–59'],
    ['* 24 * * *', 'hour field "24": "24" is not in 0–23'],
    ['* * 0 * *', 'day-of-month field "0": "0" is not in 1–31'],
    ['* * * 13 *', 'month field "13": "13" is not in 1–12 or JAN–DEC'],
    ['* * * * 7', 'day-of-week field "7": "7" is not in 0–6 or SUN–SAT'],
    ['*/0 * * * *', 'minute field "*/0": step "0" is not a whole number ≥ 1'],
    ['*/x * * * *', 'minute field "*/x": step "x" is not a whole number ≥ 1'],
    ['1/2/3 * * * *', 'minute field "1/2/3": more than one "/" in "1/2/3"'],
    ['30-10 * * * *', 'minute field "30-10": range "30-10" ends before it starts'],
    ['1-2-3 * * * *', 'minute field "1-2-3": "1-2-3" is not a value or a range a-b'],
    ['1,,2 * * * *', 'minute field "1,,2": empty list item'],
    ['@every 5m', 'unknown macro @every 5m (accepted: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)'],
    ['TZ=UTC * * * * *', 'time zones are not accepted in the schedule (the CronJob runs in the controller-manager time zone)'],
  ])('rejects %j', (schedule, problem) => {
    expect(cronScheduleProblem(schedule)).toBe(problem);
  });
});

describe('manifest options from flags', () => {
  test.each([
    [{ schedule: '* * * *' }, /^--schedule "\* \* \* \*": expected 5 fields/],
    [{ schedule: DEFAULT_SCHEDULE, image: 'has space:1' }, /^--image "has space:1" is not an image reference$/],
    [{ schedule: DEFAULT_SCHEDULE, apiServerPort: 6443 }, /^--api-server-port needs --api-server-host$/],
    [{ schedule: DEFAULT_SCHEDULE, apiServerHost: '10.0.0.1', apiServerPort: 70000 }, /^--api-server-port takes 1–65535, got 70000$/],
    [{ schedule: DEFAULT_SCHEDULE, apiServerHost: 'https://10.0.0.1:6443' }, /^--api-server-host "https:\/\/10.0.0.1:6443" is neither/],
  ])('%j is refused naming the flag', (options, message) => {
    let error: unknown;
    try {
      manifestOptionsFrom(options);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(message);
  });

  test('the schedule error hints at the field order', () => {
    expect(() => manifestOptionsFrom({ schedule: 'every minute' })).toThrow(
      expect.objectContaining({ hint: expect.stringContaining('minute hour day-of-month month day-of-week') }),
    );
  });

  test.each([
    [{ schedule: ' */5 * * * * ' }, { version: VERSION, schedule: '*/5 * * * *' }],
    [{ schedule: DEFAULT_SCHEDULE, image: 'reg.example/ccm:1' }, { version: VERSION, schedule: DEFAULT_SCHEDULE, image: 'reg.example/ccm:1' }],
    [
      { schedule: DEFAULT_SCHEDULE, apiServerHost: 'api.example.ch' },
      { version: VERSION, schedule: DEFAULT_SCHEDULE, apiServer: { host: 'api.example.ch', port: 6443 } },
    ],
    [
      { schedule: DEFAULT_SCHEDULE, apiServerHost: 'fd00::1', apiServerPort: 443 },
      { version: VERSION, schedule: DEFAULT_SCHEDULE, apiServer: { host: 'fd00::1', port: 443 } },
    ],
  ])('%j becomes %j', (flags, expected) => {
    expect(manifestOptionsFrom(flags)).toEqual(expected);
  });
});

describe('CronJob', () => {
  test('holds changes with downtime by default (--max-downtime 0s); manifests --max-downtime and --window set the budget', () => {
    const args = (options: Parameters<typeof manifestOptionsFrom>[0]) =>
      cronJobOf(manifestOptionsFrom(options)).spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!;
    expect(args({ schedule: '* * * * *' }).slice(-2)).toEqual(['--max-downtime', '0s']);
    const window = parseWindow('Mon-Fri 02:00-04:00 Europe/Zurich=5m');
    expect(args({ schedule: '* * * * *', maxDowntime: 90, window }).slice(-4)).toEqual(['--max-downtime', '1m30s', '--window', 'Mon-Fri 02:00-04:00 Europe/Zurich=5m']);
  });

  test('runs every minute by default, never two at once, one try per Job', () => {
    const spec = cronJobOf().spec;
    expect(spec).toMatchObject({
      schedule: '* * * * *',
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 50,
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 3,
      jobTemplate: { spec: { backoffLimit: 0, activeDeadlineSeconds: 900 } },
    });
  });

  test('SIGTERM gets the time to finish the step pair in progress and release the Lease (src/core/stop.ts)', () => {
    const grace = cronJobOf().spec?.jobTemplate.spec?.template.spec?.terminationGracePeriodSeconds;
    expect(grace).toBe(90);
    expect(grace! * 1000).toBeGreaterThanOrEqual(STOP_DEFER_MS + 30_000);
  });

  test('can start before the CNI on an uninitialised control-plane node', () => {
    const pod = cronJobOf().spec?.jobTemplate.spec?.template.spec;
    expect(pod).toMatchObject({ hostNetwork: true, dnsPolicy: 'Default', serviceAccountName: 'cloudscale-ccm' });
    expect(pod?.tolerations).toEqual([
      { key: 'node.cloudprovider.kubernetes.io/uninitialized', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'CriticalAddonsOnly', operator: 'Exists' },
    ]);
    expect(pod?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }] },
    ]);
  });

  test('runs non-root on a read-only root filesystem with the token from the Secret', () => {
    const pod = cronJobOf().spec?.jobTemplate.spec?.template.spec;
    expect(pod?.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod?.containers).toHaveLength(1);
    expect(pod?.containers[0]).toMatchObject({
      image: `localhost/cloudscale-ccm:${VERSION}`,
      args: expect.arrayContaining(['run', '--max-downtime', '0s']),
      env: [
        { name: 'CLOUDSCALE_API_TOKEN', valueFrom: { secretKeyRef: { name: 'cloudscale', key: 'access-token' } } },
      ],
      resources: { requests: { cpu: '50m', memory: '224Mi' }, limits: { cpu: '1', memory: '1Gi' } },
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
    });
  });

  test('flags set image, schedule and the API server address', () => {
    const job = cronJobOf(
      manifestOptionsFrom({ schedule: '*/5 * * * *', image: 'reg.example/ccm:2', apiServerHost: '10.0.0.10' }),
    );
    const container = job.spec?.jobTemplate.spec?.template.spec?.containers[0];
    expect(job.spec?.schedule).toBe('*/5 * * * *');
    expect(container?.image).toBe('reg.example/ccm:2');
    expect(container?.env?.slice(1)).toEqual([
      { name: 'KUBERNETES_SERVICE_HOST', value: '10.0.0.10' },
      { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
    ]);
  });
});

describe('RBAC', () => {
  const objects = buildManifests(manifestOptionsFrom({ schedule: DEFAULT_SCHEDULE })).map((m) => m.object);

  test('objects in apply order, all in kube-system or cluster-scoped', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`)).toEqual([
      'ServiceAccount/kube-system/cloudscale-ccm',
      'ClusterRole//cloudscale-ccm',
      'ClusterRoleBinding//cloudscale-ccm',
      'Role/kube-system/cloudscale-ccm',
      'RoleBinding/kube-system/cloudscale-ccm',
      'CronJob/kube-system/cloudscale-ccm',
      'ConfigMap/kube-system/cloudscale-ccm-status',
      'ValidatingAdmissionPolicy//cloudscale-ccm-annotations',
      'ValidatingAdmissionPolicyBinding//cloudscale-ccm-annotations',
    ]);
  });

  test('no wildcard, no secrets, names where RBAC can restrict them', () => {
    const rules = [...CLUSTER_RULES, ...KUBE_SYSTEM_RULES].map((r) => r.rule);
    for (const rule of rules) {
      expect([...(rule.verbs ?? []), ...(rule.resources ?? []), ...(rule.apiGroups ?? [])]).not.toContain('*');
      expect(rule.resources).not.toContain('secrets');
      if (rule.resources?.includes('leases') && !rule.verbs.includes('create')) {
        expect(rule.resourceNames).toBeDefined();
      }
    }
    expect(CLUSTER_RULES.find((r) => r.rule.resources?.includes('namespaces'))?.rule.resourceNames).toEqual(['kube-system']);
  });

  test('docs/deploy.md gives the purpose of every rule', () => {
    const docs = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');
    for (const { rule, purpose } of [...CLUSTER_RULES, ...KUBE_SYSTEM_RULES]) {
      const row = docs.split('\n').find((line) => line.startsWith('|') && line.endsWith(`| ${purpose} |`));
      expect(row, purpose).toBeDefined();
      expect(row).toContain(`| ${rule.verbs.join(', ')} |`);
    }
  });

  test('the built roles are exactly the documented rule tables', () => {
    const clusterRole = objects.find((o) => o.kind === 'ClusterRole') as V1ClusterRole;
    const role = objects.find((o) => o.kind === 'Role') as V1Role;
    expect(clusterRole.rules).toEqual(CLUSTER_RULES.map((r) => r.rule));
    expect(role.rules).toEqual(KUBE_SYSTEM_RULES.map((r) => r.rule));
  });
});

describe('rendering', () => {
  const manifests = buildManifests(manifestOptionsFrom({ schedule: DEFAULT_SCHEDULE }));

  test('YAML parses back to the same objects', () => {
    const documents = parseAllDocuments(renderManifestsYaml(manifests, manifestsHeader(VERSION)));
    expect(documents.map((d) => d.toJS())).toEqual(manifests.map((m) => m.object));
  });

  test('every RBAC rule carries its purpose as a comment', () => {
    const yaml = renderManifestsYaml(manifests);
    for (const { purpose } of [...CLUSTER_RULES, ...KUBE_SYSTEM_RULES]) {
      expect(yaml).toContain(`# ${purpose}\n`);
    }
  });

  test.each([
    ['cloudscale-ccm.yaml', () => renderManifestsYaml(manifests, manifestsHeader(VERSION))],
    ['secret.example.yaml', () => renderTokenSecretTemplate()],
  ])('deploy/%s is the generated output (UPDATE_DEPLOY=1 rewrites it)', (name, generate) => {
    const generated = generate();
    if (process.env.UPDATE_DEPLOY === '1') writeFileSync(deployFile(name), generated);
    expect(readFileSync(deployFile(name), 'utf8')).toBe(generated);
  });
});

describe('manifests command', () => {
  test('prints the multi-document YAML with the Secret only as a comment', async () => {
    const { ctx, text } = captureContext('text');
    await manifestsCommand({ schedule: DEFAULT_SCHEDULE }, ctx);
    expect(text()).toBe(readFileSync(deployFile('cloudscale-ccm.yaml'), 'utf8'));
    expect(text()).toContain('#   kubectl -n kube-system create secret generic cloudscale --from-literal=access-token=YOUR_TOKEN\n');
    expect(parseAllDocuments(text()).map((d) => (d.toJS() as { kind: string }).kind)).not.toContain('Secret');
  });

  test('prints a v1 List with -o json', async () => {
    const { ctx, text } = captureContext('json');
    await manifestsCommand({ schedule: '0 * * * *' }, ctx);
    const list = JSON.parse(text()) as { apiVersion: string; kind: string; items: { kind: string; spec?: { schedule?: string } }[] };
    expect(list.apiVersion).toBe('v1');
    expect(list.kind).toBe('List');
    expect(list.items.map((i) => i.kind)).toEqual(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'CronJob', 'ConfigMap', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    expect(list.items[5]?.spec?.schedule).toBe('0 * * * *');
  });

  test('a bad schedule fails before anything is printed', async () => {
    const { ctx, text } = captureContext('yaml');
    await expect(manifestsCommand({ schedule: '* * *' }, ctx)).rejects.toThrow(UsageError);
    expect(text()).toBe('');
  });
});

describe('manifests --pushgateway', () => {
  const argsOf = (options: Parameters<typeof manifestOptionsFrom>[0]) =>
    (buildManifests(manifestOptionsFrom(options)).find((m) => m.object.kind === 'CronJob')!.object as V1CronJob).spec!.jobTemplate.spec!
      .template.spec!.containers[0]!.args!;

  test("each Job's run pushes its metrics there; without the flag it pushes nowhere", () => {
    const args = argsOf({ schedule: DEFAULT_SCHEDULE, pushgateway: 'http://pushgateway.monitoring:9091' });
    expect(args[0]).toBe('run');
    expect(args.slice(args.indexOf('--pushgateway'), args.indexOf('--pushgateway') + 2)).toEqual(['--pushgateway', 'http://pushgateway.monitoring:9091']);
    expect(argsOf({ schedule: DEFAULT_SCHEDULE })).not.toContain('--pushgateway');
  });
});
