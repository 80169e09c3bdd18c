// The status record and the metrics of a pass, against the real apiserver, the simulator and a
// real Prometheus Pushgateway (Debian's prometheus-pushgateway, started here on a free port):
// - every writing pass records itself in kube-system/cloudscale-ccm-status, one key per command;
// - `status` prints it, and --fail-if-older-than exits 1 on an old or failed record;
// - --metrics-file and --pushgateway carry the same metrics; a push that fails is a warning;
// - a pass without the Lease writes no record.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { V1MicroTime } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GO_CCM_LEASE, runCommand, RUN_LEASE, type RunOptions } from '../../src/commands/run.js';
import { statusCommand } from '../../src/commands/status.js';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { LeaseLostError, LockHeldError, RefusedError, UnhealthyError, UsageError } from '../../src/core/errors.js';
import type { LeaseHandle } from '../../src/core/kube/lease.js';
import { endOfPass } from '../../src/commands/pass-end.js';
import { readStatus, STATUS_CONFIGMAP, writeStatusRecord } from '../../src/core/kube/status-configmap.js';
import { buildPassRecord, type PassCommand } from '../../src/core/status/record.js';
import { closedPort } from '../cli/cli-support.js';
import { nodesSeed, runBinary } from '../support/ccm.js';
import { UNINITIALIZED_TAINT, createLoadBalancerService, createNode, ignoreNotFound, testConnection, uniqueName, waitUntil } from '../support/kube.js';
import { FAST_PASS, annotate, key, useLbWorld } from '../support/lb-scenarios.js';

const options: RunOptions = { ...FAST_PASS, wait: false, force: true };
const scratch = mkdtempSync(join(tmpdir(), 'ccm-status-'));

/** Replaces the records in the status ConfigMap (as an administrator would edit it). */
async function writeRecords(data: Record<string, string>): Promise<void> {
  const core = testConnection().core;
  await ignoreNotFound(core.deleteNamespacedConfigMap(STATUS_CONFIGMAP));
  await core.createNamespacedConfigMap({ namespace: STATUS_CONFIGMAP.namespace, body: { metadata: { name: STATUS_CONFIGMAP.name }, data } });
}

function recordJson(command: PassCommand, minutesAgo: number, over: { error?: string } = {}, fields: Record<string, unknown> = {}): string {
  const finishedAt = new Date(Date.now() - minutesAgo * 60_000);
  const record = buildPassRecord(
    {
      command,
      version: 'test',
      holder: 'test/run/1',
      startedAt: new Date(finishedAt.getTime() - 2000),
      finishedAt,
      failures: [],
      requests: [],
      ...over,
    },
    undefined,
  );
  return JSON.stringify({ ...record, ...fields });
}

describe('status record and metrics', () => {
  const namespace = uniqueName('status');
  const prefix = uniqueName('st');
  let pushgateway: ChildProcess | undefined;
  let pushgatewayUrl = '';
  const { harness } = useLbWorld({ prefix, namespace, seed: nodesSeed({ prefix, count: 2, privateNet: '10.41.0', publicNet: '5.102.148' }), nodes: 0 });

  beforeAll(async () => {
    await ignoreNotFound(testConnection().core.deleteNamespacedConfigMap(STATUS_CONFIGMAP));

    const port = await closedPort();
    pushgatewayUrl = `http://127.0.0.1:${port}`;
    pushgateway = spawn('prometheus-pushgateway', [`--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
    await waitUntil('the Pushgateway is ready', () => fetch(`${pushgatewayUrl}/-/ready`).then((r) => r.ok, () => false), 20_000);
  });

  afterAll(async () => {
    if (pushgateway?.pid !== undefined) process.kill(pushgateway.pid, 'SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
    await ignoreNotFound(testConnection().core.deleteNamespacedConfigMap(STATUS_CONFIGMAP));
  });

  it('a run records its pass; status prints it; the metrics file and the Pushgateway get the same metrics', async () => {
    await createNode(`${prefix}-1`, { ready: true, taints: [UNINITIALIZED_TAINT] });
    await createLoadBalancerService(namespace, 'web');
    const metricsFile = join(scratch, 'run.prom');
    const ctx = harness.context();
    await runCommand({ ...options, metricsFile, pushgateway: pushgatewayUrl }, ctx);
    expect(ctx.err()).toBe('');

    const { records } = await readStatus(testConnection());
    const run = records.run!;
    expect(run).toMatchObject({
      command: 'run',
      result: 'succeeded',
      error: null,
      lastSuccessAt: run.finishedAt,
      nodes: { byOutcome: { initialized: 1 } },
      services: { byStatus: { changed: 1 }, waitingForIp: 0 },
      failing: { items: [], omitted: 0 },
    });
    expect(run.holder).toMatch(/\/run\//);
    expect(run.requests.writes).toBeGreaterThan(0);

    const file = readFileSync(metricsFile, 'utf8');
    expect(file).toContain('cloudscale_ccm_pass_result{command="run",result="succeeded"} 1\n');
    expect(file).toContain(`cloudscale_ccm_last_success_timestamp_seconds{command="run"} ${Date.parse(run.finishedAt) / 1000}\n`);
    expect(file).toContain('cloudscale_ccm_nodes{command="run",outcome="initialized"} 1\n');
    expect(file).toContain('node_controller_cloud_provider_taint_removal_delay_seconds_count{command="run"} 1\n');
    expect(file).toMatch(/^cloudprovider_cloudscale_api_request_duration_seconds_count\{command="run",method="POST",route="\/v1\/load-balancers"\} 1$/m);

    // Read back from the Pushgateway: the same samples, with its grouping labels added.
    const pushed = await (await fetch(`${pushgatewayUrl}/metrics`)).text();
    const group = `cluster="${harness.clusterId}",command="run",instance="",job="cloudscale-ccm"`;
    expect(pushed).toContain(`cloudscale_ccm_pass_result{${group},result="succeeded"} 1\n`);
    expect(pushed).toContain(`cloudscale_ccm_nodes{${group},outcome="initialized"} 1\n`);
    expect(pushed).toMatch(new RegExp(`^cloudscale_ccm_last_success_timestamp_seconds\\{${group}\\} \\S+$`, 'm'));

    const shown = harness.context();
    const report = await statusCommand({ failIfOlderThan: '5m' }, shown);
    expect(report.lastSuccess).toMatchObject({ command: 'run', at: run.finishedAt });
    expect(shown.out()).toMatch(/^last successful pass \d+ s ago \(run, /);
    expect(shown.out()).toMatch(/^run: succeeded, ended \d+ s ago/m);
    expect(shown.out()).toContain('  nodes: 1 (1 initialized)\n');
    expect(shown.out()).toContain('healthy: a success within 5 min, and the last pass succeeded\n');

    const json = harness.context({ output: 'json' });
    await statusCommand({}, json);
    expect(JSON.parse(json.out())).toMatchObject({ apiVersion: 'cloudscale-ccm/v1', kind: 'Status', passes: { run: { result: 'succeeded' } } });
  });

  it('each command keeps its own record; a failing pass keeps the last success and shows why', async () => {
    const before = (await readStatus(testConnection())).records.run!;
    // A Service whose annotation cannot be parsed fails; the pass goes on and ends partial.
    await createLoadBalancerService(namespace, 'broken', { annotations: { 'k8s.cloudscale.ch/loadbalancer-flavor': 'no-such-flavor' } });
    const ctx = harness.context();
    const error = await syncLbCommand([], { ...FAST_PASS, namespace, dryRun: false }, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);

    const { records } = await readStatus(testConnection());
    expect(records.run).toEqual(before);
    expect(records['sync-lb']).toMatchObject({ result: 'partial', lastSuccessAt: null });
    expect(records['sync-lb']!.failing.items.map((f) => f.object)).toEqual([`service/${namespace}/broken`]);

    // The newest pass failed: status says so and exits 1 with --fail-if-older-than.
    const shown = harness.context();
    const unhealthy = await statusCommand({ failIfOlderThan: '1h' }, shown).catch((e: unknown) => e);
    expect(unhealthy).toBeInstanceOf(UnhealthyError);
    expect((unhealthy as Error).message).toMatch(/^not healthy: the last pass \(sync-lb, ended \d+ s ago\) left 1 object failing/);
    expect(shown.out()).toContain(`  failing: service/${namespace}/broken: `);
    expect(shown.out()).not.toContain('healthy');
    await testConnection().core.deleteNamespacedService({ namespace, name: 'broken' });
    await syncLbCommand([], { ...FAST_PASS, namespace, dryRun: false }, harness.context());
  });

  it('run --watch-for: the record keeps the full pass and adds what the reaction passes did, created and updated counted; status says "watching since" while it watches; the summary says what the reactions did', async () => {
    const startedAt = Date.now();
    const abort = new AbortController();
    const ctx = harness.context({ abort: abort.signal });
    const running = runCommand({ ...options, watchForMs: 100_000, watchDebounceMs: 100 }, ctx).catch((error: unknown) => error);
    let full: Awaited<ReturnType<typeof readStatus>>['records']['run'];
    try {
      await waitUntil('the full pass', () => /^watch: watching Nodes and Services/m.test(ctx.err()));
      // The full pass is recorded when the watch begins, with the span it watches.
      full = (await readStatus(testConnection())).records.run!;
      expect(Date.parse(full.startedAt)).toBeGreaterThanOrEqual(startedAt);
      expect(full.nodes).not.toBeNull();
      expect(full.reactions).toEqual({
        passes: 0, nodesInitialized: 0, loadBalancersCreated: 0, loadBalancersUpdated: 0, loadBalancersDeleted: 0, failures: 0, last: null,
      });
      expect(Date.parse(full.watching!.until) - Date.parse(full.startedAt)).toBeGreaterThanOrEqual(99_000);
      expect(Date.parse(full.watching!.since)).toBeGreaterThanOrEqual(Date.parse(full.startedAt));
      // A Node registering tainted, then a new Service: a reaction pass each.
      await createNode(`${prefix}-2`, { ready: true, taints: [UNINITIALIZED_TAINT] });
      const reactionsNow = async () => (await readStatus(testConnection())).records.run!.reactions!;
      await waitUntil('a reaction pass initialised the node', async () => (await reactionsNow()).nodesInitialized === 1);
      await createLoadBalancerService(namespace, 'late');
      await waitUntil('a reaction pass created the load balancer', async () => (await reactionsNow()).loadBalancersCreated === 1);
      const watching = (await readStatus(testConnection())).records.run!;
      // Still the full pass (its start, its nodes and Services), plus the reactions.
      expect(watching).toMatchObject({ result: 'succeeded', startedAt: full.startedAt, nodes: full.nodes, services: full.services, watching: full.watching });
      // The node's pass also synced web (a member more): an update.
      expect(watching.reactions).toMatchObject({ nodesInitialized: 1, loadBalancersCreated: 1, failures: 0, last: { failures: 0 } });
      expect(watching.reactions!.loadBalancersUpdated).toBeGreaterThanOrEqual(1);
      expect(watching.reactions!.passes).toBeGreaterThanOrEqual(2);
      const shown = harness.context();
      await statusCommand({}, shown);
      expect(shown.out()).toMatch(/^run: succeeded, watching since \d+ s ago \(\S+\), until \S+ at the latest; last written \d+ s ago, version /m);
      expect(shown.out()).not.toMatch(/^run: .*ended/m);
    } finally {
      abort.abort();
      await running;
    }
    // The record at the end of the run says the same, and no longer that it watches.
    const ended = (await readStatus(testConnection())).records.run!;
    expect(ended).toMatchObject({ nodes: full!.nodes, services: full!.services, watching: null, reactions: { nodesInitialized: 1, loadBalancersCreated: 1, failures: 0 } });
    const shown = harness.context();
    await statusCommand({}, shown);
    expect(shown.out()).toMatch(/^run: succeeded, ended \d+ s ago/m);
    expect(shown.out()).toMatch(
      new RegExp(
        `^  then watched: ${ended.reactions!.passes} reaction passes, 1 node initialized, 1 load balancer created, ${ended.reactions!.loadBalancersUpdated} load balancers? updated, 0 failures; ` +
          `the last ended .* ago, took \\d+\\.\\d s, for ${ended.reactions!.last!.changes}$`,
        'm',
      ),
    );
    // The run's own summary: the full pass's counts, then what the reactions did.
    expect(ctx.out()).toMatch(
      new RegExp(`^run: nodes .*; then ${ended.reactions!.passes} reaction passes while watching: 1 node initialized, 1 load balancer created, ${ended.reactions!.loadBalancersUpdated} load balancers? updated$`, 'm'),
    );
    const json = harness.context({ output: 'json' });
    await statusCommand({}, json);
    expect(JSON.parse(json.out()).passes.run.reactions).toEqual(ended.reactions);
  });

  it('a change a downtime budget holds back is in the record and the metrics', async () => {
    // web (from the first test) has its load balancer; a pool algorithm change swaps the pool (up to 45 s).
    await annotate(namespace, 'web', { [key('loadbalancer-pool-algorithm')]: 'least_connections' });
    const metricsFile = join(scratch, 'held.prom');
    const ctx = harness.context();
    await syncLbCommand(
      ['service/web'],
      { ...FAST_PASS, namespace, dryRun: false, maxDowntime: 0, metricsFile },
      ctx,
    );
    const record = (await readStatus(testConnection())).records['sync-lb']!;
    expect(record.result).toBe('succeeded');
    expect(record.held.items).toEqual([
      { object: `service/${namespace}/web`, change: expect.stringMatching(/^[0-9a-f]{10}$/), reason: expect.stringContaining('budget of 0s') },
    ]);
    expect(readFileSync(metricsFile, 'utf8')).toContain('cloudscale_ccm_changes_held_back{command="sync-lb"} 1\n');
    const shown = harness.context();
    await statusCommand({}, shown);
    expect(shown.out()).toContain(`  held back: service/${namespace}/web (${record.held.items[0]!.change}): `);
  });

  it('a pass that cannot take the Lease writes no record', async () => {
    await writeRecords({ run: recordJson('run', 1) });
    const before = (await testConnection().core.readNamespacedConfigMap(STATUS_CONFIGMAP)).data;
    const now = new V1MicroTime();
    await ignoreNotFound(testConnection().coordination.deleteNamespacedLease({ namespace: RUN_LEASE.namespace, name: RUN_LEASE.name }));
    await testConnection().coordination.createNamespacedLease({
      namespace: RUN_LEASE.namespace,
      body: { metadata: { name: RUN_LEASE.name }, spec: { holderIdentity: 'other-writer', leaseDurationSeconds: 60, renewTime: now, acquireTime: now } },
    });
    try {
      const metricsFile = join(scratch, 'refused.prom');
      await expect(runCommand({ ...options, metricsFile }, harness.context())).rejects.toThrow(LockHeldError);
      expect((await testConnection().core.readNamespacedConfigMap(STATUS_CONFIGMAP)).data).toEqual(before);
      // Its metrics still say that it failed.
      expect(readFileSync(metricsFile, 'utf8')).toContain('cloudscale_ccm_pass_result{command="run",result="failed"} 1\n');
    } finally {
      await testConnection().coordination.deleteNamespacedLease({ namespace: RUN_LEASE.namespace, name: RUN_LEASE.name });
    }
  });

  it('a run with a malformed API token: refused before the Lease; recorded with its reason when the Lease is free, so status says why', async () => {
    await writeRecords({ run: recordJson('run', 1) });
    const before = (await readStatus(testConnection())).records.run!;
    const result = await runBinary(['run', '--force'], { apiUrl: harness.sim.url, env: { CLOUDSCALE_API_TOKEN: 'two words' } });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/^error: .*CLOUDSCALE_API_TOKEN.*contains spaces/m);
    const { records } = await readStatus(testConnection());
    expect(records.run).toMatchObject({ result: 'failed', lastSuccessAt: before.lastSuccessAt, error: expect.stringContaining('contains spaces') });
    // Nobody holds the Lease afterwards: the failed pass released it.
    const lease = await testConnection().coordination.readNamespacedLease({ ...RUN_LEASE }).catch(() => undefined);
    expect(lease?.spec?.holderIdentity ?? '').toBe('');
  });

  it('a run refused because the Go CCM holds its Lease writes no record; its metrics say failed', async () => {
    await writeRecords({ run: recordJson('run', 1) });
    const before = (await testConnection().core.readNamespacedConfigMap(STATUS_CONFIGMAP)).data;
    const now = new V1MicroTime();
    await testConnection().coordination.createNamespacedLease({
      namespace: GO_CCM_LEASE.namespace,
      body: { metadata: { name: GO_CCM_LEASE.name }, spec: { holderIdentity: 'go-ccm', leaseDurationSeconds: 15, renewTime: now, acquireTime: now } },
    });
    try {
      const metricsFile = join(scratch, 'go-ccm.prom');
      await expect(runCommand({ ...options, force: false, metricsFile }, harness.context())).rejects.toThrow(RefusedError);
      expect((await testConnection().core.readNamespacedConfigMap(STATUS_CONFIGMAP)).data).toEqual(before);
      expect(readFileSync(metricsFile, 'utf8')).toContain('cloudscale_ccm_pass_result{command="run",result="failed"} 1\n');
    } finally {
      await testConnection().coordination.deleteNamespacedLease({ namespace: GO_CCM_LEASE.namespace, name: GO_CCM_LEASE.name });
    }
  });

  it('a pass that lost its Lease sends no record: the fence refuses the write, a warning says so', async () => {
    await writeRecords({ 'sync-lb': recordJson('sync-lb', 1) });
    const before = (await testConnection().core.readNamespacedConfigMap(STATUS_CONFIGMAP)).data;
    const ctx = harness.context();
    const lost = { check: (what: string) => { throw new LeaseLostError(`${what} was not sent: the Lease was taken over`); } };
    const disarm = ctx.writeFence.arm(lost);
    try {
      const leased = { ...ctx, writerLease: { ...lost, holderIdentity: 'test/sync-lb/1' } as unknown as LeaseHandle };
      const record = await endOfPass('sync-lb', leased, {}, { startedAt: new Date(), requestsBefore: 0, details: { services: [] } });
      expect(record.result).toBe('succeeded');
    } finally {
      disarm();
    }
    expect(ctx.err()).toMatch(/^warning: the status record of this pass was not written: write the sync-lb record to configmap kube-system\/cloudscale-ccm-status was not sent: the Lease was taken over/m);
    expect((await testConnection().core.readNamespacedConfigMap(STATUS_CONFIGMAP)).data).toEqual(before);
  });

  it('writers of different commands at the same moment never drop each other\'s record', async () => {
    // Each command applies its own key with a field manager of its own: no read-modify-write
    // race, and no apply that omits a key removes what another manager wrote.
    await ignoreNotFound(testConnection().core.deleteNamespacedConfigMap(STATUS_CONFIGMAP));
    const commands: PassCommand[] = ['run', 'sync-lb', 'init-nodes', 'cleanup', 'apply'];
    for (let round = 0; round < 5; round++) {
      await Promise.all(commands.map((command) => writeStatusRecord(testConnection(), JSON.parse(recordJson(command, 4 - round)), false)));
    }
    const { records, unreadable } = await readStatus(testConnection());
    expect(unreadable).toEqual([]);
    expect(Object.keys(records).sort()).toEqual([...commands].sort());
    // The last round (0 minutes ago) is what each key holds.
    for (const command of commands) expect(Date.now() - Date.parse(records[command]!.finishedAt)).toBeLessThan(60_000);
  });

  it('a push that fails is a warning; the pass succeeds', async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const ctx = harness.context();
    await syncLbCommand([], { namespace, concurrency: 2, waitTimeout: 30, dryRun: false, pushgateway: unreachable }, ctx);
    expect(ctx.err()).toMatch(/^warning: push to the Pushgateway http:\/\/127\.0\.0\.1:\d+\/metrics\/job@base64\/\S+ failed: /m);
    expect((await readStatus(testConnection())).records['sync-lb']!.result).toBe('succeeded');
  });

  describe('status --fail-if-older-than (the built CLI)', () => {
    it.each([
      ['a success a minute ago, threshold 5m', () => ({ run: recordJson('run', 1) }), ['5m'], 0, /^last successful pass 1 min( \d+ s)? ago \(run, /],
      ['a success 10 minutes ago, threshold 5m', () => ({ run: recordJson('run', 10) }), ['5m'], 1, /^error: not healthy: the last successful pass \(run\) ended 10 min( \d+ s)? ago, more than 5 min$/m],
      [
        'a failed pass after a success',
        () => ({ run: recordJson('run', 1, { error: 'the API answered 500' }), 'sync-lb': recordJson('sync-lb', 3) }),
        ['1h'],
        1,
        /^error: not healthy: the last pass \(run, ended 1 min( \d+ s)? ago\) failed: the API answered 500$/m,
      ],
      ['no threshold: only printed', () => ({ run: recordJson('run', 600) }), [], 0, /^last successful pass 10 h ago/],
      [
        'a success 2 h ahead of this clock (a writer whose clock ran ahead) is no success',
        () => ({ run: recordJson('run', -120, {}, { lastSuccessAt: new Date(Date.now() + 2 * 3_600_000).toISOString() }) }),
        ['5m'],
        1,
        // The record was written a moment before status read it: 2 h ahead, or just under by then.
        /^error: not healthy: no success can be counted: run: lastSuccessAt \S+ is (2 h|1 h 59 min) ahead of this clock, more than the 1 min allowed for clock skew/m,
      ],
      [
        'a malformed last success is no success',
        () => ({ run: recordJson('run', 1, {}, { lastSuccessAt: 'NaN' }) }),
        ['5m'],
        1,
        /^error: not healthy: no success can be counted: run: lastSuccessAt "NaN" is not an ISO-8601 time$/m,
      ],
    ])('%s', async (_name, records, threshold, code, output) => {
      await writeRecords(records());
      const result = await runBinary(['status', ...(threshold.length > 0 ? ['--fail-if-older-than', ...threshold] : [])]);
      expect(result.code, result.stderr).toBe(code);
      // The verdict is printed once: a success on stdout, a problem as the error on stderr.
      expect(code === 0 ? result.stdout : result.stderr).toMatch(output);
      expect(result.stdout).toMatch(/^last successful pass[ :]/);
    });

    it('a key edited into something else is named as unreadable; the other records still count', async () => {
      await writeRecords({ run: '{"half": ', 'sync-lb': recordJson('sync-lb', 1), 'init-nodes': JSON.stringify({ command: 'run' }) });
      const result = await runBinary(['status', '--fail-if-older-than', '5m']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^last successful pass 1 min( \d+ s)? ago \(sync-lb, /);
      expect(result.stdout).toMatch(/^run: unreadable record \(not JSON: .+\) in configmap kube-system\/cloudscale-ccm-status, key run$/m);
      expect(result.stdout).toContain('init-nodes: unreadable record (its command is "run", not init-nodes) in configmap kube-system/cloudscale-ccm-status, key init-nodes\n');
    });

    it('a record with a field missing is named (ConfigMap, key) with the fix; status does not crash', async () => {
      const { requests: _requests, ...withoutRequests } = JSON.parse(recordJson('run', 1)) as Record<string, unknown>;
      await writeRecords({ run: JSON.stringify(withoutRequests), 'sync-lb': recordJson('sync-lb', 1) });
      const result = await runBinary(['status']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('run: unreadable record (requests is missing) in configmap kube-system/cloudscale-ccm-status, key run\n');
      expect(result.stdout).toContain(
        `  fix: the next run pass writes a new record; to drop this one now: kubectl -n kube-system patch configmap cloudscale-ccm-status --type=json -p '[{"op":"remove","path":"/data/run"}]'\n`,
      );
      const json = await runBinary(['status', '-o', 'json']);
      expect(JSON.parse(json.stdout).unreadable).toEqual([{ key: 'run', reason: 'requests is missing', fix: expect.stringContaining('kubectl -n kube-system patch') }]);
    });

    it('a missing record is not healthy; a bad duration is a usage error', async () => {
      await ignoreNotFound(testConnection().core.deleteNamespacedConfigMap(STATUS_CONFIGMAP));
      const missing = await runBinary(['status', '--fail-if-older-than', '5m']);
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain('no status recorded: configmap kube-system/cloudscale-ccm-status does not exist');
      await expect(statusCommand({ failIfOlderThan: '10' }, harness.context())).rejects.toThrow(UsageError);
      const bad = await runBinary(['status', '--fail-if-older-than', '5 minutes']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/--fail-if-older-than "5 minutes" is not a duration/);
    });
  });
});
