// serviceLbView and its text: whether a listener port serves and, when not, why, from the
// members' `enabled`, monitor status, drain tag and checked port. Pure, table-driven.
import { describe, expect, test } from 'vitest';
import type { HealthMonitor, Listener, LoadBalancer, Pool, PoolMember } from '../../src/core/cloudscale/types.js';
import { MEMBER_DRAINING_TAG } from '../../src/core/lb/strategies/member-drain.js';
import { serviceLbText } from '../../src/core/render/status-service.js';
import { serviceLbView, type ServiceLbInput } from '../../src/core/status/service-view.js';

const stub = (uuid: string) => ({ href: `https://api/${uuid}`, uuid, name: uuid });
const lb = { ...stub('lb-1'), name: 'k8s-service-u1', created_at: '', status: 'running', zone: { slug: 'rma1' }, flavor: { slug: 'lb-standard', name: '' }, vip_addresses: [{ version: 4, address: '198.18.0.5', subnet: stub('s') }], tags: {} } as unknown as LoadBalancer;
const pool = { ...stub('pool-1'), name: 'tcp/http', created_at: '', load_balancer: stub('lb-1'), algorithm: 'round_robin', protocol: 'tcp', tags: {} } as Pool;
const listener = { ...stub('l-1'), name: 'tcp/80', created_at: '', pool: stub('pool-1'), load_balancer: stub('lb-1'), protocol: 'tcp', protocol_port: 80, allowed_cidrs: [], timeout_client_data_ms: 0, timeout_member_connect_ms: 0, timeout_member_data_ms: 0, tags: {} } as Listener;
const monitor = { ...stub('m-1'), created_at: '', pool: stub('pool-1'), load_balancer: stub('lb-1'), delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3, type: 'http', http: { expected_codes: ['200'], method: 'GET', url_path: '/livez', version: '1.0', host: null }, tags: {} } as HealthMonitor;

function member(i: number, over: Partial<PoolMember> = {}): PoolMember {
  return {
    ...stub(`mem-${i}`),
    name: `10.0.0.${i}:30080`,
    created_at: '',
    enabled: true,
    pool: stub('pool-1'),
    load_balancer: stub('lb-1'),
    protocol_port: 30080,
    monitor_port: 31000,
    address: `10.0.0.${i}`,
    subnet: { href: '', uuid: 's', cidr: '10.0.0.0/24' },
    monitor_status: 'up',
    tags: {},
    ...over,
  };
}

const now = Date.parse('2026-11-25T12:00:00Z');
function input(members: readonly PoolMember[], over: Partial<ServiceLbInput> = {}): ServiceLbInput {
  return {
    service: { namespace: 'default', name: 'web' },
    lb,
    pools: [{ pool, members }],
    listeners: [listener],
    monitors: [monitor],
    nodeByAddress: new Map([['10.0.0.1', 'node-1'], ['10.0.0.2', 'node-2'], ['10.0.0.3', 'node-3']]),
    drainSeconds: 60,
    nowMs: now,
    ...over,
  };
}
const draining = { [MEMBER_DRAINING_TAG]: '2026-11-25T11:59:30.000Z' };

describe('whether a port serves, and why not', () => {
  test.each<[string, ServiceLbInput, boolean, string[]]>([
    ['every member up', input([member(1), member(2)]), true, []],
    ['one up of two', input([member(1), member(2, { monitor_status: 'down' })]), true, []],
    ['no monitor: enabled members take traffic', input([member(1, { monitor_status: 'no_monitor' })], { monitors: [] }), true, []],
    [
      'every member down: the check, its port, the nodes',
      input([member(1, { monitor_status: 'down' }), member(2, { monitor_status: 'down' })]),
      false,
      ['the http GET /livez check on port 31000 fails on node-1 (10.0.0.1), node-2 (10.0.0.2)'],
    ],
    [
      'members down on different checked ports',
      input([member(1, { monitor_status: 'down' }), member(2, { monitor_status: 'down', monitor_port: null })]),
      false,
      ['the http GET /livez check on port 30080 fails on node-2 (10.0.0.2)', 'the http GET /livez check on port 31000 fails on node-1 (10.0.0.1)'],
    ],
    [
      'one draining, one not checked yet, one of no node',
      input([member(1, { enabled: false, monitor_status: 'unknown', tags: draining }), member(2, { monitor_status: 'changing' }), member(9, { monitor_status: 'down' })]),
      false,
      ['1 member disabled (1 draining): node-1 (10.0.0.1)', 'the http GET /livez check on port 31000 fails on no node (10.0.0.9)', '1 member not checked yet (changing): node-2 (10.0.0.2)'],
    ],
    ['no members', input([]), false, ['pool tcp/http has no members']],
    ['a listener without pool', input([member(1)], { listeners: [{ ...listener, pool: null }] }), false, ['the listener has no pool']],
  ])('%s', (_name, given, serving, why) => {
    const view = serviceLbView(given);
    expect(view.listeners[0]).toMatchObject({ serving, why });
  });

  test('a draining member: since, and until since + --drain-seconds; a tag that is no time has no end', () => {
    const view = serviceLbView(input([member(1, { enabled: false, tags: draining }), member(2, { enabled: false, tags: { [MEMBER_DRAINING_TAG]: 'soon' } })]));
    expect(view.pools[0]!.members.map((m) => m.draining)).toEqual([
      { since: '2026-11-25T11:59:30.000Z', until: '2026-11-25T12:00:30.000Z' },
      { since: 'soon', until: null },
    ]);
  });
});

describe('serviceLbText', () => {
  test('the load balancer, each port, the pool with its check, one aligned line per member', () => {
    const text = serviceLbText(serviceLbView(input([member(1, { monitor_status: 'down' }), member(2, { enabled: false, monitor_status: 'unknown', tags: draining })])));
    expect(text).toBe(
      [
        'service default/web: load balancer k8s-service-u1 (lb-1), running, rma1, VIP 198.18.0.5',
        'listeners:',
        '  tcp/80 → pool tcp/http: NOT serving: 1 member disabled (1 draining): node-2 (10.0.0.2); the http GET /livez check on port 31000 fails on node-1 (10.0.0.1)',
        'pool tcp/http (tcp, round_robin; health check http GET /livez every 2 s, up after 2, down after 3):',
        '  node-1  10.0.0.1:30080  enabled   down     checked on port 31000',
        '  node-2  10.0.0.2:30080  disabled  unknown  checked on port 31000; draining since 2026-11-25T11:59:30.000Z, removed by the first pass after 2026-11-25T12:00:30.000Z (--drain-seconds 60)',
        '',
      ].join('\n'),
    );
  });

  test('no load balancer found', () => {
    expect(serviceLbText(serviceLbView(input([], { lb: null })))).toMatch(/^service default\/web: no load balancer found .*\n {2}a pass creates it; `cloudscale-ccm plan -n default service\/web` shows what it would do\n$/);
  });
});
