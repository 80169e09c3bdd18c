import { describe, expect, test } from 'vitest';
import {
  OWNER_CLUSTER_TAG,
  OWNER_SERVICE_TAG,
  OWNER_SERVICE_UID_TAG,
  ownershipTags,
  parseOwnershipTags,
} from '../../src/core/lb/ownership.js';

describe('ownership tags', () => {
  test.each<[string, Record<string, string> | undefined, unknown]>([
    ['no tags', undefined, { kind: 'untagged' }],
    ['unrelated tags', { env: 'prod' }, { kind: 'untagged' }],
    ['empty cluster tag', { [OWNER_CLUSTER_TAG]: '' }, { kind: 'untagged' }],
    [
      'full tags',
      { [OWNER_CLUSTER_TAG]: 'c1', [OWNER_SERVICE_UID_TAG]: 'u1', [OWNER_SERVICE_TAG]: 'default/web' },
      { kind: 'tagged', clusterId: 'c1', serviceUid: 'u1', service: 'default/web' },
    ],
    ['cluster only', { [OWNER_CLUSTER_TAG]: 'c1' }, { kind: 'tagged', clusterId: 'c1', serviceUid: null, service: null }],
  ])('%s', (_name, tags, expected) => {
    expect(parseOwnershipTags(tags)).toEqual(expected);
  });

  test('ownershipTags round-trips through parseOwnershipTags', () => {
    const tags = ownershipTags('cluster-1', { namespace: 'ns', name: 'web', uid: 'uid-1' });
    expect(tags).toEqual({
      'k8s.cloudscale.ch/cluster': 'cluster-1',
      'k8s.cloudscale.ch/service-uid': 'uid-1',
      'k8s.cloudscale.ch/service': 'ns/web',
    });
    expect(parseOwnershipTags(tags)).toEqual({ kind: 'tagged', clusterId: 'cluster-1', serviceUid: 'uid-1', service: 'ns/web' });
  });
});
