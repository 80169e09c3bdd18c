// @kube-versions: all — the whole pass: Lease, Node and Service writes, Events, the status ConfigMap
// `run`: init-nodes then sync-lb under the tool's own Lease, refusing while the Go CCM holds
// its Lease, with one summary at the end.
import { V1MicroTime } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GO_CCM_LEASE, RUN_LEASE, runCommand, type RunOptions } from '../../src/commands/run.js';
import { LockHeldError, PartialFailureError, RefusedError } from '../../src/core/errors.js';
import { nodesSeed } from '../support/ccm.js';
import { UNINITIALIZED_TAINT, createLoadBalancerService, ignoreNotFound, testConnection, uniqueName, waitUntil } from '../support/kube.js';
import { FAST_PASS, useLbWorld } from '../support/lb-scenarios.js';

const options: RunOptions = { ...FAST_PASS, wait: false, force: false };

async function holdLease(name: string, holder: string, seconds: number, clockOffsetMs = 0): Promise<void> {
  const now = new V1MicroTime(Date.now() + clockOffsetMs);
  await testConnection().coordination.createNamespacedLease({
    namespace: 'kube-system',
    body: {
      metadata: { name, namespace: 'kube-system' },
      spec: { holderIdentity: holder, leaseDurationSeconds: seconds, renewTime: now, acquireTime: now },
    },
  });
}

/** Renews the Go CCM's Lease every 2 s as client-go does, with its holder's clock off by `clockOffsetMs`. */
function renewGoCcmLease(clockOffsetMs: number): { stop(): void } {
  const timer = setInterval(() => {
    void testConnection()
      .coordination.patchNamespacedLease({
        namespace: 'kube-system',
        name: GO_CCM_LEASE.name,
        body: [{ op: 'replace', path: '/spec/renewTime', value: new V1MicroTime(Date.now() + clockOffsetMs) }],
      })
      .catch(() => undefined);
  }, 2000);
  return { stop: () => clearInterval(timer) };
}

async function deleteLease(name: string): Promise<void> {
  await ignoreNotFound(testConnection().coordination.deleteNamespacedLease({ namespace: 'kube-system', name }));
}

describe('run', () => {
  const namespace = uniqueName('run');
  const prefix = uniqueName('rn');
  const { harness } = useLbWorld({
    prefix,
    namespace,
    seed: nodesSeed({ prefix, count: 1, privateNet: '10.40.0', publicNet: '5.102.147' }),
    nodes: 1,
    node: () => ({ taints: [UNINITIALIZED_TAINT] }),
  });

  beforeAll(async () => {
    await createLoadBalancerService(namespace, 'web');
  });
  afterEach(async () => {
    await deleteLease(RUN_LEASE.name);
    await deleteLease(GO_CCM_LEASE.name);
  });

  it('refuses while the Go CCM holds its Lease, and acts with --force', async () => {
    await holdLease(GO_CCM_LEASE.name, 'go-ccm-pod_1234', 60);
    const refused = harness.context();
    await expect(runCommand(options, refused)).rejects.toThrow(RefusedError);
    await expect(runCommand(options, harness.context())).rejects.toThrow(/holder go-ccm-pod_1234/);
    expect(await harness.cloud.loadBalancers.list()).toEqual([]);

    const forced = harness.context();
    const report = await runCommand({ ...options, force: true }, forced);
    expect(report.summary).toMatchObject({ nodesInitialized: 1, loadBalancersCreated: 1, servicesFailed: 0 });
    expect(forced.out()).toMatch(/^run: nodes 1 initialized, 0 refreshed, 0 deleted; load balancers 1 created, 0 updated, 0 deleted; 0 failures; \d+ API requests \(\d+ writes\); \d+\.\d s$/m);
  });

  it('refuses while a live Go CCM renews its Lease with a clock 70 s behind (its Lease looks expired here)', async () => {
    await holdLease(GO_CCM_LEASE.name, 'go-ccm-pod_slow-clock', 15, -70_000);
    const renewals = renewGoCcmLease(-70_000);
    try {
      await expect(runCommand(options, harness.context())).rejects.toThrow(/holder go-ccm-pod_slow-clock/);
    } finally {
      renewals.stop();
    }
  });

  it('a Go CCM Lease last renewed two hours ago by this clock is taken as gone', async () => {
    await holdLease(GO_CCM_LEASE.name, 'go-ccm-pod_long-gone', 15, -7_200_000);
    const report = await runCommand(options, harness.context());
    expect(report.failures).toEqual([]);
  });

  it('releases its Lease at the end; the next run finds everything in sync', async () => {
    const ctx = harness.context({ output: 'json' });
    const report = await runCommand(options, ctx);
    const document = JSON.parse(ctx.out());
    expect(document.summary).toEqual(report.summary);
    expect(document.summary).toMatchObject({ nodesInitialized: 0, loadBalancersCreated: 0, loadBalancersUpdated: 0 });
    expect(document.loadBalancers.requests.writes).toBe(0);
    const lease = await testConnection().coordination.readNamespacedLease({ namespace: 'kube-system', name: RUN_LEASE.name });
    expect(lease.spec?.holderIdentity ?? '').toBe('');
  });

  it('exits with a clear message while another run holds the Lease, or waits for it with --wait', async () => {
    await holdLease(RUN_LEASE.name, 'other-run', 60);
    const error = await runCommand(options, harness.context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect((error as LockHeldError).message).toContain('other-run');
    expect((error as LockHeldError).hint).toContain('--wait');

    const waiting = harness.context();
    const released = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await testConnection().coordination.patchNamespacedLease(
        { namespace: 'kube-system', name: RUN_LEASE.name, body: [{ op: 'replace', path: '/spec/holderIdentity', value: '' }] },
      );
    })();
    const report = await runCommand({ ...options, wait: true }, waiting);
    await released;
    expect(waiting.err()).toContain('waiting: ');
    expect(report.failures).toEqual([]);
  });

  /** Waits until a pass holds the run Lease, then gives it to another holder. */
  async function takeOverOnceHeld(): Promise<void> {
    await waitUntil('the run holds its Lease', async () => {
      const lease = await ignoreNotFound(testConnection().coordination.readNamespacedLease({ namespace: 'kube-system', name: RUN_LEASE.name }));
      return (lease?.spec?.holderIdentity ?? '') !== '';
    });
    await testConnection().coordination.patchNamespacedLease({
      namespace: 'kube-system',
      name: RUN_LEASE.name,
      body: [
        { op: 'replace', path: '/spec/holderIdentity', value: 'intruder' },
        { op: 'replace', path: '/spec/renewTime', value: new Date().toISOString().replace('Z', '000Z') },
      ],
    });
  }

  it('stops between steps when another holder takes its Lease over during the pass', async () => {
    const slow = await createLoadBalancerService(namespace, 'slow');
    await harness.sim.admin.setFaults({ stuckLoadBalancers: { [`k8s-service-${slow.metadata!.uid}`]: 'changing' } });
    const ctx = harness.context();
    const running = runCommand({ ...options, leaseSeconds: 3, waitTimeout: 60 }, ctx).catch((e: unknown) => e);
    // The new load balancer stays "changing": once the pass holds the Lease, take it over.
    await takeOverOnceHeld();
    const error = await running;
    await harness.sim.admin.clearFaults();
    expect(error).toBeInstanceOf(PartialFailureError);
    expect((error as PartialFailureError).failures.map((f) => f.error.message).join('\n')).toContain('the Lease was taken over during the pass');
  });
  it('a Lease taken over before sync-lb: sync-lb does not run, and the run fails saying so (never a quiet exit 0)', async () => {
    // The server list answers late, so init-nodes is still running when the Lease changes hands.
    await harness.sim.admin.setFaults({ hang: { pathPattern: '/v1/servers', methods: ['GET'], count: 1, forMs: 2500 } });
    const ctx = harness.context();
    const running = runCommand({ ...options, leaseSeconds: 3 }, ctx).catch((e: unknown) => e);
    await takeOverOnceHeld();
    const error = await running;
    await harness.sim.admin.clearFaults();
    expect(error).toBeInstanceOf(PartialFailureError);
    const report = (error as PartialFailureError).result as { loadBalancers: unknown; failures: { object: string; message: string }[] };
    expect(report.loadBalancers).toBeNull();
    expect(report.failures).toContainEqual({ object: 'lease', message: expect.stringMatching(/taken over during the pass.*the pass stopped before sync-lb/) });
    await testConnection().coordination.patchNamespacedLease({
      namespace: 'kube-system',
      name: RUN_LEASE.name,
      body: [{ op: 'replace', path: '/spec/holderIdentity', value: '' }],
    });
  });
});
