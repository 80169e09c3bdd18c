// Cleanup: the load balancers this cluster left behind, found and deleted on definite evidence.
// The command (src/commands/cleanup.ts) lists them, asks, and reports.
//
// A deletion cannot be undone, so it rests on definite evidence, under the writers' Lease (no
// sync-lb creates a load balancer meanwhile). The question is asked before the Lease is taken (an
// unanswered prompt must not stop every other writer), so under the Lease everything is read
// again and only what is still a candidate, unchanged, is deleted (recheckCandidates). The load
// balancers are read before the Services, so a load balancer created before the Services were
// read is seen with its Service. Then:
// - an orphan is a load balancer tagged for this cluster that no live Service refers to, by the
//   service-uid tag, the `loadbalancer-uuid` annotation or the name; before it is deleted, the
//   Service named in its tags is read by name and must be gone (404) or another Service that
//   does not refer to it (a list that came back short once deletes nothing);
// - a stray is one tagged for a live Service that uses another load balancer (its
//   `loadbalancer-uuid` names another one, which answers by UUID): what a pass killed between
//   creating a load balancer and recording it leaves behind when the name changed meanwhile.
// The cluster id is a configurable string two clusters may share by mistake, so a candidate is
// deleted only when its kube-system uid tag is this cluster's, or, without that tag, when the
// operator passed --include-untagged (cleanupOwnership in src/core/lb/cluster-identity.ts). Any
// other is kept and listed with the reason.
import type { V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../cloudscale/client.js';
import type { LoadBalancer } from '../cloudscale/types.js';
import { CloudscaleApiError, errorMessage } from '../errors.js';
import type { KubeConnection } from '../kube/connection.js';
import { getService, listServices } from '../kube/services.js';
import { loadBalancerReferences } from '../lb/actual.js';
import { parseOwnershipTags } from '../lb/ownership.js';
import { cleanupOwnership, type ClusterIdentity } from '../lb/cluster-identity.js';

export interface CleanupCandidate {
  readonly name: string;
  readonly uuid: string;
  readonly service: string | null;
  /** `orphan`: no live Service refers to it; `stray`: its Service uses another one; `all`: --all. */
  readonly kind: 'orphan' | 'stray' | 'all';
  readonly why: string;
}

/** A load balancer cleanup keeps, and why. */
export interface KeptLoadBalancer {
  readonly uuid: string;
  readonly name: string;
  readonly why: string;
}

/** What cleanup found: the candidates proven to be this cluster's, and those kept without proof. */
export interface CleanupFindings {
  readonly candidates: readonly CleanupCandidate[];
  /** Candidates of the lists that nothing proves to be this cluster's: never deleted. */
  readonly withoutProof: readonly KeptLoadBalancer[];
  readonly loadBalancers: ReadonlyMap<string, LoadBalancer>;
  /** The live Services the candidates were judged against. */
  readonly services: readonly V1Service[];
}

/** Which load balancers a cleanup may delete: `all` of this cluster, and those without the kube-system uid tag. */
export interface CleanupScope {
  readonly all: boolean;
  readonly includeUntagged: boolean;
}

/** Reads the load balancers, then the Services (see the contract above), and judges them. */
export async function findCleanupCandidates(
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  identity: ClusterIdentity,
  scope: CleanupScope,
): Promise<CleanupFindings> {
  const loadBalancers = await deps.cloud.loadBalancers.list();
  const services = await listServices(deps.conn);
  const byLists = cleanupCandidates(loadBalancers, identity.clusterId, services, scope.all);
  const byUuid = new Map(loadBalancers.map((lb) => [lb.uuid, lb]));
  return { ...provenCandidates(byLists, byUuid, identity, scope.includeUntagged), loadBalancers: byUuid, services };
}

/** Splits the candidates of the lists into those proven to be this cluster's and those kept. Pure. */
export function provenCandidates(
  candidates: readonly CleanupCandidate[],
  loadBalancers: ReadonlyMap<string, LoadBalancer>,
  identity: ClusterIdentity,
  includeUntagged: boolean,
): Pick<CleanupFindings, 'candidates' | 'withoutProof'> {
  const proven: CleanupCandidate[] = [];
  const withoutProof: KeptLoadBalancer[] = [];
  for (const candidate of candidates) {
    const ownership = cleanupOwnership(loadBalancers.get(candidate.uuid)!, identity, includeUntagged);
    if (ownership.kind === 'this-cluster') proven.push(candidate);
    else withoutProof.push({ uuid: candidate.uuid, name: candidate.name, why: ownership.why });
  }
  return { candidates: proven, withoutProof };
}

/**
 * The candidates the operator agreed to (`asked`, read before the question) that a fresh read
 * under the Lease (`now`) still shows as candidates, for the same reason, with the same name and
 * tags; every other one asked about is kept, saying what changed. A candidate that appeared
 * after the question is kept too: nobody agreed to its deletion. Pure.
 */
export function recheckCandidates(
  asked: CleanupFindings,
  now: CleanupFindings,
): { readonly findings: CleanupFindings; readonly changed: readonly KeptLoadBalancer[] } {
  const still: CleanupCandidate[] = [];
  const changed: KeptLoadBalancer[] = [];
  for (const candidate of asked.candidates) {
    const why = changeSinceAsked(candidate, asked.loadBalancers.get(candidate.uuid)!, now);
    if (why === null) still.push(now.candidates.find((c) => c.uuid === candidate.uuid)!);
    else changed.push({ uuid: candidate.uuid, name: candidate.name, why });
  }
  for (const candidate of now.candidates.filter((c) => !asked.candidates.some((a) => a.uuid === c.uuid))) {
    changed.push({ uuid: candidate.uuid, name: candidate.name, why: `became a candidate after the question (${candidate.why}); run cleanup again to delete it` });
  }
  return { findings: { ...now, candidates: still }, changed };
}

/** What changed about a candidate since the question; null when nothing did. */
function changeSinceAsked(candidate: CleanupCandidate, before: LoadBalancer, now: CleanupFindings): string | null {
  const after = now.loadBalancers.get(candidate.uuid);
  if (after === undefined) return 'it is gone since the question (deleted by someone else)';
  if (after.name !== before.name) return `it was renamed to ${after.name} since the question`;
  const tags = changedTags(before.tags, after.tags);
  if (tags.length > 0) return `its tags changed since the question: ${tags.join(', ')}`;
  const unproven = now.withoutProof.find((k) => k.uuid === candidate.uuid);
  if (unproven !== undefined) return unproven.why;
  const current = now.candidates.find((c) => c.uuid === candidate.uuid);
  if (current === undefined) {
    return `no longer left behind: ${claimOn(after, now.services) ?? `its Service ${candidate.service ?? '(unknown)'} is live and records no load balancer`}`;
  }
  if (current.why !== candidate.why) return `a candidate now for another reason (was: ${candidate.why}; now: ${current.why})`;
  return null;
}

/** `key (before → after)` for each tag that differs; `(none)` for a missing one. */
function changedTags(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((key) => before[key] !== after[key]).map((key) => `${key} (${before[key] ?? '(none)'} → ${after[key] ?? '(none)'})`);
}

/** Which live Service claims a load balancer, and how; null when none does by reference. */
function claimOn(lb: LoadBalancer, services: readonly V1Service[]): string | null {
  for (const service of services) {
    const claim = refersTo(service, lb);
    if (claim !== null) return `Service ${service.metadata?.namespace}/${service.metadata?.name} refers to it by ${claim}`;
  }
  return null;
}

export interface CleanupOutcome {
  readonly deleted: readonly string[];
  /** Candidates of the lists that a read by name or UUID showed to be still in use. */
  readonly kept: readonly KeptLoadBalancer[];
  readonly failures: readonly { readonly object: string; readonly error: Error }[];
}

/**
 * Deletes each candidate once a read confirms it (see stillInUse); one that fails is recorded and
 * the others go on. Stops between deletions when `signal` aborts.
 */
export async function deleteCleanupCandidates(
  findings: CleanupFindings,
  deps: { readonly conn: KubeConnection; readonly cloud: CloudscaleClient },
  options: { readonly signal: AbortSignal; readonly onDeleted?: (lb: LoadBalancer) => void; readonly onKept?: (lb: LoadBalancer, why: string) => void },
): Promise<CleanupOutcome> {
  const deleted: string[] = [];
  const kept: CleanupOutcome['kept'][number][] = [];
  const failures: CleanupOutcome['failures'][number][] = [];
  for (const candidate of findings.candidates) {
    options.signal.throwIfAborted();
    const lb = findings.loadBalancers.get(candidate.uuid)!;
    try {
      const inUse = await stillInUse(candidate, lb, deps.conn, deps.cloud);
      if (inUse !== null) {
        kept.push({ uuid: lb.uuid, name: lb.name, why: inUse });
        options.onKept?.(lb, inUse);
        continue;
      }
      await deps.cloud.deleteByHref(lb.href);
      deleted.push(candidate.uuid);
      options.onDeleted?.(lb);
    } catch (error) {
      failures.push({ object: `load balancer ${candidate.name}`, error: error instanceof Error ? error : new Error(errorMessage(error)) });
    }
  }
  return { deleted, kept, failures };
}

/** A live Service's claim on a load balancer, if any. */
function refersTo(service: V1Service, lb: LoadBalancer): 'uuid' | 'name' | null {
  const refs = loadBalancerReferences(service);
  if (refs.uuid === lb.uuid) return 'uuid';
  if (refs.name === lb.name) return 'name';
  return null;
}

/**
 * The load balancers `cleanup` would delete, judged from the lists; pure, so `--dry-run` and
 * the real run agree. The command confirms each by a read before it deletes it.
 */
export function cleanupCandidates(
  loadBalancers: readonly LoadBalancer[],
  clusterId: string,
  services: readonly V1Service[],
  all: boolean,
): CleanupCandidate[] {
  return loadBalancers.flatMap((lb): CleanupCandidate[] => {
    const owner = parseOwnershipTags(lb.tags);
    if (owner.kind !== 'tagged' || owner.clusterId !== clusterId) return [];
    const base = { name: lb.name, uuid: lb.uuid, service: owner.service };
    if (all) {
      return [{ ...base, kind: 'all', why: `--all: every load balancer of this cluster (Service ${owner.service ?? '(unknown)'})` }];
    }
    if (services.some((s) => refersTo(s, lb) !== null)) return [];
    const tagged = owner.serviceUid === null ? undefined : services.find((s) => s.metadata?.uid === owner.serviceUid);
    if (tagged === undefined) {
      return [{ ...base, kind: 'orphan', why: `its Service ${owner.service ?? '(unknown)'} no longer exists` }];
    }
    const used = loadBalancerReferences(tagged).uuid;
    if (used === null) return []; // its Service records no load balancer yet: nothing proves this one unused
    const name = `${tagged.metadata?.namespace}/${tagged.metadata?.name}`;
    return [{ ...base, kind: 'stray', why: `tagged for Service ${name}, which uses load balancer ${used} instead` }];
  });
}

/**
 * The definite evidence a candidate of the lists needs before it is deleted; null when it holds,
 * else why the load balancer is kept. Errors of the reads propagate: no evidence, no deletion.
 */
async function stillInUse(
  candidate: CleanupCandidate,
  lb: LoadBalancer,
  conn: KubeConnection,
  cloud: CloudscaleClient,
): Promise<string | null> {
  if (candidate.kind === 'all') return null;
  const owner = parseOwnershipTags(lb.tags);
  const serviceUid = owner.kind === 'tagged' ? owner.serviceUid : null;
  if (candidate.kind === 'orphan') {
    const named = owner.kind === 'tagged' ? owner.service : null;
    if (named === null) return null;
    const [namespace = '', name = ''] = named.split('/');
    const service = await getService(conn, namespace, name);
    if (service === undefined) return null;
    if (service.metadata?.uid === serviceUid) return `its Service ${named} exists (read by name)`;
    const claim = refersTo(service, lb);
    return claim === null ? null : `Service ${named} refers to it by ${claim} (read by name)`;
  }
  // stray: the load balancer its Service records must exist, read by UUID.
  const service = candidate.service;
  const [namespace = '', name = ''] = (service ?? '/').split('/');
  const live = await getService(conn, namespace, name);
  const used = live === undefined ? null : loadBalancerReferences(live).uuid;
  if (live === undefined || live.metadata?.uid !== serviceUid || used === null || used === lb.uuid) {
    return `its Service ${service ?? '(unknown)'} changed since it was listed`;
  }
  try {
    await cloud.loadBalancers.get(used);
    return null;
  } catch (error) {
    if (!(error instanceof CloudscaleApiError && error.isNotFound)) throw error;
    return `the load balancer ${used} that Service ${service} records is gone: this one may be its only one`;
  }
}
