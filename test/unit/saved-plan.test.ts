// The saved plan's pure parts: the file is refused when it is not JSON, not a saved plan, of a
// newer version, or changed after it was written; a plan of another cluster or API is refused;
// the fingerprint names each input and changes when any of them does; planning again must give
// the saved actions (a drain's start time aside).
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import {
  checkPlanTarget,
  fingerprintChanges,
  fingerprintOf,
  parseSavedPlan,
  planDifferences,
  serializeSavedPlan,
} from '../../src/core/plan/saved-plan.js';
import type { LbPassSnapshot } from '../../src/core/plan/snapshot.js';
import { passSnapshot } from '../support/pass-snapshot.js';
import type { FloatingIp, LoadBalancer, MemberState, Pool, Server } from '../../src/core/cloudscale/types.js';
import { ConfigError, RefusedError } from '../../src/core/errors.js';
import type { PlannedAction } from '../../src/core/lb/actions.js';
import { applyBudget } from '../../src/core/plan/budget.js';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import { planDocument } from '../../src/core/plan/document.js';
import { act, savedPlanContent, servicePlan } from '../support/plan-fixtures.js';

const drainTag = (at: string) => act('update-member', 'member m1 of pool tcp/http', 'member-drain', undefined, { patch: { tags: { [MEMBER_DRAINING_TAG]: at } } });

const content = savedPlanContent;

describe('parseSavedPlan', () => {
  const good = serializeSavedPlan(content());
  const cases: { name: string; text: string; message: RegExp }[] = [
    { name: 'truncated', text: good.slice(0, good.length - 40), message: /plan.json is not a saved plan: it is not valid JSON .*truncated/ },
    { name: 'empty', text: '', message: /not valid JSON/ },
    { name: 'an array', text: '[]', message: /holds no JSON object/ },
    { name: 'plan -o json', text: JSON.stringify(content().plan), message: /it has no "format" field, not "cloudscale-ccm\/plan".*/ },
    { name: 'a newer version', text: serializeSavedPlan({ ...content(), version: 2 } as never), message: /written in plan format version 2; this cloudscale-ccm reads version 1/ },
    { name: 'a version that is no number', text: serializeSavedPlan({ ...content(), version: '1' } as never), message: /plan format version "1" is not valid/ },
    { name: 'no integrity digest', text: JSON.stringify(content()), message: /has no integrity digest/ },
    { name: 'an edited action', text: good.replace('"pool tcp/http"', '"pool tcp/https"'), message: /was changed after `plan --out` wrote it/ },
    { name: 'an edited fingerprint', text: good.replace('resourceVersion 7', 'resourceVersion 8'), message: /was changed after/ },
    { name: 'an edited digest', text: good.replace(/"sha256:[0-9a-f]{4}/, '"sha256:0000'), message: /was changed after/ },
  ];
  test.each(cases)('refuses $name', ({ text, message }) => {
    expect(() => parseSavedPlan(text, 'plan.json')).toThrow(ConfigError);
    expect(() => parseSavedPlan(text, 'plan.json')).toThrow(message);
  });

  // Edited and sealed again (the digest is no signature): read like the command line that made it.
  const plan = content().plan;
  const [web] = plan.services;
  const resealed: { name: string; change: Record<string, unknown>; message: RegExp }[] = [
    { name: 'a negative drain', change: { options: { drainSeconds: -5, maxNodeDeletions: null } }, message: /options.drainSeconds is -5, which the flag refuses: --drain-seconds takes a number ≥ 0, got "-5"/ },
    { name: 'a drain as text', change: { options: { drainSeconds: '60', maxNodeDeletions: null } }, message: /options.drainSeconds is "60", not a number/ },
    { name: 'a fractional node-deletion bound', change: { options: { drainSeconds: 60, maxNodeDeletions: 1.5 } }, message: /options.maxNodeDeletions is 1.5, which the flag refuses: --max-node-deletions takes a whole number ≥ 0/ },
    { name: 'no options', change: { options: undefined }, message: /options is missing, not an object/ },
    { name: 'a null fingerprint', change: { fingerprint: null }, message: /fingerprint is null, not an object/ },
    { name: 'a fingerprint value that is no text', change: { fingerprint: { 'service shop/web': 7 } }, message: /fingerprint\["service shop\/web"\] is 7, not a string/ },
    { name: 'a cluster id with spaces', change: { cluster: { ...content().cluster, clusterId: ' c1' } }, message: /cluster.clusterId is " c1", which the flag refuses: --cluster-id " c1" has spaces around it/ },
    { name: 'a time that is none', change: { createdAt: 'yesterday' }, message: /createdAt "yesterday" is no time/ },
    { name: 'a selection of neither kind', change: { selection: { all: false } }, message: /selection is neither/ },
    { name: 'a Service name no argument takes', change: { selection: { names: [{ namespace: 'shop', name: 'Web' }] } }, message: /selection.names\[0\].name is "Web", which the flag refuses: "service\/Web": "Web" is not a valid Service name/ },
    { name: 'a namespace no -n takes', change: { selection: { names: [{ namespace: 'Shop', name: 'web' }] } }, message: /selection.names\[0\].namespace is "Shop", which the flag refuses: -n "Shop" is not a valid namespace name/ },
    { name: 'no Service plans', change: { plan: { ...plan, services: null } }, message: /plan.services is null, not a list/ },
    { name: 'an action without a kind', change: { plan: { ...plan, services: [{ ...web, actions: [{ object: 'pool tcp/http' }] }] } }, message: /plan.services\[0\].actions\[0\].kind is missing, not a string/ },
    {
      name: 'held actions at no step',
      change: { plan: { ...plan, services: [{ ...web, held: [{ id: 'x', actions: [act('delete-pool', 'pool a', 'pool-swap')], positions: [7] }] }] } },
      message: /plan.services\[0\].held puts its actions at positions \[7\], not distinct steps of the 2/,
    },
  ];
  test.each(resealed)('refuses a file sealed again with $name', ({ change, message }) => {
    const text = serializeSavedPlan({ ...content(), ...change } as never);
    expect(() => parseSavedPlan(text, 'plan.json')).toThrow(ConfigError);
    expect(() => parseSavedPlan(text, 'plan.json')).toThrow(message);
  });

  test('a file sealed again with values the flags accept is read', () => {
    const text = serializeSavedPlan(content({ options: { drainSeconds: 0.5, maxNodeDeletions: 0 }, selection: { names: [{ namespace: 'shop', name: 'web' }] } }));
    expect(parseSavedPlan(text, 'plan.json').options).toEqual({ drainSeconds: 0.5, maxNodeDeletions: 0 });
  });

  test('reads back what serializeSavedPlan wrote, reindented or not', () => {
    expect(parseSavedPlan(good, 'plan.json').plan.services[0]!.actions[0]!.kind).toBe('create-pool');
    expect(parseSavedPlan(JSON.stringify(JSON.parse(good)), 'plan.json').createdAt).toBe('2026-11-25T10:00:00.000Z');
  });
});

describe('checkPlanTarget', () => {
  const file = parseSavedPlan(serializeSavedPlan(content()), 'plan.json');
  const here = { clusterId: 'c1', kubeSystemUid: 'uid-1', server: 'https://other-name:6443', apiUrl: 'https://api.cloudscale.ch/' };
  test.each([
    { name: 'another kube-system uid', target: { ...here, kubeSystemUid: 'uid-2' }, message: /another cluster \(https:\/\/k8s.example:6443: kube-system uid uid-1, this one uid-2\)/ },
    { name: 'another cluster id', target: { ...here, clusterId: 'c2' }, message: /another cluster .*cluster id c1, this one c2/ },
    { name: 'another API', target: { ...here, apiUrl: 'http://127.0.0.1:8080' }, message: /the cloudscale API at https:\/\/api.cloudscale.ch, not http:\/\/127.0.0.1:8080/ },
  ])('refuses a plan made against $name', ({ target, message }) => {
    expect(() => checkPlanTarget(file, target, 'plan.json')).toThrow(RefusedError);
    expect(() => checkPlanTarget(file, target, 'plan.json')).toThrow(message);
  });
  test('accepts the same cluster under another server name, and a trailing slash', () => {
    expect(() => checkPlanTarget(file, here, 'plan.json')).not.toThrow();
  });
});

describe('fingerprintOf', () => {
  const service = (name: string, rv: string, type = 'LoadBalancer'): V1Service => ({
    metadata: { namespace: 'shop', name, uid: `uid-${name}`, resourceVersion: rv },
    spec: { type },
  });
  const node = (name: string, rv: string, labels: Record<string, string> = {}): V1Node => ({
    metadata: { name, uid: `uid-${name}`, resourceVersion: rv, labels },
    spec: { providerID: `cloudscale://${name}` },
    status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(`2026-11-25T10:00:0${rv.length}Z`) }] },
  });
  const lb = { uuid: 'lb-1', name: 'k8s-service-uid-web', tags: {} } as unknown as LoadBalancer;
  const pool = { uuid: 'pool-1', name: 'tcp/http', load_balancer: { uuid: 'lb-1' } } as unknown as Pool;
  const member = { uuid: 'm-1', name: 'worker-1', address: '10.0.0.1', enabled: true } as unknown as MemberState;
  const server = (uuid: string, name: string, address: string, status = 'running') =>
    ({ uuid, name, status, zone: { slug: 'rma1' }, interfaces: [{ type: 'private', addresses: [{ address }] }], tags: {} }) as unknown as Server;
  const servers = [server('s-1', 'worker-1', '10.0.0.1'), server('s-9', 'other-cluster-1', '10.0.0.9')];
  const fip = (network: string, lbUuid: string | null) => ({ network, load_balancer: lbUuid === null ? null : { uuid: lbUuid } }) as unknown as FloatingIp;
  const floatingIps = [fip('192.0.2.10/32', 'lb-1'), fip('192.0.2.99/32', null)];
  const snapshot = (changes: Partial<LbPassSnapshot> = {}): LbPassSnapshot =>
    passSnapshot({
      services: [
        { ...service('web', '10'), metadata: { ...service('web', '10').metadata, annotations: { 'k8s.cloudscale.ch/loadbalancer-uuid': 'lb-1' } } },
        service('api', '11'),
        service('internal', '12', 'ClusterIP'),
      ],
      nodes: [node('worker-1', '100')],
      servers,
      subnets: [],
      floatingIps,
      loadBalancers: [lb],
      pools: [pool],
      listeners: [],
      monitors: [],
      membersByPool: { 'pool-1': [member] },
      unreadablePools: new Map(),
      uuidLookups: new Map(),
      clusterId: 'c1',
      kubeSystemUid: 'uid-1',
      apiServerMinor: 34,
      ipModeKept: true,
      ...changes,
    });
  const base = fingerprintOf(snapshot(), { names: [{ namespace: 'shop', name: 'web' }] });
  const webAnnotations = { 'k8s.cloudscale.ch/loadbalancer-uuid': 'lb-1' };
  /** The Service web of the snapshot with its metadata changed. */
  const editedWeb = (metadata: Partial<NonNullable<V1Service['metadata']>>): V1Service => {
    const web = snapshot().services[0]!;
    return { ...web, metadata: { ...web.metadata, ...metadata } };
  };

  test('names each input: Services in play and every LoadBalancer Service, Nodes, the load balancer and its children', () => {
    expect(Object.keys(base)).toEqual([
      'API server',
      'floating IP 192.0.2.10/32',
      'floating IP 192.0.2.99/32',
      'load balancer k8s-service-uid-web (lb-1)',
      'members of pool tcp/http (pool-1)',
      'node worker-1',
      'pool tcp/http (pool-1)',
      'server worker-1 (s-1)',
      'service shop/api',
      'service shop/web',
    ]);
    expect(base['service shop/web']).toMatch(/^resourceVersion 10, sha256:[0-9a-f]{64}$/);
  });

  const changed = (name: string, changes: Partial<LbPassSnapshot>, expected: string[]) => ({ name, changes, expected });
  test.each([
    changed('a Service edited', { services: [editedWeb({ resourceVersion: '13', labels: { tier: 'edge' } }), ...snapshot().services.slice(1)] }, ['service shop/web changed (resourceVersion 10 → 13)']),
    changed('the approval annotation set', { services: [editedWeb({ resourceVersion: '13', annotations: { ...webAnnotations, 'cloudscale-ccm/approve-change': '0123456789' } }), ...snapshot().services.slice(1)] }, ['service shop/web changed (resourceVersion 10 → 13)']),
    changed('a Node joined', { nodes: [node('worker-1', '100'), node('worker-2', '101')] }, ['node worker-2 appeared']),
    changed('a Node left', { nodes: [] }, ['node worker-1 is gone']),
    changed('a Node relabelled', { nodes: [node('worker-1', '105', { role: 'edge' })] }, ['node worker-1 changed']),
    changed('a member disabled', { membersByPool: { 'pool-1': [{ ...member, enabled: false }] } }, ['members of pool tcp/http (pool-1) changed']),
    changed('the load balancer tagged', { loadBalancers: [{ ...lb, tags: { x: 'y' } }] }, ['load balancer k8s-service-uid-web (lb-1) changed']),
    changed('a pool that cannot be read', { unreadablePools: new Map([['pool-1', 'HTTP 500']]) }, ['members of pool tcp/http (pool-1) changed (now unreadable: HTTP 500)']),
    changed("a Node's server stopped", { servers: [server('s-1', 'worker-1', '10.0.0.1', 'stopped'), servers[1]!] }, ['server worker-1 (s-1) changed']),
    changed('the Floating IP of the load balancer moved', { floatingIps: [fip('192.0.2.10/32', null), floatingIps[1]!] }, ['floating IP 192.0.2.10/32 changed']),
    changed('a ClusterIP Service made a LoadBalancer', { services: [...snapshot().services.slice(0, 2), service('internal', '14')] }, ['service shop/internal appeared']),
  ])('changes when $name', ({ changes, expected }) => {
    const now = fingerprintOf(snapshot(changes), { names: [{ namespace: 'shop', name: 'web' }] });
    expect(fingerprintChanges(base, now)).toEqual(expected);
  });

  test("stays the same when a pass recorded its announcements on a Service (cloudscale-ccm/announced-changes): no input of any plan", () => {
    const announced = editedWeb({ resourceVersion: '13', annotations: { ...webAnnotations, 'cloudscale-ccm/announced-changes': '0123456789' } });
    const now = fingerprintOf(snapshot({ services: [announced, ...snapshot().services.slice(1)] }), { names: [{ namespace: 'shop', name: 'web' }] });
    expect(now['service shop/web']).toMatch(/^resourceVersion 13, /);
    expect(fingerprintChanges(base, now)).toEqual([]);
  });

  test("stays the same when a Node heartbeat bumped its resourceVersion, a ClusterIP Service changed, or another cluster's server", () => {
    const now = fingerprintOf(
      snapshot({
        nodes: [node('worker-1', '1000')],
        services: [...snapshot().services.slice(0, 2), service('internal', '99', 'ClusterIP')],
        servers: [servers[0]!, server('s-9', 'other-cluster-1', '10.0.0.9', 'stopped')],
      }),
      { names: [{ namespace: 'shop', name: 'web' }] },
    );
    expect(fingerprintChanges(base, now)).toEqual([]);
  });

  test("stays the same when members were checked or the load balancer's status moved with them: health is judged by planning again", () => {
    const checked = { ...member, monitor_status: 'up' } as MemberState;
    const unchecked = fingerprintOf(snapshot({ membersByPool: { 'pool-1': [{ ...member, monitor_status: 'changing' } as MemberState] } }), { names: [{ namespace: 'shop', name: 'web' }] });
    const now = fingerprintOf(
      snapshot({ membersByPool: { 'pool-1': [checked] }, loadBalancers: [{ ...lb, status: 'error' }] }),
      { names: [{ namespace: 'shop', name: 'web' }] },
    );
    expect(fingerprintChanges(unchecked, now)).toEqual([]);
    expect(fingerprintChanges(base, now)).toEqual([]);
  });

  test('a named Service that does not exist is fingerprinted as absent', () => {
    const print = fingerprintOf(snapshot(), { names: [{ namespace: 'shop', name: 'later' }] });
    expect(print['service shop/later']).toBe('absent');
  });
});

describe('planDifferences', () => {
  const saved = (actions: PlannedAction[]) => JSON.parse(JSON.stringify(planDocument({ nodes: null, services: [servicePlan('web', actions)] })));
  test.each([
    { name: 'the same actions', before: [act('create-pool', 'pool a', 'none')], after: [act('create-pool', 'pool a', 'none')], expected: [] },
    { name: 'a drain tagged at another time', before: [drainTag('2026-11-25T10:00:00.000Z')], after: [drainTag('2026-11-25T11:30:00.000Z')], expected: [] },
    {
      name: 'a drain period that ended meanwhile',
      before: [],
      after: [act('delete-member', 'member m1 of pool tcp/http', 'none')],
      expected: ['service shop/web: step 1 was nothing, is now delete-member member m1 of pool tcp/http'],
    },
    {
      name: 'another object',
      before: [act('create-pool', 'pool a', 'none'), act('create-listener', 'listener a', 'none')],
      after: [act('create-pool', 'pool a', 'none'), act('create-listener', 'listener b', 'none')],
      expected: ['service shop/web: step 2 was create-listener listener a, is now create-listener listener b'],
    },
    { name: 'one action fewer', before: [act('create-pool', 'pool a', 'none')], after: [], expected: ['service shop/web: step 1 was create-pool pool a, is now nothing'] },
    {
      name: 'the same action on the same object, with other fields',
      before: [act('create-pool', 'pool tcp/http', 'none', { text: 'wanted' }, { spec: { algorithm: 'source_ip', protocol: 'tcp' } })],
      after: [act('create-pool', 'pool tcp/http', 'none', { text: 'wanted' }, { spec: { algorithm: 'round_robin', protocol: 'tcp' } })],
      expected: ['service shop/web: step 1 (create-pool pool tcp/http) differs: spec.algorithm: saved "source_ip", planned now "round_robin"'],
    },
    {
      name: 'a field only one of them has, and a list entry',
      before: [act('update-listener', 'listener tcp/80', 'none', { text: 'wanted' }, { patch: { allowed_cidrs: ['10.0.0.0/8'] } })],
      after: [act('update-listener', 'listener tcp/80', 'none', { text: 'wanted' }, { patch: { allowed_cidrs: ['10.0.0.0/16'], timeout_client_data_ms: 50000 } })],
      expected: [
        'service shop/web: step 1 (update-listener listener tcp/80) differs: patch.allowed_cidrs[0]: saved "10.0.0.0/8", planned now "10.0.0.0/16", ' +
          'patch.timeout_client_data_ms: saved (none), planned now 50000',
      ],
    },
  ])('$name', ({ before, after, expected }) => {
    expect(planDifferences(saved(before), { services: [servicePlan('web', after)], nodeActions: null })).toEqual(expected);
  });

  test('a Service no longer planned, or planned only now', () => {
    expect(planDifferences(saved([]), { services: [servicePlan('api', [])], nodeActions: null })).toEqual([
      'service shop/web: no longer planned',
      'service shop/api: planned now, not in the saved plan',
    ]);
  });

  test('held-back actions are part of the saved plan: applying it approves them', () => {
    const full = [act('create-pool', 'pool b', 'none'), act('create-listener', 'listener b', 'pool-swap'), act('delete-pool', 'pool a', 'pool-swap', { text: 'wanted' }, { pool: { uuid: 'pool-a', href: '/pools/pool-a', name: 'a' } })];
    const budgeted = applyBudget(servicePlan('web', full), { seconds: 0 });
    expect(budgeted.held?.[0]?.actions.length).toBeGreaterThan(0);
    const document = JSON.parse(JSON.stringify(planDocument({ nodes: null, services: [budgeted] })));
    expect(planDifferences(document, { services: [servicePlan('web', full)], nodeActions: null })).toEqual([]);
    expect(planDifferences(document, { services: [budgeted], nodeActions: null })).toHaveLength(1);
  });
});
