// The terminal UI as a person sees it: the real binary under a pseudo-terminal (`script`) draws
// the live ink view; the same command with a pipe for stdout prints plain lines, no escapes.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, runBinary, startHarness, type Harness } from '../support/ccm.js';
import { createLoadBalancerService, createNode, deleteCreatedObjects, ensureNamespace, testKubeconfig, uniqueName } from '../support/kube.js';

const binary = fileURLToPath(new URL('../../bin/cloudscale-ccm.js', import.meta.url));

function underPseudoTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const command = [process.execPath, binary, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
    child.stdin.end();
  });
}

describe('progress view of sync-lb', () => {
  let harness: Harness;
  const namespace = uniqueName('tty');
  const prefix = uniqueName('tty');

  beforeAll(async () => {
    harness = await startHarness({
      lbProvisionMs: 300,
      seed: `
networks: [{name: p, zone: rma1, subnets: [{cidr: 10.30.0.0/24}]}]
servers:
  - {name: ${prefix}-1, flavor: flex-4-2, zone: rma1, interfaces: [{type: private, network: p, addresses: [10.30.0.1]}]}
`,
    });
    await ensureNamespace(namespace);
    await createNode(`${prefix}-1`, { ready: true });
    await createLoadBalancerService(namespace, 'one');
    await createLoadBalancerService(namespace, 'two');
  });
  afterAll(async () => {
    await deleteCreatedObjects();
    await harness.stop();
  });

  const env = () => ({ KUBECONFIG: testKubeconfig(), CLOUDSCALE_API_URL: harness.sim.url, CLOUDSCALE_API_TOKEN: TEST_TOKEN });
  const args = (name: string) => ['sync-lb', '-n', namespace, `service/${name}`, '--cluster-id', harness.clusterId, '--settle-seconds', '0', '--poll-seconds', '0.05'];

  it('draws a live view in a terminal: colours, cursor control, the waiting step, then the result', async () => {
    const out = await underPseudoTerminal(args('one'), env());
    expect(out).toMatch(/\u001b\[/);
    expect(out).toContain(`service/${namespace}/one: 2/8 waiting for k8s-service`);
    expect(out).toMatch(new RegExp(`✓ service/${namespace}/one: done, 8 actions in \\d+\\.\\d s`));
    expect(out).toContain('sync-lb: 1 Service(s): 1 changed, 0 in sync, 0 failed');
  });

  it('prints plain lines without escape codes when stdout is not a terminal', async () => {
    const result = await runBinary(args('two'), { apiUrl: harness.sim.url });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/\u001b\[/);
    expect(result.stdout).toContain(`service/${namespace}/two: create-lb load balancer k8s-service-`);
    expect(result.stdout).toContain(`service/${namespace}/two: done, 8 actions in`);
    expect(result.stdout.match(/waiting for/g)).toHaveLength(1);
  });
});
