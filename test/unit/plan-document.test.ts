// The JSON document of `plan -o json` against its documentation (docs/plan-json.md): the field
// tables there are read and compared with documents built from real planner output, so the
// schema page cannot drift from the code.
import type { V1Service } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Server, SubnetStub } from '../../src/core/cloudscale/types.js';
import { ACTION_VERB, type ActionKind } from '../../src/core/lb/actions.js';
import { downtimeOf, IMPACT_CLASSES, type ImpactClass } from '../../src/core/lb/impact.js';
import { planService } from '../../src/core/lb/planner.js';
import { planNodes } from '../../src/core/nodes/plan.js';
import type { NodeSnapshot } from '../../src/core/nodes/types.js';
import { plainYaml } from '../../src/core/render/document.js';
import { converged } from '../support/lb-world.js';
import { PLAN_DOCUMENT_VERSION, planDocument } from '../../src/core/plan/document.js';

const DOC = readFileSync(new URL('../../docs/plan-json.md', import.meta.url), 'utf8');

/** The rows of the first table after the heading `title` (any level), as cells without backticks. */
function table(title: string): string[][] {
  const lines = DOC.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '') === title);
  if (start === -1) throw new Error(`docs/plan-json.md has no heading "${title}"`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('|')) {
      inTable = true;
      const cells = line.split('|').slice(1, -1).map((c) => c.trim());
      if (cells.every((c) => /^-+$/.test(c))) continue;
      rows.push(cells);
    } else if (inTable || /^#+ /.test(line)) break;
  }
  return rows.slice(1); // without the header row
}
const documented = (title: string) => table(title).map((row) => row[0]!.replaceAll('`', ''));

// ---- real documents --------------------------------------------------------------------------

const API = 'https://api.example/v1';
const SUBNET: SubnetStub = { href: `${API}/subnets/a`, uuid: 'aaaa0001-0000-4000-8000-000000000001', cidr: '10.0.0.0/24' };
const server: Server = {
  href: `${API}/servers/s1`,
  uuid: '5e000000-0000-4000-8000-000000000001',
  name: 'worker-1',
  status: 'running',
  zone: { slug: 'rma1' },
  flavor: { slug: 'flex-4-2', name: 'Flex-4-2', vcpu_count: 2, memory_gb: 4 },
  image: null,
  interfaces: [{ type: 'private', network: { href: `${API}/networks/p`, uuid: 'p', name: 'private' }, addresses: [{ version: 4, address: '10.0.0.1', prefix_length: 24, gateway: null, reverse_ptr: null, subnet: SUBNET }] }],
  created_at: '2024-01-01T00:00:00Z',
  tags: {},
};
const service: V1Service = {
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', annotations: {}, finalizers: [] },
  spec: { type: 'LoadBalancer', ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }] },
};
const servicePlan = planService({
  service,
  nodes: [{ metadata: { name: 'worker-1' }, spec: {} }],
  servers: [server],
  location: { kind: 'absent' },
  floatingIps: [],
  subnets: [],
  otherServices: [],
  clusterId: 'cluster-1',
  apiServerMinor: 34,
});
const uninitialised: NodeSnapshot = {
  name: 'worker-1',
  uid: 'node-uid',
  resourceVersion: '1',
  providerID: '',
  labels: {},
  annotations: {},
  taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }],
  addresses: [],
  readiness: 'True',
  deleting: false,
};
const nodePlan = planNodes({ nodes: [uninitialised], servers: [server] });
const document = planDocument({
  nodes: { actions: nodePlan.actions, unchanged: nodePlan.untouched.length, deletionRefusal: nodePlan.deletions.refusal },
  services: [servicePlan],
});

describe('docs/plan-json.md describes the document', () => {
  test('version 1, and exactly the documented top-level fields, in that order', () => {
    expect(PLAN_DOCUMENT_VERSION).toBe(1);
    expect(document).toMatchObject({ apiVersion: 'cloudscale-ccm/v1', kind: 'Plan', version: 1 });
    expect(Object.keys(document)).toEqual(documented('Top level'));
    // A plan without nodes has the same fields; `nodes` is null.
    expect(Object.keys(planDocument({ nodes: null, services: [] }))).toEqual(documented('Top level'));
  });

  test('nodes, services[] and summary have exactly the documented fields', () => {
    expect(Object.keys(document.nodes!)).toEqual(documented('`nodes`'));
    // `held` is absent unless a budget holds something back (plan --max-downtime), `pending` unless a member drains.
    expect(Object.keys(document.services[0]!).sort()).toEqual(documented('`services[]`').filter((f) => f !== 'held' && f !== 'pending').sort());
    expect(Object.keys(document.summary).sort()).toEqual(documented('`summary`').sort());
    expect(Object.keys(document.summary.worstDowntime ?? { service: '', object: '', impact: '', class: '', text: '', minSeconds: 0, maxSeconds: 0 }).sort()).toEqual(
      ['service', 'object', 'impact', 'class', 'text', 'minSeconds', 'maxSeconds'].sort(),
    );
  });

  test('every action carries the documented common fields; the further fields are the ones listed for its kind', () => {
    const common = documented('Actions (`services[].actions[]`)');
    expect(common).toEqual(['kind', 'verb', 'object', 'reason', 'impact', 'downtime']);
    const kinds = new Map(kindRows());
    const actions = document.services[0]!.actions;
    expect(actions.length).toBeGreaterThan(5);
    for (const action of actions) {
      const row = kinds.get(action.kind)!;
      expect(furtherFields(action, common, row).required, action.kind).toEqual(row.fields.sort());
      expect(Object.keys(action.downtime).sort()).toEqual(['class', 'maxSeconds', 'minSeconds', 'text']);
    }
  });

  test('updates and a pool swap carry the documented fields too (changes[] of updates and of replacing creates)', () => {
    const world = converged();
    world.annotate({ 'loadbalancer-pool-algorithm': 'source_ip', 'loadbalancer-health-monitor-delay-s': '5', 'loadbalancer-name': 'renamed' });
    world.lbs[0]!.tags = {};
    const inPlace = converged();
    inPlace.annotate({ 'loadbalancer-timeout-client-data-ms': '1000', 'loadbalancer-health-monitor-delay-s': '5' });
    const kinds = new Map(kindRows());
    const actions = planDocument({ nodes: null, services: [world.plan(), inPlace.plan()] }).services.flatMap((s) => s.actions);
    expect(new Set(actions.map((a) => a.kind))).toEqual(
      new Set(['create-pool', 'create-member', 'create-monitor', 'await-members', 'delete-listener', 'create-listener', 'delete-monitor', 'delete-member', 'delete-pool', 'rename-lb', 'update-listener', 'update-monitor']),
    );
    for (const action of actions) {
      const row = kinds.get(action.kind)!;
      expect(furtherFields(action, ['kind', 'verb', 'object', 'reason', 'impact', 'downtime'], row).required, action.kind).toEqual(row.fields.sort());
    }
    // The swap's listener create carries what it puts back: the listener it replaces, on the old pool.
    const move = actions.find((a) => a.kind === 'create-listener')!;
    expect(furtherFields(move, ['kind', 'verb', 'object', 'reason', 'impact', 'downtime'], kinds.get('create-listener')!).optional).toEqual(['putBack']);
    expect(Object.keys((move as { putBack: object }).putBack).sort()).toEqual(['body', 'pool', 'poolName']);
  });

  test('the table of kinds lists every action kind with its verb', () => {
    const rows = kindRows();
    expect(rows.map(([kind]) => kind).sort()).toEqual(Object.keys(ACTION_VERB).sort());
    for (const [kind, { verb }] of rows) expect(verb, kind).toBe(ACTION_VERB[kind]);
  });

  test('node actions carry the documented fields', () => {
    const fields = documented('Node actions (`nodes.actions[]`)');
    expect(document.nodes!.actions.length).toBe(1);
    for (const action of document.nodes!.actions) {
      for (const field of fields) expect(Object.keys(action), field).toContain(field);
    }
  });

  test('the impact table lists every class with its downtime class', () => {
    const rows = table('Impact classes').map((row) => row.map((c) => c.replaceAll('`', '')));
    expect(rows.map((r) => r[0])).toEqual([...IMPACT_CLASSES]);
    for (const [impact, cls] of rows) expect(cls, impact).toBe(downtimeOf(impact as ImpactClass).class);
  });

  test('the example is valid JSON with the documented top level', () => {
    const example = /## Example[\s\S]*?```json\n([\s\S]*?)\n```/.exec(DOC)?.[1];
    const parsed = JSON.parse(example!) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(documented('Top level'));
    expect(parsed.version).toBe(PLAN_DOCUMENT_VERSION);
    expect(Object.keys(parsed.summary as object)).toEqual(Object.keys(document.summary));
  });
});

/** The table of kinds: kind → verb and further fields (the backticked names before any parenthesis). */
/** The table of kinds: each kind's verb, its further fields, and those marked `?` (present only where the row says). */
function kindRows(): [ActionKind, { verb: string; fields: string[]; optional: string[] }][] {
  const lines = DOC.split('\n');
  const start = lines.findIndex((l) => l.startsWith('| Kind | Verb |'));
  const rows: [ActionKind, { verb: string; fields: string[]; optional: string[] }][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [kind, verb, further] = line.split('|').slice(1, -1).map((c) => c.trim());
    const named = [...further!.replace(/\([^)]*\)/g, '').matchAll(/`([^`]+)`(\?)?/g)].map((m) => ({ field: m[1]!.replace(/\[\]$/, ''), optional: m[2] === '?' }));
    const fields = named.filter((n) => !n.optional).map((n) => n.field);
    const optional = named.filter((n) => n.optional).map((n) => n.field);
    rows.push([kind!.replaceAll('`', '') as ActionKind, { verb: verb!.replaceAll('`', ''), fields, optional }]);
  }
  return rows;
}

/** The further fields of an action that its row must list, and whether the rest are the row's optional ones. */
function furtherFields(action: object, common: readonly string[], row: { optional: readonly string[] }) {
  const further = Object.keys(action).filter((k) => !common.includes(k));
  return { required: further.filter((k) => !row.optional.includes(k)).sort(), optional: further.filter((k) => row.optional.includes(k)) };
}

describe('-o yaml', () => {
  test('is plain YAML: objects shared between actions (frozen downtimes) are written out, no anchors or aliases', () => {
    const actions = document.services[0]!.actions;
    // The premise: two actions share one downtime object, which `yaml`'s default turns into an alias.
    expect(actions.some((a, i) => actions.slice(i + 1).some((b) => b.downtime === a.downtime))).toBe(true);
    const text = plainYaml(document);
    expect(text).not.toMatch(/[&*]a\d+\b/);
    expect(parseYaml(text)).toEqual(JSON.parse(JSON.stringify(document)));
  });
});
