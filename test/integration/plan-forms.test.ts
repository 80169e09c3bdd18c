// The three forms of `plan` against the simulator and the run's kube-apiserver: the whole
// cluster (nodes and Services), named Services, and proposed manifests (-f, one or several
// documents, through a server-side dry run); and --detailed-exitcode through the real binary.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { nodesSeed, runBinary } from '../support/ccm.js';
import { createLoadBalancerService, createNode, deleteServiceForced, ignoreNotFound, testConnection, uniqueName, UNINITIALIZED_TAINT } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';

const P = 'k8s.cloudscale.ch/';

const seed = (prefix: string) => nodesSeed({ prefix, count: 3, privateNet: '10.30.0', publicNet: '5.102.147' });

describe('plan: whole cluster, named Services, manifests', () => {
  let dir: string;
  const namespace = uniqueName('plan');
  const prefix = uniqueName('n');
  const syncOptions = { ...FAST_PASS, namespace, dryRun: false };

  async function plan(args: string[], options: { filename?: string; detailedExitcode?: boolean } = {}) {
    const ctx = harness.context({ output: 'json' });
    const result = await planCommand(args, { namespace, detailedExitcode: false, ...options }, ctx);
    return { result, document: JSON.parse(ctx.out()) as PlanDocument, stderr: ctx.err() };
  }
  async function planText(args: string[], options: { filename?: string } = {}) {
    const ctx = harness.context();
    await planCommand(args, { namespace, detailedExitcode: false, ...options }, ctx);
    return ctx.out();
  }
  const binary = (args: string[], stdin?: string) =>
    runBinary(['--cluster-id', harness.clusterId, '--no-color', ...args], { apiUrl: harness.sim.url, ...(stdin === undefined ? {} : { stdin }) });
  const kinds = (document: PlanDocument, name: string) =>
    document.services.find((s) => s.service.name === name)!.actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`);
  const { harness } = useLbWorld({ prefix, namespace, seed: seed(prefix), nodes: 2 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccm-plan-'));
    await createLoadBalancerService(namespace, 'web');
    await syncLbCommand(['service/web'], syncOptions, harness.context());
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('plan service/NAME: a converged Service has no changes (exit 0 with --detailed-exitcode)', async () => {
    const { result, document } = await plan(['service/web'], { detailedExitcode: true });
    expect(result.exitCode).toBe(0);
    expect(document.nodes).toBeNull();
    expect(document.services.map((s) => [s.service.name, s.mode, s.actions.length])).toEqual([['web', 'ensure', 0]]);
    expect(document.summary).toMatchObject({ changes: false, problems: 0, worstDowntime: null });
    expect(await planText(['service/web'])).toBe(
      `Unchanged: ${namespace}/web.\nNo changes. The cloud and the cluster match the desired state.\n`,
    );

    const cli = await binary(['plan', 'service/web', '-n', namespace, '--detailed-exitcode']);
    expect(cli).toMatchObject({ code: 0, stderr: '' });
    expect(cli.stdout).toContain('No changes.');
  });

  it('plan service/NAME of a Service that does not exist: the others are planned, exit 1 naming it', async () => {
    const ctx = harness.context({ output: 'json' });
    const result = await planCommand(['service/web', 'service/nope'], { namespace, detailedExitcode: true }, ctx);
    expect(result.exitCode).toBe(1);
    expect((JSON.parse(ctx.out()) as PlanDocument).services.map((s) => s.service.name)).toEqual(['web']);
    expect(ctx.err()).toBe(`error: service ${namespace}/nope not found\nhint: check the name and the namespace (-n)\n`);

    const cli = await binary(['plan', 'service/nope', '-n', namespace]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`error: service ${namespace}/nope not found`);
    // Nothing was planned: no "No changes." beside the error; a document has no Services.
    expect(cli.stdout).toBe('');
    expect((JSON.parse((await binary(['plan', 'service/nope', '-n', namespace, '-o', 'json'])).stdout) as PlanDocument).services).toEqual([]);
  });

  it('Service names and -f together are a usage error', async () => {
    await expect(plan(['service/web'], { filename: 'x.yaml' })).rejects.toThrow('plan takes Service names or -f FILE, not both');
  });

  it('plan service/NAME -n NS: a changed annotation shows its actions, impact and downtime (exit 2)', async () => {
    await testConnection().core.patchNamespacedService(
      { namespace, name: 'web', body: { metadata: { annotations: { [`${P}loadbalancer-timeout-client-data-ms`]: '1000' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    try {
      const { document } = await plan(['svc/web']);
      expect(kinds(document, 'web')).toEqual(['update-listener listener tcp/80 [none]']);
      expect(document.services[0]!.actions[0]!.reason).toMatchObject({ field: `${P}loadbalancer-timeout-client-data-ms`, from: '50000', to: '1000' });

      const cli = await binary(['plan', 'service/web', '-n', namespace, '--detailed-exitcode']);
      expect(cli.code).toBe(2);
      expect(cli.stdout).toContain(`Service ${namespace}/web — load balancer k8s-service-`);
      expect(cli.stdout).toContain('  ~ update-listener  listener tcp/80\n');
      expect(cli.stdout).toContain(`(${P}loadbalancer-timeout-client-data-ms: 50000 → 1000)`);
      expect(cli.stdout).toMatch(/Plan: 0 to create, 1 to update, 0 to delete\. Expected downtime: none\.\n$/);
      // Without the flag pending changes are success.
      expect((await binary(['plan', 'service/web', '-n', namespace])).code).toBe(0);
    } finally {
      await testConnection().core.patchNamespacedService(
        { namespace, name: 'web', body: { metadata: { annotations: { [`${P}loadbalancer-timeout-client-data-ms`]: null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
  });

  it('plan -f: several documents, a change to an existing Service (pool swap) and a new one, nothing stored', async () => {
    const live = await testConnection().core.readNamespacedService({ namespace, name: 'web' });
    const file = join(dir, 'services.yaml');
    await writeFile(
      file,
      `apiVersion: v1
kind: Service
metadata:
  name: web
  annotations:
    ${P}loadbalancer-pool-algorithm: source_ip
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: ${namespace}
spec:
  type: LoadBalancer
  selector: {app: api}
  ports: [{name: grpc, protocol: TCP, port: 9000, targetPort: 9000}]
`,
    );
    const { result, document } = await plan([], { filename: file, detailedExitcode: true });
    expect(result.exitCode).toBe(2);
    expect(document.nodes).toBeNull();
    expect(document.services.map((s) => s.service.name)).toEqual(['api', 'web']);

    // The pool swap: the successor pool (same name, new algorithm) is built and awaited beside
    // the old one; only the listener's move interrupts the port; then the old pool goes.
    const nodePort = live.spec!.ports![0]!.nodePort!;
    const members = [1, 2].map((i) => `member 10.30.0.${i}:${nodePort} of pool tcp/http`);
    expect(kinds(document, 'web')).toEqual([
      'create-pool pool tcp/http [none]',
      ...members.map((m) => `create-member ${m} [none]`),
      'create-monitor health monitor of pool tcp/http [none]',
      'await-members 2 members of pool tcp/http healthy [none]',
      'delete-listener listener tcp/80 [pool-swap]',
      'create-listener listener tcp/80 [pool-swap]',
      'delete-monitor health monitor of pool tcp/http [none]',
      ...members.map((m) => `delete-member ${m} [none]`),
      'delete-pool pool tcp/http [none]',
    ]);
    const web = document.services.find((s) => s.service.name === 'web')!;
    const [oldPool] = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === web.loadBalancer!.uuid);
    const byKind = (kind: string) => web.actions.filter((a) => a.kind === kind) as unknown as Record<string, unknown>[];
    // The successor is referred to by its plan reference; what is deleted is the old pool.
    expect(byKind('create-pool')[0]).toMatchObject({ verb: 'create', ref: 'pool:tcp/http', body: { name: 'tcp/http', algorithm: 'source_ip', protocol: 'tcp' } });
    expect(byKind('await-members')[0]).toMatchObject({
      verb: 'wait',
      pool: { ref: 'pool:tcp/http' },
      members: [1, 2].map((i) => `10.30.0.${i}:${nodePort}`),
      protects: { pool: { uuid: oldPool!.uuid }, members: [1, 2].map((i) => `10.30.0.${i}:${nodePort}`) },
    });
    expect(byKind('create-listener')[0]).toMatchObject({ pool: { ref: 'pool:tcp/http' } });
    expect(byKind('delete-pool')[0]).toMatchObject({ pool: { uuid: oldPool!.uuid } });
    // The new Service got node ports from the API server's dry run; its UID, and so the default
    // load balancer name, only exist once it is created (the dry run's random UID never will).
    const api = document.services.find((s) => s.service.name === 'api')!;
    expect(api.service.uid).toBe('<uid>');
    expect(api.loadBalancer).toEqual({ name: 'k8s-service-<uid>', uuid: null });
    expect(api.actions.map((a) => a.kind)).toEqual([
      'add-finalizer',
      'create-lb',
      'create-pool',
      'create-member',
      'create-member',
      'create-monitor',
      'create-listener',
      'write-annotations',
      'write-status',
    ]);
    expect(api.actions.filter((a) => a.kind === 'create-member').map((a) => a.object)).toEqual([
      expect.stringMatching(/^member 10\.30\.0\.1:3\d{4} of pool tcp\/grpc$/),
      expect.stringMatching(/^member 10\.30\.0\.2:3\d{4} of pool tcp\/grpc$/),
    ]);
    expect(document.summary).toMatchObject({ create: 11, update: 0, delete: 5, wait: 1, kube: 3 });
    expect(document.summary.worstDowntime).toMatchObject({
      service: `${namespace}/web`,
      object: 'listener tcp/80',
      impact: 'pool-swap',
      minSeconds: 0,
      maxSeconds: 45,
    });

    // Nothing was stored: no Service api, web unchanged.
    expect(await ignoreNotFound(testConnection().core.readNamespacedService({ namespace, name: 'api' }))).toBeUndefined();
    const after = await testConnection().core.readNamespacedService({ namespace, name: 'web' });
    expect(after.metadata!.resourceVersion).toBe(live.metadata!.resourceVersion);

    // The text view through the binary, from standard input.
    const cli = await binary(['plan', '-n', namespace, '-f', '-'], await import('node:fs/promises').then((fs) => fs.readFile(file, 'utf8')));
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(new RegExp(`\\nService ${namespace}/api — load balancer k8s-service-<uid> \\(new\\)\\n`));
    const because = `the pool algorithm cannot change in place: pool tcp/http is replaced`;
    const change = `(${P}loadbalancer-pool-algorithm: round_robin → source_ip)`;
    expect(cli.stdout).toContain(
      `  - delete-listener  listener tcp/80\n  + create-listener  listener tcp/80\n      because ${because} ${change}\n` +
        `      impact: pool-swap, the port is unreachable only while its listener moves to the new, already healthy pool (up to ~20 s; ~45 s if a request of the move fails and is sent again)\n`,
    );
    // In the order the steps run: the successor pool built first (what differs from the old one
    // named), the old pool retired after the listener moved; each run of steps with its reason once.
    expect(cli.stdout).toContain('  + create-pool      pool tcp/http\n        algorithm: round_robin → source_ip\n');
    expect(cli.stdout).toContain(`      because ${because}: a successor pool is built beside it ${change}\n      impact: none, no interruption\n`);
    expect(cli.stdout).toContain(`  - delete-pool      pool tcp/http\n      because ${because}: the old pool serves no port any more ${change}\n      impact: none, no interruption\n`);
    expect(cli.stdout.indexOf('  - delete-pool      pool tcp/http')).toBeGreaterThan(cli.stdout.indexOf('  + create-listener  listener tcp/80'));
    expect(cli.stdout).toMatch(
      new RegExp(`Plan: 11 to create, 0 to update, 5 to delete, 1 wait for healthy members, 3 Service writes\\. Worst expected downtime: ${namespace}/web, listener tcp/80 \\(pool-swap\\): the port is unreachable only while its listener moves to the new, already healthy pool \\(up to ~20 s; ~45 s if a request of the move fails and is sent again\\)\\.\\n$`),
    );
  });

  it('plan -f: one document changing the node port keeps the allocated one unless the manifest sets it', async () => {
    const file = join(dir, 'one.yaml');
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace },
        spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', protocol: 'TCP', port: 8080, targetPort: 8080 }] },
      }),
    );
    const { document } = await plan([], { filename: file });
    // A new number for the same port name moves the listener in place: its port and its name, in one update.
    expect(kinds(document, 'web')).toEqual(['update-listener listener tcp/80 [port-move]']);
    const [listener] = (await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === document.services[0]!.loadBalancer!.uuid);
    expect(document.services[0]!.actions).toMatchObject([
      {
        verb: 'update',
        listener: { uuid: listener!.uuid },
        patch: { protocol_port: 8080, name: 'tcp/8080' },
        changes: [{ field: 'spec.ports[http].port', from: '80', to: '8080' }, { field: 'name', from: 'tcp/80', to: 'tcp/8080' }],
      },
    ]);
  });

  it('plan -f: the manifest is the whole desired Service: an annotation or a port it leaves out is removed', async () => {
    const conn = testConnection();
    await createLoadBalancerService(namespace, 'multi', {
      annotations: { [`${P}loadbalancer-timeout-client-data-ms`]: '1000' },
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
        { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
      ],
    });
    await syncLbCommand(['service/multi'], syncOptions, harness.context());
    const live = await conn.core.readNamespacedService({ namespace, name: 'multi' });
    const file = join(dir, 'multi.yaml');
    await writeFile(
      file,
      `apiVersion: v1
kind: Service
metadata: {name: multi}
spec:
  type: LoadBalancer
  selector: {app: multi}
  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080}]
`,
    );
    const { document } = await plan([], { filename: file });
    const https = live.spec!.ports!.find((p) => p.name === 'https')!.nodePort!;
    expect(kinds(document, 'multi')).toEqual([
      'delete-listener listener tcp/443 [port-removal]',
      'delete-monitor health monitor of pool tcp/https [port-removal]',
      `delete-member member 10.30.0.1:${https} of pool tcp/https [port-removal]`,
      `delete-member member 10.30.0.2:${https} of pool tcp/https [port-removal]`,
      'delete-pool pool tcp/https [port-removal]',
      'update-listener listener tcp/80 [none]',
    ]);
    expect(document.services[0]!.actions.at(-1)!.reason).toMatchObject({ from: '1000', to: '50000' });
    // The node port of the kept port is the allocated one, not a fresh allocation.
    expect(document.services[0]!.actions.some((a) => a.kind === 'create-member')).toBe(false);
    expect((await conn.core.readNamespacedService({ namespace, name: 'multi' })).metadata!.resourceVersion).toBe(live.metadata!.resourceVersion);
    // Out of the way of the whole-cluster test (its load balancer stays behind in the simulator).
    await deleteServiceForced(namespace, 'multi');
  });

  it('plan -f: a bad manifest is an error naming the file and the document; nothing is planned', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      `apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
`,
    );
    await expect(plan([], { filename: file })).rejects.toThrow(`${file}: document 2: is apps/v1/Deployment, not a v1 Service`);
    const cli = await binary(['plan', '-n', namespace, '-f', file, '--detailed-exitcode']);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe('');
    expect(cli.stderr).toContain(`${file}: document 2: is apps/v1/Deployment, not a v1 Service`);

    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'apiVersion: v1\nkind: Service\nmetadata: {name: web\n');
    const syntax = await binary(['plan', '-n', namespace, '-f', broken]);
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toContain(`${broken}: document 1:`);

    // A manifest the API server rejects names the Service.
    const invalid = join(dir, 'invalid.yaml');
    await writeFile(invalid, `apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, ports: [{port: 700000}]}\n`);
    const rejected = await binary(['plan', '-n', namespace, '-f', invalid]);
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toContain(`service ${namespace}/web`);
  });

  it('plan (whole cluster): node actions and every Service; exit 2 with changes, 1 with problems', async () => {
    await createNode(`${prefix}-3`, { taints: [UNINITIALIZED_TAINT] });
    await createLoadBalancerService(namespace, 'fresh');
    const { document, result } = await plan([], { detailedExitcode: true });
    expect(result.exitCode).toBe(2);
    expect(document.nodes!.actions.map((a) => `${a.kind} ${a.object}`)).toEqual([`initialize node/${prefix}-3`]);
    expect(document.nodes!.unchanged).toBe(2);
    // The new node backs every load balancer: one more member for web.
    const web = await testConnection().core.readNamespacedService({ namespace, name: 'web' });
    const webPort = web.spec!.ports![0]!.nodePort!;
    expect(kinds(document, 'web')).toEqual([`create-member member 10.30.0.3:${webPort} of pool tcp/http [minimal]`]);
    expect(kinds(document, 'fresh').map((k) => k.split(' ')[0])).toEqual([
      'add-finalizer',
      'create-lb',
      'create-pool',
      'create-member',
      'create-member',
      'create-member',
      'create-monitor',
      'create-listener',
      'write-annotations',
      'write-status',
    ]);
    expect(document.summary).toMatchObject({ nodeChanges: 1, create: 8, update: 0, delete: 0, kube: 3, problems: 0 });

    const cli = await binary(['plan', '--detailed-exitcode']);
    expect(cli.code).toBe(2);
    expect(cli.stdout).toContain(`Service ${namespace}/fresh — load balancer k8s-service-`);
    expect(cli.stdout).toContain(`Nodes\n  ~ initialize  node/${prefix}-3\n      because uninitialised node; server ${prefix}-3 (`);
    expect(cli.stdout).toContain('Unchanged: 2 nodes.\n');
    expect(cli.stdout).toMatch(
      new RegExp(`Plan: 8 to create, 0 to update, 0 to delete, 3 Service writes, 1 node change\\. Worst expected downtime: ${namespace}/web, member 10\\.30\\.0\\.3:${webPort} of pool tcp/http \\(minimal\\): no interruption expected; new connections may be affected for a few seconds\\.\\n$`),
    );

    // A Service with a bad annotation: the plan shows the problem and exits 1.
    await createLoadBalancerService(namespace, 'broken', { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'fastest' } });
    const failing = await binary(['plan', '--detailed-exitcode']);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain(`  error ${P}loadbalancer-pool-algorithm: `);
    expect(failing.stdout).toContain('      how to fix: ');
    expect(failing.stderr).toContain('the plan has 1 problem;');
    const json = await binary(['-o', 'json', 'plan', 'service/broken', '-n', namespace]);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as PlanDocument).services[0]!.problems.map((p) => p.kind)).toEqual(['annotation']);
  });
});
