import { describe, expect, test } from 'vitest';
import { SYNC_LB_JSON_VERSION, renderSyncLbText, type ServiceReport, type SyncLbReport } from '../../src/core/render/sync-lb.js';

const REQUESTS = { total: 12, reads: 8, writes: 4, retries: 0, throttled: 0, waitedMs: 0 };

function service(name: string, status: ServiceReport['status'], extra: Partial<ServiceReport> = {}): ServiceReport {
  return { service: `default/${name}`, status, loadBalancer: null, actions: [], errors: [], waitingForIp: false, ...extra };
}

function report(services: ServiceReport[], requests: SyncLbReport['requests'] = REQUESTS): SyncLbReport {
  return { version: SYNC_LB_JSON_VERSION, services, requests, durationMs: 1234, sharedClusterId: null };
}

const HELD = { id: '0123456789', reason: 'pool swap of tcp/http: 2 s over the budget of 0 s' };
const APPROVE =
  '  To apply it: kubectl annotate service -n default web --overwrite cloudscale-ccm/approve-change=0123456789 (applied at the next pass), ' +
  'or cloudscale-ccm plan service/web -n default --out FILE, then cloudscale-ccm apply FILE.\n';

describe('the text of a sync-lb pass', () => {
  test.each<[string, SyncLbReport, string]>([
    ['nothing to do', report([]), 'sync-lb: 0 Services: 0 changed, 0 in sync, 0 failed; 12 API requests (4 writes) in 1.2 s\n'],
    [
      'one of each status',
      report([service('a', 'changed'), service('b', 'unchanged'), service('c', 'failed')]),
      'sync-lb: 3 Services: 1 changed, 1 in sync, 1 failed; 12 API requests (4 writes) in 1.2 s\n',
    ],
    [
      'throttled requests',
      report([service('a', 'unchanged')], { ...REQUESTS, throttled: 2, waitedMs: 3000 }),
      'sync-lb: 1 Service: 0 changed, 1 in sync, 0 failed; 12 API requests (4 writes; 2 answered 429, 3 s waited) in 1.2 s\n',
    ],
    [
      'a held change: its paragraph, then the count in the summary',
      report([service('web', 'unchanged', { held: [HELD] })]),
      `held: service/default/web change 0123456789: ${HELD.reason}\n${APPROVE}` +
        'sync-lb: 1 Service: 0 changed, 1 in sync, 0 failed, 1 change held back; 12 API requests (4 writes) in 1.2 s\n',
    ],
    [
      'an approval naming another change approves nothing, and says so',
      report([service('web', 'unchanged', { held: [{ ...HELD, approvalMismatch: 'fedcba9876' }] })]),
      `held: service/default/web change 0123456789: ${HELD.reason}\n` +
        '  the approval fedcba9876 (annotation cloudscale-ccm/approve-change) names another change than the pending 0123456789: nothing is approved\n' +
        APPROVE +
        'sync-lb: 1 Service: 0 changed, 1 in sync, 0 failed, 1 change held back; 12 API requests (4 writes) in 1.2 s\n',
    ],
    [
      'a warning of the plan, its message escaped',
      report([service('web', 'changed', { warnings: [{ reason: 'LoadBalancerError', message: 'pool down\nreally' }] })]),
      'warning: service/default/web LoadBalancerError: pool down\\nreally\n' +
        'sync-lb: 1 Service: 1 changed, 0 in sync, 0 failed; 12 API requests (4 writes) in 1.2 s\n',
    ],
  ])('%s', (_name, input, text) => {
    expect(renderSyncLbText(input)).toBe(text);
  });
});
