// Configuration errors: a kubeconfig, context, token or API setting that cannot work is reported
// as `error: …` naming the file, context or variable, with a hint that says how to fix it; exit
// code 1, nothing on stdout, no stack trace. Runs `plan` (it writes nothing) against the test
// cluster and an API address nothing listens on: nothing ever gets an answer from the API.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary } from '../support/ccm.js';
import { ignoreNotFound, testConnection, testKubeconfig } from '../support/kube.js';
import { closedPort, expectUserError } from './cli-support.js';

let nothingListens: string;
let dir: string;

beforeAll(async () => {
  nothingListens = `http://127.0.0.1:${await closedPort()}`;
  dir = mkdtempSync(join(tmpdir(), 'ccm-cli-config-'));
  // "No token anywhere" needs the Secret the tool falls back to to be absent.
  const secret = await ignoreNotFound(testConnection().core.readNamespacedSecret({ namespace: 'kube-system', name: 'cloudscale' }));
  if (secret !== undefined) throw new Error('Secret kube-system/cloudscale exists in the test cluster: a test file left it behind');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kubeconfig and context', () => {
  test('--kubeconfig naming a missing file names the file', async () => {
    const result = await runBinary(['--kubeconfig', '/nonexistent/kubeconfig', 'plan'], { apiUrl: nothingListens });
    expectUserError(result, '/nonexistent/kubeconfig', /--kubeconfig/);
  });

  test('KUBECONFIG naming a missing file names the file', async () => {
    const result = await runBinary(['plan'], { apiUrl: nothingListens, env: { KUBECONFIG: '/nonexistent/kubeconfig' } });
    expectUserError(result, '/nonexistent/kubeconfig', /KUBECONFIG/);
  });

  test('a kubeconfig that is not YAML names the file', async () => {
    const broken = join(dir, 'broken-kubeconfig');
    writeFileSync(broken, 'clusters: [\n');
    const result = await runBinary(['--kubeconfig', broken, 'plan'], { apiUrl: nothingListens });
    expectUserError(result, broken);
  });

  test('--context naming an unknown context lists the contexts of the kubeconfig', async () => {
    const contexts = (parse(readFileSync(testKubeconfig(), 'utf8')) as { contexts: { name: string }[] }).contexts.map((c) => c.name);
    expect(contexts.length).toBeGreaterThan(0);
    const result = await runBinary(['--context', 'nope', 'plan'], { apiUrl: nothingListens });
    expectUserError(result, '"nope"', testKubeconfig(), ...contexts);
  });

  test('an API server nobody answers at names its address and the kubeconfig', async () => {
    const kubeconfig = join(dir, 'unreachable-kubeconfig');
    const server = `https://127.0.0.1:${await closedPort()}`;
    writeFileSync(kubeconfig, readFileSync(testKubeconfig(), 'utf8').replace(/server: \S+/g, `server: ${server}`));
    const result = await runBinary(['--kubeconfig', kubeconfig, 'plan'], { apiUrl: nothingListens });
    expectUserError(result, server, kubeconfig);
  });
});

describe('the cloudscale API token', () => {
  test('none anywhere (no variable, no --token-file, no Secret): says where to put one', async () => {
    const result = await runBinary(['plan'], { apiUrl: nothingListens, env: { CLOUDSCALE_API_TOKEN: undefined } });
    expectUserError(result, 'no cloudscale API token', 'CLOUDSCALE_API_TOKEN', '--token-file', 'kube-system/cloudscale', 'access-token');
  });

  test('an empty CLOUDSCALE_API_TOKEN counts as none', async () => {
    const result = await runBinary(['plan'], { apiUrl: nothingListens, env: { CLOUDSCALE_API_TOKEN: '' } });
    expectUserError(result, 'no cloudscale API token');
  });

  test('--token-file naming a missing file names the file', async () => {
    const missing = join(dir, 'no-such-token');
    const result = await runBinary(['--token-file', missing, 'plan'], { apiUrl: nothingListens });
    expectUserError(result, missing, /--token-file/);
  });

  test('--token-file naming an empty file (only a line break) names the file', async () => {
    const empty = join(dir, 'empty-token');
    writeFileSync(empty, '\n');
    const result = await runBinary(['--token-file', empty, 'plan'], { apiUrl: nothingListens });
    expectUserError(result, empty, 'empty');
  });

  test('--token-file wins over CLOUDSCALE_API_TOKEN, so its errors are not hidden by a good variable', async () => {
    const result = await runBinary(['--token-file', join(dir, 'absent'), 'plan'], {
      apiUrl: nothingListens,
      env: { CLOUDSCALE_API_TOKEN: 'a-perfectly-fine-token' },
    });
    expectUserError(result, join(dir, 'absent'));
  });

  test('a token with a space or line break names where it came from', async () => {
    const result = await runBinary(['plan'], { apiUrl: nothingListens, env: { CLOUDSCALE_API_TOKEN: 'half-a-token other-half' } });
    expectUserError(result, 'CLOUDSCALE_API_TOKEN');
    expect(result.stderr).not.toContain('half-a-token');
  });
});

describe('API URL and timeout', () => {
  test('CLOUDSCALE_API_URL that is not a URL names the variable and the value', async () => {
    const result = await runBinary(['plan'], { apiUrl: 'notaurl' });
    expectUserError(result, 'CLOUDSCALE_API_URL', 'notaurl');
  });

  test('--api-url with another scheme names the flag', async () => {
    const result = await runBinary(['--api-url', 'ftp://api.example', 'plan'], { apiUrl: nothingListens });
    expectUserError(result, '--api-url', 'ftp://api.example');
  });

  test.each(['abc', '0', '-5', '1.5'])('CLOUDSCALE_API_TIMEOUT=%s names the variable', async (value) => {
    const result = await runBinary(['plan'], { apiUrl: nothingListens, env: { CLOUDSCALE_API_TIMEOUT: value } });
    expectUserError(result, 'CLOUDSCALE_API_TIMEOUT', `"${value}"`);
  });

  test('an API nobody answers at names the address after its retries; -v adds the causes', async () => {
    const result = await runBinary(['plan'], { apiUrl: nothingListens, env: { CLOUDSCALE_API_TIMEOUT: '2' } });
    expectUserError(result, nothingListens.replace('http://', ''));
    expect(result.stderr).not.toMatch(/^cause: /m);

    const verbose = await runBinary(['-v', 'plan'], { apiUrl: nothingListens, env: { CLOUDSCALE_API_TIMEOUT: '2' } });
    expectUserError(verbose, nothingListens.replace('http://', ''));
    expect(verbose.stderr).toMatch(/^cause: \S/m);
  });
});

describe('bad input found by the apiserver or the filesystem', () => {
  test('an invalid --selector is a usage error naming the flag', async () => {
    const result = await runBinary(['init-nodes', '-l', '!!x'], { apiUrl: nothingListens });
    expectUserError(result, '--selector');
  });

  test('plan -f naming a missing file names it and hints', async () => {
    const missing = join(dir, 'no-such-service.yaml');
    const result = await runBinary(['plan', '-f', missing], { apiUrl: nothingListens });
    expectUserError(result, missing);
  });
});
