// A reader that stops reading (`cloudscale-ccm plan | head`): the command ends quietly with the
// exit code it has with a reader, whatever it had left to print. The read end of stdout is
// closed before the process starts writing, so every write it makes meets the closed pipe
// (EPIPE), as the writes after head's first lines do.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, TEST_TOKEN, type BinaryResult, type Harness } from '../support/ccm.js';
import { testKubeconfig } from '../support/kube.js';
import { binaryPath } from './cli-support.js';

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness.stop();
});

/** Runs the binary with the read end of its stdout closed at once; stdout is not read. */
function runWithClosedStdout(args: readonly string[]): Promise<Omit<BinaryResult, 'stdout'>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binaryPath, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: testKubeconfig(), CLOUDSCALE_API_TOKEN: TEST_TOKEN, CLOUDSCALE_API_URL: harness.sim.url },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('stdout closed by its reader', () => {
  test.each([
    [['--help']],
    [['--version']],
    [['plan', '--help']],
    [['manifests']],
    [['completion', 'bash']],
    [['plan']],
    [['-o', 'json', 'plan']],
    [['status']],
    [['-o', 'json', 'init-nodes', '--dry-run']],
    // A writer: its pass takes the Lease and ends as with a reader (the Lease released: the second run gets it).
    [['-o', 'json', 'init-nodes']],
    [['sync-lb', '--dry-run']],
  ])('%j: no EPIPE, no stack, the exit code it has with a reader', async (args) => {
    const read = await runBinary(args, { apiUrl: harness.sim.url });
    expect(read.stdout, 'the command prints something to be cut off').not.toBe('');
    const closed = await runWithClosedStdout(args);
    expect(closed.stderr).not.toContain('EPIPE');
    expect(closed.stderr).not.toMatch(/^\s+at .+[:(]/m);
    expect(closed.stderr).toBe(read.stderr);
    expect(closed.code).toBe(read.code);
  });
});
