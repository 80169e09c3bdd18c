// -n as kubectl reads it: without the flag, Service names (and -f manifests without a namespace)
// are in the namespace of the kubeconfig's current context, `default` only when it names none.
// The kubeconfig here is the test cluster's, its current context given a namespace.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, type Harness } from '../support/ccm.js';
import { createLoadBalancerService, deleteCreatedObjects, ensureNamespace, testKubeconfig, uniqueName } from '../support/kube.js';

const namespace = uniqueName('ctx-ns');
const service = uniqueName('web');

let harness: Harness;
let dir: string;
let kubeconfig: string;

type Entry = Record<string, unknown>;

/** The test kubeconfig with `namespace` in its current context, its file paths made absolute. */
async function kubeconfigInNamespace(ns: string): Promise<string> {
  const original = testKubeconfig();
  const config = parseYaml(await readFile(original, 'utf8')) as Entry & { contexts: { name: string; context: Entry }[] };
  const absolute = (entry: Entry) => {
    for (const field of ['certificate-authority', 'client-certificate', 'client-key', 'tokenFile']) {
      const path = entry[field];
      if (typeof path === 'string' && !isAbsolute(path)) entry[field] = join(dirname(original), path);
    }
  };
  for (const { cluster } of (config.clusters ?? []) as { cluster: Entry }[]) absolute(cluster);
  for (const { user } of (config.users ?? []) as { user: Entry }[]) absolute(user);
  const current = config.contexts.find((c) => c.name === config['current-context']);
  if (current === undefined) throw new Error(`${original} has no current context`);
  current.context.namespace = ns;
  const path = join(dir, 'kubeconfig');
  await writeFile(path, stringifyYaml(config), { mode: 0o600 });
  return path;
}

beforeAll(async () => {
  harness = await startHarness();
  dir = await mkdtemp(join(tmpdir(), 'ccm-context-namespace-'));
  kubeconfig = await kubeconfigInNamespace(namespace);
  await ensureNamespace(namespace);
  await createLoadBalancerService(namespace, service);
});
afterAll(async () => {
  await deleteCreatedObjects();
  await harness.stop();
  await rm(dir, { recursive: true, force: true });
});

const run = (args: readonly string[], stdin?: string) =>
  runBinary(args, { apiUrl: harness.sim.url, env: { KUBECONFIG: kubeconfig }, ...(stdin === undefined ? {} : { stdin }) });

describe("without -n: the kubeconfig context's namespace", () => {
  test('plan service/NAME plans the Service of the context namespace', async () => {
    const result = await run(['-o', 'json', 'plan', `service/${service}`]);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout) as { services: { service: { namespace: string; name: string } }[] };
    expect(document.services.map(({ service: s }) => `${s.namespace}/${s.name}`)).toEqual([`${namespace}/${service}`]);
  });

  test('sync-lb --dry-run service/NAME: the same', async () => {
    const result = await run(['sync-lb', '--dry-run', `service/${service}`]);
    expect(result.stderr).not.toContain('not found');
    expect(result.stdout).toContain(`${namespace}/${service}`);
  });

  test('plan -f: a manifest without a namespace is in the context namespace', async () => {
    const manifest = `apiVersion: v1\nkind: Service\nmetadata: {name: ${service}}\nspec: {type: LoadBalancer, ports: [{name: http, port: 80, protocol: TCP}]}\n`;
    const result = await run(['-o', 'json', 'plan', '-f', '-'], manifest);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout) as { services: { service: { namespace: string } }[] };
    expect(document.services.map((s) => s.service.namespace)).toEqual([namespace]);
  });

  test('__complete services lists the Services of the context namespace', async () => {
    const result = await run(['__complete', 'services']);
    expect(result.stdout).toBe(`service/${service}\n`);
  });

  test('-n still wins over the context', async () => {
    const result = await run(['plan', '-n', 'default', `service/${service}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`service default/${service} not found`);
  });
});
