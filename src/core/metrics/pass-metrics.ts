// The metrics of one pass, from its status record and its API requests. Every value describes
// the pass that wrote it (a batch job's metrics, replaced by the next push or file write), so
// gauges are used where a long-running controller would count. Where the generic cloud-provider
// controllers have an equivalent, its name is used (docs/metrics.md lists both).
import type { RequestRecord } from '../cloudscale/request-counter.js';
import type { PassRecord } from '../status/record.js';
import { isErrorAnswer } from '../status/record.js';
import { histogramSamples, type MetricFamily, type Sample } from './exposition.js';

/** Request durations: from a fast read to the client's per-request timeout. */
const REQUEST_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
/** Node creation to taint removal: seconds to the few minutes a new server takes to boot. */
const TAINT_REMOVAL_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800];

const NODE_CHANGES = new Set(['initialized', 'refreshed', 'tainted', 'untainted', 'deleted']);

export interface PassMetricsInput {
  readonly record: PassRecord;
  /** The cloudscale API attempts of the pass. */
  readonly requests: readonly RequestRecord[];
  /** Creation-to-taint-removal delays of the Nodes the pass initialised, in milliseconds. */
  readonly taintRemovalDelaysMs: readonly number[];
}

export function passMetrics({ record, requests, taintRemovalDelaysMs }: PassMetricsInput): MetricFamily[] {
  const command = { command: record.command };
  const gauge = (name: string, help: string, samples: Sample[]): MetricFamily => ({ name, help, type: 'gauge', samples });
  const seconds = (iso: string) => Date.parse(iso) / 1000;
  const changed =
    Object.entries(record.nodes?.byOutcome ?? {})
      .filter(([outcome]) => NODE_CHANGES.has(outcome))
      .reduce((sum, [, count]) => sum + count, 0) +
    (record.services?.byStatus.changed ?? 0) +
    (record.cleanup?.deleted ?? 0);

  return [
    gauge('cloudscale_ccm_build_info', 'The version of cloudscale-ccm that ran the pass (always 1).', [
      { labels: { ...command, version: record.version }, value: 1 },
    ]),
    gauge('cloudscale_ccm_pass_duration_seconds', 'How long the pass took.', [{ labels: command, value: record.durationMs / 1000 }]),
    gauge(
      'cloudscale_ccm_pass_result',
      'The result of the pass: 1 for the one it had (succeeded, partial: some objects failed, failed: the pass stopped), 0 for the others.',
      (['succeeded', 'partial', 'failed'] as const).map((result) => ({
        labels: { ...command, result },
        value: record.result === result ? 1 : 0,
      })),
    ),
    gauge('cloudscale_ccm_pass_end_timestamp_seconds', 'When the pass ended (Unix time).', [
      { labels: command, value: seconds(record.finishedAt) },
    ]),
    gauge(
      'cloudscale_ccm_last_success_timestamp_seconds',
      'When the last pass of this command that succeeded ended (Unix time); alert when it is too old.',
      record.lastSuccessAt === null ? [] : [{ labels: command, value: seconds(record.lastSuccessAt) }],
    ),
    gauge(
      'cloudscale_ccm_nodes',
      'Nodes the pass looked at, by outcome (initialized, refreshed, in-sync, failed …).',
      Object.entries(record.nodes?.byOutcome ?? {}).map(([outcome, count]) => ({ labels: { ...command, outcome }, value: count })),
    ),
    gauge(
      'cloudscale_ccm_services',
      'Services of type LoadBalancer the pass reconciled, by status (changed, unchanged, failed).',
      Object.entries(record.services?.byStatus ?? {}).map(([status, count]) => ({ labels: { ...command, status }, value: count })),
    ),
    gauge(
      'cloudscale_ccm_services_waiting_for_ip',
      'Services of type LoadBalancer that still have no address in status.loadBalancer after the pass.',
      record.services === null ? [] : [{ labels: command, value: record.services.waitingForIp }],
    ),
    gauge('cloudscale_ccm_objects_changed', 'Nodes, Services and load balancers the pass changed.', [{ labels: command, value: changed }]),
    gauge('cloudscale_ccm_objects_failed', 'Nodes and Services that failed in the pass.', [
      { labels: command, value: record.failing.items.length + record.failing.omitted },
    ]),
    gauge('cloudscale_ccm_changes_held_back', 'Changes planned but held back in the pass (downtime budget).', [
      { labels: command, value: record.held.items.length + record.held.omitted },
    ]),
    {
      name: 'cloudprovider_cloudscale_api_request_duration_seconds',
      help: 'Duration of the cloudscale API requests of the pass (every attempt), by method and route.',
      type: 'histogram',
      samples: byRequest(requests).flatMap(([labels, group]) =>
        histogramSamples(
          'cloudprovider_cloudscale_api_request_duration_seconds',
          REQUEST_BUCKETS,
          group.map((r) => r.durationMs / 1000),
          { ...command, ...labels },
        ),
      ),
    },
    {
      name: 'cloudprovider_cloudscale_api_request_errors',
      help: 'cloudscale API attempts of the pass answered with an error status (429 included) or not answered, by method and route.',
      type: 'counter',
      samples: byRequest(requests).map(([labels, group]) => ({
        labels: { ...command, ...labels },
        value: group.filter(isErrorAnswer).length,
      })),
    },
    {
      name: 'node_controller_cloud_provider_taint_removal_delay_seconds',
      help: 'For each Node the pass initialised: seconds from its creation to the removal of its uninitialized taint.',
      type: 'histogram',
      samples:
        taintRemovalDelaysMs.length === 0
          ? []
          : histogramSamples(
              'node_controller_cloud_provider_taint_removal_delay_seconds',
              TAINT_REMOVAL_BUCKETS,
              taintRemovalDelaysMs.map((ms) => ms / 1000),
              command,
            ),
    },
  ];
}

/** Requests grouped by method and route, in a stable order. */
function byRequest(requests: readonly RequestRecord[]): [{ method: string; route: string }, RequestRecord[]][] {
  const groups = new Map<string, RequestRecord[]>();
  for (const request of requests) {
    const key = `${request.method} ${request.route}`;
    groups.set(key, [...(groups.get(key) ?? []), request]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, group]) => [{ method: group[0]!.method, route: group[0]!.route }, group]);
}
