// The client's transport over real HTTP against a scripted loopback server: the failures the
// simulator cannot produce on purpose (hanging answers, dropped connections, HTML bodies), and
// the exact requests the client sends. Each test scripts the answers, one per attempt.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { CloudscaleApiError, CloudscaleUnavailableError, RefusedError } from '../../src/core/errors.js';
import { createCloudscaleClient, type CloudscaleClient } from '../../src/core/cloudscale/client.js';
import {
  CloudscaleNoAnswerError,
  CloudscaleRequestError,
  isOutcomeUnknown,
} from '../../src/core/cloudscale/errors.js';
import { tcpListener } from '../support/go-ccm-bodies.js';

const token = 'tok-Very-Secret-0123456789';
const uuid = '47cec963-fcd2-482f-bdb6-24461b2d47b1';

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Answer = (res: ServerResponse) => void;

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
const text =
  (status: number, body: string, contentType = 'text/html'): Answer =>
  (res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  };
const noContent: Answer = (res) => {
  res.writeHead(204);
  res.end();
};
/** Never answers; the client's timeout must end the attempt. */
const hang: Answer = () => undefined;
/** Drops the connection without an answer. */
const drop: Answer = (res) => {
  res.socket?.destroy();
};

interface Scripted {
  url: string;
  seen: SeenRequest[];
  stop(): Promise<void>;
}

const running: Scripted[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
});

/**
 * A loopback server that answers attempt n with answers[n], or with the method's nth answer when
 * they are given per method; extra attempts get a 599.
 */
async function scriptedServer(answers: Answer[] | Partial<Record<string, Answer[]>>): Promise<Scripted> {
  const seen: SeenRequest[] = [];
  const nth = (method: string): Answer | undefined =>
    Array.isArray(answers) ? answers[seen.length - 1] : answers[method]?.[seen.filter((r) => r.method === method).length - 1];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const answer = nth(req.method ?? '') ?? text(599, 'unscripted attempt', 'text/plain');
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const scripted: Scripted = {
    url: `http://127.0.0.1:${port}`,
    seen,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  running.push(scripted);
  return scripted;
}

function clientFor(server: { url: string }, over: Partial<Parameters<typeof createCloudscaleClient>[0]> = {}): CloudscaleClient {
  return createCloudscaleClient({
    baseUrl: server.url,
    token,
    timeoutMs: 300,
    retry: { limit: 2, baseDelayMs: 1, maxDelayMs: 5 },
    ...over,
  });
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const lb = { uuid, name: 'lb', href: 'x' };

describe('answers that repeat the token', () => {
  test('an error body, a text page and a list are redacted before anything keeps them', async () => {
    const server = await scriptedServer([
      json(400, { detail: `bad header Authorization: Bearer ${token}` }),
      text(403, `<pre>Authorization: Bearer ${token}</pre>`),
      json(200, [{ ...lb, name: `echo ${token}` }]),
    ]);
    const client = clientFor(server);
    const first = await caught(client.servers.list());
    const second = await caught(client.servers.list());
    const listed = await client.loadBalancers.list();
    expect(first).toBeInstanceOf(CloudscaleRequestError);
    expect((first as Error).message).toBe('cloudscale API GET /v1/servers answered 400: bad header Authorization: Bearer [redacted]');
    expect((second as Error).message).toContain('Authorization: Bearer [redacted]');
    expect(listed.map((l) => l.name)).toEqual(['echo [redacted]']);
    expect(inspect([first, second, listed], { depth: 8 })).not.toContain(token);
  });
});

describe('what the client sends', () => {
  test('bearer token, JSON and the user agent on every request; one attribute per PATCH', async () => {
    const server = await scriptedServer([json(200, []), json(201, lb), noContent]);
    const client = clientFor({ url: `${server.url}/v1/` });
    expect(client.baseUrl).toBe(server.url);
    await client.loadBalancers.list({ 'k8s/service': 'default.web', owner: true });
    await client.loadBalancers.create({ name: 'lb', flavor: 'lb-standard', zone: 'rma1', vip_addresses: [] });
    await client.loadBalancers.update(uuid, { name: 'renamed' });

    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/load-balancers?tag:k8s%2Fservice=default.web&tag:owner',
      'POST /v1/load-balancers',
      `PATCH /v1/load-balancers/${uuid}`,
    ]);
    for (const request of server.seen) {
      expect(request.headers.authorization).toBe(`Bearer ${token}`);
      expect(request.headers.accept).toBe('application/json');
      expect(request.headers['user-agent']).toMatch(/^cloudscale-ccm\/\d+\.\d+\.\d+/);
    }
    expect(server.seen[1]?.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(server.seen[1]?.body ?? '')).toEqual({
      name: 'lb',
      flavor: 'lb-standard',
      zone: 'rma1',
      vip_addresses: [],
    });
    expect(JSON.parse(server.seen[2]?.body ?? '')).toEqual({ name: 'renamed' });
  });

  test('floating IPs are addressed by IP, IPv6 included, with a CIDR accepted', async () => {
    const server = await scriptedServer([json(200, {}), noContent]);
    const client = clientFor(server);
    await client.floatingIps.get('2001:db8::cafe/128');
    await client.floatingIps.update('192.0.2.10', { load_balancer: uuid });
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/floating-ips/2001:db8::cafe',
      'PATCH /v1/floating-ips/192.0.2.10',
    ]);
  });

  test('deleteByHref refuses an href on another origin and sends nothing', async () => {
    const server = await scriptedServer([noContent]);
    const client = clientFor(server);
    const error = await caught(client.deleteByHref(`http://203.0.113.9/v1/load-balancers/${uuid}`));
    expect(error).toBeInstanceOf(RefusedError);
    expect(server.seen).toEqual([]);
    await client.deleteByHref(`/v1/load-balancers/${uuid}`);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual([`DELETE /v1/load-balancers/${uuid}`]);
  });
});

describe('retries of idempotent requests', () => {
  test('GET: 500, then 429 with Retry-After, then success', async () => {
    const server = await scriptedServer([
      json(500, { detail: 'Server error.' }),
      json(429, { detail: 'Slow down.' }, { 'retry-after': '0' }),
      json(200, [{ uuid }]),
    ]);
    const client = clientFor(server);
    await expect(client.servers.list()).resolves.toEqual([{ uuid }]);
    expect(server.seen).toHaveLength(3);
    expect(client.requests.entries().map(({ durationMs, waitedMs, ...rest }) => rest)).toEqual([
      { method: 'GET', route: '/v1/servers', status: 500, attempt: 1, retried: false, final: false },
      { method: 'GET', route: '/v1/servers', status: 429, attempt: 2, retried: true, final: false },
      { method: 'GET', route: '/v1/servers', status: 200, attempt: 3, retried: true, final: true },
    ]);
    expect(client.requests.summary()).toEqual({
      total: 3,
      reads: 3,
      writes: 0,
      retries: 2,
      throttled: 1,
      waitedMs: expect.any(Number),
      byRoute: [{ route: 'GET /v1/servers', count: 3 }],
    });
  });

  test('GET gives up after the budget with the last status, detail kept', async () => {
    const server = await scriptedServer([
      json(503, { detail: 'Maintenance.' }),
      json(503, { detail: 'Maintenance.' }),
      json(503, { detail: 'Still maintenance.' }),
    ]);
    const client = clientFor(server);
    const error = await caught(client.servers.get(uuid));
    expect(error).toBeInstanceOf(CloudscaleRequestError);
    const apiError = error as CloudscaleRequestError;
    expect(apiError.status).toBe(503);
    expect(apiError.detail).toBe('Still maintenance.');
    expect(apiError.attempts).toBe(3);
    expect(apiError.outcomeUnknown).toBe(false);
    expect(apiError.message).toBe(`cloudscale API GET /v1/servers/${uuid} answered 503: Still maintenance.`);
    expect(server.seen).toHaveLength(3);
  });

  test('PATCH after a timeout: read back, not applied, sent again', async () => {
    const server = await scriptedServer({ PATCH: [hang, noContent], GET: [json(200, { uuid, allowed_cidrs: ['10.0.0.0/8'] })] });
    const client = clientFor(server);
    await client.listeners.update(uuid, { allowed_cidrs: [] });
    expect(server.seen.map((r) => r.method)).toEqual(['PATCH', 'GET', 'PATCH']);
    expect(server.seen[1]!.url).toBe(`/v1/load-balancers/listeners/${uuid}`);
  });

  test('GET that never gets an answer ends in CloudscaleNoAnswerError after the budget', async () => {
    const server = await scriptedServer([hang, hang, hang]);
    const client = clientFor(server);
    const error = await caught(client.networks.list());
    expect(error).toBeInstanceOf(CloudscaleNoAnswerError);
    expect(error).toBeInstanceOf(CloudscaleUnavailableError);
    expect((error as CloudscaleNoAnswerError).message).toBe(
      'cloudscale API GET /v1/networks: no answer within 300 ms (3 attempts)',
    );
    expect((error as CloudscaleNoAnswerError).method).toBe('GET');
    expect((error as CloudscaleNoAnswerError).path).toBe('/v1/networks');
    expect(server.seen).toHaveLength(3);
  });

  test('dropped connections are retried, then reported with the network reason', async () => {
    const server = await scriptedServer([drop, drop, drop]);
    const client = clientFor(server);
    const error = await caught(client.subnets.list());
    expect(error).toBeInstanceOf(CloudscaleNoAnswerError);
    expect((error as Error).message).toMatch(/^cloudscale API GET \/v1\/subnets: cannot reach the API: .+ \(3 attempts\)$/);
    expect(server.seen).toHaveLength(3);
  });

  test('a closed port: ECONNREFUSED after the budget', async () => {
    const server = await scriptedServer([]);
    const { url } = server;
    await server.stop();
    running.splice(running.indexOf(server), 1);
    const client = clientFor({ url });
    const error = await caught(client.servers.list());
    expect(error).toBeInstanceOf(CloudscaleNoAnswerError);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect(client.requests.summary()).toMatchObject({ total: 3, retries: 2 });
  });

  test('DELETE answered 404 after a lost first attempt counts as deleted', async () => {
    const server = await scriptedServer([json(502, { detail: 'Bad gateway' }), json(404, { detail: 'Not found.' })]);
    const client = clientFor(server);
    await expect(client.deleteByHref(`${server.url}/v1/load-balancers/${uuid}`)).resolves.toBeUndefined();
    expect(client.requests.entries().map((e) => e.status)).toEqual([502, 404]);
  });

  test('DELETE answered 404 on the first attempt is a not-found error', async () => {
    const server = await scriptedServer([json(404, { detail: 'Not found.' })]);
    const client = clientFor(server);
    const error = await caught(client.deleteByHref(`${server.url}/v1/load-balancers/${uuid}`));
    expect(error).toBeInstanceOf(CloudscaleApiError);
    expect((error as CloudscaleApiError).isNotFound).toBe(true);
  });
});

describe('a write without an answer is read back before it is sent again or reported', () => {
  const before = { uuid, allowed_cidrs: ['10.0.0.0/8'] };
  const after = { uuid, allowed_cidrs: [] };
  const overlapping = json(400, { detail: 'Another change to this load balancer is still being processed.' });

  test('PATCH timed out but applied: the read back shows it, not sent again', async () => {
    const server = await scriptedServer({ PATCH: [hang], GET: [json(200, after)] });
    await clientFor(server).listeners.update(uuid, { allowed_cidrs: [] });
    expect(server.seen.map((r) => r.method)).toEqual(['PATCH', 'GET']);
  });

  test('PATCH timed out, its retry refused (400) while the first was applied: read back, done', async () => {
    const server = await scriptedServer({ PATCH: [hang, overlapping], GET: [json(200, before), json(200, after)] });
    await clientFor(server).listeners.update(uuid, { allowed_cidrs: [] });
    expect(server.seen.map((r) => r.method)).toEqual(['PATCH', 'GET', 'PATCH', 'GET']);
  });

  test('PATCH timed out, refused on every retry and never applied: the 400 after the budget, saying an attempt went unanswered', async () => {
    const server = await scriptedServer({ PATCH: [hang, overlapping, overlapping], GET: [json(200, before), json(200, before), json(200, before)] });
    const error = (await caught(clientFor(server).listeners.update(uuid, { allowed_cidrs: [] }))) as CloudscaleRequestError;
    expect(error).toBeInstanceOf(CloudscaleRequestError);
    expect(error.status).toBe(400);
    expect(error.attempts).toBe(3);
    expect(error.hint).toMatch(/an earlier attempt got no answer/);
    expect(server.seen.map((r) => r.method)).toEqual(['PATCH', 'GET', 'PATCH', 'GET', 'PATCH', 'GET']);
  });

  test('PATCH refused (400) with no attempt unanswered: an answer, not read back', async () => {
    const server = await scriptedServer({ PATCH: [overlapping] });
    const error = (await caught(clientFor(server).listeners.update(uuid, { allowed_cidrs: [] }))) as CloudscaleRequestError;
    expect(error.status).toBe(400);
    expect(error.hint).not.toMatch(/an earlier attempt/);
    expect(server.seen.map((r) => r.method)).toEqual(['PATCH']);
  });

  test('DELETE timed out but applied: the read back answers 404, not sent again', async () => {
    const server = await scriptedServer({ DELETE: [hang], GET: [json(404, { detail: 'Not found.' })] });
    await clientFor(server).deleteByHref(`${server.url}/v1/load-balancers/pools/${uuid}`);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual([`DELETE /v1/load-balancers/pools/${uuid}`, `GET /v1/load-balancers/pools/${uuid}`]);
  });

  test('POST timed out but applied: the pool is found among the pools and is the answer', async () => {
    const pool = { uuid, name: 'tcp', load_balancer: { uuid: lb.uuid }, algorithm: 'round_robin', protocol: 'tcp' };
    const other = { ...pool, uuid: '57cec963-fcd2-482f-bdb6-24461b2d47b1', name: 'udp' };
    const server = await scriptedServer({ POST: [hang], GET: [json(200, [other, pool])] });
    const made = await clientFor(server).pools.create({ name: 'tcp', load_balancer: lb.uuid, algorithm: 'round_robin', protocol: 'tcp' });
    expect(made).toEqual(pool);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/load-balancers/pools', 'GET /v1/load-balancers/pools']);
  });
});

describe('creates are not repeated blindly', () => {
  const body = { name: 'tcp', load_balancer: uuid, algorithm: 'round_robin', protocol: 'tcp' } as const;

  test.each([
    { name: '500', answer: json(500, { detail: 'Server error.' }), kind: CloudscaleRequestError },
    { name: '503 without Retry-After', answer: json(503, {}), kind: CloudscaleRequestError },
    // A proxy may answer so after the API applied the create (see retry.ts).
    { name: '503 with Retry-After', answer: json(503, {}, { 'retry-after': '0' }), kind: CloudscaleRequestError },
    { name: 'a timeout', answer: hang, kind: CloudscaleNoAnswerError },
    { name: 'a dropped connection', answer: drop, kind: CloudscaleNoAnswerError },
  ])('POST after $name: one attempt, read back, nothing found: outcome unknown', async ({ answer, kind }) => {
    const server = await scriptedServer({ POST: [answer, json(201, { uuid })], GET: [json(200, [])] });
    const client = clientFor(server);
    const error = await caught(client.pools.create(body));
    expect(error).toBeInstanceOf(kind);
    expect(isOutcomeUnknown(error)).toBe(true);
    expect((error as { outcomeUnknown: boolean }).outcomeUnknown).toBe(true);
    expect((error as Error & { hint?: string }).hint).toMatch(/read the current state/);
    expect(server.seen.map((r) => r.method)).toEqual(['POST', 'GET']);
  });

  test.each([{ name: '429', answer: json(429, { detail: 'Request was throttled.' }) }])('POST after $name is retried: nothing was created', async ({ answer }) => {
    const server = await scriptedServer([answer, json(201, { uuid, name: 'tcp' })]);
    const client = clientFor(server);
    await expect(client.pools.create(body)).resolves.toEqual({ uuid, name: 'tcp' });
    expect(server.seen.map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(client.requests.summary()).toMatchObject({ total: 2, writes: 2, retries: 1 });
  });

  test('POST 400 is a plain error with the field messages', async () => {
    const server = await scriptedServer([json(400, { algorithm: ['Expect one of round_robin, least_connections, source_ip.'] })]);
    const client = clientFor(server);
    const error = (await caught(client.pools.create(body))) as CloudscaleRequestError;
    expect(error.status).toBe(400);
    expect(error.fieldErrors).toEqual({ algorithm: ['Expect one of round_robin, least_connections, source_ip.'] });
    expect(error.outcomeUnknown).toBe(false);
  });
});

describe('odd answers', () => {
  test('an HTML error page becomes the detail', async () => {
    const server = await scriptedServer([text(502, '<html><body>Bad Gateway</body></html>')]);
    const client = clientFor(server, { retry: { limit: 0 } });
    const error = (await caught(client.servers.list())) as CloudscaleRequestError;
    expect(error.status).toBe(502);
    expect(error.detail).toBe('<html><body>Bad Gateway</body></html>');
  });

  test('a JSON error body sent as text/plain is still parsed', async () => {
    const server = await scriptedServer([text(400, '{"detail": "Only one attribute can be changed."}', 'text/plain')]);
    const client = clientFor(server);
    const error = (await caught(client.loadBalancers.update(uuid, { name: 'x' }))) as CloudscaleRequestError;
    expect(error.detail).toBe('Only one attribute can be changed.');
  });

  test('a bare JSON list of messages becomes the detail', async () => {
    const server = await scriptedServer([json(400, ['First problem.', 'Second problem.'])]);
    const client = clientFor(server);
    const error = (await caught(client.listeners.create(tcpListener(uuid)))) as CloudscaleRequestError;
    expect(error.detail).toBe('First problem. Second problem.');
  });

  test('a 201 whose body is not JSON: the create happened, its object is unknown', async () => {
    const server = await scriptedServer([text(201, 'created', 'text/plain')]);
    const client = clientFor(server);
    const error = await caught(client.loadBalancers.create({ name: 'a', flavor: 'lb-standard', vip_addresses: [] }));
    expect(error).toBeInstanceOf(CloudscaleNoAnswerError);
    expect(isOutcomeUnknown(error)).toBe(true);
    expect(server.seen).toHaveLength(1);
  });
});

describe('the token never shows', () => {
  function everythingPrintable(error: unknown): string {
    const parts: string[] = [];
    let current: unknown = error;
    for (let depth = 0; depth < 10 && current !== undefined; depth++) {
      parts.push(String(current));
      if (current instanceof Error) {
        parts.push(current.message, current.stack ?? '', JSON.stringify(current));
        const hint = (current as { hint?: unknown }).hint;
        if (typeof hint === 'string') parts.push(hint);
        current = current.cause;
      } else {
        current = undefined;
      }
    }
    parts.push(inspect(error, { depth: 10, showHidden: true }));
    return parts.join('\n');
  }

  test.each([
    { name: '401', answers: [json(401, { detail: 'Invalid token.' })] },
    { name: '500 on a create', answers: [json(500, { detail: 'Server error.' })] },
    { name: 'timeouts', answers: [hang, hang, hang] },
    { name: 'dropped connections', answers: [drop, drop, drop] },
  ])('$name', async ({ answers }) => {
    const server = await scriptedServer(answers);
    const client = clientFor(server);
    const error = await caught(
      client.loadBalancers.create({ name: 'a', flavor: 'lb-standard', vip_addresses: [] }),
    );
    expect(error).toBeInstanceOf(Error);
    const printable = everythingPrintable(error);
    expect(printable.length).toBeGreaterThan(50);
    expect(printable).not.toContain(token);
    expect(printable).not.toContain('Very-Secret');
  });

  test('401 with a wrong token: not retried, hint names the token sources', async () => {
    const server = await scriptedServer([json(401, { detail: 'Invalid token.' })]);
    const error = (await caught(clientFor(server).servers.list())) as CloudscaleRequestError;
    expect(error.status).toBe(401);
    expect(error.detail).toBe('Invalid token.');
    expect(error.hint).toMatch(/CLOUDSCALE_API_TOKEN/);
    expect(server.seen).toHaveLength(1);
  });
});

describe('abort', () => {
  test('an abort during the retry wait ends the call with the abort reason', async () => {
    const server = await scriptedServer([json(503, {}, { 'retry-after': '30' })]);
    const controller = new AbortController();
    const client = clientFor(server, {
      signal: controller.signal,
      retry: { limit: 3, baseDelayMs: 1, maxDelayMs: 60_000 },
    });
    const pending = caught(client.servers.list());
    // Abort once the first answer has been recorded, i.e. while the client waits 30 s.
    while (client.requests.entries().length === 0) await new Promise((r) => setTimeout(r, 5));
    const reason = new Error('stop requested');
    controller.abort(reason);
    expect(await pending).toBe(reason);
    expect(server.seen).toHaveLength(1);
  });

  test('an abort while a request is in flight ends the call at once with the abort reason', async () => {
    const server = await scriptedServer([hang]);
    const controller = new AbortController();
    const client = clientFor(server, { signal: controller.signal, timeoutMs: 60_000 });
    const pending = caught(client.servers.list());
    while (server.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    const reason = new Error('shutting down');
    controller.abort(reason);
    expect(await pending).toBe(reason);
    expect(client.requests.entries().map((e) => [e.status, e.final])).toEqual([['error', true]]);
  });
});
