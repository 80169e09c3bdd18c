// Issue 19's "done when", end to end through the built CLI: the CronJob's own arguments, read
// from the manifests the CLI renders (not a copy), hold a disruptive annotation change with one
// Warning Event per Service over passes and exit 0; only `apply FILE` or the approval annotation
// apply it; a saved plan whose change was applied meanwhile is stale and writes nothing.
import type { V1CronJob } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { LB_ANNOTATIONS } from '../../src/core/lb/annotations.js';
import { runBinary, type BinaryResult } from '../support/ccm.js';
import { createLoadBalancerService, testKubeconfig, uniqueName, waitUntil } from '../support/kube.js';
import { annotate, key, lbsNamed, readService, requireBuiltBinary, warningsOf, useLbWorld } from '../support/lb-scenarios.js';
import { awaitSteady } from '../support/strict-world.js';

const APPROVE = LB_ANNOTATIONS.approveChange.key;
const ANNOUNCED = LB_ANNOTATIONS.announcedChanges.key;

/** The container args of the CronJob in the manifests `cloudscale-ccm manifests ARGS` prints. */
async function cronJobArgs(args: readonly string[]): Promise<string[]> {
  const rendered = await runBinary(['manifests', ...args]);
  expect(rendered.code, rendered.stderr).toBe(0);
  const cronJob = parseAllDocuments(rendered.stdout)
    .map((document) => document.toJS() as { kind?: string })
    .find((object) => object.kind === 'CronJob') as V1CronJob;
  return cronJob.spec!.jobTemplate.spec!.template.spec!.containers[0]!.args!;
}

describe("the CronJob's default budget, end to end through the built CLI", () => {
  let dir: string;
  let jobArgs: string[];
  const namespace = uniqueName('budget-e2e');
  const prefix = uniqueName('be');
  const { harness } = useLbWorld({ prefix, namespace });

  beforeAll(async () => {
    requireBuiltBinary();
    dir = await mkdtemp(join(tmpdir(), 'ccm-budget-e2e-'));
    // The Job's arguments with the defaults; only the watch is turned off (--watch-for 0s) so
    // that each Job is one pass: the budget flags are the defaults'.
    const defaults = await cronJobArgs([]);
    expect(defaults).toContain('--max-downtime');
    jobArgs = await cronJobArgs(['--watch-for', '0s']);
    const watch = defaults.indexOf('--watch-for');
    expect(jobArgs).toEqual(watch === -1 ? defaults : [...defaults.slice(0, watch), ...defaults.slice(watch + 2)]);
    expect(jobArgs[0]).toBe('run');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cli = (args: readonly string[]): Promise<BinaryResult> => runBinary(['--cluster-id', harness.clusterId, ...args], { apiUrl: harness.sim.url });
  /** One Job of the CronJob (its arguments, then `extra`): exits 0. */
  async function job(extra: readonly string[] = []): Promise<string> {
    const result = await cli([...jobArgs, ...extra]);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
  }
  async function algorithmServing(name: string): Promise<string | undefined> {
    const service = await readService(namespace, name);
    const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
    const listener = (await harness.cloud.listeners.list()).find((l) => l.load_balancer.uuid === lb!.uuid && l.protocol_port === 80);
    return (await harness.cloud.pools.list()).find((p) => p.uuid === listener?.pool?.uuid)?.algorithm;
  }
  const heldId = (out: string, name: string) => new RegExp(`held: service/${namespace}/${name} change ([0-9a-f]{10})`).exec(out)?.[1];
  const writesSince = (count: number) => harness.sim.admin.requests().slice(count).filter((r) => r.method !== 'GET');
  /** `plan service/NAME --out FILE` with the Job's budget flags (then `extra`): the id of the change it shows held back. */
  async function savePlan(name: string, file: string, extra: readonly string[] = []): Promise<string | undefined> {
    const saved = await cli(['plan', `service/${name}`, '-n', namespace, ...jobArgs.slice(1), ...extra, '--out', file]);
    expect(saved.code, saved.stderr).toBe(0);
    const id = /held back: change ([0-9a-f]{10})/.exec(saved.stdout)?.[1];
    expect(id, saved.stdout).toBeDefined();
    return id;
  }
  /** `apply FILE` of a stale plan: exit 1 naming what changed, nothing written to the cloud or the Services. */
  async function expectStale(file: string, changed: RegExp): Promise<void> {
    const before = harness.sim.admin.requests().length;
    const versions = await Promise.all(['reviewed', 'approved'].map(async (name) => (await readService(namespace, name)).metadata!.resourceVersion));
    const stale = await cli(['apply', file]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/is stale: .*nothing was applied/);
    expect(stale.stderr).toMatch(changed);
    expect(writesSince(before)).toEqual([]);
    expect(await Promise.all(['reviewed', 'approved'].map(async (name) => (await readService(namespace, name)).metadata!.resourceVersion))).toEqual(versions);
  }

  it('holds a pool swap with one Warning Event, applies it only through apply FILE or the approval, and never applies a stale plan', async () => {
    await createLoadBalancerService(namespace, 'reviewed');
    await createLoadBalancerService(namespace, 'approved');
    await job();
    expect(await algorithmServing('reviewed')).toBe('round_robin');

    // The same disruptive change on both Services. A plan saved before the next Job is stale
    // after it: the Job builds the successor pool of the held swap (it serves no port yet).
    for (const name of ['reviewed', 'approved']) await annotate(namespace, name, { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    const early = join(dir, 'early.plan.json');
    const plannedId = await savePlan('approved', early);

    // Two Jobs hold both changes: exit 0, nothing swapped, one ChangeHeld per Service, ids differ (the UID is hashed).
    const first = await job();
    const ids = { reviewed: heldId(first, 'reviewed'), approved: heldId(first, 'approved') };
    expect(ids.reviewed).toBeDefined();
    expect(ids.approved).toBeDefined();
    expect(ids.reviewed).not.toBe(ids.approved);
    // plan shows the id the Job holds the change under, though the Job built the successor pool since.
    expect(ids.approved).toBe(plannedId);
    // Saved while the successor's members may still be checked: their monitor status moves in the
    // strict world, and a reviewed plan must not go stale for that (health is not fingerprinted).
    const reviewedPlan = join(dir, 'reviewed.plan.json');
    expect(await savePlan('reviewed', reviewedPlan)).toBe(ids.reviewed);
    const second = await job();
    expect(heldId(second, 'reviewed')).toBe(ids.reviewed);
    expect(second).toContain('2 changes held back');
    for (const name of ['reviewed', 'approved'] as const) {
      expect(await algorithmServing(name)).toBe('round_robin');
      const held = (await warningsOf(await readService(namespace, name))).filter((e) => e.reason === 'ChangeHeld');
      expect(held.map((e) => e.message)).toEqual([expect.stringContaining(`Held back change ${ids[name]}`)]);
    }
    await expectStale(early, /pool tcp\/http .* appeared/);

    // apply FILE of the plan saved after the Job held the change: applied.
    const applied = await cli(['apply', reviewedPlan]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await algorithmServing('reviewed')).toBe('least_connections');
    expect(await algorithmServing('approved')).toBe('round_robin');

    // The approval annotation with the id the Job printed: the next Job applies that change; a
    // plan of it saved before is stale now.
    const approvedPlan = join(dir, 'approved.plan.json');
    await savePlan('approved', approvedPlan);
    // The command the Event and the Job's output give, run as written.
    const command = new RegExp(`kubectl annotate service -n ${namespace} approved --overwrite ${APPROVE}=${ids.approved}(?= )`).exec(first)?.[0];
    expect(command, first).toBeDefined();
    const held = (await warningsOf(await readService(namespace, 'approved'))).find((e) => e.reason === 'ChangeHeld');
    expect(held?.message).toContain(command);
    execFileSync('kubectl', command!.split(' ').slice(1), { env: { ...process.env, KUBECONFIG: testKubeconfig() }, stdio: 'pipe' });
    expect((await readService(namespace, 'approved')).metadata!.annotations![APPROVE]).toBe(ids.approved);
    const third = await job();
    expect(heldId(third, 'approved')).toBeUndefined();
    expect(await algorithmServing('approved')).toBe('least_connections');
    await expectStale(approvedPlan, /is stale/);

    // Nothing pending: the next Job holds nothing and clears the records; no second ChangeHeld.
    const last = await job();
    expect(last).not.toContain('held');
    for (const name of ['reviewed', 'approved'] as const) {
      const service = await readService(namespace, name);
      expect(service.metadata!.annotations?.[ANNOUNCED]).toBeUndefined();
      expect((await warningsOf(service)).filter((e) => e.reason === 'ChangeHeld')).toHaveLength(1);
    }
  });

  it("a plan saved right after the edit is not made stale by the Job's record of its announcement (the members of a selector that matches no Node: the Job writes nothing else)", async () => {
    // Every other change held under the Job's defaults makes the Job write (a pool swap builds its
    // successor pool; a removed port leaves at once), and with their drain period the members of a
    // pool no Node is left for keep serving, held by nothing. Without a drain period their removal
    // leaves the port serving nothing: held under 0s, and the Job writes only its record.
    const drainless = ['--drain-seconds', '0'];
    const service = await createLoadBalancerService(namespace, 'unselected');
    await job(drainless);
    // The members' health is in the plan's fingerprint: the plan is made once they are judged.
    await awaitSteady(harness, service);
    await annotate(namespace, 'unselected', { [key('loadbalancer-node-selector')]: 'role=none' });
    const file = join(dir, 'unselected.plan.json');
    const plannedId = await savePlan('unselected', file, drainless);

    const before = harness.sim.admin.requests().length;
    const held = await job(drainless);
    const id = heldId(held, 'unselected');
    expect(id).toBe(plannedId);
    expect(writesSince(before)).toEqual([]);
    expect((await readService(namespace, 'unselected')).metadata!.annotations![ANNOUNCED]).toBe(id);

    const applied = await cli(['apply', file]);
    expect(applied.code, applied.stderr).toBe(0);
    const [lb] = await lbsNamed(harness, `k8s-service-${service.metadata!.uid!}`);
    const pools = (await harness.cloud.pools.list()).filter((p) => p.load_balancer.uuid === lb!.uuid);
    expect(pools).toHaveLength(1);
    expect(await harness.cloud.poolMembers.list(pools[0]!.uuid)).toEqual([]);
  });
});
