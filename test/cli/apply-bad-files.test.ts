// `apply FILE` with a file that is no saved plan (or one edited and sealed again with values `plan`
// would refuse), and budget values no Job could run: one error naming the file or the value, exit 1,
// nothing on stdout, and nothing contacted (the cluster and the API are unreachable here: a command
// that got past the file would fail on them).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serializeSavedPlan } from '../../src/core/plan/saved-plan.js';
import { runBinary } from '../support/ccm.js';
import { savedPlanContent } from '../support/plan-fixtures.js';
import { expectUserError } from './cli-support.js';

const unreachable = {
  env: { KUBECONFIG: '/nonexistent/kubeconfig', CLOUDSCALE_API_URL: 'http://127.0.0.1:9', CLOUDSCALE_API_TOKEN: 'x'.repeat(64) },
};

describe('apply of a file that is no saved plan', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccm-apply-bad-'));
    await writeFile(join(dir, 'empty.json'), '');
    await writeFile(join(dir, 'array.json'), '[]\n');
    // What `plan -o json` prints: a plan document, not a saved plan.
    await writeFile(join(dir, 'plan-output.json'), JSON.stringify({ apiVersion: 'cloudscale-ccm/v1', kind: 'Plan', version: 1, services: [] }));
    // Saved plans edited and sealed again (the integrity digest is no signature).
    const sealed = (change: Record<string, unknown>) => serializeSavedPlan({ ...savedPlanContent(), ...change } as never);
    await writeFile(join(dir, 'negative-drain.json'), sealed({ options: { drainSeconds: -5, maxNodeDeletions: null } }));
    await writeFile(join(dir, 'null-fingerprint.json'), sealed({ fingerprint: null }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test.each([
    ['a missing file', 'missing.json', ['could not read the saved plan', 'missing.json', 'ENOENT']],
    ['a directory', '.', ['could not read the saved plan', 'EISDIR']],
    ['an empty file', 'empty.json', ['empty.json is not a saved plan', 'not valid JSON']],
    ['a JSON array', 'array.json', ['array.json is not a saved plan', 'no JSON object']],
    ['the output of plan -o json', 'plan-output.json', ['plan-output.json is not a saved plan', 'it has no "format" field', 'plan -o json']],
    ['a drain the flag refuses', 'negative-drain.json', ['options.drainSeconds is -5', '--drain-seconds takes a number ≥ 0, got "-5"', 'sealed again']],
    ['a fingerprint that is null', 'null-fingerprint.json', ['null-fingerprint.json: fingerprint is null, not an object', 'sealed again']],
  ])('%s', async (_, file, fragments) => {
    const result = await runBinary(['apply', join(dir, file)], unreachable);
    expectUserError(result, ...fragments);
    expect(result.stderr.match(/^error: /gm)).toHaveLength(1);
    expect(result.stderr).not.toContain('kubeconfig');
  });
});

describe('budget values no Job could run', () => {
  test.each([
    [['manifests', '--max-downtime', '99999999999999999999999h'], ['--max-downtime', 'too long']],
    [['manifests', '--window', 'daily 02:00-04:00 UTC=99999999999999999999999h'], ['--window', 'too long']],
    [['sync-lb', '--max-downtime', '1e3s'], ['--max-downtime', '"1e3s"', 'not a duration']],
    [['sync-lb', '--max-downtime', '0s', '--window', 'Mon 02:00-25:00 UTC=5m'], ['--window', 'not a time of day']],
    [['run', '--max-downtime', '0s', '--window', 'Mon 03:00-03:00 UTC=5m'], ['--window', 'empty']],
  ])('%j', async (args, fragments) => {
    const result = await runBinary(args, unreachable);
    expectUserError(result, ...fragments);
    expect(result.stderr.match(/^error: /gm)).toHaveLength(1);
  });
});
