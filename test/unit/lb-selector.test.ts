import { describe, expect, test } from 'vitest';
import {
  parseLabelSelector,
  selectorMatches,
  SelectorSyntaxError,
  type LabelRequirement,
} from '../../src/core/lb/selector.js';

describe('parseLabelSelector', () => {
  test.each<[string, LabelRequirement[]]>([
    ['', []],
    ['   ', []],
    ['env=prod', [{ key: 'env', operator: '=', values: ['prod'] }]],
    ['env==prod', [{ key: 'env', operator: '=', values: ['prod'] }]],
    ['env!=prod', [{ key: 'env', operator: '!=', values: ['prod'] }]],
    ['env=', [{ key: 'env', operator: '=', values: [''] }]],
    ['env', [{ key: 'env', operator: 'exists', values: [] }]],
    ['!env', [{ key: 'env', operator: 'not-exists', values: [] }]],
    [' env in ( a , b ) ', [{ key: 'env', operator: 'in', values: ['a', 'b'] }]],
    ['env notin (a)', [{ key: 'env', operator: 'notin', values: ['a'] }]],
    ['env in (a,)', [{ key: 'env', operator: 'in', values: ['a', ''] }]],
    ['env in ()', [{ key: 'env', operator: 'in', values: [''] }]],
    ['gen>3', [{ key: 'gen', operator: '>', values: ['3'] }]],
    ['gen<3', [{ key: 'gen', operator: '<', values: ['3'] }]],
    [
      'env=prod,tier=frontend',
      [
        { key: 'env', operator: '=', values: ['prod'] },
        { key: 'tier', operator: '=', values: ['frontend'] },
      ],
    ],
    [
      'kubernetes.io/hostname=worker-1,!node-role.kubernetes.io/control-plane',
      [
        { key: 'kubernetes.io/hostname', operator: '=', values: ['worker-1'] },
        { key: 'node-role.kubernetes.io/control-plane', operator: 'not-exists', values: [] },
      ],
    ],
  ])('%j', (source, requirements) => {
    expect(parseLabelSelector(source)).toEqual({ source, requirements });
  });

  test.each<[string, string]>([
    ['invalid===syntax', "found '=' at position 9, expected a label value"],
    ['env in prod', "found 'prod' at position 7, expected '(' to open the value list"],
    ['env in (a b)', "found 'b' at position 10, expected a label value, ',' or ')' in the value list"],
    ['env in (a', "found 'end of string' at position 9"],
    ['env=a b', "found 'b' at position 6, expected ',' or end of string"],
    ['env=a,', "found 'end of string' at position 6, expected a label key or '!' after ','"],
    [',env', "found ',' at position 0, expected a label key"],
    ['!', "found 'end of string' at position 1, expected a label key"],
    ['env (a)', "found '(' at position 4, expected one of =, ==, !=, in, notin, >, <"],
    ['gen>x', "the value of 'gen >' must be an integer, found 'x'"],
    ['-env=a', "invalid label key '-env'"],
    ['Example.com/env=a', "invalid label key 'Example.com/env': the prefix"],
    ['/env=a', "invalid label key '/env': the prefix before \"/\" must not be empty"],
    ['env=-a', "invalid label value '-a'"],
    [`env=${'a'.repeat(64)}`, 'must be at most 63 characters'],
  ])('%j is rejected', (source, message) => {
    expect(() => parseLabelSelector(source)).toThrow(SelectorSyntaxError);
    expect(() => parseLabelSelector(source)).toThrow(message);
  });
});

describe('selectorMatches', () => {
  const labels = { env: 'prod', tier: 'frontend', gen: '5' };
  test.each<[string, Record<string, string> | undefined, boolean]>([
    ['', labels, true],
    ['', undefined, true],
    ['env=prod', labels, true],
    ['env=dev', labels, false],
    ['env!=dev', labels, true],
    ['missing!=x', labels, true],
    ['env in (dev,prod)', labels, true],
    ['env notin (dev,prod)', labels, false],
    ['missing notin (x)', labels, true],
    ['missing in (x)', labels, false],
    ['env', labels, true],
    ['missing', labels, false],
    ['!env', labels, false],
    ['!missing', labels, true],
    ['gen>4', labels, true],
    ['gen>5', labels, false],
    ['gen<6', labels, true],
    ['env>1', labels, false],
    ['missing>1', labels, false],
    ['env=prod,tier=frontend', labels, true],
    ['env=prod,tier=backend', labels, false],
    ['env=', { env: '' }, true],
    ['env', undefined, false],
  ])('%j on %j → %s', (source, set, expected) => {
    expect(selectorMatches(parseLabelSelector(source), set)).toBe(expected);
  });
});
