import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import type { FloatingIp, HealthMonitor, Listener, LoadBalancer, Pool, PoolMember } from '../../src/core/cloudscale/types.js';
import { InternalError, RefusedError } from '../../src/core/errors.js';
import { assembleActualLoadBalancer, locateLoadBalancer, locateLoadBalancers, locatedUuids } from '../../src/core/lb/actual.js';

const P = 'k8s.cloudscale.ch/';
const stub = (kind: string, uuid: string, name = uuid) => ({ href: `https://api.example/v1/${kind}/${uuid}`, uuid, name });

function lb(uuid: string, name: string): LoadBalancer {
  return {
    ...stub('load-balancers', uuid, name),
    created_at: '2024-01-01T00:00:00Z',
    status: 'running',
    zone: { slug: 'rma1' },
    flavor: { slug: 'lb-standard', name: 'LB-Standard' },
    vip_addresses: [],
    tags: {},
  };
}

function service(annotations: Record<string, string> = {}): V1Service {
  return { metadata: { name: 'web', namespace: 'default', uid: 'deadbeef', annotations }, spec: { type: 'LoadBalancer' } };
}

describe('locateLoadBalancer (Go CCM lb_mapper cases)', () => {
  const byDefault = lb('11111111-0000-4000-8000-000000000001', 'k8s-service-deadbeef');
  const named = lb('22222222-0000-4000-8000-000000000002', 'my-lb');
  const twin = lb('33333333-0000-4000-8000-000000000003', 'my-lb');
  const other = lb('44444444-0000-4000-8000-000000000004', 'other');

  test.each<[string, Record<string, string>, LoadBalancer[], LoadBalancer | undefined]>([
    ['no annotations: by the default name, none', {}, [named, other], undefined],
    ['no annotations: by the default name', {}, [named, byDefault], byDefault],
    ['unique name', { [`${P}loadbalancer-name`]: 'my-lb' }, [named, other], named],
    ['name plus unknown UUID', { [`${P}loadbalancer-name`]: 'my-lb', [`${P}loadbalancer-uuid`]: '99999999-0000-4000-8000-000000000009' }, [named, other], named],
    ['name plus matching UUID', { [`${P}loadbalancer-name`]: 'my-lb', [`${P}loadbalancer-uuid`]: named.uuid }, [named, other], named],
    ['UUID only (renamed: the name annotation changed)', { [`${P}loadbalancer-name`]: 'new-name', [`${P}loadbalancer-uuid`]: named.uuid }, [named, other], named],
    ['empty name annotation: UUID only', { [`${P}loadbalancer-name`]: '', [`${P}loadbalancer-uuid`]: other.uuid }, [named, other], other],
  ])('%s', (_name, annotations, lbs, expected) => {
    expect(locateLoadBalancer(service(annotations), lbs)).toEqual(expected === undefined ? { kind: 'absent' } : { kind: 'found', lb: expected });
  });

  test.each<[string, Record<string, string>, LoadBalancer[], string]>([
    ['ambiguous name', { [`${P}loadbalancer-name`]: 'my-lb' }, [named, twin], 'found more than one load balancer: my-lb (2222'],
    ['name plus mismatched UUID', { [`${P}loadbalancer-name`]: 'my-lb', [`${P}loadbalancer-uuid`]: other.uuid }, [named, other], 'found more than one'],
  ])('%s → ambiguous, with the RefusedError that says how to settle it', (_name, annotations, lbs, message) => {
    const location = locateLoadBalancer(service(annotations), lbs);
    expect(location.kind).toBe('ambiguous');
    const error = location.kind === 'ambiguous' ? location.error : undefined;
    expect(error).toBeInstanceOf(RefusedError);
    expect(error?.message).toContain(message);
    expect(error?.hint).toMatch(/rename or delete/i);
  });
});

describe('locateLoadBalancers, locatedUuids', () => {
  test('the load balancers of Services found, none of one absent or ambiguous', () => {
    const mine = lb('11111111-0000-4000-8000-000000000001', 'k8s-service-deadbeef');
    const named = lb('22222222-0000-4000-8000-000000000002', 'my-lb');
    const twin = lb('33333333-0000-4000-8000-000000000003', 'my-lb');
    const ambiguous: V1Service = { ...service({ [`${P}loadbalancer-name`]: 'my-lb' }), metadata: { name: 'other', namespace: 'default', uid: 'cafe', annotations: { [`${P}loadbalancer-name`]: 'my-lb' } } };
    const absent: V1Service = { ...service(), metadata: { name: 'none', namespace: 'default', uid: 'none' } };
    const locations = locateLoadBalancers([service(), ambiguous, absent], [mine, named, twin], 'cluster-1');
    expect([...locations.keys()]).toEqual([`${service().metadata?.namespace}/${service().metadata?.name}`, 'default/other', 'default/none']);
    expect(locatedUuids(locations.values())).toEqual(new Set([mine.uuid]));
  });
});

describe('assembleActualLoadBalancer', () => {
  const mine = lb('11111111-0000-4000-8000-000000000001', 'mine');
  const theirs = lb('99999999-0000-4000-8000-000000000009', 'theirs');
  const pool = (uuid: string, owner: LoadBalancer, name = 'tcp'): Pool => ({
    ...stub('load-balancers/pools', uuid, name),
    created_at: '',
    load_balancer: stub('load-balancers', owner.uuid, owner.name),
    algorithm: 'round_robin',
    protocol: 'tcp',
    tags: {},
  });
  const listener = (uuid: string, poolUuid: string | null, owner: LoadBalancer): Listener => ({
    ...stub('load-balancers/listeners', uuid, `tcp/${uuid}`),
    created_at: '',
    pool: poolUuid === null ? null : stub('load-balancers/pools', poolUuid),
    load_balancer: stub('load-balancers', owner.uuid, owner.name),
    protocol: 'tcp',
    protocol_port: 80,
    allowed_cidrs: [],
    timeout_client_data_ms: 50000,
    timeout_member_connect_ms: 5000,
    timeout_member_data_ms: 50000,
    tags: {},
  });
  const monitor = (uuid: string, poolUuid: string, owner: LoadBalancer): HealthMonitor => ({
    href: '',
    uuid,
    created_at: '',
    pool: stub('load-balancers/pools', poolUuid),
    load_balancer: stub('load-balancers', owner.uuid, owner.name),
    delay_s: 2,
    timeout_s: 1,
    up_threshold: 2,
    down_threshold: 3,
    type: 'tcp',
    http: null,
    tags: {},
  });
  const member = (uuid: string, poolUuid: string): PoolMember => ({
    ...stub('members', uuid, '10.0.0.1:30080'),
    created_at: '',
    enabled: true,
    pool: stub('load-balancers/pools', poolUuid),
    load_balancer: stub('load-balancers', mine.uuid),
    protocol_port: 30080,
    monitor_port: 30080,
    address: '10.0.0.1',
    subnet: { href: 's', uuid: 's', cidr: '10.0.0.0/24' },
    monitor_status: 'up',
    tags: {},
  });
  const fip = (network: string, owner: LoadBalancer | null): FloatingIp => ({
    href: '',
    created_at: '',
    network,
    ip_version: 4,
    server: null,
    load_balancer: owner === null ? null : stub('load-balancers', owner.uuid, owner.name),
    region: null,
    type: 'global',
    next_hop: null,
    reverse_ptr: null,
    tags: {},
  });

  const p1 = pool('p1', mine, 'tcp/http');
  const p2 = pool('p2', mine, 'tcp/https');
  const px = pool('px', theirs);
  const children = {
    pools: [p1, px, p2],
    membersByPool: { p1: [member('m1', 'p1')], p2: [] },
    listeners: [listener('l1', 'p1', mine), listener('lx', 'px', theirs), listener('lfree', null, mine), listener('lfree2', null, theirs), listener('l2', 'p2', mine)],
    monitors: [monitor('h2', 'p2', mine), monitor('hx', 'px', theirs), monitor('h1', 'p1', mine)],
    floatingIps: [fip('192.0.2.1/32', mine), fip('192.0.2.2/32', theirs), fip('192.0.2.3/32', null)],
  };

  test('children attach by UUID; other load balancers are left out', () => {
    const actual = assembleActualLoadBalancer(mine, children);
    expect(actual.lb).toBe(mine);
    expect(actual.pools.map((p) => ({ pool: p.pool.uuid, members: p.members.map((m) => m.uuid), listeners: p.listeners.map((l) => l.uuid), monitors: p.monitors.map((m) => m.uuid) }))).toEqual([
      { pool: 'p1', members: ['m1'], listeners: ['l1'], monitors: ['h1'] },
      { pool: 'p2', members: [], listeners: ['l2'], monitors: ['h2'] },
    ]);
    expect(actual.freeListeners.map((l) => l.uuid)).toEqual(['lfree']);
    expect(actual.floatingIps.map((f) => f.network)).toEqual(['192.0.2.1/32']);
  });

  test('a pool whose members were not read is a caller bug', () => {
    expect(() => assembleActualLoadBalancer(mine, { ...children, membersByPool: { p1: [] } })).toThrow(InternalError);
    expect(() => assembleActualLoadBalancer(mine, { ...children, membersByPool: { p1: [] } })).toThrow('the members of pool tcp/https (p2) were not read');
  });
});
