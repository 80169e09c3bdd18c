// The shape of src/ as a rule that stays true: every file sits on a floor, a file imports only
// from its own floor or a lower one, and no file reaches itself through its imports. Type-only
// imports count: a type that a lower floor needs from a higher one belongs lower.
import { readFileSync, globSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { resolveImport, relativeImports } from '../support/test-files.js';

/**
 * The floors, lowest first. A floor's `rank` orders it; floors of the same rank are siblings and
 * import nothing from each other (the simulator and the executor know nothing of one another).
 * A path ending in `/` is a folder; `src/core/*.ts` is the files directly in src/core.
 */
const FLOORS: readonly { readonly name: string; readonly rank: number; readonly paths: readonly string[] }[] = [
  // Errors, durations, the stop gate, and text helpers (escaping untrusted text, counted nouns).
  { name: 'ground', rank: 0, paths: ['src/version.ts', 'src/core/*.ts', 'src/core/text/'] },
  // The cloud, the cluster and what the tool decides about them; files here import each other
  // freely but never in a circle.
  {
    name: 'domain',
    rank: 1,
    paths: [
      'src/core/cloudscale/',
      'src/core/kube/',
      'src/core/lb/',
      'src/core/nodes/',
      'src/core/deploy/',
      'src/core/status/',
      'src/core/metrics/',
    ],
  },
  // Where a plan lives, pure: the plan document, planning a pass, the budget, the saved plan.
  { name: 'plan', rank: 2, paths: ['src/core/plan/'] },
  // Passes: reading the snapshot, executors, the watch loop.
  { name: 'apply', rank: 3, paths: ['src/core/apply/'] },
  // The cloudscale API simulator, built on the client's types only.
  { name: 'sim', rank: 3, paths: ['src/sim/'] },
  // Text, documents and live views of what the floors below computed.
  { name: 'render', rank: 4, paths: ['src/core/render/'] },
  { name: 'commands', rank: 5, paths: ['src/commands/'] },
  { name: 'cli', rank: 6, paths: ['src/cli.ts', 'src/composition.ts'] },
];

/**
 * Imports known to break the rules, each to be removed by the change that fixes it; an entry
 * that no longer occurs fails the test, so this list only shrinks.
 */
const KNOWN_EXCEPTIONS: readonly { readonly from: string; readonly to: string; readonly why: string }[] = [];

function floorOf(file: string): (typeof FLOORS)[number] | undefined {
  return FLOORS.find((floor) =>
    floor.paths.some((path) =>
      path.endsWith('/')
        ? file.startsWith(path)
        : path.endsWith('/*.ts')
          ? file.startsWith(path.slice(0, -'*.ts'.length)) && !file.slice(path.length - '*.ts'.length).includes('/')
          : file === path,
    ),
  );
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file of src/ and the files of src/ it imports (relative imports, type-only ones too). */
function importGraph(): Map<string, string[]> {
  const files = globSync('src/**/*.{ts,tsx}', { cwd: ROOT }).sort();
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = relativeImports(readFileSync(`${ROOT}/${file}`, 'utf8')).flatMap((specifier) => {
      const target = resolveImport(`${ROOT}/${file}`, specifier);
      return target === undefined ? [] : [relative(ROOT, target)];
    });
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

function isKnown(from: string, to: string): boolean {
  return KNOWN_EXCEPTIONS.some((e) => e.from === from && e.to === to);
}

/** The circles of `graph`: its strongly connected components of more than one file, or a file importing itself. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the import graph of src/', () => {
  const graph = importGraph();
  const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));

  test('every file sits on a floor (a new folder is given one in FLOORS)', () => {
    expect([...graph.keys()].filter((file) => floorOf(file) === undefined)).toEqual([]);
  });

  test('no file imports from a higher floor or a sibling floor', () => {
    const upward = edges
      .filter(({ from, to }) => {
        const [a, b] = [floorOf(from), floorOf(to)];
        return a !== undefined && b !== undefined && a !== b && b.rank >= a.rank && !isKnown(from, to);
      })
      .map(({ from, to }) => `${from} (${floorOf(from)!.name}) → ${to} (${floorOf(to)!.name})`);
    expect(upward).toEqual([]);
  });

  test('no circle of imports', () => {
    const withoutKnown = new Map([...graph].map(([from, targets]) => [from, targets.filter((to) => !isKnown(from, to))]));
    expect(cycles(withoutKnown)).toEqual([]);
  });

  // src/core/nodes/index.ts says it: the pure part of the node pass. Writes, their retries and
  // re-reads live in src/core/apply/.
  test('src/core/nodes/ does no I/O: no async function, no node: module', () => {
    const impure = [...graph.keys()]
      .filter((file) => file.startsWith('src/core/nodes/'))
      .filter((file) => /\basync\b|from\s+['"]node:/.test(readFileSync(`${ROOT}/${file}`, 'utf8')));
    expect(impure).toEqual([]);
  });

  test('every known exception still occurs (remove the ones fixed)', () => {
    const present = new Set(edges.map(({ from, to }) => `${from} → ${to}`));
    expect(KNOWN_EXCEPTIONS.map((e) => `${e.from} → ${e.to}`).filter((edge) => !present.has(edge))).toEqual([]);
  });
});

describe('one execution path for load-balancer plans', () => {
  // sync-lb, run and its reaction passes (through sync-lb) and apply execute plans through
  // reconcileLoadBalancers; a command that called the executor itself would skip its rounds,
  // Events and announcements (apply did, before issue 26).
  const EXECUTOR = /\b(executeLbPass|executeServicePlan)\b/;
  const OWNERS = ['src/core/apply/lb-pass.ts', 'src/core/apply/lb-executor.ts'];

  test('only src/core/apply/lb-pass.ts calls the executor', () => {
    const files = globSync('src/**/*.{ts,tsx}', { cwd: ROOT }).sort();
    const direct = files.filter((file) => !OWNERS.includes(file) && EXECUTOR.test(readFileSync(`${ROOT}/${file}`, 'utf8')));
    expect(direct).toEqual([]);
  });
});

describe('a Service\'s load balancer located in one place', () => {
  // A pass locates each Service once, with its snapshot (LbPassSnapshot.locations); its member
  // reads, its planner and the saved plan's fingerprint read the locations (issue 26: the planner
  // pass, the snapshot's member reads, the fingerprint and status each called the lookup).
  test('only locateLoadBalancers (src/core/lb/actual.ts) calls locateLoadBalancer', () => {
    const files = globSync('src/**/*.{ts,tsx}', { cwd: ROOT }).sort();
    const calls = files.flatMap((file) =>
      [...readFileSync(`${ROOT}/${file}`, 'utf8').matchAll(/(?<!function )\blocateLoadBalancer\(/g)].map(() => file),
    );
    expect(calls).toEqual(['src/core/lb/actual.ts']);
  });
});

describe('the checks themselves', () => {
  test.each<[string, Record<string, string[]>, string[][]]>([
    ['no imports', { a: [], b: [] }, []],
    ['a chain', { a: ['b'], b: ['c'], c: [] }, []],
    ['two files importing each other', { a: ['b'], b: ['a'] }, [['a', 'b']]],
    ['a circle of three beside a chain', { a: ['b'], b: ['c'], c: ['a'], d: ['a'] }, [['a', 'b', 'c']]],
    ['a file importing itself', { a: ['a'] }, [['a']]],
  ])('cycles: %s', (_name, graph, expected) => {
    expect(cycles(new Map(Object.entries(graph)))).toEqual(expected);
  });

  test.each<[string, string | undefined]>([
    ['src/core/errors.ts', 'ground'],
    ['src/core/text/untrusted.ts', 'ground'],
    ['src/core/lb/planner.ts', 'domain'],
    ['src/core/render/plan.ts', 'render'],
    ['src/core/plan/document.ts', 'plan'],
    ['src/sim/server.ts', 'sim'],
    ['src/cli.ts', 'cli'],
    ['src/elsewhere.ts', undefined],
  ])('floorOf(%s) is %s', (file, floor) => {
    expect(floorOf(file)?.name).toBe(floor);
  });
});
