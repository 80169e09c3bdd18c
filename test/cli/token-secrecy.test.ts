// "The token never appears in any output, log or error" (SPEC, Subcommands). Every command runs
// as a process against a simulator that demands its own token, with the token from each source
// the tool reads (CLOUDSCALE_API_TOKEN, CLOUDSCALE_ACCESS_TOKEN, --token-file, the Secret
// kube-system/cloudscale), rejected (401) or accepted, plain, verbose and as JSON/YAML, and
// through retries and timeouts; the token's text must be absent from stdout and stderr. A
// server that echoes the Authorization header in its error bodies must not bring it into the
// output, the Events, the Services or the request log either.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, TEST_TOKEN, type Harness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  ignoreNotFound,
  testConnection,
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
} from '../support/kube.js';
import { expectNoSecret, expectUserError, startBinary } from './cli-support.js';

/** Rejected by the simulator (it wants TEST_TOKEN): every API call answers 401. */
const WRONG_TOKEN = 'wrong-token-7c1e5a9f3b2d8e4a';
const SECRET = { namespace: 'kube-system', name: 'cloudscale' } as const;
const fastSync = ['--settle-seconds', '0', '--poll-seconds', '0.05'];

const commands: readonly (readonly string[])[] = [
  ['init-nodes'],
  ['sync-lb', ...fastSync],
  ['plan'],
  ['cleanup', '--yes'],
  ['run', ...fastSync],
];
const outputModes: readonly (readonly string[])[] = [[], ['-v'], ['-v', '-o', 'json'], ['-o', 'yaml']];

let harness: Harness;
let dir: string;
const prefix = uniqueName('tok');
const namespace = uniqueName('tok');

async function deleteTokenSecret(): Promise<void> {
  await ignoreNotFound(testConnection().core.deleteNamespacedSecret(SECRET));
}

async function createTokenSecret(token: string): Promise<void> {
  await testConnection().core.createNamespacedSecret({
    namespace: SECRET.namespace,
    body: { metadata: { name: SECRET.name }, stringData: { 'access-token': token } },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ccm-cli-token-'));
  harness = await startHarness({
    seed: `
servers:
  - name: ${prefix}-1
    flavor: flex-4-2
    zone: rma1
    interfaces: [{type: public, addresses: [5.102.147.1]}]
`,
  });
  await ensureNamespace(namespace);
  await createNode(`${prefix}-1`, { ready: true, taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] });
  await createLoadBalancerService(namespace, 'web');
});
afterAll(async () => {
  await deleteTokenSecret();
  await deleteCreatedObjects();
  await harness.stop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => harness.sim.admin.clearFaults());

describe('a token the API rejects (401)', () => {
  const cases = commands.flatMap((command) => outputModes.map((mode) => ({ args: [...mode, ...command] })));

  test.each(cases)('from CLOUDSCALE_API_TOKEN: $args', async ({ args }) => {
    const result = await runBinary(args, { apiUrl: harness.sim.url, env: { CLOUDSCALE_API_TOKEN: WRONG_TOKEN } });
    expectNoSecret(result, WRONG_TOKEN, args.join(' '));
    // It did reach the API and was refused, so the token was sent: the test exercises the path.
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/401/);
  });

  test('from CLOUDSCALE_ACCESS_TOKEN (the Go CCM name)', async () => {
    const result = await runBinary(['-v', 'sync-lb', ...fastSync], {
      apiUrl: harness.sim.url,
      env: { CLOUDSCALE_API_TOKEN: undefined, CLOUDSCALE_ACCESS_TOKEN: WRONG_TOKEN },
    });
    expectNoSecret(result, WRONG_TOKEN, 'CLOUDSCALE_ACCESS_TOKEN');
    expectUserError(result, '401');
  });

  test('from --token-file', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${WRONG_TOKEN}\n`);
    const result = await runBinary(['-v', '-o', 'json', '--token-file', file, 'plan'], {
      apiUrl: harness.sim.url,
      env: { CLOUDSCALE_API_TOKEN: undefined },
    });
    expectNoSecret(result, WRONG_TOKEN, '--token-file');
    expectUserError(result, '401');
  });

  test('from the Secret kube-system/cloudscale', async () => {
    await createTokenSecret(WRONG_TOKEN);
    try {
      for (const args of [['-v', 'sync-lb', ...fastSync], ['-v', '-o', 'json', 'plan'], ['run', ...fastSync]]) {
        const result = await runBinary(args, { apiUrl: harness.sim.url, env: { CLOUDSCALE_API_TOKEN: undefined } });
        expectNoSecret(result, WRONG_TOKEN, `Secret, ${args.join(' ')}`);
        expectUserError(result, '401');
      }
    } finally {
      await deleteTokenSecret();
    }
  });
});

describe('a token the tool refuses to send', () => {
  test('one with a space, from the Secret: the error names the Secret, not the token', async () => {
    const pasted = 'first-half-of-token second-half-of-token';
    await createTokenSecret(pasted);
    try {
      const result = await runBinary(['-v', 'plan'], { apiUrl: harness.sim.url, env: { CLOUDSCALE_API_TOKEN: undefined } });
      expectUserError(result, 'kube-system/cloudscale');
      expectNoSecret(result, 'first-half-of-token', 'first word');
      expectNoSecret(result, 'second-half-of-token', 'second word');
    } finally {
      await deleteTokenSecret();
    }
  });

  test('one with a line break, from --token-file', async () => {
    const file = join(dir, 'two-lines');
    writeFileSync(file, 'first-line-of-token\nsecond-line-of-token\n');
    const result = await runBinary(['-v', '--token-file', file, 'plan'], { apiUrl: harness.sim.url });
    expectUserError(result, file);
    expectNoSecret(result, 'first-line-of-token', 'first line');
    expectNoSecret(result, 'second-line-of-token', 'second line');
  });
});

describe('a token the API accepts', () => {
  test('verbose runs of every command, in every format, from the variable', async () => {
    for (const command of commands) {
      for (const mode of outputModes) {
        const args = [...mode, ...command];
        const result = await runBinary(args, { apiUrl: harness.sim.url });
        expectNoSecret(result, TEST_TOKEN, args.join(' '));
        expect(result.stderr, args.join(' ')).not.toMatch(/^error: /m);
      }
    }
    // The passes did real work with the token: the Service got its load balancer.
    expect(await harness.cloud.loadBalancers.list()).toHaveLength(1);
  });

  test('from the Secret alone (no variable): the pass works and never prints it', async () => {
    const secretToken = TEST_TOKEN;
    await createTokenSecret(secretToken);
    try {
      const result = await runBinary(['-v', '-o', 'json', 'sync-lb', ...fastSync], {
        apiUrl: harness.sim.url,
        env: { CLOUDSCALE_API_TOKEN: undefined },
      });
      expect(result.code, result.stderr).toBe(0);
      expectNoSecret(result, secretToken, 'Secret');
      expect(JSON.parse(result.stdout)).toMatchObject({ services: [{ service: `${namespace}/web` }] });
    } finally {
      await deleteTokenSecret();
    }
  });

  test('API errors after retries, with -v and their causes', async () => {
    harness.sim.admin.setFaults({ errorRate: { pathPattern: '/v1/servers', status: 503 } });
    const result = await runBinary(['-v', 'init-nodes'], { apiUrl: harness.sim.url });
    expectNoSecret(result, TEST_TOKEN, '503 after retries');
    expectUserError(result, '503');
  });

  test('a request timeout, with -v and its causes', async () => {
    harness.sim.admin.setFaults({ latencyMs: 3000 });
    const result = await runBinary(['-v', 'plan'], { apiUrl: harness.sim.url, env: { CLOUDSCALE_API_TIMEOUT: '1' } });
    expectNoSecret(result, TEST_TOKEN, 'timeout');
    expectUserError(result, /time/i);
  });

  test('manifests and completion, which never need it, do not print it either', async () => {
    for (const args of [['manifests'], ['-o', 'json', 'manifests'], ['completion', 'bash']]) {
      const result = await runBinary(args, { apiUrl: harness.sim.url });
      expect(result.code, args.join(' ')).toBe(0);
      expectNoSecret(result, TEST_TOKEN, args.join(' '));
    }
  });

  test('sim --token does not echo the token it demands', async () => {
    const demanded = 'sim-demands-this-token-1f2e3d';
    const sim = startBinary(['sim', '--token', demanded]);
    try {
      expect(await sim.firstLine()).toMatch(/^CLOUDSCALE_API_URL=/);
      // The banner is written in one go after the first line; wait for its last line.
      while (!sim.stdout().includes('Ctrl-C')) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      sim.child.kill('SIGTERM');
    }
    const exit = await sim.exited;
    expect(exit.code).toBe(0);
    expectNoSecret({ code: exit.code, stdout: sim.stdout(), stderr: sim.stderr() }, demanded, 'sim --token');
  });
});

/**
 * A server in front of the simulator that answers chosen requests with an error whose body
 * repeats the request's Authorization header, as a misconfigured proxy or a debugging endpoint
 * does; every other request is passed through.
 */
async function startEchoingProxy(
  target: string,
  echoes: (method: string, path: string) => boolean,
  options: {
    /** The error's detail for the header received; by default the header as it came. */
    readonly echo?: (authorization: string) => string;
    /** The token sent on to the simulator instead of the one received (which the simulator would refuse). */
    readonly forwardToken?: string;
  } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const path = request.url ?? '/';
        if (echoes(request.method ?? 'GET', path.split('?')[0]!)) {
          response.writeHead(400, { 'content-type': 'application/json' });
          const authorization = request.headers.authorization ?? '';
          response.end(JSON.stringify({ detail: options.echo?.(authorization) ?? `Unexpected header Authorization: ${authorization}` }));
          return;
        }
        const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
        const answer = await fetch(`${target}${path}`, {
          method: request.method ?? 'GET',
          headers: {
            ...Object.fromEntries(
              ['authorization', 'content-type', 'accept'].flatMap((name) => (request.headers[name] === undefined ? [] : [[name, String(request.headers[name])]])),
            ),
            ...(options.forwardToken === undefined ? {} : { authorization: `Bearer ${options.forwardToken}` }),
          },
          ...(body === undefined ? {} : { body }),
        });
        const text = (await answer.text()).replaceAll(target, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('a server that echoes the token back', () => {
  test('in the error of a create: not on stdout or stderr, not in any Event, annotation or log', async () => {
    await createLoadBalancerService(namespace, 'echo');
    const proxy = await startEchoingProxy(harness.sim.url, (method, path) => method === 'POST' && path === '/v1/load-balancers');
    try {
      const outputs = [];
      for (const mode of [['-v'], ['-v', '-o', 'json']]) {
        const result = await runBinary([...mode, 'sync-lb', ...fastSync], { apiUrl: proxy.url });
        expect(result.code, result.stderr).toBe(1);
        expectNoSecret(result, TEST_TOKEN, `sync-lb ${mode.join(' ')}`);
        outputs.push(result.stdout + result.stderr);
      }
      // The echo did reach the output (redacted): the test exercises the path it guards.
      expect(outputs.join('\n')).toContain('Unexpected header Authorization: Bearer [redacted]');

      const conn = testConnection();
      const events = await conn.core.listNamespacedEvent({ namespace });
      expect(JSON.stringify(events.items).includes(TEST_TOKEN), 'the token is in an Event').toBe(false);
      expect(events.items.map((e) => e.message).join('\n')).toContain('Bearer [redacted]');
      const services = await conn.core.listNamespacedService({ namespace });
      expect(JSON.stringify(services.items).includes(TEST_TOKEN), 'the token is in a Service (annotations, status)').toBe(false);
      expect(JSON.stringify(harness.sim.admin.requests()).includes(TEST_TOKEN), 'the token is in the request log').toBe(false);
    } finally {
      await proxy.close();
    }
  });

  test('in the error of a read: plan and init-nodes, plain and verbose', async () => {
    const proxy = await startEchoingProxy(harness.sim.url, (method, path) => method === 'GET' && path === '/v1/servers');
    try {
      for (const args of [['plan'], ['-v', 'plan'], ['-v', '-o', 'yaml', 'plan'], ['-v', 'init-nodes']]) {
        const result = await runBinary(args, { apiUrl: proxy.url });
        expectNoSecret(result, TEST_TOKEN, args.join(' '));
        expectUserError(result, 'Unexpected header Authorization: Bearer [redacted]');
      }
    } finally {
      await proxy.close();
    }
  });
});

/**
 * The header as an intermediary may echo it, each form once: escaped for JSON, a URL, a form and
 * HTML, in hex and base64 (alone and inside longer encoded texts, at each alignment), upper-cased.
 */
function everyEncoding(authorization: string): string {
  const header = `Authorization: ${authorization}`;
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return [
    header.toUpperCase(),
    encodeURIComponent(header),
    new URLSearchParams({ h: header }).toString(),
    header.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
    header.replace(/[^a-z0-9 ]/gi, (c) => `&#x${c.charCodeAt(0).toString(16)};`),
    Buffer.from(header).toString('hex'),
    Buffer.from(header).toString('hex').toUpperCase(),
    ...['', 'X', 'XY'].flatMap((prefix) => [b64(prefix + header), Buffer.from(prefix + header).toString('base64url')]),
  ].join(' | ');
}

/** Whether `text` holds `token` in any of the forms everyEncoding writes, or decodes to it. */
function showsToken(text: string, token: string): boolean {
  const lower = text.toLowerCase();
  if (lower.includes(token.toLowerCase()) || lower.includes(encodeURIComponent(token).toLowerCase())) return true;
  if (lower.includes(Buffer.from(token).toString('hex'))) return true;
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    for (let start = 0; start < 4; start++) {
      const chars = run.slice(start).replaceAll('-', '+').replaceAll('_', '/');
      if (Buffer.from(chars.slice(0, chars.length - (chars.length % 4)), 'base64').toString('latin1').includes(token)) return true;
    }
  }
  return false;
}

describe('a server that echoes the token in every encoding', () => {
  test.each([
    ['letters and digits', TEST_TOKEN],
    ['symbols', `s3cr3t+/=&<>"'%Tok-en_9~!`],
  ])('a token of %s: in no output, Event, status record or `status`', async (_, token) => {
    const name = uniqueName('enc');
    await createLoadBalancerService(namespace, name);
    const proxy = await startEchoingProxy(harness.sim.url, (method, path) => method === 'POST' && path === '/v1/load-balancers', {
      echo: (authorization) => `Unexpected header: ${everyEncoding(authorization)}`,
      forwardToken: TEST_TOKEN,
    });
    try {
      const env = { CLOUDSCALE_API_TOKEN: token };
      const outputs: string[] = [];
      for (const mode of [['-v'], ['-v', '-o', 'json']]) {
        const result = await runBinary([...mode, 'run', ...fastSync, '--force'], { apiUrl: proxy.url, env });
        expect(result.code, result.stderr).toBe(1);
        outputs.push(result.stdout, result.stderr);
      }
      const status = await runBinary(['status', '-v'], { apiUrl: proxy.url, env });
      outputs.push(status.stdout, status.stderr);
      // The echo did reach the output, redacted: the test exercises the path it guards.
      expect(outputs.join('\n')).toContain('Unexpected header: AUTHORIZATION: BEARER [redacted] | Authorization%3A%20Bearer%20[redacted]');
      for (const output of outputs) expect(showsToken(output, token), output).toBe(false);

      const conn = testConnection();
      const events = (await conn.core.listNamespacedEvent({ namespace })).items.filter((e) => e.involvedObject.name === name);
      expect(events.map((e) => e.message).join('\n')).toContain('[redacted]');
      expect(showsToken(JSON.stringify(events), token), 'the token is in an Event').toBe(false);
      const record = await conn.core.listNamespacedConfigMap({ namespace: 'kube-system' });
      expect(showsToken(JSON.stringify(record.items), token), 'the token is in the status record').toBe(false);
      expect(JSON.stringify(record.items)).toContain('[redacted]');
    } finally {
      await proxy.close();
      await ignoreNotFound(testConnection().core.deleteNamespacedService({ namespace, name }));
    }
  });
});
