// Which kubeconfigs the completion path serves with one GET of its own, with which credentials,
// and which it leaves to the full Kubernetes client (undefined); the GET against a local server.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { KubeApiError } from '../../src/core/errors.js';
import { directCredentials, directGetJson } from '../../src/core/kube/direct-get.js';

const scratch = mkdtempSync(join(tmpdir(), 'ccm-direct-credentials-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const b64 = (text: string) => Buffer.from(text).toString('base64');
let files = 0;

/** Writes a kubeconfig with one context `main` (current) from `cluster` and `user`. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  files += 1;
  const dir = join(scratch, `k${files}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'ca.crt'), 'CA FROM FILE');
  writeFileSync(join(dir, 'token'), 'token-from-file\n');
  const path = join(dir, 'config');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'main',
      contexts: [
        { name: 'main', context: { cluster: 'c', user: 'u' } },
        { name: 'other', context: { cluster: 'c2', user: 'u' } },
      ],
      clusters: [
        { name: 'c', cluster: { server: 'https://api.example:6443', ...cluster } },
        { name: 'c2', cluster: { server: 'https://other.example' } },
      ],
      users: [{ name: 'u', user }],
    }),
  );
  return path;
}

describe('directCredentials', () => {
  test('client certificate and CA inline', () => {
    const path = kubeconfig(
      { 'certificate-authority-data': b64('CA'), 'tls-server-name': 'kubernetes' },
      { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
    );
    const credentials = directCredentials({ kubeconfig: path, env: {} });
    expect(credentials?.server.href).toBe('https://api.example:6443/');
    expect(credentials?.ca?.toString()).toBe('CA');
    expect(credentials?.cert?.toString()).toBe('CERT');
    expect(credentials?.key?.toString()).toBe('KEY');
    expect(credentials?.servername).toBe('kubernetes');
    expect(credentials?.insecure).toBe(false);
    expect(credentials?.authorization).toBeUndefined();
  });

  test('files relative to the kubeconfig, and tokenFile', () => {
    const credentials = directCredentials({
      kubeconfig: kubeconfig({ 'certificate-authority': 'ca.crt' }, { tokenFile: 'token' }),
      env: {},
    });
    expect(credentials?.ca?.toString()).toBe('CA FROM FILE');
    expect(credentials?.authorization).toBe('Bearer token-from-file');
  });

  test.each([
    [{ token: 'abc' }, 'Bearer abc'],
    [{ username: 'admin', password: 'secret' }, `Basic ${b64('admin:secret')}`],
  ])('user %j', (user, authorization) => {
    const credentials = directCredentials({ kubeconfig: kubeconfig({ 'insecure-skip-tls-verify': true }, user), env: {} });
    expect(credentials?.authorization).toBe(authorization);
    expect(credentials?.insecure).toBe(true);
  });

  test('--context picks another context; KUBECONFIG and HOME are read in the full client’s order', () => {
    const path = kubeconfig({}, { token: 'abc' });
    expect(directCredentials({ kubeconfig: path, context: 'other', env: {} })?.server.host).toBe('other.example');
    expect(directCredentials({ env: { KUBECONFIG: path } })?.server.host).toBe('api.example:6443');
    const home = join(scratch, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), `apiVersion: v1
current-context: home
contexts: [{name: home, context: {cluster: h, user: u}}]
clusters: [{name: h, cluster: {server: "https://home.example"}}]
users: [{name: u, user: {token: t}}]
`);
    expect(directCredentials({ env: { HOME: home } })?.server.host).toBe('home.example');
  });

  test.each([
    ['an exec plugin', () => kubeconfig({}, { exec: { command: 'aws' } })],
    ['an auth provider', () => kubeconfig({}, { 'auth-provider': { name: 'oidc' } })],
    ['impersonation', () => kubeconfig({}, { token: 't', as: 'someone' })],
    ['a proxy', () => kubeconfig({ 'proxy-url': 'http://proxy:3128' }, { token: 't' })],
    ['no such file', () => join(scratch, 'missing')],
  ])('%s: left to the full client', (_, path) => {
    expect(directCredentials({ kubeconfig: path(), env: {} })).toBeUndefined();
  });

  test('several files in KUBECONFIG, an unknown context, no kubeconfig: left to the full client', () => {
    const path = kubeconfig({}, { token: 't' });
    expect(directCredentials({ env: { KUBECONFIG: `${path}:${path}` } })).toBeUndefined();
    expect(directCredentials({ kubeconfig: path, context: 'nope', env: {} })).toBeUndefined();
    expect(directCredentials({ env: { HOME: join(scratch, 'nobody') } })).toBeUndefined();
  });
});

describe('directGetJson', () => {
  /** A local HTTP server answering every request with `status` and `body`, recording what it got. */
  async function withServer(
    answer: { status: number; body: string },
    run: (base: string, seen: { url?: string; headers?: Record<string, unknown> }) => Promise<void>,
  ): Promise<void> {
    const seen: { url?: string; headers?: Record<string, unknown> } = {};
    const server = createServer((request, response) => {
      seen.url = request.url;
      seen.headers = request.headers;
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  test('GETs below the server URL’s path prefix, with the credentials', async () => {
    await withServer({ status: 200, body: '{"items":[]}' }, async (base, seen) => {
      const credentials = { server: new URL(`${base}/k8s/clusters/c-1/`), namespace: 'default', insecure: false, authorization: 'Bearer t' };
      expect(await directGetJson(credentials, '/api/v1/namespaces', 1000)).toEqual({ items: [] });
      expect(seen.url).toBe('/k8s/clusters/c-1/api/v1/namespaces');
      expect(seen.headers).toMatchObject({ authorization: 'Bearer t', accept: 'application/json' });
    });
  });

  test.each([
    [403, '{"kind":"Status"}', 'GET /api/v1/namespaces answered 403'],
    [200, 'not json', 'GET /api/v1/namespaces answered 200 with a body that is not JSON'],
  ])('%i %s: a KubeApiError', async (status, body, message) => {
    await withServer({ status, body }, async (base) => {
      const error = await directGetJson({ server: new URL(base), namespace: 'default', insecure: false }, '/api/v1/namespaces', 1000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeApiError);
      expect((error as KubeApiError).message).toBe(message);
      expect((error as KubeApiError).status).toBe(status);
    });
  });
});
