// @kube-versions: all — the server's 409 on a finalizer patch against a stale resourceVersion
// A finalizer write that meets another writer's change of the Service (a label edit landing
// between the pass's read and its patch) is answered 409 by the real API server; the pass
// re-reads the Service and writes again, keeping the other writer's change, and the Service
// converges within that pass. The race is made deterministic by running the other writer's
// edit from inside the pass's own patch call, just before the patch is sent.
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { syncLbCommand } from '../../src/commands/sync-lb.js';
import { CcmError, PartialFailureError } from '../../src/core/errors.js';
import { FINALIZER_ATTEMPTS } from '../../src/core/kube/services.js';
import { LB_FINALIZER } from '../../src/core/lb/service-plan.js';
import { type Harness, type TestContext } from '../support/ccm.js';
import { createLoadBalancerService, testConnection, uniqueName } from '../support/kube.js';
import { TEST_PASS, failuresOf, readService, theLb, useLbWorld } from '../support/lb-scenarios.js';

type PatchArgs = Parameters<CoreV1Api['patchNamespacedService']>;

/** Whether a Service patch body sets finalizers (the pass's finalizer write). */
function writesFinalizers(args: PatchArgs): boolean {
  const body = args[0].body as { metadata?: { finalizers?: unknown } } | undefined;
  return body?.metadata?.finalizers !== undefined;
}

/**
 * A context whose Kubernetes connection runs `interfere` (another writer) before each of the
 * first `times` finalizer patches it sends, and counts those patches.
 */
function racingContext(harness: Harness, times: number, interfere: () => Promise<void>): { ctx: TestContext; patches: () => number } {
  const ctx = harness.context();
  let patches = 0;
  const kube = ctx.kube;
  ctx.kube = () => {
    const conn = kube();
    const core = new Proxy(conn.core, {
      get(target, property, receiver) {
        if (property === 'patchNamespacedService') {
          return async (...args: PatchArgs) => {
            if (writesFinalizers(args)) {
              patches += 1;
              if (patches <= times) await interfere();
            }
            return target.patchNamespacedService(...args);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { ...conn, core };
  };
  return { ctx, patches: () => patches };
}

describe('sync-lb: a finalizer write that conflicts with another writer', () => {
  const namespace = uniqueName('fin-race');
  const prefix = uniqueName('fin');
  const { harness } = useLbWorld({ prefix, namespace });

  /** Another writer's label edit (a JSON merge patch, as `kubectl label` sends). */
  const labelEdit = (name: string, value: string) => async () => {
    await testConnection().core.patchNamespacedService(
      { namespace, name, body: { metadata: { labels: { 'example.com/edited': value } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };

  async function pass(ctx: TestContext, name: string) {
    return syncLbCommand([`service/${name}`], { ...TEST_PASS, namespace }, ctx).then(
      (report) => ({ report, error: undefined }),
      (error: unknown) => ({ report: undefined, error }),
    );
  }

  test('a label edit between the read and the finalizer patch: 409, re-read, written again; the pass converges and the label stays', async () => {
    const name = 'label-race';
    const created: V1Service = await createLoadBalancerService(namespace, name);
    const { ctx, patches } = racingContext(harness, 1, labelEdit(name, 'during-the-pass'));
    const { report, error } = await pass(ctx, name);
    expect(error).toBeUndefined();
    expect(report!.services.map((s) => s.status)).toEqual(['changed']);
    expect(patches()).toBe(2);

    const stored = await readService(namespace, name);
    expect(stored.metadata!.finalizers).toEqual([LB_FINALIZER]);
    expect(stored.metadata!.labels).toEqual({ 'example.com/edited': 'during-the-pass' });
    expect(stored.metadata!.resourceVersion).not.toBe(created.metadata!.resourceVersion);
    const lb = await theLb(harness, stored);
    expect(stored.metadata!.annotations!['k8s.cloudscale.ch/loadbalancer-uuid']).toBe(lb.lb.uuid);
  });

  test('a writer that changes the Service before every attempt: bounded, the Service fails naming the conflict, nothing was created', async () => {
    const name = 'label-storm';
    await createLoadBalancerService(namespace, name);
    let edits = 0;
    const { ctx, patches } = racingContext(harness, Number.POSITIVE_INFINITY, () => labelEdit(name, `edit-${(edits += 1)}`)());
    const { error } = await pass(ctx, name);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect(failuresOf(error as PartialFailureError, namespace, name)).toEqual([
      expect.stringMatching(
        new RegExp(`add-finalizer finalizer service.kubernetes.io/load-balancer-cleanup: .*another writer changed the Service between each of ${FINALIZER_ATTEMPTS} reads and the write that followed it \\(409 Conflict: .*the object has been modified`),
      ),
    ]);
    expect(((error as PartialFailureError).failures[0]!.error as CcmError).hint).toContain('the next pass tries again');
    expect(patches()).toBe(FINALIZER_ATTEMPTS);
    expect(edits).toBe(FINALIZER_ATTEMPTS);
    expect((await readService(namespace, name)).metadata!.finalizers ?? []).toEqual([]);
    expect((await harness.cloud.loadBalancers.list()).filter((lb) => lb.name.includes('label-storm'))).toEqual([]);
  });
});
