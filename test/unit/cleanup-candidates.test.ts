// Which load balancers cleanup judges left behind, from the lists alone (the command then
// confirms each by a read before it deletes it).
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { cleanupCandidates } from '../../src/core/apply/cleanup.js';
import type { LoadBalancer } from '../../src/core/cloudscale/types.js';

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
