// What a write asked for, compared with the object read back after its answer was lost
// (src/core/cloudscale/reread.ts).
import { describe, expect, test } from 'vitest';
import { onlyMatch, patchApplied } from '../../src/core/cloudscale/reread.js';

const LB = '47cec963-fcd2-482f-bdb6-24461b2d47b1';

describe('patchApplied', () => {
  test.each([
    { name: 'a number, as asked', patch: { delay_s: 5 }, object: { delay_s: 5, timeout_s: 3 }, applied: true },
    { name: 'a number, not yet', patch: { delay_s: 5 }, object: { delay_s: 2 }, applied: false },
    { name: 'enabled false', patch: { enabled: false }, object: { enabled: false }, applied: true },
    { name: 'a list in order', patch: { allowed_cidrs: ['10.0.0.0/8'] }, object: { allowed_cidrs: ['10.0.0.0/8'] }, applied: true },
    { name: 'a list, another length', patch: { allowed_cidrs: [] }, object: { allowed_cidrs: ['10.0.0.0/8'] }, applied: false },
    { name: 'a reference sent as UUID, read back as an object', patch: { load_balancer: LB }, object: { load_balancer: { uuid: LB, name: 'x' } }, applied: true },
    { name: 'a reference to another object', patch: { load_balancer: LB }, object: { load_balancer: null }, applied: false },
    { name: 'tags are the whole set', patch: { tags: { a: '1' } }, object: { tags: { a: '1', b: '2' } }, applied: false },
    { name: 'tags equal', patch: { tags: { a: '1' } }, object: { tags: { a: '1' } }, applied: true },
    { name: 'a nested part (http of a monitor)', patch: { http: { url_path: '/livez' } }, object: { http: { url_path: '/livez', method: 'GET' } }, applied: true },
    { name: 'a nested part not yet', patch: { http: { url_path: '/livez' } }, object: { http: { url_path: '/healthz' } }, applied: false },
    { name: 'null as asked', patch: { http: { host: null } }, object: { http: { host: null } }, applied: true },
    { name: 'a field missing', patch: { name: 'x' }, object: {}, applied: false },
    { name: 'nothing read', patch: { name: 'x' }, object: undefined, applied: false },
  ])('$name', ({ patch, object, applied }) => {
    expect(patchApplied(patch, object)).toBe(applied);
  });
});

describe('onlyMatch', () => {
  test.each([
    { items: [1, 2, 3], found: 2 },
    { items: [1, 3], found: undefined },
    { items: [2, 2], found: undefined },
  ])('$items', ({ items, found }) => {
    expect(onlyMatch(items, (n) => n === 2)).toBe(found);
  });
});
