// The change strategies own their logic: each is a module of src/core/lb/strategies/ that is
// registered by one line of src/core/lb/strategies.ts, knows no other strategy, and is known to
// the planner only through that list. So adding one is its file, its test and that line
// (docs/architecture.md, "A new change strategy").
import { readFileSync, globSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { STRATEGIES } from '../../src/core/lb/strategies.js';
import { relativeImports } from '../support/test-files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What every strategy builds on: single steps, the serving-aware gates, the contract. */
const SHARED = ['gates.ts', 'steps.ts', 'strategy.ts'];
const modules = globSync('src/core/lb/strategies/*.ts', { cwd: ROOT })
  .map((file) => basename(file))
  .filter((file) => !SHARED.includes(file))
  .sort();
const read = (file: string) => readFileSync(`${ROOT}/${file}`, 'utf8');

describe('the change strategies', () => {
  test('the list, in the order the planner asks them', () => {
    expect(STRATEGIES.map((s) => s.name)).toEqual(['drain', 'member rotation', 'pool swap', 'listener port move', 'listener re-creation']);
  });

  test('each module of src/core/lb/strategies/ is registered by one line of src/core/lb/strategies.ts', () => {
    const registry = read('src/core/lb/strategies.ts');
    const registered = relativeImports(registry)
      .filter((specifier) => specifier.startsWith('./strategies/'))
      .map((specifier) => specifier.slice('./strategies/'.length).replace(/\.js$/, '.ts'))
      .filter((file) => !SHARED.includes(file))
      .sort();
    expect(registered).toEqual(modules);
    expect(modules).toHaveLength(STRATEGIES.length);
  });

  test.each(modules)('%s imports no other strategy, only what they share', (file) => {
    const siblings = relativeImports(read(`src/core/lb/strategies/${file}`)).filter((specifier) => specifier.startsWith('./'));
    expect(siblings.filter((specifier) => !SHARED.includes(specifier.slice(2).replace(/\.js$/, '.ts')))).toEqual([]);
  });

  test('the planner knows no strategy by name: it asks the list', () => {
    const planner = relativeImports(read('src/core/lb/cloud-plan.ts'));
    expect(planner.filter((specifier) => modules.some((file) => specifier === `./strategies/${file.replace(/\.ts$/, '.js')}`))).toEqual([]);
    expect(planner).toContain('./strategies.js');
  });
});
