// The text of `status service/NAME`: the load balancer, each listener port and whether it serves
// (and why not), then each pool with its health check and one line per member.
import type { ServiceLbView } from '../status/service-view.js';
import { escapeUnprintable } from '../text/untrusted.js';

export function serviceLbText(view: ServiceLbView): string {
  const lb = view.loadBalancer;
  if (lb === null) {
    return lines([
      `service ${view.service}: no load balancer found (by its loadbalancer-uuid annotation, its name, or this cluster's tags)`,
      `  a pass creates it; \`cloudscale-ccm plan -n ${view.service.split('/')[0]} service/${view.service.split('/')[1]}\` shows what it would do`,
    ]);
  }
  const out = [`service ${view.service}: load balancer ${lb.name} (${lb.uuid}), ${lb.status}, ${lb.zone}, VIP ${lb.vipAddresses.join(', ') || 'none'}`];
  out.push('listeners:');
  if (view.listeners.length === 0) out.push('  none');
  for (const l of view.listeners) {
    const pool = l.pool === null ? 'no pool' : `pool ${l.pool}`;
    const state = l.serving ? `serving (${l.membersUp} taking traffic)` : `NOT serving: ${l.why.join('; ')}`;
    const cidrs = l.allowedCidrs.length === 0 ? '' : `, from ${l.allowedCidrs.join(', ')} only`;
    out.push(`  ${l.protocol}/${l.port} → ${pool}${cidrs}: ${state}`);
  }
  for (const pool of view.pools) {
    const check = pool.healthCheck;
    const monitor =
      check === null
        ? 'no health check'
        : `health check ${check.check} every ${check.delaySeconds} s, up after ${check.upThreshold}, down after ${check.downThreshold}`;
    out.push(`pool ${pool.name} (${pool.protocol}, ${pool.algorithm}; ${monitor}):`);
    if (pool.members.length === 0) out.push('  no members');
    const rows = pool.members.map((m) => [
      m.node ?? '(no node)',
      `${m.address}:${m.port}`,
      m.enabled ? 'enabled' : 'disabled',
      m.monitorStatus,
      [
        m.checkedPort === m.port ? '' : `checked on port ${m.checkedPort}`,
        m.draining === null
          ? ''
          : `draining since ${m.draining.since}${m.draining.until === null ? '' : `, removed by the first pass after ${m.draining.until} (--drain-seconds ${view.drainSeconds})`}`,
      ]
        .filter((part) => part !== '')
        .join('; '),
    ]);
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
    for (const row of rows) out.push(`  ${row.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join('  ').trimEnd()}`);
  }
  return lines(out);
}

/** Names and reasons come from API answers and objects: each line is escaped on its own. */
function lines(out: readonly string[]): string {
  return `${out.map(escapeUnprintable).join('\n')}\n`;
}
