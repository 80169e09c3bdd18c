import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { tagQuery } from '../../src/core/cloudscale/client.js';
import { checkedToken, normaliseBaseUrl, redactToken } from '../../src/core/cloudscale/settings.js';
import {
  resolveApiTimeoutMs,
  resolveApiUrl,
  resolveCloudscaleToken,
} from '../../src/core/cloudscale/token.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cloudscale-token-'));
  await writeFile(join(dir, 'token'), '  file-token-123\n');
  await writeFile(join(dir, 'empty'), '\n \n');
  await writeFile(join(dir, 'two-lines'), 'abc\ndef\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('resolveCloudscaleToken', () => {
  test.each([
    {
      name: '--token-file wins over both variables, trimmed',
      file: 'token',
      env: { CLOUDSCALE_API_TOKEN: 'env-api', CLOUDSCALE_ACCESS_TOKEN: 'env-access' },
      expected: { token: 'file-token-123', source: 'FILE' },
    },
    {
      name: 'CLOUDSCALE_API_TOKEN before CLOUDSCALE_ACCESS_TOKEN',
      env: { CLOUDSCALE_API_TOKEN: 'env-api', CLOUDSCALE_ACCESS_TOKEN: 'env-access' },
      expected: { token: 'env-api', source: 'CLOUDSCALE_API_TOKEN' },
    },
    {
      name: "the Go CCM's CLOUDSCALE_ACCESS_TOKEN",
      env: { CLOUDSCALE_ACCESS_TOKEN: ' env-access ' },
      expected: { token: 'env-access', source: 'CLOUDSCALE_ACCESS_TOKEN' },
    },
    {
      name: 'an empty variable counts as unset',
      env: { CLOUDSCALE_API_TOKEN: '', CLOUDSCALE_ACCESS_TOKEN: 'env-access' },
      expected: { token: 'env-access', source: 'CLOUDSCALE_ACCESS_TOKEN' },
    },
    { name: 'nothing set', env: {}, expected: undefined },
  ])('$name', async ({ file, env, expected }) => {
    const tokenFile = file === undefined ? undefined : join(dir, file);
    const resolved = await resolveCloudscaleToken({ tokenFile, env });
    expect(resolved).toEqual(
      expected === undefined
        ? undefined
        : { ...expected, source: expected.source.replace('FILE', `--token-file ${tokenFile}`) },
    );
  });

  test.each([
    { file: 'missing', message: /cannot read the token file .*missing: ENOENT/ },
    { file: 'empty', message: /the token file .*empty is empty/ },
    { file: 'two-lines', message: /token from --token-file .*two-lines contains spaces, line breaks/ },
  ])('token file $file → ConfigError naming it', async ({ file, message }) => {
    const tokenFile = join(dir, file);
    const error = await resolveCloudscaleToken({ tokenFile, env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(message);
    expect((error as ConfigError).message).toContain(tokenFile);
    expect((error as ConfigError).hint).toBeTruthy();
  });

  test('a token with a space is refused without being echoed', () => {
    const secret = 'abc def-SECRET';
    const error = (() => {
      try {
        return checkedToken(secret, 'CLOUDSCALE_API_TOKEN');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('CLOUDSCALE_API_TOKEN');
    expect((error as Error).message).not.toContain('SECRET');
  });
});

describe('resolveApiUrl', () => {
  test.each([
    { flag: undefined, env: {}, expected: 'https://api.cloudscale.ch' },
    { flag: undefined, env: { CLOUDSCALE_API_URL: '' }, expected: 'https://api.cloudscale.ch' },
    { flag: undefined, env: { CLOUDSCALE_API_URL: 'http://127.0.0.1:8080/' }, expected: 'http://127.0.0.1:8080' },
    {
      flag: 'http://127.0.0.1:9/v1/',
      env: { CLOUDSCALE_API_URL: 'http://127.0.0.1:8080' },
      expected: 'http://127.0.0.1:9',
    },
  ])('flag $flag, env $env → $expected', ({ flag, env, expected }) => {
    expect(resolveApiUrl({ flag, env })).toBe(expected);
  });

  test.each([
    { flag: 'not a url', env: {}, message: /^--api-url: cloudscale API URL "not a url" is not a URL$/ },
    { flag: undefined, env: { CLOUDSCALE_API_URL: 'ftp://x' }, message: /^CLOUDSCALE_API_URL: .*http or https/ },
    { flag: 'http://h/?a=1', env: {}, message: /^--api-url: .*query or fragment/ },
    { flag: 'https://user:pw@h/', env: {}, message: /^--api-url: .*user name or password$/ },
  ])('$flag / $env → ConfigError naming the source', ({ flag, env, message }) => {
    expect(() => resolveApiUrl({ flag, env })).toThrow(ConfigError);
    expect(() => resolveApiUrl({ flag, env })).toThrow(message);
  });

  test('credentials in the URL are not echoed', () => {
    expect(() => resolveApiUrl({ flag: 'https://user:hunter2@h/', env: {} })).not.toThrow(/hunter2/);
  });
});

describe('normaliseBaseUrl', () => {
  test.each([
    ['https://api.cloudscale.ch', 'https://api.cloudscale.ch'],
    ['https://api.cloudscale.ch/', 'https://api.cloudscale.ch'],
    ['https://api.cloudscale.ch/v1', 'https://api.cloudscale.ch'],
    ['https://api.cloudscale.ch/v1/', 'https://api.cloudscale.ch'],
    ['http://127.0.0.1:4321', 'http://127.0.0.1:4321'],
    ['http://127.0.0.1:4321/proxy/v1', 'http://127.0.0.1:4321/proxy'],
    ['HTTP://LOCALHOST:80/', 'http://localhost'],
    ['http://[::1]:4321', 'http://[::1]:4321'],
    ['http://127.1.2.3:4321', 'http://127.1.2.3:4321'],
    ['https://example.org:443/', 'https://example.org'],
    [' https://api.cloudscale.ch/v1 ', 'https://api.cloudscale.ch'],
  ])('%s → %s', (raw, expected) => {
    expect(normaliseBaseUrl(raw)).toBe(expected);
  });

  test.each(['http://api.cloudscale.ch', 'http://10.0.0.1:8080', 'http://[2001:db8::1]/', 'http://128.0.0.1', 'http://localhost.example.org'])(
    'plain http to %s is refused: the token would travel in clear text',
    (raw) => {
      expect(() => normaliseBaseUrl(raw)).toThrow(ConfigError);
      expect(() => normaliseBaseUrl(raw)).toThrow(/refusing to send the cloudscale API token in clear text to http:\/\/.*loopback/);
    },
  );
});

describe('redactToken', () => {
  const token = 'tok"en\\with-escapes-123';
  test.each([
    [`Bearer ${token}`, 'Bearer [redacted]'],
    [JSON.stringify({ detail: `bad header Authorization: Bearer ${token}` }), '{"detail":"bad header Authorization: Bearer [redacted]"}'],
    ['nothing to hide', 'nothing to hide'],
  ])('%s', (text, expected) => {
    expect(redactToken(text, token)).toBe(expected);
  });
  test('non-text bodies pass through', () => {
    expect(redactToken(undefined, token)).toBeUndefined();
  });
});

describe('resolveApiTimeoutMs', () => {
  test.each([
    { value: undefined, ms: 20_000 },
    { value: '', ms: 20_000 },
    { value: '5', ms: 5_000 },
    { value: ' 30 ', ms: 30_000 },
    { value: '3600', ms: 3_600_000 },
  ])('CLOUDSCALE_API_TIMEOUT=$value → $ms ms', ({ value, ms }) => {
    const env = value === undefined ? {} : { CLOUDSCALE_API_TIMEOUT: value };
    expect(resolveApiTimeoutMs(env)).toBe(ms);
  });

  test.each(['0', '-5', '1.5', '20s', 'abc', '3601'])('CLOUDSCALE_API_TIMEOUT=%s → ConfigError', (value) => {
    expect(() => resolveApiTimeoutMs({ CLOUDSCALE_API_TIMEOUT: value })).toThrow(ConfigError);
    expect(() => resolveApiTimeoutMs({ CLOUDSCALE_API_TIMEOUT: value })).toThrow(/^CLOUDSCALE_API_TIMEOUT=/);
  });
});

describe('tagQuery', () => {
  test.each([
    { tags: {}, query: '' },
    { tags: { env: 'prod' }, query: '?tag:env=prod' },
    { tags: { owner: true }, query: '?tag:owner' },
    { tags: { env: 'prod', owner: true }, query: '?tag:env=prod&tag:owner' },
    { tags: { 'k8s/svc': 'a b&c' }, query: '?tag:k8s%2Fsvc=a%20b%26c' },
    { tags: { key: '' }, query: '?tag:key=' },
  ])('$tags → $query', ({ tags, query }) => {
    expect(tagQuery(tags as Record<string, string | true>)).toBe(query);
  });
});
