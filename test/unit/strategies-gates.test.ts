// The member gate of src/core/lb/strategies/gates.ts on its own: which members that stay, are created
// or leave, with which monitor statuses, put an `await-members` step before the leaving ones,
// what it awaits, and when a MembersKept warning says that the members that stay are down.
import { describe, expect, test } from 'vitest';
import type { MemberState, MonitorStatus } from '../../src/core/cloudscale/types.js';
import type { DesiredMember, DesiredPool } from '../../src/core/lb/desired.js';
import { memberGate } from '../../src/core/lb/strategies/gates.js';
import { Steps } from '../../src/core/lb/strategies/steps.js';

const SUBNET = { href: 'https://api.example/v1/subnets/a', uuid: 'a', cidr: '10.0.0.0/24' };

function actual(name: string, status: MonitorStatus, enabled = true): MemberState {
  const [address, port] = name.split(':') as [string, string];
  return { href: `https://api.example/v1/members/${name}`, uuid: name, name, enabled, protocol_port: Number(port), monitor_port: null, address, subnet: SUBNET, monitor_status: status };
}

function wanted(name: string): DesiredMember {
  const [address, port] = name.split(':') as [string, string];
  return { name, enabled: true, protocol_port: Number(port), monitor_port: Number(port), address, subnet: SUBNET, node: `node-${address}` };
}

const POOL: DesiredPool = {
  name: 'tcp/http',
  algorithm: 'round_robin',
  protocol: 'tcp',
  port: { name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 },
  members: [],
  listener: { name: 'tcp/80', protocol: 'tcp', protocol_port: 80, allowed_cidrs: [], timeout_client_data_ms: 50000, timeout_member_connect_ms: 5000, timeout_member_data_ms: 50000 },
  monitor: { type: 'tcp', delay_s: 2, timeout_s: 1, up_threshold: 2, down_threshold: 3, http: null },
};

function gate(staying: MemberState[], created: string[], leaving: MemberState[], added = created) {
  return memberGate(new Steps(undefined), {
    pool: { ref: { uuid: 'pool' }, name: POOL.name },
    desired: POOL,
    staying,
    created: created.map(wanted),
    added: added.map(wanted),
    leaving,
    reason: (m) => ({ text: `${m.name} leaves` }),
    monitor: undefined,
    nodeOf: () => undefined,
  });
}

describe('memberGate', () => {
  test.each([
    // title, staying, created, leaving → awaited (null: no gate), warned
    ['nothing leaves that may serve', [actual('a:1', 'down')], [], [actual('b:1', 'down')], null, false],
    ['a disabled member leaves', [actual('a:1', 'down')], [], [actual('b:1', 'up', false)], null, false],
    ['one that stays is up, none added', [actual('a:1', 'up'), actual('c:1', 'down')], [], [actual('b:1', 'up')], null, false],
    ['one that stays is up, one added: the added one is awaited', [actual('a:1', 'up')], ['c:1'], [actual('b:1', 'up')], ['c:1'], false],
    ['none that stays is up, one added: all are awaited', [actual('a:1', 'down')], ['c:1'], [actual('b:1', 'up')], ['a:1', 'c:1'], false],
    ['none added, those that stay not checked yet', [actual('a:1', 'changing')], [], [actual('b:1', 'up')], ['a:1'], false],
    ['none added, those that stay down: awaited, and warned', [actual('a:1', 'down')], [], [actual('b:1', 'up')], ['a:1'], true],
    ['a leaving member not checked yet is protected too', [actual('a:1', 'down')], [], [actual('b:1', 'changing')], ['a:1'], true],
    ['nothing stays: the caller decides', [], [], [actual('b:1', 'up')], null, false],
  ] as const)('%s', (_title, staying, created, leaving, awaited, warned) => {
    const result = gate([...staying], [...created], [...leaving]);
    if (awaited === null) expect(result.step).toBeUndefined();
    else expect(result.step).toMatchObject({ kind: 'await-members', members: awaited, protects: { members: leaving.filter((m) => m.enabled).map((m) => m.name) } });
    expect(result.warning?.reason === 'MembersKept').toBe(warned);
  });
});
