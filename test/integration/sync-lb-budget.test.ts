// @kube-versions: all — a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) and Warning Events
// The downtime budget (`--max-downtime`, `--window`) on the real API server and the simulator: a
// change over the budget is held back while the harmless rest of the Service and other Services
// converge, it is announced by one Warning Event however many passes hold it, and only the
// approval annotation carrying its id applies it (a stale id approves nothing and says so).
import { AdmissionregistrationV1Api, type V1CronJob, type V1Service } from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyCommand } from '../../src/commands/apply.js';
import { manifestOptionsFrom } from '../../src/commands/manifests.js';
import { buildManifests } from '../../src/core/deploy/manifests.js';
import { planCommand } from '../../src/commands/plan.js';
import { LB_ANNOTATIONS } from '../../src/core/lb/annotations.js';
import { parseWindow } from '../../src/core/plan/budget-window.js';
import { runBinary } from '../support/ccm.js';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import { FAST_PASS, annotate, expectConverged, key, lbsNamed, passOk, patchService, readService, routes, theLb, warningsOf, useLbWorld } from '../support/lb-scenarios.js';

const APPROVE = LB_ANNOTATIONS.approveChange.key;
const ANNOUNCED = LB_ANNOTATIONS.announcedChanges.key;

describe('sync-lb --max-downtime', () => {
  const namespace = uniqueName('lb-budget');
  const prefix = uniqueName('bud');
  const budget0 = { namespace, maxDowntime: 0 };
  const { harness } = useLbWorld({ prefix, namespace });

  /** The pool serving the Service's port 80 and the pools of its load balancer. */
  async function poolsOf(service: V1Service) {
    const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
    const pools = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb!.uuid);
    const listener = (await harness.cloud.listeners.list()).find((l) => l.load_balancer.uuid === lb!.uuid && l.protocol_port === 80);
    return { pools, serving: pools.find((p) => p.uuid === listener?.pool?.uuid), listener };
  }

  /** Deletes the Events about a Service, as their TTL does. */
  async function deleteEventsOf(service: V1Service): Promise<void> {
    const { items } = await testConnection().core.listNamespacedEvent({ namespace });
    for (const event of items.filter((e) => e.involvedObject.uid === service.metadata!.uid)) {
      await testConnection().core.deleteNamespacedEvent({ namespace, name: event.metadata!.name! });
    }
  }

  /** A Service converged under the budget: a new load balancer is never held. */
  async function created(name: string): Promise<V1Service> {
    await createLoadBalancerService(namespace, name);
    const { report } = await passOk(harness, [name], budget0);
    expect(report.services.map((s) => [s.status, s.held])).toEqual([['changed', undefined]]);
    return readService(namespace, name);
  }

  it('holds a pool swap under 0s with one Event over two passes, applies the harmless rest and other Services, and applies it on the approval carrying its id', async () => {
    const service = await created('web');
    const before = await poolsOf(service);
    expect(before.serving?.algorithm).toBe('round_robin');

    // A disruptive change (pool swap, up to 45 s) and a harmless one (a new port).
    await annotate(namespace, 'web', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    await patchService(namespace, 'web', { spec: { ports: [...service.spec!.ports!, { name: 'https', protocol: 'TCP', port: 443, targetPort: 443 }] } });
    await createLoadBalancerService(namespace, 'other');
    const first = await passOk(harness, ['web', 'other'], budget0);
    const web = first.report.services.find((s) => s.service === `${namespace}/web`)!;
    expect(web.held).toHaveLength(1);
    const id = web.held![0]!.id;
    expect(id).toMatch(/^[0-9a-f]{10}$/);
    expect(web.held![0]!.reason).toContain('budget of 0s');
    // Not a failure: the pass succeeded; the other Service got its load balancer.
    expect(first.report.services.find((s) => s.service === `${namespace}/other`)!.status).toBe('changed');
    // The harmless part ran, the port still serves from the old pool; the successor is built beside it.
    const during = await poolsOf(service);
    expect((await harness.cloud.listeners.list()).filter((l) => l.protocol_port === 443 && l.load_balancer.uuid === during.listener?.load_balancer.uuid)).toHaveLength(1);
    expect(during.serving?.uuid).toBe(before.serving?.uuid);
    expect(during.serving?.algorithm).toBe('round_robin');
    expect(during.pools.map((p) => `${p.name} ${p.algorithm}`).sort()).toEqual(['tcp/http least_connections', 'tcp/http round_robin', 'tcp/https least_connections']);
    expect(first.ctx.out()).toContain(`held: service/${namespace}/web change ${id}`);
    // The held line names the Service once.
    const heldLine = first.ctx.out().split('\n').find((line) => line.startsWith('held: '))!;
    expect(heldLine.split(`${namespace}/web`)).toHaveLength(2);
    expect(first.ctx.out()).toContain(`${APPROVE}=${id}`);
    expect(first.ctx.out()).toMatch(/1 change held back/);
    expect(web.held![0]!.approvalMismatch).toBeUndefined();
    expect(first.ctx.out()).not.toContain('names another change');

    // The next pass holds the same change, writes nothing to the cloud and announces nothing again.
    const second = await passOk(harness, ['web'], budget0);
    expect(second.report.services[0]!.held![0]!.id).toBe(id);
    expect(routes(second.simWrites)).toEqual([]);
    const held = (await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld');
    expect(held).toHaveLength(1);
    expect(held[0]!.message).toContain(`Held back change ${id}`);
    expect(held[0]!.message).toContain('over the budget of 0s');
    expect(held[0]!.message).toContain(`${APPROVE}=${id}`);
    expect(held[0]!.message).toContain('cloudscale-ccm apply FILE');
    expect((await readService(namespace, 'web')).metadata!.annotations![ANNOUNCED]).toBe(id);
    // Events expire (the API server's --event-ttl, 1 h by default); the change is not announced again.
    await deleteEventsOf(service);
    await passOk(harness, ['web'], budget0);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toEqual([]);

    // A stale approval approves nothing, and says so once.
    await annotate(namespace, 'web', { [APPROVE]: '0123456789' });
    for (let pass = 0; pass < 2; pass += 1) {
      const stale = await passOk(harness, ['web'], budget0);
      expect(stale.report.services[0]!.held![0]!.id).toBe(id);
      expect(routes(stale.simWrites)).toEqual([]);
      // Said in the terminal and the result too, each pass, not only in the Event.
      expect(stale.report.services[0]!.held![0]!.approvalMismatch).toBe('0123456789');
      expect(stale.ctx.out()).toContain(`the approval 0123456789 (annotation ${APPROVE}) names another change than the pending ${id}: nothing is approved`);
    }
    const mismatch = (await warningsOf(service)).filter((e) => e.reason === 'ApprovalMismatch');
    expect(mismatch).toHaveLength(1);
    expect(mismatch[0]!.message).toContain(`The approval 0123456789 (annotation ${APPROVE}) does not match the pending change ${id}`);
    expect((await poolsOf(service)).serving?.uuid).toBe(before.serving?.uuid);

    // The right id applies exactly that change: the listener moves to the successor, the old pool goes.
    await annotate(namespace, 'web', { [APPROVE]: id });
    const approved = await passOk(harness, ['web'], budget0);
    expect(approved.report.services[0]!.held).toBeUndefined();
    const after = await poolsOf(service);
    expect(after.pools.map((p) => `${p.name} ${p.algorithm}`).sort()).toEqual(['tcp/http least_connections', 'tcp/https least_connections']);
    expect(after.serving?.algorithm).toBe('least_connections');
    // Nothing is pending any more: the record of announcements is cleared, the Service converged.
    expect((await readService(namespace, 'web')).metadata!.annotations![ANNOUNCED]).toBeUndefined();
    await expectConverged(harness, ['web'], budget0);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toEqual([]);
  });

  it('a maintenance window applies its budget only inside it (the clock given)', async () => {
    const service = await created('windowed');
    const window = parseWindow('Mon-Fri 02:00-04:00 Europe/Zurich=1m');
    const options = { namespace, maxDowntime: 0, window };
    await annotate(namespace, 'windowed', { [key('loadbalancer-pool-algorithm')]: 'source_ip' });

    // Saturday 02:30 in Zurich: outside (not a listed day) → held.
    const saturday = await passOk(harness, ['windowed'], { ...options, now: () => Date.parse('2026-01-03T01:30:00Z') });
    expect(saturday.report.services[0]!.held).toHaveLength(1);
    expect((await poolsOf(service)).serving?.algorithm).toBe('round_robin');

    // Monday 02:30 in Zurich: inside, a budget of 1m ≥ the swap's 20 s → applied without approval.
    const monday = await passOk(harness, ['windowed'], { ...options, now: () => Date.parse('2026-01-05T01:30:00Z') });
    expect(monday.report.services[0]!.held).toBeUndefined();
    expect((await poolsOf(service)).pools.map((p) => p.algorithm)).toEqual(['source_ip']);
  });

  it("under the CronJob's default budget (0s), a held change is applied by plan --out and apply FILE; the next pass holds nothing and clears the record", async () => {
    const service = await created('reviewed');
    await annotate(namespace, 'reviewed', { [key('loadbalancer-pool-algorithm')]: 'source_ip' });
    const held = await passOk(harness, ['reviewed'], budget0);
    expect(held.report.services[0]!.held).toHaveLength(1);
    expect((await readService(namespace, 'reviewed')).metadata!.annotations![ANNOUNCED]).toBe(held.report.services[0]!.held![0]!.id);

    const dir = await mkdtemp(join(tmpdir(), 'ccm-budget-'));
    try {
      const file = join(dir, 'reviewed.plan.json');
      const planCtx = harness.context();
      const planned = await planCommand(['service/reviewed'], { namespace, detailedExitcode: true, drainSeconds: 0, maxDowntime: 0, out: file }, planCtx);
      expect(planned.exitCode, planCtx.err()).toBe(2);
      expect(planCtx.out()).toContain(`held back: change ${held.report.services[0]!.held![0]!.id}`);
      await applyCommand(file, { ...FAST_PASS, concurrency: 4, wait: true }, harness.context());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect((await poolsOf(service)).pools.map((p) => p.algorithm)).toEqual(['source_ip']);
    const after = await passOk(harness, ['reviewed'], budget0);
    expect(after.report.services[0]!.held).toBeUndefined();
    expect((await readService(namespace, 'reviewed')).metadata!.annotations![ANNOUNCED]).toBeUndefined();
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toHaveLength(1);
  });

  it("the built CLI with the CronJob's budget flags (manifests' defaults): held, exit 0, the change in the text and the JSON result", async () => {
    const cronJob = buildManifests(manifestOptionsFrom({ schedule: '* * * * *' })).find((m) => m.object.kind === 'CronJob')!.object as V1CronJob;
    const args = cronJob.spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!;
    const budgetFlags = args.slice(args.indexOf('--max-downtime'), args.indexOf('--max-downtime') + 2);
    expect(budgetFlags).toEqual(['--max-downtime', '0s']);

    const service = await created('cli');
    await annotate(namespace, 'cli', { [key('loadbalancer-pool-algorithm')]: 'source_ip' });
    const cli = ['sync-lb', 'service/cli', '-n', namespace, ...budgetFlags, '--cluster-id', harness.clusterId];
    const json = await runBinary([...cli, '-o', 'json'], { apiUrl: harness.sim.url });
    expect(json.code, json.stderr).toBe(0);
    const [report] = (JSON.parse(json.stdout) as { services: { held?: { id: string; reason: string }[] }[] }).services;
    const id = report!.held![0]!.id;
    const text = await runBinary(cli, { apiUrl: harness.sim.url });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`held: service/${namespace}/cli change ${id}`);
    expect(text.stdout).toContain('1 change held back');
    expect((await poolsOf(service)).serving?.algorithm).toBe('round_robin');
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toHaveLength(1);
  });

  /**
   * Runs `body` while an admission policy makes the API server refuse `operation` on
   * `resource` in the test namespace where `allowed` (CEL over `object`) is false; `probe`
   * answers whether such a write is refused now (a policy takes effect once the server loaded it).
   */
  async function whileRefused(
    rule: { readonly resource: string; readonly operation: 'CREATE' | 'UPDATE'; readonly allowed: string },
    probe: () => Promise<boolean>,
    body: () => Promise<void>,
  ): Promise<void> {
    const admission = testConnection().config.makeApiClient(AdmissionregistrationV1Api);
    const policy = uniqueName(`deny-${rule.resource}`);
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: policy },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: [rule.operation], resources: [rule.resource] }] },
          validations: [{ expression: rule.allowed, message: 'refused by the test' }],
        },
      },
    });
    try {
      await admission.createValidatingAdmissionPolicyBinding({
        body: {
          metadata: { name: policy },
          spec: { policyName: policy, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } } },
        },
      });
      await expect.poll(probe, { timeout: 20_000, interval: 250 }).toBe(true);
      await body();
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name: policy }).catch(() => undefined);
      await admission.deleteValidatingAdmissionPolicy({ name: policy });
    }
    await expect.poll(probe, { timeout: 20_000, interval: 250 }).toBe(false);
  }

  /** Whether the write refuses (any error). */
  const refuses = (write: () => Promise<unknown>) => async (): Promise<boolean> => write().then(() => false, () => true);

  it('an Event that could not be recorded is not recorded as announced: the next pass announces the change', async () => {
    const service = await created('untold');
    await annotate(namespace, 'untold', { [key('loadbalancer-pool-algorithm')]: 'source_ip' });
    const probe = refuses(() =>
      testConnection().core.createNamespacedEvent({
        namespace,
        body: { metadata: { generateName: 'probe-' }, involvedObject: { kind: 'Service', namespace, name: 'untold', uid: service.metadata!.uid! }, reason: 'ChangeHeld', message: 'probe', type: 'Warning' },
      }),
    );
    // The API server refuses Events with reason ChangeHeld in this namespace.
    await whileRefused({ resource: 'events', operation: 'CREATE', allowed: "object.reason != 'ChangeHeld'" }, probe, async () => {
      await deleteEventsOf(service);
      const refused = await passOk(harness, ['untold'], budget0);
      expect(refused.report.services[0]!.held).toHaveLength(1);
      expect(refused.ctx.err()).toContain('refused by the test');
      expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toEqual([]);
      expect((await readService(namespace, 'untold')).metadata!.annotations?.[ANNOUNCED]).toBeUndefined();
    });
    // Events are recorded again: the next pass announces the change, and the one after it does not.
    await deleteEventsOf(service);
    const told = await passOk(harness, ['untold'], budget0);
    const id = told.report.services[0]!.held![0]!.id;
    expect((await readService(namespace, 'untold')).metadata!.annotations![ANNOUNCED]).toBe(id);
    await passOk(harness, ['untold'], budget0);
    const held = (await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld');
    expect(held.map((e) => e.message)).toEqual([expect.stringContaining(`Held back change ${id}`)]);
  });

  it('a record of the announcement that could not be written is a warning, the pass succeeds, and the next pass announces again', async () => {
    const service = await created('unrecorded');
    await annotate(namespace, 'unrecorded', { [key('loadbalancer-pool-algorithm')]: 'source_ip' });
    const allowed = `!has(object.metadata.annotations) || !('${ANNOUNCED}' in object.metadata.annotations)`;
    const probe = refuses(() => annotate(namespace, 'unrecorded', { [ANNOUNCED]: 'probe' }));
    await whileRefused({ resource: 'services', operation: 'UPDATE', allowed }, probe, async () => {
      const refused = await passOk(harness, ['unrecorded'], budget0);
      expect(refused.report.services[0]!.held).toHaveLength(1);
      expect(refused.ctx.err()).toMatch(/warning: could not record .*could not record the announced changes on service .*unrecorded/);
      expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toHaveLength(1);
    });
    // The last probe wrote once the policy was gone; without it, nothing is recorded.
    await annotate(namespace, 'unrecorded', { [ANNOUNCED]: null });
    // Announced again (the cost of a lost record; the Event expired meanwhile, as with its TTL), then recorded.
    await deleteEventsOf(service);
    const again = await passOk(harness, ['unrecorded'], budget0);
    const id = again.report.services[0]!.held![0]!.id;
    expect((await readService(namespace, 'unrecorded')).metadata!.annotations![ANNOUNCED]).toBe(id);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld').map((e) => e.message)).toEqual([
      expect.stringContaining(`Held back change ${id}`),
    ]);
    // Recorded now: the pass after it announces nothing.
    await deleteEventsOf(service);
    await passOk(harness, ['unrecorded'], budget0);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toEqual([]);
  });

  it('a removed port leaves at once under 0s: its listener and pool are deleted in the same pass, nothing held or announced', async () => {
    await createLoadBalancerService(namespace, 'ports', {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
        { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
      ],
    });
    await passOk(harness, ['ports'], budget0);
    const service = await readService(namespace, 'ports');
    expect(Object.keys((await theLb(harness, service)).pools).sort()).toEqual(['tcp/http', 'tcp/https']);

    // Kubernetes releases the node port of 443 with the port: nothing may keep forwarding to it.
    await patchService(namespace, 'ports', { spec: { ports: [service.spec!.ports![0]] } });
    const removed = await passOk(harness, ['ports'], budget0);
    expect(removed.report.services[0]!.held).toBeUndefined();
    const after = await theLb(harness, service);
    expect(Object.keys(after.pools)).toEqual(['tcp/http']);
    expect((await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === after.lb.uuid).map((l) => l.protocol_port)).toEqual([80]);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toEqual([]);
    await expectConverged(harness, ['ports'], budget0);
  });

  it('a port number change: plan says the old number stops answering at once; under 0s it is applied, not held', async () => {
    const service = await created('renumbered');
    await patchService(namespace, 'renumbered', { spec: { ports: [{ ...service.spec!.ports![0], port: 8080 }] } });
    const planCtx = harness.context();
    await planCommand(['service/renumbered'], { namespace, detailedExitcode: false, drainSeconds: 0, maxDowntime: 0 }, planCtx);
    expect(planCtx.out()).toContain('port-move');
    expect(planCtx.out()).toContain('the old port number stops answering at once');
    expect(planCtx.out()).not.toContain('held back');
    expect(planCtx.out()).not.toContain('no interruption expected');

    const moved = await passOk(harness, ['renumbered'], budget0);
    expect(moved.report.services[0]!.held).toBeUndefined();
    const { lb } = await theLb(harness, service);
    expect((await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === lb.uuid).map((l) => l.protocol_port)).toEqual([8080]);
  });

  it('a port moved to another number and a new port on its old number, in one edit under 0s: one pass applies both (the move frees the number first)', async () => {
    const service = await created('taken');
    await patchService(namespace, 'taken', {
      spec: {
        ports: [
          { ...service.spec!.ports![0], port: 8080 },
          { name: 'admin', protocol: 'TCP', port: 80, targetPort: 9090 },
        ],
      },
    });
    const pass = await passOk(harness, ['taken'], budget0);
    expect(pass.report.services[0]!.held).toBeUndefined();
    const { lb } = await theLb(harness, service);
    const listeners = (await harness.cloud.listeners.list()).filter((l) => l.load_balancer.uuid === lb.uuid);
    expect(listeners.map((l) => `${l.protocol_port} ${l.name}`).sort()).toEqual(['80 tcp/80', '8080 tcp/8080']);
    await expectConverged(harness, ['taken'], budget0);
  });

  it('a pool swap stopped between its listener delete and create: plan says the port serves nothing now; under 0s the next pass gives it its listener, not held', async () => {
    const service = await created('stranded');
    await annotate(namespace, 'stranded', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    expect((await passOk(harness, ['stranded'], budget0)).report.services[0]!.held).toHaveLength(1);
    // The approved pass that moves the listener stopped right after deleting it.
    const { listener } = await poolsOf(service);
    await harness.cloud.deleteByHref(listener!.href);

    const planCtx = harness.context();
    await planCommand(['service/stranded'], { namespace, detailedExitcode: false, drainSeconds: 0, maxDowntime: 0 }, planCtx);
    expect(planCtx.out()).toContain('listener-missing');
    expect(planCtx.out()).toContain('the port has no listener and serves nothing now');
    expect(planCtx.out()).not.toContain('held back');

    const resumed = await passOk(harness, ['stranded'], budget0);
    expect(resumed.report.services[0]!.held).toBeUndefined();
    const after = await poolsOf(service);
    expect(after.serving?.algorithm).toBe('least_connections');
    expect(after.pools.map((p) => p.algorithm)).toEqual(['least_connections']);
  });

  it('an approval is used once: a member removal approved, reverted and asked for again is held again under a new id and announced', async () => {
    const service = await created('selected');
    const members = async () => Object.values((await theLb(harness, service)).pools).flatMap((p) => p.members.map((m) => m.uuid));
    const before = await members();
    expect(before).toHaveLength(2);

    // A selector that matches no Node: the port would serve nothing (no-members), held under 0s.
    await annotate(namespace, 'selected', { [key('loadbalancer-node-selector')]: 'role=none' });
    const first = (await passOk(harness, ['selected'], budget0)).report.services[0]!.held![0]!;
    expect(await members()).toEqual(before);
    await annotate(namespace, 'selected', { [APPROVE]: first.id });
    expect((await passOk(harness, ['selected'], budget0)).report.services[0]!.held).toBeUndefined();
    expect(await members()).toEqual([]);

    // Reverted: the members come back (not held), the approval stays on the Service.
    await annotate(namespace, 'selected', { [key('loadbalancer-node-selector')]: null });
    expect((await passOk(harness, ['selected'], budget0)).report.services[0]!.held).toBeUndefined();
    const restored = await members();
    expect(restored).toHaveLength(2);

    // Asked for again: the same change of the annotation, other members. Held, not approved by the old id.
    await annotate(namespace, 'selected', { [key('loadbalancer-node-selector')]: 'role=none' });
    const again = await passOk(harness, ['selected'], budget0);
    const held = again.report.services[0]!.held![0]!;
    expect(held.id).not.toBe(first.id);
    expect(held.approvalMismatch).toBe(first.id);
    expect(await members()).toEqual(restored);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld').map((e) => e.message)).toEqual(
      expect.arrayContaining([expect.stringContaining(`Held back change ${held.id}`)]),
    );
  });

  it('without --max-downtime nothing is held (a terminal sync-lb as before)', async () => {
    const service = await created('unbudgeted');
    await annotate(namespace, 'unbudgeted', { [key('loadbalancer-pool-algorithm')]: 'source_ip' });
    const { report } = await passOk(harness, ['unbudgeted'], { namespace });
    expect(report.services[0]!.held).toBeUndefined();
    expect((await poolsOf(service)).pools.map((p) => p.algorithm)).toEqual(['source_ip']);
    expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toEqual([]);
  });
});
