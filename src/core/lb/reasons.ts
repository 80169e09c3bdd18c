// Why an object is replaced, in the words of a plan: which Service field or annotation changed,
// from what to what. Pure; shared by the planner and the strategies.
import type { HealthMonitor, MemberState } from '../cloudscale/types.js';
import type { Reason } from './actions.js';
import type { ActualPool } from './actual.js';
import { LB_ANNOTATIONS } from './annotations.js';
import type { DesiredMember, DesiredMonitor, DesiredPool } from './desired.js';

/** How a plan names a Service port: `http TCP 80`, or `TCP 80` for an unnamed one. */
export function describePort(pool: DesiredPool): string {
  const { name, protocol, port } = pool.port;
  return `${name === '' ? '' : `${name} `}${protocol} ${port}`;
}

export function poolRecreationReason(old: ActualPool, pool: DesiredPool): Reason {
  if (old.pool.name !== pool.name) {
    return {
      text: `the Service port was renamed: pool ${old.pool.name} is replaced by ${pool.name}`,
      field: 'spec.ports[].name',
      from: old.pool.name,
      to: pool.name,
    };
  }
  if (old.pool.algorithm !== pool.algorithm) {
    return {
      text: `the pool algorithm cannot change in place: pool ${pool.name} is replaced`,
      field: LB_ANNOTATIONS.poolAlgorithm.key,
      from: old.pool.algorithm,
      to: pool.algorithm,
    };
  }
  return {
    text: `the pool protocol cannot change in place: pool ${pool.name} is replaced`,
    field: LB_ANNOTATIONS.poolProtocol.key,
    from: old.pool.protocol,
    to: pool.protocol,
  };
}

export function memberGoneReason(member: MemberState, pool: DesiredPool): Reason {
  return {
    text: `${member.address} is no longer the private address of a selected node (pool ${pool.name})`,
  };
}

export function memberChangeReason(have: MemberState, want: DesiredMember, pool: DesiredPool): Reason {
  const haveMonitor = have.monitor_port ?? have.protocol_port;
  if (have.protocol_port !== want.protocol_port) {
    return {
      text: 'the node port changed: a new member replaces this one',
      field: `spec.ports[${pool.port.name || 0}].nodePort`,
      from: String(have.protocol_port),
      to: String(want.protocol_port),
    };
  }
  if (haveMonitor !== want.monitor_port) {
    return {
      text: 'the health-check port changed (externalTrafficPolicy Local checks healthCheckNodePort): a new member replaces this one',
      field: 'spec.externalTrafficPolicy',
      from: `monitor_port ${haveMonitor}`,
      to: `monitor_port ${want.monitor_port}`,
    };
  }
  return {
    text: 'the subnet of the address changed: a new member replaces this one',
    field: 'subnet',
    from: `${have.subnet.cidr} (${have.subnet.uuid})`,
    to: `${want.subnet.cidr} (${want.subnet.uuid})`,
  };
}

/**
 * Why a monitor is recreated, its `from` and `to` naming every field that differs, each as
 * `name value` (`type tcp` → `type http, http.url_path /livez, …`): a path or a timing that
 * changes with the type is said, not only the type and HTTP version that force the recreation.
 */
export function monitorRecreationReason(have: HealthMonitor, want: DesiredMonitor): Reason {
  const before = monitorFields(have);
  const after = monitorFields(want);
  const differing = [...new Set([...before.keys(), ...after.keys()])].filter((key) => before.get(key) !== after.get(key));
  const side = (fields: ReadonlyMap<string, string>) =>
    differing.flatMap((key) => (fields.has(key) ? [`${key} ${fields.get(key)}`] : [])).join(', ') || '(none)';
  const from = side(before);
  const to = side(after);
  const livez = (m: { type: string; http: { url_path: string } | null }) => m.type === 'http' && m.http?.url_path === '/livez';
  const field =
    livez(have) !== livez(want)
      ? 'spec.externalTrafficPolicy'
      : have.type !== want.type
        ? LB_ANNOTATIONS.healthMonitorType.key
        : LB_ANNOTATIONS.healthMonitorHttp.key;
  return { text: 'the monitor type or HTTP version cannot change in place: the monitor is recreated', field, from, to };
}

/** A monitor's fields by name (`http.<name>` for its http options; a missing version is 1.1, as the API answers). */
export function monitorFields(monitor: Pick<DesiredMonitor, 'type' | 'delay_s' | 'timeout_s' | 'up_threshold' | 'down_threshold' | 'http'>): Map<string, string> {
  const fields = new Map<string, string>([
    ['type', monitor.type],
    ['delay_s', String(monitor.delay_s)],
    ['timeout_s', String(monitor.timeout_s)],
    ['up_threshold', String(monitor.up_threshold)],
    ['down_threshold', String(monitor.down_threshold)],
  ]);
  const { http } = monitor;
  if (http !== null) {
    fields.set('http.version', http.version || '1.1');
    fields.set('http.url_path', http.url_path);
    fields.set('http.method', http.method);
    fields.set('http.expected_codes', JSON.stringify(http.expected_codes));
    if (http.host) fields.set('http.host', http.host);
  }
  return fields;
}
