// A kubeconfig whose user is an exec credential plugin (aws eks get-token, kubelogin …), as the
// binary meets it: a plugin that answers authenticates the pass; one that fails is named with its
// exit code and its stderr; one that hangs is killed after CLOUDSCALE_CCM_EXEC_TIMEOUT seconds
// and named, instead of holding the command for ever.
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, type Harness } from '../support/ccm.js';
import { testKubeconfig } from '../support/kube.js';
import { expectUserError } from './cli-support.js';

let harness: Harness;
let dir: string;

/** The ExecCredential a plugin prints for the test cluster's own user (a token or a client certificate). */
function credentialOfTestUser(): unknown {
  const config = new KubeConfig();
  config.loadFromFile(testKubeconfig());
  const user = config.getCurrentUser();
  const pem = (data: string | undefined, file: string | undefined) =>
    data !== undefined ? Buffer.from(data, 'base64').toString('utf8') : file === undefined ? undefined : readFileSync(file, 'utf8');
  const status = user?.token !== undefined
    ? { token: user.token }
    : { clientCertificateData: pem(user?.certData, user?.certFile), clientKeyData: pem(user?.keyData, user?.keyFile) };
  return { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status };
}

/** A plugin: a shell script with `body`. */
async function plugin(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

/** The test cluster's kubeconfig with its user replaced by `command` as an exec plugin. */
async function kubeconfigWithPlugin(name: string, command: string): Promise<string> {
  const config = new KubeConfig();
  config.loadFromFile(testKubeconfig());
  const cluster = config.getCurrentCluster()!;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: cluster.server, ...(cluster.caFile === undefined ? { 'certificate-authority-data': cluster.caData } : { 'certificate-authority': cluster.caFile }) } }],
    users: [{ name: 'plugin-user', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, args: ['--cluster', 'test'], interactiveMode: 'Never' } } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'plugin-user' } }],
    'current-context': 'test',
  };
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(path, JSON.stringify(kubeconfig), { mode: 0o600 });
  return path;
}

beforeAll(async () => {
  harness = await startHarness();
  dir = await mkdtemp(join(tmpdir(), 'ccm-exec-plugin-'));
});
afterAll(async () => {
  await harness.stop();
  await rm(dir, { recursive: true, force: true });
});

const run = (kubeconfig: string, env: NodeJS.ProcessEnv = {}) =>
  runBinary(['status'], { apiUrl: harness.sim.url, env: { KUBECONFIG: kubeconfig, ...env }, timeoutMs: 30_000 });

describe('exec credential plugins', () => {
  test('a plugin that answers authenticates the command', async () => {
    await writeFile(join(dir, 'credential.json'), JSON.stringify(credentialOfTestUser()), { mode: 0o600 });
    const script = `cat '${join(dir, 'credential.json')}'`;
    const result = await run(await kubeconfigWithPlugin('answers', await plugin('answers', script)));
    expect(result.stderr).not.toMatch(/^error: /m);
    expect(result.code).toBe(0);
  });

  test('a plugin that fails: its exit code and stderr in the error', async () => {
    const failing = await plugin('fails', 'echo "error: the SSO session has expired; run login" >&2\nexit 3');
    const result = await run(await kubeconfigWithPlugin('fails', failing));
    expectUserError(result, `the exec credential plugin "${failing}" of user "plugin-user"`, 'exited with code 3', 'stderr: error: the SSO session has expired; run login', /hint: run the plugin yourself/);
  });

  test('a plugin that fails silently says so', async () => {
    const silent = await plugin('silent', 'exit 1');
    const result = await run(await kubeconfigWithPlugin('silent', silent));
    expectUserError(result, 'exited with code 1; (it printed nothing on stderr)');
  });

  test('a plugin that is not there', async () => {
    const result = await run(await kubeconfigWithPlugin('missing', join(dir, 'no-such-plugin')));
    expectUserError(result, 'could not be started', 'ENOENT', /hint: install the plugin/);
  });

  test('a plugin that hangs is killed after CLOUDSCALE_CCM_EXEC_TIMEOUT seconds and named', async () => {
    const hanging = await plugin('hangs', 'echo "waiting for the browser login" >&2\nexec sleep 600');
    const result = await run(await kubeconfigWithPlugin('hangs', hanging), { CLOUDSCALE_CCM_EXEC_TIMEOUT: '1' });
    expectUserError(result, 'did not answer within 1 s', 'stderr: waiting for the browser login', /CLOUDSCALE_CCM_EXEC_TIMEOUT/);
  });

  test('a timeout that is no whole number of seconds is refused', async () => {
    const result = await run(await kubeconfigWithPlugin('never-run', join(dir, 'no-such-plugin')), { CLOUDSCALE_CCM_EXEC_TIMEOUT: '1.5' });
    expectUserError(result, 'CLOUDSCALE_CCM_EXEC_TIMEOUT takes a whole number ≥ 1, got "1.5"');
  });
});
