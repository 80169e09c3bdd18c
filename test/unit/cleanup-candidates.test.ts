// Which load balancers cleanup judges left behind, from the lists alone (the command then
// confirms each by a read before it deletes it), and which of them are proven this cluster's.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { cleanupCandidates, provenCandidates, recheckCandidates } from '../../src/core/apply/cleanup.js';
import type { LoadBalancer } from '../../src/core/cloudscale/types.js';
import { sharingClusterId } from '../../src/core/lb/cluster-identity.js';

const P = 'k8s.cloudscale.ch/';
const CLUSTER = 'cluster-1';
const UUID_A = '00000000-0000-4000-8000-00000000000a';
const UUID_B = '00000000-0000-4000-8000-00000000000b';

function lb(uuid: string, name: string, tags: Record<string, string>): LoadBalancer {
  return { uuid, name, tags, href: `https://api.example/v1/load-balancers/${uuid}` } as unknown as LoadBalancer;
}

const ours = (uid: string) => ({ [`${P}cluster`]: CLUSTER, [`${P}service-uid`]: uid, [`${P}service`]: `shop/${uid}` });

function service(uid: string, annotations: Record<string, string> = {}): V1Service {
  return { metadata: { name: uid, namespace: 'shop', uid, annotations } };
}

describe('cleanupCandidates', () => {
  test.each<[string, LoadBalancer, V1Service[], boolean, string | null]>([
    ['untagged: never', lb(UUID_A, 'handmade', {}), [], false, null],
    ['another cluster: never', lb(UUID_A, 'x', { ...ours('gone'), [`${P}cluster`]: 'cluster-2' }), [], false, null],
    ['tagged, its Service gone, nobody refers to it: orphan', lb(UUID_A, 'k8s-service-gone', ours('gone')), [], false, 'orphan'],
    ['its Service gone, but another Service names it by UUID: kept', lb(UUID_A, 'k8s-service-gone', ours('gone')), [service('new', { [`${P}loadbalancer-uuid`]: UUID_A })], false, null],
    ['its Service gone, but another Service names it by name: kept', lb(UUID_A, 'shared', ours('gone')), [service('new', { [`${P}loadbalancer-name`]: 'shared' })], false, null],
    ['its Service lives and has the default name: kept', lb(UUID_A, 'k8s-service-web', ours('web')), [service('web')], false, null],
    ['its Service lives and records another load balancer: stray', lb(UUID_A, 'old-name', ours('web')), [service('web', { [`${P}loadbalancer-uuid`]: UUID_B, [`${P}loadbalancer-name`]: 'new-name' })], false, 'stray'],
    ['its Service lives and records none yet: kept (nothing proves it unused)', lb(UUID_A, 'old-name', ours('web')), [service('web', { [`${P}loadbalancer-name`]: 'new-name' })], false, null],
    ['--all: every one of this cluster', lb(UUID_A, 'k8s-service-web', ours('web')), [service('web')], true, 'all'],
  ])('%s', (_name, loadBalancer, services, all, kind) => {
    const candidates = cleanupCandidates([loadBalancer], CLUSTER, services, all);
    expect(candidates.map((c) => c.kind)).toEqual(kind === null ? [] : [kind]);
  });
});

describe('provenCandidates: a candidate is deleted only with proof that it is this cluster\'s', () => {
  const UID_HERE = 'uid-of-this-kube-system';
  const UID_THERE = 'uid-of-another-kube-system';
  const identity = { clusterId: CLUSTER, kubeSystemUid: UID_HERE };
  const withUid = (uid: string) => ({ ...ours('gone'), [`${P}kube-system-uid`]: uid });
  const UNTAGGED = /has no k8s\.cloudscale\.ch\/kube-system-uid tag, so nothing proves it is this cluster's: .* run cleanup --include-untagged$/;

  test.each<[string, Record<string, string>, boolean, RegExp | null]>([
    ['its kube-system uid is this cluster\'s: deleted', withUid(UID_HERE), false, null],
    [
      'another kube-system uid: kept, naming the shared cluster id and both uids',
      withUid(UID_THERE),
      false,
      new RegExp(`belongs to another cluster that shares the cluster id ${CLUSTER} \\(its kube-system UID ${UID_THERE}, this cluster's ${UID_HERE}\\)`),
    ],
    ['another kube-system uid, even with --include-untagged: kept', withUid(UID_THERE), true, /belongs to another cluster that shares the cluster id/],
    // A second cluster with the same id may have Nodes for the same servers: members prove nothing.
    ['no uid tag: kept, naming the flag', ours('gone'), false, UNTAGGED],
    ['an empty uid tag counts as none: kept', withUid(''), false, UNTAGGED],
    ['no uid tag, with --include-untagged: deleted', ours('gone'), true, null],
  ])('%s', (_name, tags, includeUntagged, kept) => {
    const loadBalancer = lb(UUID_A, 'k8s-service-gone', tags);
    const candidate = { name: loadBalancer.name, uuid: UUID_A, service: 'shop/gone', kind: 'orphan' as const, why: '' };
    const judged = provenCandidates([candidate], new Map([[UUID_A, loadBalancer]]), identity, includeUntagged);
    if (kept === null) {
      expect(judged).toEqual({ candidates: [candidate], withoutProof: [] });
    } else {
      expect(judged.candidates).toEqual([]);
      expect(judged.withoutProof).toEqual([{ uuid: UUID_A, name: loadBalancer.name, why: expect.stringMatching(kept) }]);
    }
  });
});

describe('recheckCandidates: under the Lease, only what is still a candidate, unchanged, is deleted', () => {
  const identity = { clusterId: CLUSTER, kubeSystemUid: 'here' };
  const tagged = (uid: string) => ({ ...ours(uid), [`${P}kube-system-uid`]: 'here' });
  const ORPHAN = lb(UUID_A, 'old-name', tagged('gone'));
  /** What cleanup finds in these lists (all: false, includeUntagged: false). */
  function findings(loadBalancers: LoadBalancer[], services: V1Service[] = []) {
    const byUuid = new Map(loadBalancers.map((l) => [l.uuid, l]));
    const judged = provenCandidates(cleanupCandidates(loadBalancers, CLUSTER, services, false), byUuid, identity, false);
    return { ...judged, loadBalancers: byUuid, services };
  }
  const asked = findings([ORPHAN]);

  test.each<[string, ReturnType<typeof findings>, RegExp | null]>([
    ['nothing changed: deleted', findings([ORPHAN]), null],
    ['deleted by someone else meanwhile: kept', findings([]), /^it is gone since the question/],
    ['renamed meanwhile: kept', findings([{ ...ORPHAN, name: 'renamed' }]), /^it was renamed to renamed since the question$/],
    [
      'its uid tag dropped meanwhile: kept, naming the tag',
      findings([{ ...ORPHAN, tags: ours('gone') }]),
      /^its tags changed since the question: k8s\.cloudscale\.ch\/kube-system-uid \(here → \(none\)\)$/,
    ],
    [
      'a Service took it over by UUID meanwhile: kept, naming the Service',
      findings([ORPHAN], [service('new', { [`${P}loadbalancer-uuid`]: UUID_A })]),
      /^no longer left behind: Service shop\/new refers to it by uuid$/,
    ],
    [
      'its Service came back meanwhile, recording none: kept',
      findings([ORPHAN], [service('gone')]),
      /^no longer left behind: its Service shop\/gone is live and records no load balancer$/,
    ],
    [
      'a stray now (its Service is back with another load balancer): kept',
      findings([ORPHAN], [service('gone', { [`${P}loadbalancer-uuid`]: UUID_B })]),
      /^a candidate now for another reason \(was: its Service shop\/gone no longer exists; now: tagged for Service shop\/gone/,
    ],
  ])('%s', (_name, now, kept) => {
    const { findings: rechecked, changed } = recheckCandidates(asked, now);
    if (kept === null) {
      expect(rechecked.candidates.map((c) => c.uuid)).toEqual([UUID_A]);
      expect(changed).toEqual([]);
    } else {
      expect(rechecked.candidates).toEqual([]);
      expect(changed).toEqual([{ uuid: UUID_A, name: ORPHAN.name, why: expect.stringMatching(kept) }]);
    }
  });

  test('a candidate that appeared after the question is kept: nobody agreed to its deletion', () => {
    const later = lb(UUID_B, 'k8s-service-later', tagged('later'));
    const { findings: rechecked, changed } = recheckCandidates(asked, findings([ORPHAN, later]));
    expect(rechecked.candidates.map((c) => c.uuid)).toEqual([UUID_A]);
    expect(changed).toEqual([
      { uuid: UUID_B, name: later.name, why: expect.stringMatching(/^became a candidate after the question \(its Service shop\/later no longer exists\); run cleanup again to delete it$/) },
    ]);
  });
});

describe('sharingClusterId: what sync-lb warns about', () => {
  const identity = { clusterId: CLUSTER, kubeSystemUid: 'here' };
  test.each<[string, Record<string, string>, boolean]>([
    ['this cluster id, another kube-system uid: counted', { ...ours('a'), [`${P}kube-system-uid`]: 'there' }, true],
    ['this cluster id, this kube-system uid: not', { ...ours('a'), [`${P}kube-system-uid`]: 'here' }, false],
    ['this cluster id, no uid tag yet: not (nothing to tell)', ours('a'), false],
    ['another cluster id, another uid: not (a cluster of its own)', { ...ours('a'), [`${P}cluster`]: 'cluster-2', [`${P}kube-system-uid`]: 'there' }, false],
    ['untagged: not', {}, false],
  ])('%s', (_name, tags, counted) => {
    expect(sharingClusterId([lb(UUID_A, 'x', tags)], identity).length).toBe(counted ? 1 : 0);
  });
});
