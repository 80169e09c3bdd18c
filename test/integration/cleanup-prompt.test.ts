// `cleanup`'s question as an operator meets it: the real binary under a pseudo-terminal
// (`script`), answered by writing to the terminal. While the question waits, the writers' Lease
// is free (a sync-lb passes); after the answer, cleanup re-reads under the Lease and deletes only
// what is still a candidate, unchanged, keeping and naming the rest.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { TEST_TOKEN, nodesSeed } from '../support/ccm.js';
import { createLoadBalancerService, deleteServiceForced, testKubeconfig, uniqueName } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';

const binary = fileURLToPath(new URL('../../bin/cloudscale-ccm.js', import.meta.url));
const QUESTION = '[y/N]';

/** `cloudscale-ccm ARGS` under a pseudo-terminal: its output so far, a wait for a text, the answer, the exit. */
interface Terminal {
  output(): string;
  /** Resolves once the output contains `text`; rejects when the process exits first. */
  shows(text: string): Promise<void>;
  type(line: string): void;
  exit(): Promise<number | null>;
  kill(): void;
}

function underPseudoTerminal(args: readonly string[], env: NodeJS.ProcessEnv): Terminal {
  const command = [process.execPath, binary, ...args].map((a) => `'${a}'`).join(' ');
  const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: { text: string; resolve: () => void; reject: (error: Error) => void }[] = [];
  const settle = () => {
    for (const w of waiters.filter((w) => out.includes(w.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    settle();
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`exited ${code} before showing ${JSON.stringify(w.text)}:\n${out}`));
      resolve(code);
    });
  });
  return {
    output: () => out,
    shows: (text) =>
      new Promise((resolve, reject) => {
        waiters.push({ text, resolve, reject });
        settle();
      }),
    type: (line) => child.stdin.write(`${line}\n`),
    exit: () => {
      child.stdin.end();
      return exited;
    },
    kill: () => child.kill(),
  };
}

describe('cleanup asks before it takes the Lease', () => {
  const namespace = uniqueName('prompt');
  const prefix = uniqueName('pr');
  const sync = { ...FAST_PASS, namespace, dryRun: false };
  const terminals: Terminal[] = [];
  const uuids = async () => (await harness.cloud.loadBalancers.list()).map((lb) => lb.uuid).sort();

  /** A load balancer this cluster left behind: its Service's, after the Service went without it. */
  async function orphan(name: string): Promise<string> {
    await createLoadBalancerService(namespace, name);
    const report = await syncLbCommand([`service/${name}`], sync, harness.context());
    await deleteServiceForced(namespace, name);
    return report.services[0]!.loadBalancer!.uuid!;
  }

  function cleanup(): Terminal {
    const terminal = underPseudoTerminal(['--cluster-id', harness.clusterId, 'cleanup'], {
      KUBECONFIG: testKubeconfig(),
      CLOUDSCALE_API_URL: harness.sim.url,
      CLOUDSCALE_API_TOKEN: TEST_TOKEN,
    });
    terminals.push(terminal);
    return terminal;
  }
  const { harness } = useLbWorld({ prefix, namespace, seed: nodesSeed({ prefix, count: 1, privateNet: '10.52.0' }), nodes: 1 });

  afterEach(() => {
    for (const terminal of terminals.splice(0)) terminal.kill();
  });

  it('a sync-lb passes while the question waits; after "y" the orphan is deleted and the new load balancer stays', async () => {
    const left = await orphan('gone');
    const terminal = cleanup();
    await terminal.shows(QUESTION);
    expect(terminal.output()).toContain(`(${left}): its Service ${namespace}/gone no longer exists`);

    // A Service created meanwhile gets its load balancer: the Lease is free.
    await createLoadBalancerService(namespace, 'fresh');
    const report = await syncLbCommand(['service/fresh'], sync, harness.context());
    const fresh = report.services[0]!.loadBalancer!.uuid!;
    expect(report.services.map((s) => s.status)).toEqual(['changed']);

    terminal.type('y');
    expect(await terminal.exit(), terminal.output()).toBe(0);
    expect(terminal.output()).toMatch(/deleted load balancer k8s-service-/);
    expect(await uuids()).toEqual([fresh]);
  });

  it('a candidate a Service took over while the question waited is kept and named with the Service', async () => {
    const left = await orphan('gone2');
    const before = await uuids();
    const terminal = cleanup();
    await terminal.shows(QUESTION);

    // Restored under another name, pointing at the load balancer by UUID (not yet synced).
    await createLoadBalancerService(namespace, 'restored', { annotations: { 'k8s.cloudscale.ch/loadbalancer-uuid': left } });

    terminal.type('y');
    expect(await terminal.exit(), terminal.output()).toBe(0);
    expect(terminal.output()).toMatch(
      new RegExp(`kept load balancer \\S+ \\(${left}\\): no longer left behind: Service ${namespace}/restored refers to it by uuid`),
    );
    expect(terminal.output()).not.toContain('deleted load balancer');
    expect(await uuids()).toEqual(before);
  });
});
