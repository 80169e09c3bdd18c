// A drained member waits for its drain period before a pass deletes it. `plan` names that
// deletion and its time from the drain's first pass on, and `--detailed-exitcode` says "changes"
// (2) from then until the pass that deletes it: the exit code never turns from 0 to 2 while
// nobody changes anything. Against the simulator and the run's kube-apiserver.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/plan.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import type { PlanDocument } from '../../src/core/plan/document.js';
import { nodesSeed } from '../support/ccm.js';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';
import { awaitSteady } from '../support/strict-world.js';

const P = 'k8s.cloudscale.ch/';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('plan while a member drains: the pending deletion is shown, the exit code does not flip by itself', () => {
  const namespace = uniqueName('plan-drain');
  const prefix = uniqueName('n');
  const sync = { ...FAST_PASS, namespace, dryRun: false };

  /** `plan service/web --detailed-exitcode` with the default drain period (60 s), as text and as JSON. */
  async function plan() {
    const text = harness.context();
    const json = harness.context({ output: 'json' });
    const options = { namespace, detailedExitcode: true };
    const exitCode = (await planCommand(['service/web'], options, text)).exitCode;
    expect((await planCommand(['service/web'], options, json)).exitCode).toBe(exitCode);
    return { exitCode, text: text.out(), document: JSON.parse(json.out()) as PlanDocument };
  }

  async function members() {
    const pools = await harness.cloud.pools.list();
    return (await Promise.all(pools.map((pool) => harness.cloud.poolMembers.list(pool.uuid)))).flat();
  }
  const { harness } = useLbWorld({ prefix, namespace, seed: nodesSeed({ prefix, count: 2, privateNet: '10.62.0', publicNet: '5.102.153' }), nodes: 2 });

  beforeAll(async () => {
    await createLoadBalancerService(namespace, 'web');
    await syncLbCommand(['service/web'], sync, harness.context());
    // The plans below are read as the pass after them sees the load balancer: members judged.
    await awaitSteady(harness, await testConnection().core.readNamespacedService({ namespace, name: 'web' }));
  });

  it('from the drain to the deletion: exit 2 at every step, the deletion and its time named; then exit 0', async () => {
    expect((await plan()).exitCode).toBe(0);
    await testConnection().core.patchNode({ name: `${prefix}-1`, body: { metadata: { labels: { 'plan-drain/edge': 'yes' } } } }, mergePatch);
    await testConnection().core.patchNamespacedService(
      { namespace, name: 'web', body: { metadata: { annotations: { [`${P}loadbalancer-node-selector`]: 'plan-drain/edge=yes' } } } },
      mergePatch,
    );

    // The drain begins: the member is disabled now, deleted after the drain period.
    const starting = await plan();
    expect(starting.exitCode).toBe(2);
    expect(starting.document.services[0]!.actions.map((a) => a.kind)).toEqual(['update-member']);
    expect(starting.text).toMatch(/\n {2}later: 1 member is deleted after its drain ends at \S+Z\n {4}- delete-member {2}member 10\.62\.0\.2:\d+ of pool tcp\/http\n/);
    await syncLbCommand(['service/web'], sync, harness.context());

    // Draining: this pass has nothing to run, and says what a later one does, and from when.
    const drained = (await members()).find((m) => !m.enabled)!;
    const since = drained.tags[MEMBER_DRAINING_TAG]!;
    const due = new Date(Date.parse(since) + 60_000).toISOString();
    const draining = await plan();
    expect(draining.exitCode).toBe(2);
    expect(draining.document.services[0]!.actions).toEqual([]);
    expect(draining.document.summary).toMatchObject({ pending: 1, changes: true, create: 0, update: 0, delete: 0 });
    expect(draining.document.services[0]!.pending).toEqual([{ action: expect.objectContaining({ kind: 'delete-member', member: expect.objectContaining({ uuid: drained.uuid }) }), after: due }]);
    expect(draining.text).not.toContain('No changes');
    expect(draining.text).toContain(`  later: 1 member is deleted after its drain ends at ${due}\n`);
    expect(draining.text).toMatch(/Plan: 0 to create, 0 to update, 0 to delete, 1 member to delete after its drain\. Expected downtime: none\.\n$/);

    // The drain period has passed (the tag says so, as if a minute went by): the deletion is due, still exit 2.
    await harness.cloud.poolMembers.update(drained.pool.uuid, drained.uuid, { tags: { ...drained.tags, [MEMBER_DRAINING_TAG]: new Date(Date.parse(since) - 61_000).toISOString() } });
    const ended = await plan();
    expect(ended.exitCode).toBe(2);
    const pendingAction = draining.document.services[0]!.pending![0]!.action;
    expect(ended.document.services[0]!.actions.map((a) => `${a.kind} ${a.object}`)).toEqual([`delete-member ${pendingAction.object}`]);
    expect(ended.document.services[0]!.pending).toBeUndefined();

    // Deleted: only now does the plan say the cloud and the cluster match.
    await syncLbCommand(['service/web'], sync, harness.context());
    const converged = await plan();
    expect(converged.exitCode).toBe(0);
    expect(converged.text).toContain('No changes.');
  });
});
