import { describe, expect, test } from 'vitest';
import { canonicalUuid, formatProviderId, parseProviderId } from '../../src/core/nodes/provider-id.js';

const UUID = 'dad649bd-a578-4c89-9d3b-95c353f28de5';

describe('parseProviderId', () => {
  test.each([
    { raw: undefined, expected: { kind: 'empty' } },
    { raw: '', expected: { kind: 'empty' } },
    { raw: '   ', expected: { kind: 'empty' } },
    { raw: `cloudscale://${UUID}`, expected: { kind: 'cloudscale', uuid: UUID } },
    { raw: `cloudscale://${UUID.toUpperCase()}`, expected: { kind: 'cloudscale', uuid: UUID } },
    {
      raw: 'cloudscale://DAD649BDA5784C899D3B95C353F28DE5',
      expected: { kind: 'cloudscale', uuid: UUID },
    },
    { raw: ` cloudscale :// ${UUID} `, expected: { kind: 'cloudscale', uuid: UUID } },
    { raw: 'hcloud://12345', expected: { kind: 'foreign', scheme: 'hcloud' } },
    { raw: 'aws:///eu-west-1a/i-0abc', expected: { kind: 'foreign', scheme: 'aws' } },
    { raw: `Cloudscale://${UUID}`, expected: { kind: 'foreign', scheme: 'Cloudscale' } },
  ])('$raw', ({ raw, expected }) => {
    expect(parseProviderId(raw)).toEqual(expected);
  });

  test.each([
    'cloudscale://not-a-uuid',
    'cloudscale://',
    `cloudscale://${UUID}0`,
    UUID,
    'garbage',
    `://${UUID}`,
    `1x!://${UUID}`,
  ])('invalid: %s', (raw) => {
    expect(parseProviderId(raw).kind).toBe('invalid');
  });
});

describe('formatProviderId', () => {
  test('canonical lowercase hyphenated, as the Go CCM writes it', () => {
    expect(formatProviderId('DAD649BDA5784C899D3B95C353F28DE5')).toBe(`cloudscale://${UUID}`);
    expect(formatProviderId(UUID)).toBe(`cloudscale://${UUID}`);
  });
  test('rejects what is not a UUID', () => {
    expect(() => formatProviderId('nope')).toThrow(TypeError);
  });
  test('canonicalUuid round-trips through parse', () => {
    const uuid = canonicalUuid(UUID.replaceAll('-', '').toUpperCase());
    expect(uuid).toBe(UUID);
    expect(parseProviderId(formatProviderId(UUID))).toEqual({ kind: 'cloudscale', uuid: UUID });
  });
});
