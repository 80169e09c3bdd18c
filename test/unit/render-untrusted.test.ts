import { describe, expect, test } from 'vitest';
import { PartialFailureError, RefusedError } from '../../src/core/errors.js';
import { formatTopLevelError } from '../../src/core/render/error.js';
import { renderPlanText } from '../../src/core/render/plan.js';
import { planDocument } from '../../src/core/plan/document.js';
import {
  QUOTE_MAX_CHARACTERS,
  escapeStrings,
  escapeUnprintable,
  firstUnprintable,
  hasUnprintable,
  quoteUntrusted,
} from '../../src/core/text/untrusted.js';

describe('escapeUnprintable', () => {
  test.each<[string, string]>([
    ['plain text', 'plain text'],
    ['Zürich – 🌐', 'Zürich – 🌐'],
    ['a\nb', 'a\\nb'],
    ['a\r\nb\tc', 'a\\r\\nb\\tc'],
    ['nul\u0000', 'nul\\u0000'],
    ['esc\u001b[2J', 'esc\\u001b[2J'],
    ['del\u007f', 'del\\u007f'],
    ['csi\u009b', 'csi\\u009b'],
    ['line\u2028para\u2029', 'line\\u2028para\\u2029'],
    ['bidi\u202eevil\u2066', 'bidi\\u202eevil\\u2066'],
  ])('%j → %s', (raw, shown) => {
    expect(escapeUnprintable(raw)).toBe(shown);
    expect(hasUnprintable(shown)).toBe(false);
    expect(hasUnprintable(raw)).toBe(raw !== shown);
  });
});

describe('firstUnprintable', () => {
  test.each<[string, string | null]>([
    ['web', null],
    ['🌐\n', 'U+000A at position 2'],
    ['ab\u0000\n', 'U+0000 at position 3'],
    ['\u202e', 'U+202E at position 1'],
  ])('%j → %s', (raw, found) => expect(firstUnprintable(raw)).toBe(found));
});

describe('quoteUntrusted', () => {
  test.each<[string, string]>([
    ['web', '"web"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['back\\slash', '"back\\\\slash"'],
    ['a\nb', '"a\\nb"'],
    ['', '""'],
  ])('%j → %s', (raw, quoted) => expect(quoteUntrusted(raw)).toBe(quoted));

  test('a long value is cut after QUOTE_MAX_CHARACTERS characters and its length named', () => {
    const raw = '🌐'.repeat(QUOTE_MAX_CHARACTERS + 100);
    expect(quoteUntrusted(raw)).toBe(`"${'🌐'.repeat(QUOTE_MAX_CHARACTERS)}…" (${QUOTE_MAX_CHARACTERS + 100} characters)`);
    expect(quoteUntrusted('x'.repeat(QUOTE_MAX_CHARACTERS))).toBe(`"${'x'.repeat(QUOTE_MAX_CHARACTERS)}"`);
  });
});

test('escapeStrings escapes every string and key of a document and keeps shared objects shared', () => {
  const problem = { message: 'load balancer a\nb', hint: 'fix\u0000' };
  const document = { services: [{ actions: [{ problem }], problems: [problem], count: 2, none: null, [`k\t`]: true }] };
  const safe = escapeStrings(document);
  expect(safe).toEqual({
    services: [{ actions: [{ problem: { message: 'load balancer a\\nb', hint: 'fix\\u0000' } }], problems: [{ message: 'load balancer a\\nb', hint: 'fix\\u0000' }], count: 2, none: null, 'k\\t': true }],
  });
  expect(safe.services[0]!.actions[0]!.problem).toBe(safe.services[0]!.problems[0]);
  expect(document.services[0]!.problems[0]!.message).toBe('load balancer a\nb');
});

describe('the text views never print a control character raw', () => {
  const evil = 'lb\n\u001b[2Jevil';
  const problem = { kind: 'ownership' as const, subject: `load balancer ${evil}`, message: `load balancer ${evil} belongs elsewhere`, hint: 'leave it' };

  test('plan text', () => {
    const document = planDocument({
      nodes: null,
      services: [
        {
          service: { namespace: 'ns', name: 'web', uid: 'u' },
          mode: 'ensure',
          loadBalancer: { name: evil, uuid: 'lb-uuid' },
          actions: [],
          problems: [problem],
          warnings: [{ reason: 'UnownedLoadBalancer', message: `found ${evil}` }],
        },
      ],
    });
    const text = renderPlanText(document, { color: false });
    expect(text).toContain('load balancer lb\\n\\u001b[2Jevil');
    expect(text).toContain('found lb\\n\\u001b[2Jevil');
    expect(text.split('\n').filter((line) => line.includes('belongs elsewhere'))).toHaveLength(1);
    expect(hasUnprintable(text.replaceAll('\n', ''))).toBe(false);
  });

  test('the top-level error', () => {
    const failures = [{ object: 'service/ns/web', error: new RefusedError(problem.message) }];
    expect(formatTopLevelError(new PartialFailureError('1 of 1 Services failed', failures), { verbose: true }).split('\n')).toEqual([
      'error: 1 of 1 Services failed',
      '  service/ns/web: load balancer lb\\n\\u001b[2Jevil belongs elsewhere',
      '',
    ]);
    const refused = new RefusedError(`cannot use ${evil}`, { hint: `rename ${evil}` });
    expect(formatTopLevelError(refused, { verbose: false })).toBe(
      'error: cannot use lb\\n\\u001b[2Jevil\nhint: rename lb\\n\\u001b[2Jevil\n',
    );
  });
});
