// @kube-versions: all — plan writes nothing: Services, Nodes, Events and Leases as each server stores them
// `plan` writes nothing: in all three forms (whole cluster, named Service, -f manifests), as a
// function and as the real binary, with changes pending on nodes and Services, the simulator
// receives only GETs, and the Services, Nodes, Events and Leases of the cluster stay as they were.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { nodesSeed, runBinary } from '../support/ccm.js';
import { createLoadBalancerService, createNode, testConnection, uniqueName, UNINITIALIZED_TAINT } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';
import { kubeState } from '../support/kube-state.js';

const P = 'k8s.cloudscale.ch/';

const seed = (prefix: string) =>
  nodesSeed({ prefix, count: 3, privateNet: '10.40.0', publicNet: '5.102.148', floatingIps: ['5.102.151.20/32'] });

describe('plan is strictly read-only', () => {
  let dir: string;
  const namespace = uniqueName('plan-ro');
  const prefix = uniqueName('n');
  const nodes = [1, 2, 3].map((i) => `${prefix}-${i}`);
  const { harness } = useLbWorld({ prefix, namespace, seed: seed(prefix), nodes: 2 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccm-plan-ro-'));
    await createLoadBalancerService(namespace, 'web');
    await syncLbCommand(['service/web'], { ...FAST_PASS, namespace, dryRun: false }, harness.context());
    // Pending work of every kind: an uninitialised node, a changed and a new Service, a Floating IP.
    await createNode(nodes[2]!, { taints: [UNINITIALIZED_TAINT] });
    await testConnection().core.patchNamespacedService(
      {
        namespace,
        name: 'web',
        body: { metadata: { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'source_ip', [`${P}loadbalancer-floating-ips`]: '["5.102.151.20/32"]' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await createLoadBalancerService(namespace, 'fresh');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('sends only GETs to the cloud and changes nothing in Kubernetes, in every form', async () => {
    const manifest = join(dir, 'services.yaml');
    await writeFile(
      manifest,
      `apiVersion: v1
kind: Service
metadata: {name: web, annotations: {${P}loadbalancer-pool-algorithm: least_connections}}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{name: http, protocol: TCP, port: 81, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {type: LoadBalancer, selector: {app: api}, ports: [{name: grpc, port: 9000, targetPort: 9000}]}
`,
    );
    const before = await kubeState(namespace, nodes);
    const logStart = harness.sim.admin.requests().length;

    const forms: { args: string[]; filename?: string }[] = [{ args: [] }, { args: ['service/web', 'service/fresh'] }, { args: [], filename: manifest }];
    for (const form of forms) {
      for (const output of ['json', 'text', 'yaml'] as const) {
        const ctx = harness.context({ output });
        const result = await planCommand(form.args, { namespace, detailedExitcode: true, ...(form.filename === undefined ? {} : { filename: form.filename }) }, ctx);
        expect(result.exitCode, `plan ${form.args.join(' ')} ${form.filename ?? ''} -o ${output}: ${ctx.err()}`).toBe(2);
        if (output === 'json') {
          // The plans were not empty: what is proven read-only had writes to show.
          const document = JSON.parse(ctx.out()) as PlanDocument;
          expect(document.summary.create + document.summary.update + document.summary.delete).toBeGreaterThan(0);
        }
      }
    }
    const binary = await runBinary(['--cluster-id', harness.clusterId, 'plan', '--detailed-exitcode'], { apiUrl: harness.sim.url });
    expect(binary.code, binary.stderr).toBe(2);
    expect(binary.stdout).toContain(`~ initialize  node/${nodes[2]}`);
    const fromStdin = await runBinary(['--cluster-id', harness.clusterId, 'plan', '-n', namespace, '-f', '-', '--detailed-exitcode'], {
      apiUrl: harness.sim.url,
      stdin: await import('node:fs/promises').then((fs) => fs.readFile(manifest, 'utf8')),
    });
    expect(fromStdin.code, fromStdin.stderr).toBe(2);

    const requests = harness.sim.admin.requests().slice(logStart);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(await kubeState(namespace, nodes)).toEqual(before);
  });
});
