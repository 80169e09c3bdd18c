// Saved plans on the real kube-apiserver and the simulator: `plan --out FILE` then `apply FILE`
// executes exactly the saved actions; a plan whose inputs changed (a Service edit, a load
// balancer changed in the cloud, a Node that joined) is refused with nothing written; a file
// edited, cut short, of a newer format, or made against another cluster or API is refused
// before anything is written.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCommand, type ApplyOptions } from '../../src/commands/apply.js';
import { planCommand } from '../../src/commands/plan.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { serializeSavedPlan, type SavedPlanFile } from '../../src/core/plan/saved-plan.js';
import { RUN_LEASE } from '../../src/commands/writer.js';
import { ConfigError, LockHeldError, RefusedError, UsageError } from '../../src/core/errors.js';
import { acquireLease } from '../../src/core/kube/lease.js';
import { isCloudAction } from '../../src/core/lb/actions.js';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import { nodesSeed, runBinary, type TestContext } from '../support/ccm.js';
import { TEST_PASS, FAST_PASS, patchService, readService, useLbWorld } from '../support/lb-scenarios.js';
import { awaitSteady, writesTaken } from '../support/strict-world.js';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createLoadBalancerService, createNode, deleteNodeForced, testConnection, uniqueName, UNINITIALIZED_TAINT } from '../support/kube.js';

const P = 'k8s.cloudscale.ch/';
const APPLY: ApplyOptions = { ...FAST_PASS, concurrency: 4, wait: true };

describe('saved plans: plan --out, apply FILE', () => {
  let dir: string;
  const namespace = uniqueName('saved');
  const prefix = uniqueName('n');
  const node = (i: number) => `${prefix}-${i}`;
  const { harness } = useLbWorld({
    prefix,
    namespace,
    seed: nodesSeed({ prefix, count: 4, privateNet: '10.41.0', publicNet: '5.102.149', floatingIps: ['5.102.151.30/32'] }),
    nodes: 2,
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccm-saved-plan-'));
    await createLoadBalancerService(namespace, 'web');
    await syncLbCommand(['service/web'], { ...TEST_PASS, namespace }, harness.context());
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Waits until nothing in web's load balancer moves: the tests below change one input at a time
   * and expect exactly that input named, not a step the load balancer was still taking.
   */
  const steadyWeb = async () => awaitSteady(harness, await readService(namespace, 'web'));

  async function planTo(file: string, args: readonly string[], ctx: TestContext = harness.context()): Promise<SavedPlanFile> {
    await steadyWeb();
    const result = await planCommand(args, { namespace, detailedExitcode: true, drainSeconds: 0, out: file }, ctx);
    expect(result.exitCode, ctx.err()).toBe(2);
    expect(ctx.err()).toContain(`cloudscale-ccm apply ${file}`);
    return JSON.parse(await readFile(file, 'utf8')) as SavedPlanFile;
  }

  /** Applies `file`; returns the error (if any) and the simulator's writes meanwhile. */
  async function applyFile(file: string, ctx: TestContext = harness.context(), options: ApplyOptions = APPLY) {
    const before = harness.sim.admin.requests().length;
    let error: unknown;
    let report;
    try {
      report = await applyCommand(file, options, ctx);
    } catch (caught) {
      error = caught;
    }
    const writes = harness.sim.admin.requests().slice(before).filter((r) => r.method !== 'GET');
    return { error, report, writes, ctx };
  }

  async function stalePlanIsRefused(file: string, changed: RegExp): Promise<void> {
    const resourceVersion = (await readService(namespace, 'web')).metadata!.resourceVersion;
    const { error, writes } = await applyFile(file);
    expect(error).toBeInstanceOf(RefusedError);
    expect((error as Error).message).toMatch(/is stale: .*nothing was applied/s);
    expect((error as Error).message).toMatch(changed);
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual([]);
    expect((await readService(namespace, 'web')).metadata!.resourceVersion).toBe(resourceVersion);
  }

  it('apply of a fresh plan writes exactly the saved actions, nodes included, and converges', async () => {
    await patchService(namespace, 'web', { metadata: { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'source_ip' } } });
    await createLoadBalancerService(namespace, 'fresh');
    await createNode(node(4), { ready: true, taints: [UNINITIALIZED_TAINT] });
    const file = join(dir, 'fresh.json');
    const saved = await planTo(file, []);
    expect(saved.plan.nodes?.actions.length).toBeGreaterThan(0);

    const { error, report, writes, ctx } = await applyFile(file);
    expect(error, ctx.err()).toBeUndefined();
    const savedCloudActions = saved.plan.services.flatMap((s) => s.actions.filter(isCloudAction).map((a) => `${s.service.name}: ${a.kind} ${a.object}`));
    expect(savedCloudActions.length).toBeGreaterThan(0);
    // One request per cloud action, and the executed actions are the saved ones, in order.
    expect(writesTaken(writes)).toHaveLength(savedCloudActions.length);
    for (const service of saved.plan.services) {
      const done = report!.services.find((s) => s.service === `${namespace}/${service.service.name}`);
      expect(done?.actions.map((a) => `${a.kind} ${a.object}`)).toEqual(service.actions.map((a) => `${a.kind} ${a.object}`));
    }
    expect(report!.nodes.filter((n) => n.actions.length > 0).map((n) => n.node).sort()).toEqual(
      [...new Set(saved.plan.nodes!.actions.map((a) => a.node))].sort(),
    );
    // Nothing is left to do.
    const after = harness.context();
    expect((await planCommand([], { namespace, detailedExitcode: true, drainSeconds: 0 }, after)).exitCode, after.out()).toBe(0);
  });

  it('a plan made with --max-downtime 0s holds the pool swap back; apply applies it with the rest (applying is the approval)', async () => {
    await patchService(namespace, 'web', { metadata: { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'round_robin' } } });
    const file = join(dir, 'held.json');
    const ctx = harness.context();
    await steadyWeb();
    expect((await planCommand(['service/web'], { namespace, detailedExitcode: true, drainSeconds: 0, maxDowntime: 0, out: file }, ctx)).exitCode, ctx.err()).toBe(2);
    const saved = JSON.parse(await readFile(file, 'utf8')) as SavedPlanFile;
    const web = saved.plan.services[0]!;
    const held = (web.held ?? []).flatMap((change) => change.actions);
    expect(held.map((a) => a.kind)).toContain('create-listener');
    const all = [...web.actions, ...held].filter(isCloudAction);

    const { error, report, writes } = await applyFile(file);
    expect(error).toBeUndefined();
    expect(writesTaken(writes)).toHaveLength(all.length);
    expect(report!.services[0]!.actions.map((a) => a.kind)).toEqual(expect.arrayContaining(held.map((a) => a.kind)));
    const after = harness.context();
    expect((await planCommand(['service/web'], { namespace, detailedExitcode: true, drainSeconds: 0 }, after)).exitCode, after.out()).toBe(0);
  });

  it('a plan is stale after the Service was edited', async () => {
    await patchService(namespace, 'web', { metadata: { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'least_connections' } } });
    const file = join(dir, 'service-edit.json');
    const saved = await planTo(file, ['service/web']);
    // The value is `resourceVersion N, sha256:…`; the message shows the versions.
    const was = saved.fingerprint[`service ${namespace}/web`]!.split(',')[0];
    await patchService(namespace, 'web', { metadata: { labels: { edited: 'after-the-plan' } } });
    await stalePlanIsRefused(file, new RegExp(`since it was made \\(.*\\), service ${namespace}/web changed \\(${was} → \\d+\\); nothing was applied`));
  });

  it('a plan is stale after its load balancer changed in the cloud', async () => {
    const file = join(dir, 'cloud-edit.json');
    const saved = await planTo(file, ['service/web']);
    const lb = saved.plan.services[0]!.loadBalancer!;
    await harness.cloud.loadBalancers.update(lb.uuid!, { tags: { edited: 'by-hand' } });
    await stalePlanIsRefused(file, new RegExp(`load balancer ${lb.name} \\(${lb.uuid}\\) changed`));
  });

  it('a pool list that comes back empty once at apply time makes the plan stale: nothing is deleted or recreated on a wrong answer', async () => {
    const file = join(dir, 'empty-list.json');
    await planTo(file, ['service/web']);
    harness.sim.admin.setFaults({ shortList: { pathPattern: '/v1/load-balancers/pools', methods: ['GET'], count: 1, empty: true } });
    try {
      await stalePlanIsRefused(file, /pool .* is gone/);
    } finally {
      harness.sim.admin.setFaults({});
    }
  });

  it('apply is a writer: while another pass holds the Lease it exits naming the holder and writes nothing', async () => {
    const file = join(dir, 'leased.json');
    await planTo(file, ['service/web']);
    const other = await acquireLease(testConnection(), { ...RUN_LEASE, holderIdentity: 'another-pass', leaseDurationSeconds: 60 });
    try {
      const { error, writes } = await applyFile(file, harness.context(), { ...APPLY, wait: false });
      expect(error).toBeInstanceOf(LockHeldError);
      expect((error as Error).message).toContain('another-pass');
      expect(writes).toEqual([]);
    } finally {
      await other.release();
    }
  });

  it('a plan is stale after a Node joined', async () => {
    const file = join(dir, 'node-joined.json');
    await planTo(file, ['service/web']);
    await createNode(node(3), { ready: true });
    try {
      await stalePlanIsRefused(file, new RegExp(`node ${node(3)} appeared`));
    } finally {
      await deleteNodeForced(node(3));
    }
  });

  it('a drain applied later is tagged with the time it was applied; a plan whose drain period ended in between is stale', async () => {
    // A drained member: node 2 leaves the pools (excluded), planned with a 60 s drain.
    await syncLbCommand(['service/web'], { ...TEST_PASS, namespace }, harness.context());
    const conn = testConnection();
    await conn.core.patchNode({ name: node(2), body: { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    try {
      const file = join(dir, 'drain.json');
      const ctx = harness.context();
      await steadyWeb();
      expect((await planCommand(['service/web'], { namespace, detailedExitcode: true, drainSeconds: 60, out: file }, ctx)).exitCode, ctx.err()).toBe(2);
      const saved = JSON.parse(await readFile(file, 'utf8')) as SavedPlanFile;
      expect(saved.plan.services[0]!.actions.map((a) => a.kind)).toContain('update-member');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const applying = Date.now();
      const { error, ctx: applied } = await applyFile(file);
      expect(error, applied.err()).toBeUndefined();
      const pools = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === saved.plan.services[0]!.loadBalancer!.uuid);
      const drained = (await Promise.all(pools.map((p) => harness.cloud.poolMembers.list(p.uuid)))).flat().filter((m) => !m.enabled);
      expect(drained.length).toBeGreaterThan(0);
      for (const member of drained) expect(Date.parse(member.tags[MEMBER_DRAINING_TAG]!)).toBeGreaterThanOrEqual(applying - 1000);

      // Planned while the drain still runs (no step yet, the deletion pending: exit 2, a change);
      // applied after it ended: the member would be deleted now, a step the plan did not have.
      const early = join(dir, 'drain-early.json');
      const planning = harness.context();
      await steadyWeb();
      expect((await planCommand(['service/web'], { namespace, detailedExitcode: true, drainSeconds: 2, out: early }, planning)).exitCode, planning.err()).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      await stalePlanIsRefused(early, /service .*\/web: step 1 was nothing, is now delete-member/);
    } finally {
      await conn.core.patchNode({ name: node(2), body: { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    }
  });

  it('refuses a file that is edited, cut short or of a newer format, and one made against another cluster or API, before writing anything', async () => {
    await patchService(namespace, 'web', { metadata: { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'round_robin' } } });
    const file = join(dir, 'checked.json');
    const saved = await planTo(file, ['service/web']);
    const text = await readFile(file, 'utf8');
    const variants: { name: string; text: string; error: new (...args: never[]) => Error; message: RegExp }[] = [
      { name: 'edited', text: text.replace('"least_connections"', '"source_ip"').replace(saved.createdAt, '2020-01-01T00:00:00.000Z'), error: ConfigError, message: /was changed after `plan --out` wrote it/ },
      { name: 'truncated', text: text.slice(0, Math.floor(text.length / 2)), error: ConfigError, message: /not valid JSON.*truncated/ },
      { name: 'newer', text: serializeSavedPlan({ ...saved, version: 2 } as never), error: ConfigError, message: /plan format version 2; this cloudscale-ccm reads version 1/ },
      { name: 'plan -o json', text: JSON.stringify(saved.plan), error: ConfigError, message: /it has no "format" field/ },
    ];
    for (const variant of variants) {
      const path = join(dir, `${variant.name}.json`);
      await writeFile(path, variant.text);
      const { error, writes } = await applyFile(path);
      expect(error, variant.name).toBeInstanceOf(variant.error);
      expect((error as Error).message, variant.name).toMatch(variant.message);
      expect(writes, variant.name).toEqual([]);
    }
    // Another cluster's plan, intact (its digest matches): refused by the cluster's identity.
    const { integrity: _digest, ...content } = saved;
    const foreign = join(dir, 'foreign.json');
    await writeFile(foreign, serializeSavedPlan({ ...content, cluster: { ...content.cluster, kubeSystemUid: 'uid-of-another-cluster' } }));
    const otherCluster = await applyFile(foreign);
    expect(otherCluster.error).toBeInstanceOf(RefusedError);
    expect((otherCluster.error as Error).message).toMatch(/planned against another cluster \(.*: kube-system uid uid-of-another-cluster, this one .*\); nothing was applied/);
    expect(otherCluster.writes).toEqual([]);
    const elsewhere = join(dir, 'elsewhere.json');
    await writeFile(elsewhere, serializeSavedPlan({ ...content, api: { url: 'https://api.example.invalid' } }));
    const otherApi = await applyFile(elsewhere);
    expect(otherApi.error).toBeInstanceOf(RefusedError);
    expect((otherApi.error as Error).message).toContain(`planned against the cloudscale API at https://api.example.invalid, not ${harness.sim.url}`);
    expect(otherApi.writes).toEqual([]);
    // Edited and sealed again (the digest is no signature): values the flags refuse, fields of
    // the wrong type, and an action's field are each refused by name, before anything is written.
    const editedAction = structuredClone(content) as typeof content & { plan: { services: { actions: { kind: string; body?: { algorithm?: string } }[] }[] } };
    editedAction.plan.services[0]!.actions.find((a) => a.kind === 'create-pool')!.body!.algorithm = 'source_ip';
    const resealed: { name: string; content: unknown; error: new (...args: never[]) => Error; message: RegExp }[] = [
      { name: 'a negative drain', content: { ...content, options: { ...content.options, drainSeconds: -5 } }, error: ConfigError, message: /options.drainSeconds is -5, which the flag refuses: --drain-seconds takes a number ≥ 0/ },
      { name: 'a null fingerprint', content: { ...content, fingerprint: null }, error: ConfigError, message: /fingerprint is null, not an object/ },
      { name: 'an edited action', content: editedAction, error: RefusedError, message: /step \d+ \(create-pool pool [^)]*\) differs: body.algorithm: saved "source_ip", planned now "round_robin"/ },
    ];
    for (const variant of resealed) {
      const path = join(dir, `resealed-${variant.name}.json`);
      await writeFile(path, serializeSavedPlan(variant.content as never));
      const { error, writes } = await applyFile(path);
      expect(error, variant.name).toBeInstanceOf(variant.error);
      expect((error as Error).message, variant.name).toMatch(variant.message);
      expect(writes, variant.name).toEqual([]);
    }
    // The untouched file still applies.
    const { error } = await applyFile(file);
    expect(error).toBeUndefined();
  });

  it('plan --out refuses a plan of proposed manifests (-f)', async () => {
    const manifest = join(dir, 'proposed.yaml');
    await writeFile(manifest, 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, ports: [{port: 80}]}\n');
    const ctx = harness.context();
    await expect(planCommand([], { namespace, detailedExitcode: false, filename: manifest, out: join(dir, 'never.json') }, ctx)).rejects.toThrow(UsageError);
    await expect(readFile(join(dir, 'never.json'))).rejects.toThrow(/ENOENT/);
  });

  it('the binary: plan -o markdown prints tables, other commands refuse -o markdown, a stale apply and one with another cluster id exit 1, a fresh one applies (-o json)', async () => {
    await patchService(namespace, 'web', { metadata: { annotations: { [`${P}loadbalancer-pool-algorithm`]: 'source_ip' } } });
    const file = join(dir, 'binary.json');
    const args = ['--cluster-id', harness.clusterId];
    const markdown = await runBinary([...args, 'plan', 'service/web', '-n', namespace, '-o', 'markdown', '--out', file], { apiUrl: harness.sim.url });
    expect(markdown.code, markdown.stderr).toBe(0);
    expect(markdown.stdout).toContain(`#### Service ${namespace}/web`);
    expect(markdown.stdout).toContain('| Change | Object | Why | Impact | Downtime | Held back |');
    const refused = await runBinary(['sync-lb', '-o', 'markdown'], { apiUrl: harness.sim.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('-o markdown is for plan only');
    await patchService(namespace, 'web', { metadata: { labels: { edited: 'again' } } });
    const stale = await runBinary([...args, 'apply', file], { apiUrl: harness.sim.url });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/the plan in .* is stale/);

    const fresh = await runBinary([...args, 'plan', 'service/web', '-n', namespace, '--out', file], { apiUrl: harness.sim.url });
    expect(fresh.code, fresh.stderr).toBe(0);
    const foreign = await runBinary(['--cluster-id', 'another-cluster', 'apply', file], { apiUrl: harness.sim.url });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`cluster id ${harness.clusterId}, this one another-cluster`);
    const applied = await runBinary([...args, '-o', 'json', 'apply', file], { apiUrl: harness.sim.url });
    expect(applied.code, applied.stderr).toBe(0);
    const document = JSON.parse(applied.stdout) as { kind: string; services: { service: string; status: string }[] };
    expect(document.kind).toBe('ApplyResult');
    expect(document.services).toEqual([expect.objectContaining({ service: `${namespace}/web`, status: 'changed' })]);
  });
});
