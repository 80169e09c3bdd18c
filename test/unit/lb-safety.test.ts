// The planner's safety rules: nothing irreversible on the evidence of a list alone, adoption
// only with proof, conflicts refused without harming the owner, a load balancer in `error`
// reported instead of "in sync".
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { CLUSTER, converged, fip, P, svc, World } from '../support/lb-world.js';

const kinds = (world: World) => world.plan().actions.map((a) => a.kind);

function otherService(name: string, annotations: Record<string, string>): V1Service {
  const other = svc(undefined, annotations);
  other.metadata = { ...other.metadata, name, uid: `uid-${name}` };
  return other;
}

describe('a load balancer missing from the list is looked up by UUID before anything is created', () => {
  test('not read by UUID (a list that came back short or empty) → a lookup problem, no create-lb, no status change', () => {
    const world = converged();
    world.lbs = [];
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems).toEqual([
      expect.objectContaining({ kind: 'lookup', message: expect.stringContaining('was not read by UUID') }),
    ]);
  });

  test('the read by UUID failed → a lookup problem naming the error, nothing created', () => {
    const world = converged();
    world.uuidLookups.set(world.lbs[0]!.uuid, { kind: 'unreadable', error: 'no answer within 20000 ms' });
    world.lbs = [];
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems[0]!.message).toContain('could not be read by UUID (no answer within 20000 ms)');
  });

  test('404 by UUID → a new load balancer, and the annotation is rewritten to it', () => {
    const world = converged();
    world.uuidLookups.set(world.lbs[0]!.uuid, { kind: 'gone' });
    world.lbs = [];
    expect(kinds(world)).toEqual(expect.arrayContaining(['create-lb', 'write-annotations', 'write-status']));
    expect(world.plan().problems).toEqual([]);
  });

  test('a Service without a UUID annotation is created on the list alone (nothing points anywhere)', () => {
    expect(kinds(new World(svc()))).toContain('create-lb');
  });
});

describe('adoption of untagged load balancers only with proof', () => {
  const untagged = (world: World) => (world.lbs[0]!.tags = {});

  test('the UUID annotation names it → adopted (tagged)', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-name`]: 'handmade' }));
    untagged(world);
    expect(kinds(world)).toEqual(['tag-lb']);
  });

  test('the default name k8s-service-<uid> (what the Go CCM creates) → adopted without the UUID annotation', () => {
    const world = converged();
    untagged(world);
    delete world.service.metadata!.annotations![`${P}loadbalancer-uuid`];
    expect(kinds(world)).toEqual(['tag-lb', 'write-annotations']);
  });

  test('found only through a custom loadbalancer-name → refused, with how to adopt it on purpose; nothing touched', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-name`]: 'handmade' }));
    untagged(world);
    delete world.service.metadata!.annotations![`${P}loadbalancer-uuid`];
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems).toEqual([
      {
        kind: 'ownership',
        subject: 'load balancer handmade',
        message: expect.stringContaining('is found only by the name annotation'),
        hint: `To adopt it on purpose, set ${P}loadbalancer-uuid: ${world.lbs[0]!.uuid} on the Service. Otherwise choose another ${P}loadbalancer-name.`,
      },
    ]);
  });

  test('found only through a custom name when the Service goes → the load balancer is left alone, the finalizer removed', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-name`]: 'handmade' }));
    untagged(world);
    delete world.service.metadata!.annotations![`${P}loadbalancer-uuid`];
    world.service.metadata!.deletionTimestamp = new Date(0);
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['remove-finalizer']);
    expect(plan.warnings).toEqual([{ reason: 'UnownedLoadBalancer', message: expect.stringContaining('it is left alone') }]);
  });
});

describe('two Services naming one load balancer', () => {
  test('none owns it → refused, nothing created', () => {
    const name = { [`${P}loadbalancer-name`]: 'shared' };
    const world = new World(svc(undefined, name));
    world.others = [otherService('rival', name)];
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems).toEqual([
      expect.objectContaining({ kind: 'name-conflict', message: expect.stringContaining('also set on Service shop/rival') }),
    ]);
  });

  test('the owner (tagged for it) keeps being reconciled; the rival is refused as not the owner', () => {
    const name = { [`${P}loadbalancer-name`]: 'shared' };
    const owner = converged(svc(undefined, name));
    owner.others = [otherService('rival', name)];
    owner.annotate({ 'loadbalancer-pool-algorithm': 'source_ip' });
    expect(owner.plan().problems).toEqual([]);
    expect(kinds(owner)).toContain('create-pool');

    const rival = new World(otherService('rival', name));
    rival.lbs = owner.lbs;
    rival.others = [owner.service];
    const plan = rival.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems[0]!.message).toContain('belongs to Service shop/web');
  });

  test('a rival of another type, another class or being deleted is no rival', () => {
    const name = { [`${P}loadbalancer-name`]: 'shared' };
    const clusterIp = otherService('a', name);
    clusterIp.spec!.type = 'ClusterIP';
    const classed = otherService('b', name);
    classed.spec!.loadBalancerClass = 'example.com/other';
    const leaving = otherService('c', name);
    leaving.metadata!.deletionTimestamp = new Date(0);
    const world = new World(svc(undefined, name));
    world.others = [clusterIp, classed, leaving];
    expect(kinds(world)).toContain('create-lb');
  });
});

describe('a Floating IP claimed by two Services', () => {
  const claim = { [`${P}loadbalancer-floating-ips`]: '["192.0.2.50/32"]' };

  test('the holder keeps being reconciled (its members are updated); the other claimant is refused', () => {
    const holder = converged(svc(undefined, claim), (w) => (w.fips = [fip('192.0.2.50/32')]));
    expect(holder.fips[0]!.load_balancer?.uuid).toBe(holder.lbs[0]!.uuid);
    holder.others = [otherService('claimant', claim)];
    holder.nodes = holder.nodes.slice(0, 1);
    expect(holder.plan().problems).toEqual([]);
    expect(kinds(holder)).toEqual(['delete-member']);

    const claimant = new World(otherService('claimant', claim));
    claimant.fips = holder.fips;
    claimant.others = [holder.service];
    const plan = claimant.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(['refuse']);
    expect(plan.problems[0]!.kind).toBe('floating-ip-conflict');
  });
});

describe('a load balancer in status "error"', () => {
  test('is no problem, and never "in sync" in silence: a LoadBalancerError warning says why (test/unit/lb-planner-serving.test.ts)', () => {
    const world = converged();
    world.lbs[0]!.status = 'error';
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems).toEqual([]);
    expect(plan.warnings).toEqual([{ reason: 'LoadBalancerError', message: expect.stringContaining('is in status "error"') }]);
  });

  test('is still deleted with its Service', () => {
    const world = converged();
    world.lbs[0]!.status = 'error';
    world.service.metadata!.deletionTimestamp = new Date(0);
    expect(kinds(world)).toEqual(['delete-lb', 'remove-finalizer']);
  });
});


describe('a load balancer made by a pass that stopped before recording it', () => {
  const tagged = (world: World) => ({ [`${P}cluster`]: CLUSTER, [`${P}service-uid`]: world.service.metadata!.uid!, [`${P}service`]: 'shop/web' });

  test('found by its ownership tags when the Service records none and its name changed: adopted and renamed, not created again', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-name`]: 'before' }));
    delete world.service.metadata!.annotations![`${P}loadbalancer-uuid`];
    world.annotate({ 'loadbalancer-name': 'after' });
    expect(kinds(world)).toEqual(['rename-lb', 'write-annotations']);
  });

  test('two such → refused: nothing is created or renamed', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-name`]: 'before' }));
    world.lbs.push({ ...world.lbs[0]!, uuid: '00000000-0000-4000-8000-0000000000ff', name: 'other', tags: tagged(world) });
    delete world.service.metadata!.annotations![`${P}loadbalancer-uuid`];
    world.annotate({ 'loadbalancer-name': 'after' });
    const plan = world.plan();
    expect(plan.actions).toEqual([]);
    expect(plan.problems.map((p) => p.kind)).toEqual(['lookup']);
  });

  test('not when the Service records another one: that is a stray for cleanup', () => {
    const world = converged(svc(undefined, { [`${P}loadbalancer-name`]: 'before' }));
    world.annotate({ 'loadbalancer-name': 'after', 'loadbalancer-uuid': '00000000-0000-4000-8000-0000000000aa' });
    world.uuidLookups.set('00000000-0000-4000-8000-0000000000aa', { kind: 'gone' });
    expect(kinds(world)).toContain('create-lb');
  });
});
