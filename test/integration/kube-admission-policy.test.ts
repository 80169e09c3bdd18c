// @kube-versions: all — the admission policy runs in the API server: its CEL (libraries, cost limits, messages) must agree with the tool on every version
// The admission policy of `manifests` (src/core/deploy/admission-policy.ts) on a real
// kube-apiserver, run against every tested Kubernetes version (test/run-tests.sh, `kube-*`):
// - for every annotation of the table, good and bad values: a server-side dry-run create of a
//   Service is refused by the policy exactly when the tool's parser refuses the value, with the
//   tool's message (without the quoted value);
// - the annotations only the tool checks (JSON values, the node selector) pass the policy;
// - a Service that is not ours (another type, a loadBalancerClass) is not checked;
// - a bad value the Service already had does not block later writes (the tool's finalizer),
//   while changing it to another bad value is refused;
// - a Service that becomes ours (ClusterIP or NodePort changed to LoadBalancer) is judged on
//   every value it carries, as if created so; one that stops being ours is not judged;
// - with validationActions Warn the Service is created and the API server sends the message as
//   a warning.
import { KubernetesObjectApi, setHeaderOptions, type KubernetesObject, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { admissionPolicyManifests } from '../../src/core/deploy/manifests.js';
import { ADMISSION_POLICY_NAME, ADMISSION_RULES } from '../../src/core/deploy/admission-policy.js';
import { LB_ANNOTATIONS, LB_NAME_MAX_CHARACTERS, parseLbAnnotations, type LbAnnotationName } from '../../src/core/lb/annotations.js';
import { quoteUntrusted } from '../../src/core/text/untrusted.js';
import { ensureNamespace, ignoreNotFound, statusOf, testConnection, uniqueName, waitUntil } from '../support/kube.js';
import { adminConfig } from '../support/rbac.js';

const namespace = uniqueName('admission');

/** Good and bad values of every annotation; the tool's parser says which is which. */
const VALUES: { readonly [K in LbAnnotationName]: readonly string[] } = {
  uuid: ['c3f3e0e4-0000-4000-8000-000000000001', 'anything', ''],
  configVersion: ['1', '7', 'x'],
  name: ['my-lb', ' my lb ', 'Zürich – web 🌐', '🌐'.repeat(LB_NAME_MAX_CHARACTERS), '', '   ', '\t\n', 'web\nlb', 'web\u007f', 'tab\there', 'a\u202eb', 'x'.repeat(LB_NAME_MAX_CHARACTERS + 1), '\u00a0\u3000'],
  flavor: ['lb-standard', 'lb-flex-4-2', 'LB Standard', '', '-lb', 'lb_standard'],
  zone: ['rma1', '', 'RMA1', 'rma 1'],
  vipAddresses: ['[]', '{', '["x"]'],
  floatingIps: ['["192.0.2.1/32"]', '192.0.2.1/32', '[1]'],
  poolAlgorithm: ['round_robin', 'least_connections', 'source_ip', 'random', 'ROUND_ROBIN', ''],
  poolProtocol: ['tcp', 'proxy', 'proxyv2', 'udp', 'PROXY'],
  forceHostname: ['lb.example.com', '', '01.2.3.4', `${'a'.repeat(63)}.example.com`, 'Not_A_Host', '192.0.2.1', 'lb.example.com.', `${'a.'.repeat(126)}ab`, '-lb.example.com'],
  ipMode: ['Proxy', 'VIP', 'proxy', '', 'vip '],
  healthMonitorDelayS: ['1', ' 60 ', '+5', '0005', '9007199254740991', '\u00a07\u3000', 'a', '1.5', '0', '-1', '', '9007199254740992', '99999999999999999999', '1e3', '１', '- 1'],
  healthMonitorTimeoutS: ['1', '0', 'x'],
  healthMonitorUpThreshold: ['10', '1', '11', '0'],
  healthMonitorDownThreshold: ['3', '11', '-0'],
  healthMonitorType: ['ping', 'tcp', 'http', 'https', 'tls-hello', 'udp-connect', 'HTTP', 'udp'],
  healthMonitorHttp: ['{}', '{"version":"2"}', 'x'],
  listenerProtocol: ['tcp', 'udp', 'TCP'],
  listenerAllowedCidrs: ['[]', '["x"]', '{'],
  timeoutClientDataMs: ['50000', '86400000', '86400001', '000000000000000000086400000'],
  timeoutMemberConnectMs: ['5000', '0'],
  timeoutMemberDataMs: ['1', '86400001'],
  listenerAllowedSubnets: ['[]', '{'],
  nodeSelector: ['env=prod', 'Bad Key=x', 'a in (b'],
  approveChange: ['0123456789', ' 0123456789\n', '', '  ', 'abc', 'ABCDEF0123', '0123456789a', 'abc,def'],
  announcedChanges: ['a,b', '', '!'],
};

/** What the tool says about these annotations: the message of each refused one. */
function toolMessages(annotations: Record<string, string>): string[] {
  const result = parseLbAnnotations(annotations);
  if (result.ok) return [];
  return result.errors.map((error) => error.message.replace(` invalid value ${quoteUntrusted(annotations[error.annotation]!)}:`, ''));
}

function serviceBody(name: string, annotations: Record<string, string>, spec: Partial<V1Service['spec']> = {}): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, annotations },
    spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }], ...spec },
  };
}

/** The message of an API error: the Status object's, or the error's own. */
function messageOf(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  const parsed = typeof body === 'string' ? (JSON.parse(body) as { message?: string }) : (body as { message?: string } | undefined);
  return parsed?.message ?? String(error);
}

/** What the API server does with a dry-run create: the policy's messages, or [] when created. */
async function admissionMessages(annotations: Record<string, string>, spec: Partial<V1Service['spec']> = {}): Promise<string[]> {
  try {
    await testConnection().core.createNamespacedService({ namespace, body: serviceBody(uniqueName('svc'), annotations, spec), dryRun: 'All' });
    return [];
  } catch (error) {
    const message = messageOf(error);
    if (!message.includes(ADMISSION_POLICY_NAME)) throw error;
    return policyMessages(message);
  }
}

/** The annotation messages inside an API server's error or warning text. */
function policyMessages(text: string): string[] {
  const keys = Object.values(LB_ANNOTATIONS).map((d) => d.key);
  const found: string[] = [];
  for (const key of keys) {
    const start = text.indexOf(`${key}: `);
    if (start === -1) continue;
    const rest = text.slice(start);
    const format = Object.values(LB_ANNOTATIONS).find((d) => d.key === key)!.format;
    const end = rest.indexOf(`; expected ${format}`);
    found.push(end === -1 ? rest : rest.slice(0, end + `; expected ${format}`.length));
  }
  return found;
}

const objectApi = () => KubernetesObjectApi.makeApiClient(adminConfig());
const [policy, binding] = admissionPolicyManifests('deny').map((m) => m.object) as [KubernetesObject, KubernetesObject & { spec: { validationActions: string[] } }];

/** A Service with a bad flavor, created before the policy: it carries a value the policy refuses. */
const preexisting = uniqueName('before-policy');
const BAD_FLAVOR = { [LB_ANNOTATIONS.flavor.key]: 'LB Standard' };

beforeAll(async () => {
  await ensureNamespace(namespace);
  await testConnection().core.createNamespacedService({ namespace, body: serviceBody(preexisting, BAD_FLAVOR) });
  await objectApi().create(policy);
  await objectApi().create(binding);
  // The API server picks a new policy up from its informer: wait until it refuses.
  await waitUntil('the admission policy is active', async () => (await admissionMessages(BAD_FLAVOR)).length > 0);
});

afterAll(async () => {
  await ignoreNotFound(objectApi().delete(binding));
  await ignoreNotFound(objectApi().delete(policy));
  await ignoreNotFound(
    testConnection().core.patchNamespacedService(
      { namespace, name: preexisting, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
      setHeaderOptions('Content-Type', 'application/json-patch+json'),
    ).catch(() => undefined),
  );
  await ignoreNotFound(testConnection().core.deleteNamespacedService({ namespace, name: preexisting }));
});

const cases = (Object.keys(VALUES) as LbAnnotationName[]).flatMap((name) =>
  VALUES[name].map((raw) => ({ name, raw, key: LB_ANNOTATIONS[name].key })),
);

describe('the policy refuses exactly what the tool refuses, with its message', () => {
  test.each(cases.map((c) => [c.key, JSON.stringify(c.raw), c] as const))('%s: %s', async (_key, _raw, { name, raw, key }) => {
    const annotations = { [key]: raw };
    const tool = toolMessages(annotations);
    const onlyTheTool = ADMISSION_RULES[name].kind === 'tool-only';
    expect(await admissionMessages(annotations)).toEqual(onlyTheTool ? [] : tool);
  });

  test('the table has good and bad values of every annotation the policy checks', () => {
    for (const name of Object.keys(VALUES) as LbAnnotationName[]) {
      if (['any', 'tool-only'].includes(ADMISSION_RULES[name].kind)) continue;
      const refused = VALUES[name].filter((raw) => toolMessages({ [LB_ANNOTATIONS[name].key]: raw }).length > 0);
      expect(refused.length, name).toBeGreaterThan(0);
      expect(refused.length, name).toBeLessThan(VALUES[name].length);
    }
  });

  test.each([
    ['a bad ip-mode beside a valid force-hostname (never read)', { ipMode: 'bogus', forceHostname: 'lb.example.com' }],
    ['a bad ip-mode beside an empty force-hostname', { ipMode: 'bogus', forceHostname: '' }],
    ['a bad ip-mode beside a bad force-hostname', { ipMode: 'bogus', forceHostname: 'Not_A_Host' }],
    ['three bad values at once', { flavor: 'X', healthMonitorDelayS: '0', approveChange: 'nope' }],
  ] as const)('%s', async (_name, values) => {
    const annotations = Object.fromEntries(Object.entries(values).map(([name, raw]) => [LB_ANNOTATIONS[name as LbAnnotationName].key, raw]));
    // The API server denies with the first failed validation; the tool (its Event) lists all,
    // both in the table's order.
    expect(await admissionMessages(annotations)).toEqual(toolMessages(annotations).slice(0, 1));
  });
});

describe('what the policy leaves alone', () => {
  test.each([
    ['a ClusterIP Service', { type: 'ClusterIP' }],
    ['a Service of another load balancer class', { loadBalancerClass: 'example.com/other' }],
  ] as const)('%s with a bad annotation', async (_name, spec) => {
    expect(await admissionMessages(BAD_FLAVOR, spec)).toEqual([]);
  });

  test('a bad value the Service already had does not block a write that keeps it (the tool adding its finalizer)', async () => {
    const core = testConnection().core;
    const patched = await core.patchNamespacedService(
      { namespace, name: preexisting, body: [{ op: 'add', path: '/metadata/finalizers', value: ['service.kubernetes.io/load-balancer-cleanup'] }] },
      setHeaderOptions('Content-Type', 'application/json-patch+json'),
    );
    expect(patched.metadata?.finalizers).toEqual(['service.kubernetes.io/load-balancer-cleanup']);
  });

  test('changing it to another bad value is refused; to a good one, accepted', async () => {
    const core = testConnection().core;
    const patch = (flavor: string) =>
      core.patchNamespacedService(
        { namespace, name: preexisting, body: [{ op: 'replace', path: `/metadata/annotations/${LB_ANNOTATIONS.flavor.key.replace('/', '~1')}`, value: flavor }] },
        setHeaderOptions('Content-Type', 'application/json-patch+json'),
      );
    const refused = await patch('Still Bad').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(statusOf(refused)).toBeDefined();
    // What kubectl prints after "Error from server": docs/deploy.md shows it.
    expect(messageOf(refused)).toMatch(
      new RegExp(`^services "${preexisting}" is forbidden: ValidatingAdmissionPolicy '${ADMISSION_POLICY_NAME}' with binding '${ADMISSION_POLICY_NAME}' denied request: ${LB_ANNOTATIONS.flavor.key}: `),
    );
    expect(policyMessages(messageOf(refused))).toEqual(toolMessages({ [LB_ANNOTATIONS.flavor.key]: 'Still Bad' }));
    expect((await patch('lb-standard')).metadata?.annotations?.[LB_ANNOTATIONS.flavor.key]).toBe('lb-standard');
  });
});

describe('a Service that becomes a load balancer of the tool is judged on every value it carries', () => {
  const BAD_DELAY = { [LB_ANNOTATIONS.healthMonitorDelayS.key]: '0' };
  const GOOD = { [LB_ANNOTATIONS.healthMonitorDelayS.key]: '5', [LB_ANNOTATIONS.flavor.key]: 'lb-standard' };

  /** A dry-run JSON merge patch of Service `name`. */
  const mergePatch = (name: string, body: object) =>
    testConnection().core.patchNamespacedService({ namespace, name, body, dryRun: 'All' }, setHeaderOptions('Content-Type', 'application/merge-patch+json'));

  /** Creates a Service of type `from` with `annotations`, then dry-run patches it to `to`: the API server's error, or undefined. */
  async function changeType(from: 'ClusterIP' | 'NodePort', annotations: Record<string, string>, to: { type: 'LoadBalancer'; loadBalancerClass?: string }): Promise<unknown> {
    const core = testConnection().core;
    const name = uniqueName(from.toLowerCase());
    await core.createNamespacedService({ namespace, body: serviceBody(name, annotations, { type: from }) });
    try {
      const patched = await mergePatch(name, { spec: to });
      expect(patched.spec?.type).toBe(to.type);
      return undefined;
    } catch (error) {
      return error;
    } finally {
      await core.deleteNamespacedService({ namespace, name });
    }
  }

  test.each(['ClusterIP', 'NodePort'] as const)('%s to LoadBalancer with a bad value: refused with the tool’s message', async (from) => {
    const refused = await changeType(from, BAD_DELAY, { type: 'LoadBalancer' });
    expect(statusOf(refused)).toBe(422);
    expect(messageOf(refused)).toMatch(
      new RegExp(`^services "[^"]+" is forbidden: ValidatingAdmissionPolicy '${ADMISSION_POLICY_NAME}' with binding '${ADMISSION_POLICY_NAME}' denied request: `),
    );
    expect(toolMessages(BAD_DELAY)).toHaveLength(1);
    expect(policyMessages(messageOf(refused))).toEqual(toolMessages(BAD_DELAY));
  });

  test.each(['ClusterIP', 'NodePort'] as const)('%s to LoadBalancer with good values: accepted', async (from) => {
    expect(toolMessages(GOOD)).toEqual([]);
    expect(await changeType(from, GOOD, { type: 'LoadBalancer' })).toBeUndefined();
  });

  test('ClusterIP to LoadBalancer of another load balancer class, with a bad value: accepted (not ours)', async () => {
    expect(await changeType('ClusterIP', BAD_DELAY, { type: 'LoadBalancer', loadBalancerClass: 'example.com/other' })).toBeUndefined();
  });

  test('a load balancer changed to ClusterIP, a bad value added on the way: accepted (no longer ours)', async () => {
    const patched = await mergePatch(preexisting, { metadata: { annotations: BAD_DELAY }, spec: { type: 'ClusterIP' } });
    expect(patched.spec?.type).toBe('ClusterIP');
    expect(patched.metadata?.annotations).toMatchObject(BAD_DELAY);
  });
});

describe('validationActions Warn', () => {
  beforeAll(async () => {
    await objectApi().patch({ ...binding, spec: { ...binding.spec, validationActions: ['Warn'] } });
  });

  test('the Service is created and the API server warns with the message of each malformed value', async () => {
    const annotations = { [LB_ANNOTATIONS.healthMonitorDelayS.key]: '0', [LB_ANNOTATIONS.flavor.key]: 'X' };
    let warning = '';
    const options = setHeaderOptions('X-Admission-Test', 'warn');
    const base = options.middleware![0]!;
    options.middleware![0] = {
      pre: (request) => base.pre(request),
      post: (response) => {
        // Header values arrive as bytes read one per character (the API server sends UTF-8), each
        // warning as `299 - "text"` with `"` and `\` escaped.
        warning = Buffer.from(response.headers.warning ?? '', 'latin1').toString('utf8').replace(/\\(.)/g, '$1');
        return base.post(response);
      },
    };
    await waitUntil('the binding warns instead of denying', async () => {
      const created = await testConnection()
        .core.createNamespacedService({ namespace, body: serviceBody(uniqueName('warned'), annotations), dryRun: 'All' }, options)
        .then(
          () => true,
          () => false,
        );
      return created && warning !== '';
    });
    expect(toolMessages(annotations)).toHaveLength(2);
    expect(policyMessages(warning)).toEqual(toolMessages(annotations));
  });
});
