// The downtime budget against real plans of the planner (the in-test cloud model of
// test/support/lb-world.ts): which actions run now, which are held with everything that needs
// them, the change id, approval, and that the held actions go back to their places.
import { describe, expect, test } from 'vitest';
import {
  announcements,
  applyBudget,
  approves,
  changeId,
  formatSeconds,
  heldChange,
  interruptionSeconds,
  restoreHeld,
} from '../../src/core/plan/budget.js';
import { LB_ANNOTATIONS, approvalOf } from '../../src/core/lb/annotations.js';
import { downtimeOf } from '../../src/core/lb/impact.js';
import type { ServicePlan } from '../../src/core/lb/service-plan.js';
import { renderPlanText } from '../../src/core/render/plan.js';
import { planDocument } from '../../src/core/plan/document.js';
import { converged, node, P, server, svc, World } from '../support/lb-world.js';

const shape = (actions: ServicePlan['actions']) => actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`);
const twoPorts = () => svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]);

describe('interruptionSeconds', () => {
  test.each([
    ['none', 0],
    ['member-drain', 0],
    ['member-rotation', 0],
    ['minimal', 0],
    ['pool-swap', 45],
    ['listener-recreation', 45],
    ['port-removal', Number.POSITIVE_INFINITY],
    ['no-members', Number.POSITIVE_INFINITY],
    ['lb-deletion', Number.POSITIVE_INFINITY],
  ] as const)('%s → %s s', (impact, seconds) => {
    expect(interruptionSeconds(downtimeOf(impact))).toBe(seconds);
  });
});

describe('what is held, against real plans', () => {
  test('pool swap under 0s: the successor is built now; the wait for it, the listener move and the retirement of the old pool are held', () => {
    const w = converged(twoPorts());
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const full = w.plan();
    const budgeted = applyBudget(full, { seconds: 0 });
    const held = budgeted.held![0]!;
    expect(held.actions.some((a) => a.kind === 'create-pool' || a.kind === 'create-member' || a.kind === 'create-monitor')).toBe(false);
    expect(held.actions.some((a) => a.kind === 'delete-listener')).toBe(true);
    expect(held.actions.some((a) => a.kind === 'create-listener')).toBe(true);
    // The old pools are not deleted while they still serve.
    expect(budgeted.actions.filter((a) => a.kind === 'delete-pool' || a.kind === 'delete-member' || a.kind === 'delete-monitor')).toEqual([]);
    expect(budgeted.actions.filter((a) => a.kind === 'create-pool')).toHaveLength(2);
    expect(budgeted.actions.filter((a) => a.kind === 'await-members')).toHaveLength(0);
    expect(held.actions.filter((a) => a.kind === 'await-members')).toHaveLength(2);
    expect(held.downtime).toEqual(downtimeOf('pool-swap'));
    expect(held.budgetSeconds).toBe(0);
    expect(held.reason).toContain('budget of 0s');
    expect(restoreHeld(budgeted)).toEqual(full);
  });

  test('pool swap under 45s (20 s, and 25 s of retries of a failed request): nothing held', () => {
    const w = converged();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const full = w.plan();
    expect(applyBudget(full, { seconds: 45 })).toEqual(full);
    expect(applyBudget(full, { seconds: 44 }).held).toHaveLength(1);
  });

  test('the pass after the successor was built holds the same change (same id)', () => {
    const w = converged();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const first = applyBudget(w.plan(), { seconds: 0 });
    w.apply(first.actions);
    const second = applyBudget(w.plan(), { seconds: 0 });
    expect(second.actions).toEqual([]);
    expect(second.held![0]!.id).toBe(first.held![0]!.id);
    expect(shape(second.held![0]!.actions)).toEqual(shape(first.held![0]!.actions));
    // Approving it runs the rest: the state converges.
    const approved = applyBudget(w.plan(), { seconds: 0, approval: second.held![0]!.id });
    expect(approved.held).toBeUndefined();
    w.apply(approved.actions);
    expect(w.plan().actions).toEqual([]);
  });

  test('port removal: never held, whatever the budget (its node port is released); the other port untouched', () => {
    const w = converged(twoPorts());
    w.service.spec!.ports!.pop();
    const full = w.plan();
    expect(shape(full.actions)).toEqual([
      'delete-listener listener tcp/443 [port-removal]',
      'delete-monitor health monitor of pool tcp/https [port-removal]',
      'delete-member member 10.0.0.1:30443 of pool tcp/https [port-removal]',
      'delete-member member 10.0.0.2:30443 of pool tcp/https [port-removal]',
      'delete-pool pool tcp/https [port-removal]',
    ]);
    for (const seconds of [0, 14, 3600]) expect(applyBudget(full, { seconds })).toEqual(full);
    expect(heldChange(full, 0)).toBeNull();
  });

  test('port removal beside a held pool swap: the port leaves now, the swap of the other port is held', () => {
    const w = converged(twoPorts());
    w.service.spec!.ports!.pop();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const budgeted = applyBudget(w.plan(), { seconds: 0 });
    const running = shape(budgeted.actions);
    expect(running.filter((line) => line.includes('tcp/https') || line.includes('tcp/443'))).toEqual([
      'delete-listener listener tcp/443 [port-removal]',
      'delete-monitor health monitor of pool tcp/https [port-removal]',
      'delete-member member 10.0.0.1:30443 of pool tcp/https [port-removal]',
      'delete-member member 10.0.0.2:30443 of pool tcp/https [port-removal]',
      'delete-pool pool tcp/https [port-removal]',
    ]);
    const held = budgeted.held![0]!;
    expect(held.actions.some((a) => a.impact === 'port-removal')).toBe(false);
    expect(held.actions.filter((a) => a.kind === 'delete-listener').map((a) => a.object)).toEqual(['listener tcp/80']);
  });

  test('port removal while a new node joins the other port: both run under 0s', () => {
    const w = converged(twoPorts());
    w.service.spec!.ports!.pop();
    w.servers.push(server(3));
    w.nodes.push(node(3));
    const full = w.plan();
    const budgeted = applyBudget(full, { seconds: 0 });
    expect(budgeted).toEqual(full);
    expect(shape(budgeted.actions)).toContain('create-member member 10.0.0.3:30080 of pool tcp/http [minimal]');
    expect(budgeted.actions.filter((a) => a.impact === 'port-removal')).toHaveLength(5);
  });

  test('two ports swap numbers (listener recreation, 45 s with retries): the listeners are deleted and re-created, held together under 44s', () => {
    const w = converged(twoPorts());
    const [http, https] = w.service.spec!.ports!;
    [http!.port, https!.port] = [https!.port, http!.port];
    const full = w.plan();
    const budgeted = applyBudget(full, { seconds: 0 });
    const heldShape = shape(budgeted.held![0]!.actions);
    expect(heldShape.filter((l) => l.startsWith('delete-listener'))).toHaveLength(2);
    expect(heldShape.filter((l) => l.startsWith('create-listener'))).toHaveLength(2);
    expect(budgeted.actions.filter((a) => a.kind === 'delete-listener' || a.kind === 'create-listener')).toEqual([]);
    expect(applyBudget(full, { seconds: 44 }).held![0]!.actions).toEqual(budgeted.held![0]!.actions);
    expect(applyBudget(full, { seconds: 45 }).held).toBeUndefined();
  });

  test('a port number change moves the listener in place (port-move, up to 20 s): never held, the old number is one the Service no longer has', () => {
    const w = converged();
    w.service.spec!.ports![0]!.port = 8080;
    const full = w.plan();
    expect(shape(full.actions)).toEqual(['update-listener listener tcp/80 [port-move]']);
    expect(interruptionSeconds(full.actions[0]!.downtime)).toBe(20);
    for (const seconds of [0, 19]) expect(applyBudget(full, { seconds })).toEqual(full);
  });

  test('a pool swap that changes the port number too: the old number leaves and the new listener is created in the same pass under 0s', () => {
    const w = converged();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    w.service.spec!.ports![0]!.port = 8080;
    const full = w.plan();
    expect(shape(full.actions).filter((l) => l.includes('listener'))).toEqual([
      'create-listener listener tcp/8080 [port-move]',
      'delete-listener listener tcp/80 [port-removal]',
    ]);
    expect(applyBudget(full, { seconds: 0 })).toEqual(full);
    w.apply(full.actions);
    expect(w.plan().actions).toEqual([]);
  });

  test('member rotation (node port change) and drain (node leaves): not held under 0s', () => {
    const w = converged();
    w.service.spec!.ports![0]!.nodePort = 31080;
    const rotation = w.plan();
    expect(rotation.actions.some((a) => a.kind === 'await-members')).toBe(true);
    expect(applyBudget(rotation, { seconds: 0 })).toEqual(rotation);

    const d = converged();
    d.drain = { seconds: 60, nowMs: Date.parse('2026-01-01T00:00:00Z') };
    d.nodes.pop();
    const drain = d.plan();
    expect(drain.actions.some((a) => a.impact === 'member-drain')).toBe(true);
    expect(applyBudget(drain, { seconds: 0 })).toEqual(drain);
  });

  test('the last members leaving without drain (no-members) are held', () => {
    const w = converged(svc(undefined, { [`${P}loadbalancer-node-selector`]: 'role=web' }), (x) => (x.nodes = [node(1, { role: 'web' }), node(2, { role: 'web' })]));
    w.nodes = [node(1), node(2)];
    const full = w.plan();
    const noMembers = full.actions.filter((a) => a.impact === 'no-members');
    expect(noMembers.length).toBeGreaterThan(0);
    expect(applyBudget(full, { seconds: 3600 }).held![0]!.actions).toEqual(noMembers);
  });

  test('a new load balancer is never held, nor a deletion', () => {
    const fresh = new World(svc()).plan();
    expect(applyBudget(fresh, { seconds: 0 })).toEqual(fresh);
    const w = converged();
    w.service.spec!.type = 'ClusterIP';
    const removal = w.plan();
    expect(removal.mode).toBe('delete');
    expect(removal.actions.some((a) => a.impact === 'lb-deletion')).toBe(true);
    expect(applyBudget(removal, { seconds: 0 })).toEqual(removal);
  });
});

describe('change id and approval', () => {
  const swapPlan = (algorithm: string, uid = 'uid-web') => {
    const w = converged();
    w.service.metadata!.uid = uid;
    w.annotate({ 'loadbalancer-pool-algorithm': algorithm });
    return w.plan();
  };

  test('short, stable for the same change, different for another change or Service', () => {
    const a = heldChange(swapPlan('least_connections'), 0)!.id;
    expect(a).toMatch(/^[0-9a-f]{10}$/);
    expect(heldChange(swapPlan('least_connections'), 0)!.id).toBe(a);
    expect(heldChange(swapPlan('source_ip'), 0)!.id).not.toBe(a);
    expect(heldChange(swapPlan('least_connections', 'uid-other'), 0)!.id).not.toBe(a);
    expect(changeId('u', [])).not.toBe(changeId('v', []));
  });

  test('a change that comes back after it was applied gets another id: an approval left on the Service does not approve it again', () => {
    const w = converged();
    const approveAndApply = (algorithm: string): string => {
      w.annotate({ 'loadbalancer-pool-algorithm': algorithm });
      const id = applyBudget(w.plan(), { seconds: 0 }).held![0]!.id;
      w.apply(applyBudget(w.plan(), { seconds: 0, approval: id }).actions);
      expect(w.plan().actions).toEqual([]);
      return id;
    };
    const first = approveAndApply('least_connections');
    approveAndApply('round_robin');
    // The first change again: the same fields, from and to, but other objects to replace.
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const again = applyBudget(w.plan(), { seconds: 0, approval: first });
    expect(again.held![0]!.id).not.toBe(first);
    // Stable while it is pending: the pass after the successor was built holds it under the same id.
    w.apply(again.actions);
    expect(applyBudget(w.plan(), { seconds: 0, approval: first }).held![0]!.id).toBe(again.held![0]!.id);
  });

  test('members removed, restored, removed again (a selector reverted and re-applied): another id, the approval left approves nothing', () => {
    const w = converged(svc(), (x) => (x.nodes = [node(1, { role: 'web' }), node(2, { role: 'web' })]));
    const selector = (value: string | null) => w.annotate({ 'loadbalancer-node-selector': value });
    selector('role=none');
    const first = applyBudget(w.plan(), { seconds: 0 }).held![0]!;
    expect(first.actions.map((a) => `${a.kind} ${a.object} [${a.impact}]`)).toEqual([
      'delete-member member 10.0.0.1:30080 of pool tcp/http [no-members]',
      'delete-member member 10.0.0.2:30080 of pool tcp/http [no-members]',
    ]);
    w.apply(applyBudget(w.plan(), { seconds: 0, approval: first.id }).actions);
    // Reverted: the members come back (new members, new UUIDs), not held.
    selector(null);
    w.apply(applyBudget(w.plan(), { seconds: 0, approval: first.id }).actions);
    expect(w.members[w.pools[0]!.uuid]).toHaveLength(2);
    // Re-applied: the same field, from and to, the same member names, other members.
    selector('role=none');
    const again = applyBudget(w.plan(), { seconds: 0, approval: first.id });
    expect(again.held![0]!.id).not.toBe(first.id);
    expect(again.actions.filter((a) => a.kind === 'delete-member')).toEqual([]);
    // Stable while pending.
    expect(applyBudget(w.plan(), { seconds: 0 }).held![0]!.id).toBe(again.held![0]!.id);
  });

  test.each([
    ['delete-member', { kind: 'delete-member', member: { uuid: 'm-1' } }, { kind: 'delete-member', member: { uuid: 'm-2' } }],
    ['update-member', { kind: 'update-member', member: { uuid: 'm-1' } }, { kind: 'update-member', member: { uuid: 'm-2' } }],
    ['delete-listener', { kind: 'delete-listener', listener: { uuid: 'l-1' } }, { kind: 'delete-listener', listener: { uuid: 'l-2' } }],
    ['delete-pool', { kind: 'delete-pool', pool: { uuid: 'p-1' } }, { kind: 'delete-pool', pool: { uuid: 'p-2' } }],
    ['delete-monitor', { kind: 'delete-monitor', monitor: { uuid: 'h-1' } }, { kind: 'delete-monitor', monitor: { uuid: 'h-2' } }],
  ])('the id binds the object a held %s removes or alters, by UUID', (_, a, b) => {
    const trigger = { kind: 'delete-listener', object: 'listener tcp/80', reason: { text: 'x', field: 'f', from: '1', to: '2' } } as unknown as ServicePlan['actions'][number];
    const held = (o: object) => [{ ...trigger, ...o, reason: trigger.reason } as unknown as ServicePlan['actions'][number]];
    expect(changeId('u', [trigger], held(a))).not.toBe(changeId('u', [trigger], held(b)));
    expect(changeId('u', [trigger], held(a))).toBe(changeId('u', [trigger], held(a)));
  });

  test('an approval of a change that grew or shrank since approves nothing: the whole change stays held under another id', () => {
    const w = converged(twoPorts());
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const approved = applyBudget(w.plan(), { seconds: 0 }).held![0]!;
    // Changed: port 443 removed before the approval's pass (its removal runs at once, unheld).
    const removed = w.service.spec!.ports!.pop()!;
    const grown = applyBudget(w.plan(), { seconds: 0, approval: approved.id });
    expect(grown.held![0]!.id).not.toBe(approved.id);
    expect(grown.actions.filter((a) => a.kind === 'delete-listener' || a.kind === 'delete-pool').map((a) => a.object)).toEqual(['listener tcp/443', 'pool tcp/https']);
    // Shrunk: only port 80 is swapped (a one-port Service with the same change).
    const one = converged();
    one.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const shrunk = applyBudget(one.plan(), { seconds: 0, approval: approved.id });
    expect(shrunk.held![0]!.id).not.toBe(approved.id);
    expect(shrunk.actions.filter((a) => a.kind === 'delete-listener')).toEqual([]);
    w.service.spec!.ports!.push(removed);
    expect(applyBudget(w.plan(), { seconds: 0, approval: approved.id }).held).toBeUndefined();
  });

  test.each([
    ['the right id', (id: string) => id, false],
    ['the right id with spaces around', (id: string) => ` ${id}\n`, false],
    ['a stale id', () => '0123456789', true],
    ['an empty value', () => '', true],
    ['no approval', () => null, true],
  ])('%s → held: %s', (_, approval, held) => {
    const full = swapPlan('least_connections');
    const id = heldChange(full, 0)!.id;
    const budgeted = applyBudget(full, { seconds: 0, approval: approval(id) });
    expect(budgeted.held !== undefined).toBe(held);
    expect(restoreHeld(budgeted)).toEqual(full);
  });

  test('applying the budget to a budgeted plan is the same as to the full plan', () => {
    const full = swapPlan('least_connections');
    const once = applyBudget(full, { seconds: 0 });
    expect(applyBudget(once, { seconds: 0 })).toEqual(once);
    expect(applyBudget(once, { seconds: 60 })).toEqual(full);
  });
});

describe('approves: the one comparison of an approval with a held change', () => {
  const change = { id: 'a1b2c3d4e5' };
  const annotated = (value: string) => approvalOf({ [LB_ANNOTATIONS.approveChange.key]: value });
  test.each<[string, string | null, boolean]>([
    ['no approval', null, false],
    ['the id of the change', 'a1b2c3d4e5', true],
    ['the id of another change', '0000000000', false],
    ['the id with blanks around, as BudgetInput may carry it', ' a1b2c3d4e5\n', true],
    ['the annotation with blanks around the id (the parser trims it)', annotated(' a1b2c3d4e5\n'), true],
    ['the annotation naming another change', annotated('0000000000'), false],
    ['a malformed annotation (reported by the plan, approves nothing)', annotated('yes please'), false],
  ])('%s', (_name, approval, expected) => {
    expect(approves(approval, change)).toBe(expected);
  });
});

describe('announcements', () => {
  const held = () => {
    const w = converged();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    return applyBudget(w.plan(), { seconds: 0 });
  };

  test('one ChangeHeld per held change, naming what, the downtime, the budget and both ways to approve', () => {
    const plan = held();
    const id = plan.held![0]!.id;
    const [event, ...rest] = announcements(plan, null);
    expect(rest).toEqual([]);
    expect(event).toMatchObject({ token: id, reason: 'ChangeHeld' });
    // The listener move is what interrupts traffic; the wait before it is one of the 'more'.
    expect(event!.message).toMatch(new RegExp(`^Held back change ${id}: delete-listener listener tcp/80 and \\d+ more actions; `));
    expect(event!.message).toContain('up to ~20 s');
    expect(event!.message).toContain('over the budget of 0s');
    expect(event!.message).toContain(`kubectl annotate service -n shop web --overwrite cloudscale-ccm/approve-change=${id}`);
    expect(event!.message).toContain('cloudscale-ccm plan service/web -n shop --out FILE, then cloudscale-ccm apply FILE');
  });

  test('an approval of another change adds one ApprovalMismatch, its token made of the approval and the pending id', () => {
    const plan = held();
    const id = plan.held![0]!.id;
    expect(announcements(plan, id).map((a) => a.reason)).toEqual(['ChangeHeld']);
    const [, mismatch] = announcements(plan, 'abc,def');
    expect(mismatch).toMatchObject({ token: `abc_def!${id}`, reason: 'ApprovalMismatch' });
    expect(mismatch!.message).toContain(`The approval abc,def (annotation cloudscale-ccm/approve-change) does not match the pending change ${id}: nothing is approved.`);
  });

  test('nothing held: nothing to announce, whatever the approval says', () => {
    const plan = converged().plan();
    expect(announcements(plan, '0123456789')).toEqual([]);
  });

  test.each([
    [0, '0s'],
    [15, '15s'],
    [90, '1m30s'],
    [3600, '1h'],
    [5400, '1h30m'],
    [0.5, '0.5s'],
    [60.7, '1m0.7s'],
    [0.0015, '0.002s'],
    [360_000_000.5, '100000h0.5s'],
  ])('formatSeconds(%s) = %s', (seconds, text) => {
    expect(formatSeconds(seconds)).toBe(text);
  });
});

describe('plan --max-downtime (text and summary)', () => {
  test('the held change is shown apart with its id, budget and approvals; the summary counts it as pending', () => {
    const w = converged();
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const plan = applyBudget(w.plan(), { seconds: 0 });
    const id = plan.held![0]!.id;
    const document = planDocument({ nodes: null, services: [plan] });
    expect(document.summary).toMatchObject({ held: 1, changes: true });
    const text = renderPlanText(document, { color: false });
    expect(text).toContain(`held back: change ${id} (over the budget of 0s: the port is unreachable only while its listener moves`);
    expect(text).toContain('- delete-listener  listener tcp/80');
    expect(text).toContain(`cloudscale-ccm/approve-change=${id}`);
    expect(text).toMatch(/Plan: .*1 change held back/);
    expect(text).not.toContain('No changes.');
  });

  test('held actions line up with the plan\'s other actions: every object starts in one column', () => {
    const w = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]));
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const text = renderPlanText(planDocument({ nodes: null, services: [applyBudget(w.plan(), { seconds: 0 })] }), { color: false });
    const actionLines = text.split('\n').filter((line) => /^\s+[-+~!*…] [a-z-]+ +\S/.test(line));
    expect(actionLines.some((line) => line.startsWith('    '))).toBe(true);
    const columns = new Set(actionLines.map((line) => line.search(/(?<=[a-z] {2,})\S/)));
    expect([...columns]).toHaveLength(1);
  });
});
