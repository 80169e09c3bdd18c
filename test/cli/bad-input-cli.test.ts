// The corpus of bad command lines, environments, kubeconfigs, manifests and API answers, run as
// a user runs the tool: the built binary against the real API server and the simulator. Each
// case names the message it must get (exit 1, `error: …` and `hint: …`, no stack trace), and
// proves that nothing was written: the simulator received no write request, and the Service the
// commands would otherwise reconcile is untouched (same resourceVersion, no Event about it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, TEST_TOKEN, type BinaryResult, type Harness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  deleteCreatedObjects,
  ensureNamespace,
  testConnection,
  testKubeconfig,
  testNoAccessKubeconfig,
  uniqueName,
} from '../support/kube.js';
import { closedPort, expectUserError } from './cli-support.js';
import { acquireLease } from '../../src/core/kube/lease.js';
import { RUN_LEASE } from '../../src/commands/writer.js';

let harness: Harness;
let dir: string;
const namespace = uniqueName('bad-cli');
const serviceName = 'web';
const fast = ['--settle-seconds', '0', '--poll-seconds', '0.05'];
const syncWeb = ['sync-lb', '-n', namespace, `service/${serviceName}`, ...fast];
const planWeb = ['plan', '-n', namespace, `service/${serviceName}`];

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** The test cluster's kubeconfig as an object, to derive broken ones from. */
function kubeconfigObject(): { clusters: { cluster: Record<string, unknown> }[] } & Record<string, unknown> {
  return parseYaml(readFileSync(testKubeconfig(), 'utf8')) as never;
}

function kubeconfigWith(name: string, change: (config: ReturnType<typeof kubeconfigObject>) => void): string {
  const config = kubeconfigObject();
  change(config);
  return file(name, toYaml(config));
}

function apiServerUrl(): string {
  return String(kubeconfigObject().clusters[0]!.cluster.server);
}

interface Case {
  readonly name: string;
  readonly args: () => readonly string[];
  readonly env?: () => NodeJS.ProcessEnv;
  readonly stdin?: () => string;
  /** Fragments of the error (and hint) the user must see. */
  readonly message: readonly (string | RegExp)[];
  /** Text of the input that must not be shown (a credential in it). */
  readonly hiddenText?: string;
  /** Faults of the simulator during the run. */
  readonly faults?: () => object;
}

const flagCases: Case[] = [
  { name: '--cluster-id empty', args: () => ['--cluster-id', '', ...syncWeb], message: ['--cluster-id must not be empty'] },
  { name: '--cluster-id blanks', args: () => ['--cluster-id', '   ', ...syncWeb], message: ['--cluster-id must not be empty'] },
  { name: '--cluster-id with spaces around', args: () => ['--cluster-id', ' prod ', ...syncWeb], message: ['has spaces around it'] },
  { name: '--cluster-id= empty', args: () => ['--cluster-id=', ...planWeb], message: ['--cluster-id must not be empty'] },
  { name: '--api-url plain http to a remote host', args: () => ['--api-url', 'http://api.cloudscale.ch', ...syncWeb], message: ['refusing to send the cloudscale API token in clear text to http://api.cloudscale.ch', /hint: use https:\/\/api\.cloudscale\.ch/] },
  { name: '--api-url plain http to a private address', args: () => ['--api-url', 'http://10.0.0.1:8080', ...syncWeb], message: ['in clear text to http://10.0.0.1:8080'] },
  { name: 'CLOUDSCALE_API_URL plain http', args: () => syncWeb, env: () => ({ CLOUDSCALE_API_URL: 'http://example.org/v1' }), message: ['CLOUDSCALE_API_URL', 'in clear text to http://example.org'] },
  { name: '--api-url ftp', args: () => ['--api-url', 'ftp://x', ...syncWeb], message: ['must use http or https'] },
  { name: '--api-url not a URL', args: () => ['--api-url', 'api.cloudscale.ch', ...syncWeb], message: ['is not a URL'] },
  { name: '--api-url with credentials', args: () => ['--api-url', 'https://user:pw@api.cloudscale.ch', ...syncWeb], message: ['must not contain a user name or password'] },
  { name: '--api-url with a query', args: () => ['--api-url', 'https://api.cloudscale.ch/?x=1', ...syncWeb], message: ['must not have a query or fragment'] },
  { name: 'CLOUDSCALE_API_TIMEOUT not a number', args: () => syncWeb, env: () => ({ CLOUDSCALE_API_TIMEOUT: 'abc' }), message: ['CLOUDSCALE_API_TIMEOUT="abc"'] },
  { name: 'CLOUDSCALE_API_TIMEOUT zero', args: () => syncWeb, env: () => ({ CLOUDSCALE_API_TIMEOUT: '0' }), message: ['CLOUDSCALE_API_TIMEOUT="0"'] },
  { name: 'CLOUDSCALE_API_TIMEOUT in ms', args: () => syncWeb, env: () => ({ CLOUDSCALE_API_TIMEOUT: '20000' }), message: ['from 1 to 3600'] },
  { name: '--token-file missing', args: () => ['--token-file', join(dir, 'absent'), ...syncWeb], message: ['cannot read the token file'] },
  { name: '--token-file empty', args: () => ['--token-file', file('empty-token', '\n'), ...syncWeb], message: ['is empty'] },
  { name: '--token-file two lines', args: () => ['--token-file', file('two-line-token', 'abc\ndef\n'), ...syncWeb], message: ['line breaks'] },
  { name: 'token with a space', args: () => syncWeb, env: () => ({ CLOUDSCALE_API_TOKEN: 'two words' }), message: ['CLOUDSCALE_API_TOKEN', 'contains spaces'] },
  { name: 'token with non-ASCII', args: () => syncWeb, env: () => ({ CLOUDSCALE_API_TOKEN: 'tökén-0123456789' }), message: ['non-ASCII'] },
  { name: '--context unknown', args: () => ['--context', 'nope', ...syncWeb], message: ['context "nope"'] },
  { name: '--kubeconfig missing', args: () => ['--kubeconfig', join(dir, 'absent.yaml'), ...syncWeb], message: ['does not exist'] },
  { name: '-o xml', args: () => ['-o', 'xml', ...syncWeb], message: ['--output', "'xml'"] },
  { name: '--concurrency 0', args: () => [...syncWeb, '--concurrency', '0'], message: ['--concurrency', '"0"'] },
  { name: '--wait-timeout -5', args: () => [...syncWeb, '--wait-timeout', '-5'], message: ['--wait-timeout', '"-5"'] },
  { name: '--settle-seconds x', args: () => [...syncWeb, '--settle-seconds', 'x'], message: ['--settle-seconds', '"x"'] },
  { name: '--poll-seconds empty', args: () => [...syncWeb, '--poll-seconds', ''], message: ['--poll-seconds', '""'] },
  { name: 'Service given as namespace/name', args: () => ['sync-lb', '-n', namespace, `${namespace}/${serviceName}`], message: ['Service'] },
  { name: 'Service of another kind', args: () => ['sync-lb', '-n', namespace, `deployment/${serviceName}`], message: ['"deployment/web"'] },
  { name: 'unknown subcommand', args: () => ['synclb'], message: ["unknown command 'synclb'"] },
  { name: 'unknown flag', args: () => [...syncWeb, '--dryrun'], message: ["unknown option '--dryrun'"] },
  { name: 'plan -f and a Service', args: () => [...planWeb, '-f', join(dir, 'x.yaml')], message: ['not both'] },
  { name: 'plan -f a missing file', args: () => ['plan', '-f', join(dir, 'absent.yaml')], message: ['cannot read manifest', /hint: .*-f/] },
];

const kubeconfigCases: Case[] = [
  { name: 'not YAML', args: () => ['--kubeconfig', file('kc-garbage', 'clusters: [\n  - {'), ...syncWeb], message: ['cannot load the Kubernetes configuration'] },
  {
    name: 'a syntax error next to a credential (not quoted back)',
    args: () => ['-v', '--kubeconfig', file('kc-credential', 'users:\n- name: u\n  user:\n    token: kubeconfig-credential-0123456789\n   bad: : :\n'), ...syncWeb],
    message: ['cannot load the Kubernetes configuration', '(5:4)'],
    hiddenText: 'kubeconfig-credential-0123456789',
  },
  { name: 'binary data', args: () => ['--kubeconfig', file('kc-binary', Buffer.from([0, 159, 146, 150, 255, 0, 1])), ...syncWeb], message: [/kubeconfig|Kubernetes configuration|cluster/] },
  { name: 'a YAML list', args: () => ['--kubeconfig', file('kc-list', '- a\n- b\n'), ...syncWeb], message: [/Kubernetes configuration|no Kubernetes cluster/] },
  { name: 'no clusters', args: () => ['--kubeconfig', file('kc-empty', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n'), ...syncWeb], message: [/no Kubernetes cluster configured|Kubernetes configuration/] },
  {
    name: 'current-context names no context',
    args: () => ['--kubeconfig', kubeconfigWith('kc-no-context', (c) => (c['current-context'] = 'gone')), ...syncWeb],
    message: [/no Kubernetes cluster configured|Kubernetes configuration|gone/],
  },
  {
    name: 'API server that does not listen',
    args: () => ['--kubeconfig', join(dir, 'kc-closed'), ...syncWeb],
    message: ['API server https://127.0.0.1:', /hint: .*reachable/],
  },
  {
    name: 'the CA of the cluster left out (TLS: untrusted certificate)',
    args: () => ['--kubeconfig', kubeconfigWith('kc-no-ca', (c) => delete c.clusters[0]!.cluster['certificate-authority']), ...syncWeb],
    message: ['TLS handshake with the Kubernetes API server failed', 'not signed by a CA this client trusts', /hint: .*certificate-authority/],
  },
  {
    name: 'https to a plain-http server (TLS: not TLS at all)',
    args: () => ['--kubeconfig', kubeconfigWith('kc-http', (c) => (c.clusters[0]!.cluster.server = harness.sim.url.replace('http:', 'https:'))), ...syncWeb],
    message: ['TLS handshake with the Kubernetes API server failed', 'did not answer in TLS', /hint: .*https:\/\//],
  },
  // The role of `manifests` grants no Secret access on purpose: the hint must not send the user there.
  ...(testNoAccessKubeconfig() === undefined
    ? []
    : [
        {
          name: 'a user who cannot read the token Secret',
          args: () => ['--kubeconfig', testNoAccessKubeconfig()!, '--cluster-id', 'x', 'cleanup', '--dry-run'],
          env: () => ({ CLOUDSCALE_API_TOKEN: undefined }),
          message: ['no cloudscale API token', 'forbidden', /hint: set CLOUDSCALE_API_TOKEN or pass --token-file; .*does not grant/],
        },
      ]),
];

const manifestCases: Case[] = [
  { name: 'not YAML', args: () => ['plan', '-f', file('m-garbage.yaml', 'kind: Service\n  metadata: [\n')], message: ['document 1', 'fix the YAML syntax'] },
  { name: 'random bytes on stdin', args: () => ['plan', '-f', '-'], stdin: () => '\u0000\u0001\u0002binary\u00ff', message: ['standard input is not a text manifest'] },
  { name: 'a terminal escape in text', args: () => ['plan', '-f', file('m-escape.yaml', 'kind: Service\nmetadata: {name: "\u001b[31mred"}\n')], message: ['is not a text manifest: line 2'] },
  { name: 'larger than the limit', args: () => ['plan', '-f', file('m-huge.yaml', `# ${'x'.repeat(5 * 1024 * 1024)}\n`)], message: ['larger than 4 MiB', 'plan -f reads at most 4 MiB'] },
  { name: 'larger than the limit, on stdin', args: () => ['plan', '-f', '-'], stdin: () => `# ${'x'.repeat(5 * 1024 * 1024)}\n`, message: ['standard input is larger than 4 MiB'] },
  {
    name: 'more Services than the limit',
    args: () => ['plan', '-f', file('m-many.yaml', Array.from({ length: 1001 }, (_, i) => `apiVersion: v1\nkind: Service\nmetadata: {name: s${i}}\n`).join('---\n'))],
    message: ['holds more than 1000 Services'],
  },
  { name: 'empty', args: () => ['plan', '-f', file('m-empty.yaml', '')], message: ['contains no Service'] },
  { name: 'only separators', args: () => ['plan', '-f', file('m-dashes.yaml', '---\n---\n')], message: ['contains no Service'] },
  { name: 'a Deployment', args: () => ['plan', '-f', file('m-deploy.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n')], message: ['is apps/v1/Deployment, not a v1 Service'] },
  { name: 'no apiVersion', args: () => ['plan', '-f', file('m-noversion.yaml', 'kind: Service\nmetadata: {name: x}\n')], message: ['(no apiVersion)'] },
  { name: 'no name', args: () => ['plan', '-f', file('m-noname.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {}\n')], message: ['has no metadata.name'] },
  {
    name: 'one Service twice',
    args: () => ['plan', '-f', file('m-twice.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: x}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: x}\n')],
    message: ['is already defined in'],
  },
  { name: 'a JSON list', args: () => ['plan', '-f', file('m-array.json', '[{"apiVersion":"v1","kind":"Service"}]')], message: ['not a v1 Service'] },
  { name: 'a number', args: () => ['plan', '-f', file('m-number.yaml', '42\n')], message: ['is number, not a v1 Service'] },
  { name: 'a List of ConfigMaps', args: () => ['plan', '-f', file('m-list.yaml', 'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n')], message: ['item 1', 'v1/ConfigMap'] },
];

const apiAnswerCases: Case[] = [
  {
    name: 'an HTML error page from a proxy',
    args: () => planWeb,
    faults: () => ({ errorRate: { pathPattern: '/v1/servers', status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' } }),
    message: ['502', /hint: .*try again later/],
  },
  { name: '401', args: () => planWeb, env: () => ({ CLOUDSCALE_API_TOKEN: 'wrong-token-0123456789' }), message: ['401', /hint: .*CLOUDSCALE_API_TOKEN/] },
  { name: '403', args: () => planWeb, faults: () => ({ errorRate: { pathPattern: '/v1/load-balancers', status: 403, body: { detail: 'You do not have permission to perform this action.' } } }), message: ['403', 'read/write API token'] },
  { name: '404 on a list', args: () => planWeb, faults: () => ({ errorRate: { pathPattern: '/v1/subnets', status: 404 } }), message: ['404', /hint: .*CLOUDSCALE_API_URL/] },
  { name: '500 after retries', args: () => planWeb, faults: () => ({ errorRate: { pathPattern: '/v1/floating-ips', status: 500 } }), message: ['500'] },
  { name: '429 after retries', args: () => planWeb, faults: () => ({ rateLimit: { pathPattern: '/v1/servers', retryAfterSeconds: 0 } }), message: ['429'] },
  { name: '400 with errors of no field', args: () => planWeb, faults: () => ({ errorRate: { pathPattern: '/v1/servers', status: 400, body: { non_field_errors: ['bad request'] } } }), message: ['400', 'bad request', /hint: .*refused the request/] },
  {
    name: 'an error body that repeats the Authorization header (the token is redacted)',
    args: () => planWeb,
    faults: () => ({ errorRate: { pathPattern: '/v1/servers', status: 400, body: { detail: `Malformed header Authorization: Bearer ${TEST_TOKEN}` } } }),
    message: ['Malformed header Authorization: Bearer [redacted]'],
  },
  {
    name: 'TLS to the simulator (plain http) through https',
    args: () => ['--api-url', harness.sim.url.replace('http:', 'https:'), ...planWeb],
    // Not retried: the same handshake fails again, and nothing reached the API.
    message: [/TLS handshake with 127\.0\.0\.1:\d+ failed: the server did not answer in TLS.*\(1 attempt\)/, /hint: .*https:\/\//],
  },
  {
    name: 'TLS to a server whose certificate nobody trusts',
    args: () => ['--api-url', apiServerUrl(), ...planWeb],
    message: [/TLS handshake with 127\.0\.0\.1:\d+ failed: the server's certificate is not signed by a CA this client trusts/, /hint: .*NODE_EXTRA_CA_CERTS/],
  },
];

const allCases = [
  ...flagCases.map((c) => ({ ...c, group: 'flags and environment' })),
  ...kubeconfigCases.map((c) => ({ ...c, group: 'kubeconfig' })),
  ...manifestCases.map((c) => ({ ...c, group: 'manifest' })),
  ...apiAnswerCases.map((c) => ({ ...c, group: 'API answer' })),
];

let serviceVersion: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ccm-bad-input-'));
  harness = await startHarness({
    seed: `
servers:
  - name: ${namespace}-1
    flavor: flex-4-2
    zone: rma1
    interfaces: [{type: public, addresses: [5.102.147.9]}]
`,
  });
  await ensureNamespace(namespace);
  const service = await createLoadBalancerService(namespace, serviceName);
  serviceVersion = service.metadata!.resourceVersion!;
  // The kubeconfig of an API server that does not listen: the test cluster's, another port.
  const port = await closedPort();
  kubeconfigWith('kc-closed', (c) => (c.clusters[0]!.cluster.server = `https://127.0.0.1:${port}`));
});
afterAll(async () => {
  await deleteCreatedObjects();
  await harness?.stop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => harness.sim.admin.clearFaults());

async function expectNothingWritten(before: number, result: BinaryResult): Promise<void> {
  const writes = harness.sim.admin.requests().slice(before).filter((r) => r.method !== 'GET');
  expect(writes, result.stderr).toEqual([]);
  const service = await testConnection().core.readNamespacedService({ namespace, name: serviceName });
  expect(service.metadata!.resourceVersion).toBe(serviceVersion);
  // Events the tool writes (the API server's own, e.g. ClusterIPNotAllocated from its repair loop, aside).
  const events = await testConnection().core.listNamespacedEvent({ namespace });
  const fromTheTool = events.items.filter((e) => ['service-controller', 'cloudscale-ccm'].includes(e.source?.component ?? ''));
  expect(fromTheTool.map((e) => e.message)).toEqual([]);
}

describe('bad input is refused with a clear message, and nothing is written', () => {
  test(`the corpus holds ${allCases.length} cases`, () => {
    expect(allCases.length).toBeGreaterThanOrEqual(60);
  });

  test.each(allCases)('$group: $name', async (c) => {
    if (c.faults !== undefined) harness.sim.admin.setFaults(c.faults());
    const before = harness.sim.admin.requests().length;
    const result = await runBinary(c.args(), {
      apiUrl: harness.sim.url,
      ...(c.env === undefined ? {} : { env: c.env() }),
      ...(c.stdin === undefined ? {} : { stdin: c.stdin() }),
    });
    expectUserError(result, ...c.message);
    expect(result.stderr.match(/^error: /gm), 'reported once').toHaveLength(1);
    expect(result.stderr).not.toContain(TEST_TOKEN);
    if (c.hiddenText !== undefined) expect(result.stderr + result.stdout).not.toContain(c.hiddenText);
    // Nothing of the input is echoed raw: no control character reaches the terminal.
    expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    await expectNothingWritten(before, result);
  });
});

describe('warnings that do not stop the command', () => {
  test('a kubeconfig with insecure-skip-tls-verify works, with a warning naming the risk', async () => {
    const insecure = kubeconfigWith('kc-insecure', (c) => {
      delete c.clusters[0]!.cluster['certificate-authority'];
      c.clusters[0]!.cluster['insecure-skip-tls-verify'] = true;
    });
    const result = await runBinary(['--kubeconfig', insecure, ...planWeb], { apiUrl: harness.sim.url });
    expect(result.stderr).toMatch(/^warning: the kubeconfig \(.*kc-insecure\) sets insecure-skip-tls-verify for cluster test-cluster: .*certificate-authority/m);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${namespace}/${serviceName}`);
  });
});

describe('the API settings are checked before the Lease', () => {
  // Another writer holds the Lease: a bad flag is named at once, not "held by" after a wait.
  test.each([
    { name: 'a bad --api-url', args: ['--api-url', 'ftp://x', ...syncWeb, '--wait'], env: {}, message: ['must use http or https'] },
    { name: 'a bad token', args: [...syncWeb, '--wait'], env: { CLOUDSCALE_API_TOKEN: 'two words' }, message: ['CLOUDSCALE_API_TOKEN', 'contains spaces'] },
  ])('$name while another writer holds the Lease: refused at once, the Lease untouched', async ({ args, env, message }) => {
    const lease = await acquireLease(testConnection(), { ...RUN_LEASE, holderIdentity: 'busy/sync-lb/1-a', leaseDurationSeconds: 60 });
    try {
      const before = harness.sim.admin.requests().length;
      const result = await runBinary(args, { apiUrl: harness.sim.url, env });
      expectUserError(result, ...message);
      expect(result.stderr).not.toMatch(/waiting|held by/);
      const held = await testConnection().coordination.readNamespacedLease({ ...RUN_LEASE });
      expect(held.spec?.holderIdentity).toBe('busy/sync-lb/1-a');
      await expectNothingWritten(before, result);
    } finally {
      await lease.release();
    }
  });
});
