import { describe, expect, it } from 'vitest';
import { parseServiceArgs } from '../../src/commands/service-args.js';

describe('parseServiceArgs', () => {
  it.each([
    ['service/hello', { namespace: 'web', name: 'hello' }],
    ['svc/hello', { namespace: 'web', name: 'hello' }],
    ['services/hello', { namespace: 'web', name: 'hello' }],
    ['hello', { namespace: 'web', name: 'hello' }],
  ])('%s → %o', (arg, expected) => {
    expect(parseServiceArgs([arg], () => 'web')).toEqual([expected]);
  });

  it.each([
    ['web/hello', /not a Service argument.*\n?/, /-n web service\/hello/],
    ['service/Hello', /not a valid Service name/, /DNS labels/],
    ['service/', /not a valid Service name/, /DNS labels/],
  ])('refuses %s', (arg, message, hint) => {
    let error: unknown;
    try {
      parseServiceArgs([arg], () => 'default');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(message);
    expect((error as { hint: string }).hint).toMatch(hint);
  });
});
