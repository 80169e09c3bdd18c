// Which load balancers cleanup judges left behind, from the lists alone (the command then
// confirms each by a read before it deletes it), and which of them are proven this cluster's.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { cleanupCandidates, provenCandidates } from '../../src/core/apply/cleanup.js';
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
  const SUBNET = 'subnet-1';
  const OTHER_SUBNET = 'subnet-2';
  const member = (subnet: string, address: string) => ({ address, subnet: { uuid: subnet, cidr: '10.0.0.0/24', href: '' } });
  const withUid = (uid: string) => ({ ...ours('gone'), [`${P}kube-system-uid`]: uid });

  test.each<[string, Record<string, string>, { services?: string[]; members?: ReturnType<typeof member>[] }, RegExp | null]>([
    ['its kube-system uid is this cluster\'s: deleted', withUid(UID_HERE), {}, null],
    [
      'another kube-system uid: kept, naming the shared cluster id and both uids',
      withUid(UID_THERE),
      { members: [member(SUBNET, '10.0.0.1')] },
      new RegExp(`belongs to another cluster that shares the cluster id ${CLUSTER} \\(its kube-system UID ${UID_THERE}, this cluster's ${UID_HERE}\\)`),
    ],
    ['no uid tag, tagged for a live Service of this cluster: deleted', ours('web'), { services: ['web'] }, null],
    ['no uid tag, every member on a Node of this cluster: deleted', ours('gone'), { members: [member(SUBNET, '10.0.0.1'), member(SUBNET, '10.0.0.2')] }, null],
    ['no uid tag, on a Node and on an address no server has (a deleted Node): deleted', ours('gone'), { members: [member(SUBNET, '10.0.0.1'), member(SUBNET, '10.0.0.50')] }, null],
    ['no uid tag, one member on a server that is no Node here: kept', ours('gone'), { members: [member(SUBNET, '10.0.0.1'), member(SUBNET, '10.0.0.9')] }, /a member is on a server that is no Node of this cluster/],
    ['no uid tag, a Node\'s address in another subnet: kept', ours('gone'), { members: [member(OTHER_SUBNET, '10.0.0.1')] }, /none of its members is on this cluster's Nodes/],
    ['no uid tag, members only on addresses no server has: kept', ours('gone'), { members: [member(SUBNET, '10.0.0.50')] }, /none of its members is on this cluster's Nodes/],
    ['no uid tag, no members: kept', ours('gone'), {}, /has no k8s\.cloudscale\.ch\/kube-system-uid tag .*it has no members/],
    ['an empty uid tag counts as none: kept without members', withUid(''), {}, /has no k8s\.cloudscale\.ch\/kube-system-uid tag/],
  ])('%s', (_name, tags, { services = [], members = [] }, kept) => {
    const loadBalancer = lb(UUID_A, 'k8s-service-gone', tags);
    const candidate = { name: loadBalancer.name, uuid: UUID_A, service: 'shop/gone', kind: 'orphan' as const, why: '' };
    const evidence = {
      liveServiceUids: new Set(services),
      serverInterfaces: new Map([
        [`${SUBNET} 10.0.0.1`, 'node' as const],
        [`${SUBNET} 10.0.0.2`, 'node' as const],
        [`${SUBNET} 10.0.0.9`, 'other' as const],
      ]),
      members: new Map([[UUID_A, members]]),
    };
    const judged = provenCandidates([candidate], new Map([[UUID_A, loadBalancer]]), identity, evidence);
    if (kept === null) {
      expect(judged).toEqual({ candidates: [candidate], withoutProof: [] });
    } else {
      expect(judged.candidates).toEqual([]);
      expect(judged.withoutProof).toEqual([{ uuid: UUID_A, name: loadBalancer.name, why: expect.stringMatching(kept) }]);
    }
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
