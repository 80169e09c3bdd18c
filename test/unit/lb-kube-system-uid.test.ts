// The kube-system uid tag in the planner: written with the other ownership tags, added to a load
// balancer made before it existed as an in-place tags PATCH (impact none), and a load balancer
// tagged with this cluster id but another uid is refused (another cluster shares the id).
import { describe, expect, test } from 'vitest';
import { CLUSTER, converged, P, World, svc } from '../support/lb-world.js';

const HERE = 'uid-of-this-kube-system';
const UID_TAG = `${P}kube-system-uid`;

describe('kube-system uid tag', () => {
  test('a new load balancer carries it beside the cluster id', () => {
    const world = new World(svc());
    world.kubeSystemUid = HERE;
    const create = world.plan().actions.find((a) => a.kind === 'create-lb');
    expect(create?.kind === 'create-lb' && create.body.tags).toMatchObject({ [`${P}cluster`]: CLUSTER, [UID_TAG]: HERE });
  });

  test('one made without it (an older version) gets it as one tags PATCH, impact none, saying so, and then nothing', () => {
    const world = converged();
    expect(world.lbs[0]!.tags[UID_TAG]).toBeUndefined();
    world.kubeSystemUid = HERE;
    const plan = world.plan();
    expect(plan.actions.map((a) => [a.kind, a.impact])).toEqual([['tag-lb', 'none']]);
    const [tag] = plan.actions;
    expect(tag?.kind === 'tag-lb' && tag.patch.tags).toEqual({ ...world.lbs[0]!.tags, [UID_TAG]: HERE });
    // What `plan` shows for it: why, and that cleanup needs it.
    expect(tag?.reason.text).toBe("add this cluster's kube-system-uid tag (made before the tag existed): cleanup deletes no load balancer without it");
    world.apply(plan.actions);
    expect(world.plan().actions).toEqual([]);
  });

  test.each([
    ['another uid: refused, never modified', 'uid-of-another-kube-system', ['refuse']],
    ['this uid: nothing to do', HERE, []],
  ])('tagged with this cluster id and %s', (_name, uid, kinds) => {
    const world = converged(svc(), (w) => (w.kubeSystemUid = HERE));
    world.lbs[0]!.tags = { ...world.lbs[0]!.tags, [UID_TAG]: uid };
    const plan = world.plan();
    expect(plan.actions.map((a) => a.kind)).toEqual(kinds);
    if (kinds.length > 0) {
      expect(plan.problems).toEqual([
        expect.objectContaining({
          kind: 'ownership',
          message: expect.stringContaining(`belongs to another cluster that shares the cluster id ${CLUSTER} (its kube-system UID ${uid}, this cluster's ${HERE})`),
          hint: expect.stringContaining('Give each cluster its own --cluster-id'),
        }),
      ]);
    }
  });
});
