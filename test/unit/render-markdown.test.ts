// `plan -o markdown` on exact output: the summary, one table per Service with impact, downtime
// and whether the budget holds the change back, the nodes, and names that try to be Markdown.
import { describe, expect, test } from 'vitest';
import type { Reason } from '../../src/core/lb/actions.js';
import { applyBudget } from '../../src/core/plan/budget.js';
import { downtimeOf } from '../../src/core/lb/impact.js';
import type { NodeAction } from '../../src/core/nodes/types.js';
import { JOINER, markdownText, renderPlanMarkdown } from '../../src/core/render/markdown.js';
import { renderPlanText } from '../../src/core/render/plan.js';
import { planDocument } from '../../src/core/plan/document.js';
import { act, servicePlan } from '../support/plan-fixtures.js';
import { converged, svc } from '../support/lb-world.js';

const swap: Reason = { text: 'the pool algorithm cannot change in place', field: 'k8s.cloudscale.ch/loadbalancer-pool-algorithm', from: 'round_robin', to: 'source_ip' };

describe('renderPlanMarkdown', () => {
  test('counts held changes as the text and the JSON do: one change of a two-port pool swap, with its actions', () => {
    const w = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]));
    w.annotate({ 'loadbalancer-pool-algorithm': 'least_connections' });
    const plan = applyBudget(w.plan(), { seconds: 0 });
    const document = planDocument({ nodes: null, services: [plan] });
    expect(document.summary.held).toBe(1);
    expect(renderPlanText(document, { color: false })).toContain('1 change held back');
    const actions = plan.held![0]!.actions.length;
    expect(actions).toBeGreaterThan(1);
    expect(renderPlanMarkdown(document)).toContain(`**1 change held back** (${actions} actions over the downtime budget)`);
  });

  test('nothing to do', () => {
    expect(renderPlanMarkdown(planDocument({ nodes: null, services: [servicePlan('web', [])] }))).toBe(
      ['### cloudscale-ccm plan', '', '**No changes.** The cloud and the cluster match the desired state.', '', 'Unchanged: shop/web.', ''].join('\n'),
    );
  });

  test('a Service table with impact and downtime, held-back actions marked with why, and the nodes', () => {
    const plan = applyBudget(
      servicePlan('web', [act('create-pool', 'pool tcp/http-2', 'none', swap), act('create-listener', 'listener tcp/80', 'pool-swap', swap), act('create-member', 'member worker-3 of pool tcp/http', 'minimal')]),
      { seconds: 0 },
    );
    const initialize = {
      kind: 'initialize',
      node: 'worker-3',
      object: 'node/worker-3',
      verb: 'update',
      reason: { text: 'the node is not initialised', field: 'spec.providerID', from: null, to: 'cloudscale://5e00' },
      changes: [],
      impact: 'none',
    } as unknown as NodeAction;
    const document = planDocument({ nodes: { actions: [initialize], unchanged: 2, deletionRefusal: null }, services: [plan, servicePlan('api', [])] });
    const heldId = plan.held![0]!.id;
    const swapDowntime = downtimeOf('pool-swap').text;
    expect(renderPlanMarkdown(document)).toBe(
      [
        '### cloudscale-ccm plan',
        '',
        `**Plan:** ${document.summary.create} to create, 0 to update, 0 to delete, **1 change held back** (1 action over the downtime budget), 1 node change. ` +
          (document.summary.worstDowntime === null ? 'Expected downtime: none.' : `Worst expected downtime: ${markdownText(document.summary.worstDowntime.service)}, ${markdownText(document.summary.worstDowntime.object)} (${document.summary.worstDowntime.impact}): ${markdownText(document.summary.worstDowntime.text)}.`),
        '',
        '#### Service shop/web — load balancer k8s-service-uid-web',
        '',
        '| Change | Object | Why | Impact | Downtime | Held back |',
        '|---|---|---|---|---|---|',
        `| \`create-pool\` | pool tcp/http-2 | the pool algorithm cannot change in place \\(k8s.cloudscale.ch/loadbalancer-pool-algorithm: round\\_robin → source\\_ip\\) | none | ${markdownText(downtimeOf('none').text)} | no |`,
        `| \`create-listener\` | listener tcp/80 | the pool algorithm cannot change in place \\(k8s.cloudscale.ch/loadbalancer-pool-algorithm: round\\_robin → source\\_ip\\) | pool-swap | ${markdownText(swapDowntime)} | **yes** |`,
        `| \`create-member\` | member worker-3 of pool tcp/http | wanted | minimal | ${markdownText(downtimeOf('minimal').text)} | no |`,
        '',
        `- **held back** (change \`${heldId}\`): ${markdownText(plan.held![0]!.reason)}`,
        '',
        '#### Nodes',
        '',
        '| Change | Object | Why | Impact |',
        '|---|---|---|---|',
        `| \`initialize\` | node/worker-3 | the node is not initialised \\(spec.providerID: \\(none\\) → cloudscale:${JOINER}//5e00\\) | none |`,
        '',
        'Unchanged: shop/api.',
        '',
      ].join('\n'),
    );
  });

  test('a run of actions with one reason and impact is one row; held and running actions never share one', () => {
    const members = ['member a of pool tcp/http', 'member b of pool tcp/http'].map((object) => act('create-member', object, 'none', swap));
    const text = renderPlanMarkdown(planDocument({ nodes: null, services: [servicePlan('web', [act('create-pool', 'pool tcp/http', 'none', swap), ...members])] }));
    expect(text).toContain('| `create-pool`, `create-member` ×2 | pool tcp/http<br>member a of pool tcp/http<br>member b of pool tcp/http | the pool algorithm');

    const steps = [act('delete-listener', 'listener tcp/80', 'pool-swap', swap), act('create-listener', 'listener tcp/80', 'pool-swap', swap)];
    const plan = { ...servicePlan('web', [steps[0]!]), held: [{ id: 'abc', actions: [steps[1]!], positions: [1], downtime: steps[1]!.downtime, budgetSeconds: 0, reason: 'over budget' }] };
    const rows = renderPlanMarkdown(planDocument({ nodes: null, services: [plan] })).split('\n').filter((line) => line.startsWith('| `'));
    expect(rows.map((line) => line.split(' | ')[0] + ' … ' + line.split(' | ').at(-1))).toEqual(['| `delete-listener` … no |', '| `create-listener` … **yes** |']);
  });

  test('problems and warnings follow the table', () => {
    const plan = servicePlan('web', [], {
      problems: [{ kind: 'annotation', subject: 'k8s.cloudscale.ch/loadbalancer-flavor', message: 'unknown flavor "huge"', hint: 'use lb-standard' } as never],
      warnings: [{ reason: 'MembersKept', message: 'pool tcp/http keeps 2 members' }],
    });
    const text = renderPlanMarkdown(planDocument({ nodes: null, services: [plan] }));
    expect(text).toContain('- **error:** ');
    expect(text).toContain('(how to fix: use lb-standard)');
    expect(text).toContain('- **warning** MembersKept: pool tcp/http keeps 2 members');
    expect(text).not.toContain('| Change |');
  });
});

describe('renderPlanMarkdown of real plans', () => {
  test('an update of several fields names each in Why; a lost load balancer gets its loud line', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]', 'loadbalancer-timeout-client-data-ms': '1000' });
    const updated = renderPlanMarkdown(planDocument({ nodes: null, services: [world.plan()] }));
    expect(updated).toContain(
      '| `update-listener` | listener tcp/80 | allowed\\_cidrs changes in place \\(k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs: \\[\\] → \\["10.0.0.0/8"\\]\\); timeout\\_client\\_data\\_ms changes in place',
    );

    const lost = converged();
    const addresses = lost.service.status!.loadBalancer!.ingress!.map((entry) => entry.ip).join(', ');
    lost.uuidLookups.set(lost.lbs[0]!.uuid, { kind: 'gone' });
    lost.lbs = [];
    const markdown = renderPlanMarkdown(planDocument({ nodes: null, services: [lost.plan()] }));
    expect(markdown).toContain('(new: the recorded one is gone)');
    expect(markdown).toContain(`- **the Service's addresses change: ${addresses} → new ones, known once the load balancer exists;`);
    expect(markdown).toMatch(/\| `create-lb` \| .* \| lb-lost \|/);
  });
});

describe('markdownText', () => {
  const J = JOINER;
  test.each([
    { name: 'a pipe cannot end the cell', input: 'a|b', output: 'a\\|b' },
    { name: 'no link', input: '[click](https://evil.example)', output: `\\[click\\]\\(https:${J}//evil.example\\)` },
    { name: 'no HTML', input: '<img src=x onerror=alert(1)>', output: '\\<img src=x onerror=alert\\(1\\)\\>' },
    { name: 'no mention', input: 'ping @octocat', output: `ping &#64;${J}octocat` },
    { name: 'no emphasis or code', input: '*bold* _it_ `code`', output: '\\*bold\\* \\_it\\_ \\`code\\`' },
    { name: 'no entity', input: '&lt;', output: '&amp;lt;' },
    { name: 'no line break: shown as \\n, escaped', input: 'one\ntwo', output: 'one\\\\ntwo' },
    { name: 'a backslash stays one', input: 'a\\b', output: 'a\\\\b' },
    // What GitHub links or renders in plain text after parsing, where a backslash escape is gone:
    // broken by an invisible word joiner (J) between the two characters its pattern needs side by side.
    { name: 'no bare URL', input: 'see https://evil.example/x', output: `see https:${J}//evil.example/x` },
    { name: 'no bare URL of another scheme', input: 'ftp://files.example', output: `ftp:${J}//files.example` },
    { name: 'no www autolink', input: 'visit www.evil.example', output: `visit www${J}.evil.example` },
    { name: 'no WWW autolink in capitals', input: 'WWW.evil.example', output: `WWW${J}.evil.example` },
    { name: 'no email autolink', input: 'ops@evil.example', output: `ops&#64;${J}evil.example` },
    { name: 'no GH- reference', input: 'fixes GH-123', output: `fixes GH${J}-123` },
    { name: 'no gh- reference in small letters', input: 'gh-7', output: `gh${J}-7` },
    { name: 'no issue reference', input: 'see #26', output: `see \\#${J}26` },
    { name: 'no cross-repository reference', input: 'jlord/sheetsee.js#26', output: `jlord/sheetsee.js\\#${J}26` },
    { name: 'no user@sha reference', input: 'jlord@a5c3785', output: `jlord&#64;${J}a5c378${J}5` },
    { name: 'no short commit hash', input: 'in a5c3785 it broke', output: `in a5c378${J}5 it broke` },
    { name: 'no full commit hash: pieces of at most 6', input: '3e5c1e60269ae0329094de131227285d4682b665', output: ['3e5c1e', '60269a', 'e03290', '94de13', '122728', '5d4682', 'b665'].join(J) },
    { name: 'no hash in capitals', input: 'A5C3785', output: `A5C378${J}5` },
    { name: 'a UUID: its 8- and 12-digit groups broken', input: '5e000000-0000-4000-8000-000000000003', output: `5e0000${J}00-0000-4000-8000-000000${J}000003` },
    { name: 'six hex digits and hex inside a word stay', input: 'cafe12 k8s-uid-web deadbeefy', output: 'cafe12 k8s-uid-web deadbeefy' },
    { name: 'no inline math', input: 'costs $x^2$ now', output: 'costs <span>$</span>x^2<span>$</span> now' },
    { name: 'no math with an escaped backslash before the dollar', input: '\\$a$', output: '\\\\<span>$</span>a<span>$</span>' },
    { name: 'no block math', input: '$$a$$', output: '<span>$</span><span>$</span>a<span>$</span><span>$</span>' },
    { name: 'a plain number and a time stay', input: 'port 30080 at 2025-01-01T00:01:00Z', output: 'port 30080 at 2025-01-01T00:01:00Z' },
  ])('$name', ({ input, output }) => {
    expect(markdownText(input)).toBe(output);
  });
});

describe('renderPlanMarkdown on a re-created listener', () => {
  test('lists the fields that change with it, as the text view does', () => {
    const world = converged(svc([{ name: 'http', port: 80, nodePort: 30080 }, { name: 'https', port: 443, nodePort: 30443 }]));
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip', 'loadbalancer-listener-allowed-cidrs': '["10.0.0.0/8"]', 'loadbalancer-timeout-member-data-ms': '30000' });
    const markdown = renderPlanMarkdown(planDocument({ nodes: null, services: [world.plan()] }));
    const listenerRows = markdown.split('\n').filter((line) => line.includes('`create-listener`'));
    expect(listenerRows.length).toBeGreaterThan(0);
    for (const line of listenerRows) {
      expect(line).toContain(markdownText('allowed_cidrs: [] → ["10.0.0.0/8"]'));
      expect(line).toContain(markdownText('timeout_member_data_ms: 50000 → 30000'));
    }
  });
});

describe('renderPlanMarkdown of pending drains', () => {
  test('a member waiting for the end of its drain: in the summary and under its Service, never "No changes"', () => {
    const plan = servicePlan('web', [], { pending: [{ action: act('delete-member', 'member 10.0.0.2:30080 of pool tcp/http', 'none'), after: '2026-01-01T00:01:00.000Z' }] });
    expect(renderPlanMarkdown(planDocument({ nodes: null, services: [plan] }))).toBe(
      [
        '### cloudscale-ccm plan',
        '',
        '**Plan:** 0 to create, 0 to update, 0 to delete, **1 member to delete after its drain**. Expected downtime: none.',
        '',
        '#### Service shop/web — load balancer k8s-service-uid-web',
        '',
        '- **later:** 1 member is deleted after its drain ends at 2026-01-01T00:01:00.000Z: member 10.0.0.2:30080 of pool tcp/http',
        '',
      ].join('\n'),
    );
  });
});

