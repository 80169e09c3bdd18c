// --metrics-file: a path that cannot take the file is refused before the pass, and a write that
// fails leaves nothing behind (the temporary file beside the target is removed).
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, UsageError } from '../../src/core/errors.js';
import { checkMetricsFilePath, writeMetricsFile } from '../../src/core/metrics/publish.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccm-metrics-file-'));
  await mkdir(join(dir, 'metrics'));
  await writeFile(join(dir, 'old.prom'), 'old\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('checkMetricsFilePath', () => {
  test.each([
    ['a directory', 'metrics', ['metrics is a directory', 'e.g. --metrics-file', join('metrics', 'cloudscale-ccm.prom')]],
    ['a file in a missing directory', join('missing', 'ccm.prom'), ['the directory', 'missing does not exist', 'create it first']],
  ])('%s is refused', (_, path, fragments) => {
    let error: unknown;
    try {
      checkMetricsFilePath(join(dir, path));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    const text = `${(error as UsageError).message}; ${(error as UsageError).hint}`;
    for (const fragment of fragments) expect(text).toContain(fragment);
  });

  test.each([['a new file', 'new.prom'], ['an existing file', 'old.prom']])('%s is accepted', (_, path) => {
    expect(checkMetricsFilePath(join(dir, path))).toBe(join(dir, path));
  });
});

describe('writeMetricsFile', () => {
  test('a directory in its place: a ConfigError naming it, and no temporary file left', async () => {
    const before = await readdir(dir);
    await expect(writeMetricsFile(join(dir, 'metrics'), 'a 1\n')).rejects.toThrow(ConfigError);
    await expect(writeMetricsFile(join(dir, 'metrics'), 'a 1\n')).rejects.toThrow(`cannot write the metrics file ${join(dir, 'metrics')}`);
    expect(await readdir(dir)).toEqual(before);
  });

  test('a file is replaced whole, nothing else left', async () => {
    await writeMetricsFile(join(dir, 'old.prom'), 'new 1\n');
    expect((await readdir(dir)).sort()).toEqual(['metrics', 'old.prom']);
  });
});
