// The terminal UI as a person sees it: the real binary under a pseudo-terminal (`script`) draws
// the live ink view; the same command with a pipe for stdout prints plain lines, no escapes.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, nodesSeed, runBinary } from '../support/ccm.js';
import { createLoadBalancerService, testKubeconfig, uniqueName } from '../support/kube.js';
import { useLbWorld } from '../support/lb-scenarios.js';

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

const SIX = ['web', 'web2', 'web3', 'web4', 'web5', 'web6'];

describe('progress view of sync-lb', () => {
  const namespace = uniqueName('tty');
  const prefix = uniqueName('tty');
  const { harness } = useLbWorld({ prefix, namespace, lbProvisionMs: 300, seed: nodesSeed({ prefix, count: 1, privateNet: '10.30.0' }), nodes: 1 });

  beforeAll(async () => {
    await createLoadBalancerService(namespace, 'one');
    await createLoadBalancerService(namespace, 'two');
    // Six Services; the first by name has four ports, so it finishes last, after the others.
    const ports = [80, 81, 82, 83].map((port) => ({ name: `p${port}`, protocol: 'TCP', port, targetPort: 8080 }));
    await createLoadBalancerService(namespace, 'web', { ports });
    for (const name of SIX.slice(1)) await createLoadBalancerService(namespace, name);
  });

  const env = () => ({ KUBECONFIG: testKubeconfig(), CLOUDSCALE_API_URL: harness.sim.url, CLOUDSCALE_API_TOKEN: TEST_TOKEN });
  const args = (...names: string[]) => ['sync-lb', '-n', namespace, ...names.map((name) => `service/${name}`), '--cluster-id', harness.clusterId, '--settle-seconds', '0', '--poll-seconds', '0.05'];

  it('draws a live view in a terminal: colours, cursor control, the waiting step, then the result', async () => {
    const out = await underPseudoTerminal(args('one'), env());
    expect(out).toMatch(/\u001b\[/);
    expect(out).toContain(`service/${namespace}/one: 2/8 waiting for k8s-service`);
    expect(out).toMatch(new RegExp(`✓ service/${namespace}/one: done, 8 actions in \\d+\\.\\d s`));
    expect(out).toContain('sync-lb: 1 Service: 1 changed, 0 in sync, 0 failed');
  });

  it('ends with one line per Service, each named once, as the pass executed them', async () => {
    const out = await underPseudoTerminal(args(...SIX), env());
    const finished = [...out.matchAll(new RegExp(`✓ service/${namespace}/(\\w+): done, (\\d+) actions`, 'g'))].map((m) => `${m[1]} ${m[2]}`);
    // web: 4 pools with their member, monitor and listener; the others one of each (8 actions).
    expect(finished.sort()).toEqual(['web 20', 'web2 8', 'web3 8', 'web4 8', 'web5 8', 'web6 8']);
    expect(out).toContain('sync-lb: 6 Services: 6 changed, 0 in sync, 0 failed');
  });

  it('a pass with nothing to do, and a plan, print their text without terminal control codes', async () => {
    await underPseudoTerminal(args('one'), env());
    const inSync = await underPseudoTerminal([...args('one'), '--no-color'], env());
    expect(JSON.stringify(inSync)).toBe(JSON.stringify(inSync.replace(/\u001b/g, '')));
    expect(inSync).toMatch(new RegExp(`^service/${namespace}/one: in sync\r?\nsync-lb: 1 Service: 0 changed, 1 in sync, 0 failed`));
    const plan = await underPseudoTerminal(['plan', '-n', namespace, 'service/one', '--cluster-id', harness.clusterId, '--no-color'], env());
    expect(JSON.stringify(plan)).toBe(JSON.stringify(plan.replace(/\u001b/g, '')));
    expect(plan).toMatch(/^Unchanged: /);
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
