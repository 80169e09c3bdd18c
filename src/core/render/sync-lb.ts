// The result of a `sync-lb` pass as a document (-o json|yaml: SyncLbReport) and as text: a line
// per plan warning, a paragraph per change the downtime budget held back, and the summary line.
import type { ServiceOutcome } from '../apply/lb-pass.js';
import type { RequestSummary } from '../cloudscale/request-counter.js';
import { budgetLine } from '../cloudscale/request-counter.js';
import type { PlannedAction } from '../lb/actions.js';
import { LB_ANNOTATIONS } from '../lb/annotations.js';
import { approvalHint } from '../plan/budget.js';
import type { PlanWarning } from '../lb/problems.js';
import { escapeUnprintable } from '../text/untrusted.js';
import { counted } from '../text/wording.js';

export const SYNC_LB_JSON_VERSION = 1;

export interface SyncLbReport {
  readonly version: typeof SYNC_LB_JSON_VERSION;
  readonly services: readonly ServiceReport[];
  /** The pass's cloudscale API budget: attempts, retries, 429 answers and waits (see RequestSummary). */
  readonly requests: Pick<RequestSummary, 'total' | 'reads' | 'writes' | 'retries' | 'throttled' | 'waitedMs'>;
  readonly durationMs: number;
  /**
   * Load balancers tagged with this cluster's id but another cluster's kube-system uid: another
   * cluster shares the cluster id (a warning, not a failure); null when there are none.
   */
  readonly sharedClusterId: { readonly message: string; readonly loadBalancers: readonly string[] } | null;
}

export interface ServiceReport {
  readonly service: string;
  readonly status: ServiceOutcome['status'];
  readonly loadBalancer: { readonly name: string; readonly uuid: string | null } | null;
  readonly actions: readonly { readonly kind: PlannedAction['kind']; readonly object: string; readonly ms: number }[];
  readonly errors: readonly { readonly message: string; readonly hint?: string }[];
  /** The Service wants a load balancer and still has no address in status.loadBalancer. */
  readonly waitingForIp: boolean;
  /**
   * Changes a downtime budget held back in this pass (absent when none); `approvalMismatch` is the
   * id the Service's approval annotation carries when it names another change (it approves nothing).
   */
  readonly held?: readonly { readonly id: string; readonly reason: string; readonly approvalMismatch?: string }[];
  /**
   * What the plan warned about, each also a Warning Event (absent when none): members kept
   * because nothing up would replace them, a swap held, why the load balancer is in `error`.
   */
  readonly warnings?: readonly PlanWarning[];
}

/** The text view of a pass's report: warnings, held changes, then the summary line. */
export function renderSyncLbText(report: SyncLbReport): string {
  return `${warningLines(report)}${heldLines(report)}${summaryLine(report)}\n`;
}

/** One line per warning of a Service's plan, as `plan` shows it. */
function warningLines(report: SyncLbReport): string {
  return report.services
    .flatMap((s) => (s.warnings ?? []).map((w) => `warning: service/${s.service} ${w.reason}: ${escapeUnprintable(w.message)}\n`))
    .join('');
}

/** One paragraph per held change: what, its downtime against the budget, and how to approve it. */
function heldLines(report: SyncLbReport): string {
  return report.services
    .flatMap((s) =>
      (s.held ?? []).map((h) => {
        const [namespace, name] = s.service.split('/') as [string, string];
        const mismatch =
          h.approvalMismatch === undefined
            ? ''
            : `  the approval ${escapeUnprintable(h.approvalMismatch)} (annotation ${LB_ANNOTATIONS.approveChange.key}) names another change than the pending ${h.id}: nothing is approved\n`;
        return `held: service/${s.service} change ${h.id}: ${escapeUnprintable(h.reason)}\n${mismatch}  ${escapeUnprintable(approvalHint(h.id, namespace, name))}\n`;
      }),
    )
    .join('');
}

function summaryLine(report: SyncLbReport): string {
  const count = (status: ServiceOutcome['status']) => report.services.filter((s) => s.status === status).length;
  return (
    `sync-lb: ${counted(report.services.length, 'Service')}: ${count('changed')} changed, ${count('unchanged')} in sync, ` +
    `${count('failed')} failed${heldCount(report)}; ${budgetLine(report.requests)} in ${(report.durationMs / 1000).toFixed(1)} s`
  );
}

/** `, 1 change held back` when the budget held any (they are not failures). */
function heldCount(report: SyncLbReport): string {
  const held = report.services.reduce((n, s) => n + (s.held?.length ?? 0), 0);
  return held === 0 ? '' : `, ${held} change${held === 1 ? '' : 's'} held back`;
}
