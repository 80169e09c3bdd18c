// `cloudscale-ccm cleanup`: deletes the load balancers this cluster left behind, or, with --all,
// every load balancer of this cluster (before the cluster itself is deleted). Untagged load
// balancers and those of other clusters are never touched, and Floating IPs are never deleted: a
// deleted load balancer's Floating IPs stay in the project, unassigned.
//
// A deletion cannot be undone, so it rests on definite evidence, under the writers' Lease (no
// sync-lb creates a load balancer meanwhile). The load balancers are read before the Services,
// so a load balancer created before the Services were read is seen with its Service. Then:
// - an orphan is a load balancer tagged for this cluster that no live Service refers to, by the
//   service-uid tag, the `loadbalancer-uuid` annotation or the name; before it is deleted, the
//   Service named in its tags is read by name and must be gone (404) or another Service that
//   does not refer to it (a list that came back short once deletes nothing);
// - a stray is one tagged for a live Service that uses another load balancer (its
//   `loadbalancer-uuid` names another one, which answers by UUID): what a pass killed between
//   creating a load balancer and recording it leaves behind when the name changed meanwhile.
import { stringify as toYaml } from 'yaml';
import type { V1Service } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../core/cloudscale/client.js';
import type { LoadBalancer } from '../core/cloudscale/types.js';
import { CloudscaleApiError, PartialFailureError, UsageError, errorMessage } from '../core/errors.js';
import type { KubeConnection } from '../core/kube/connection.js';
import { getService, listServices } from '../core/kube/services.js';
import { loadBalancerReferences } from '../core/lb/actual.js';
import { parseOwnershipTags } from '../core/lb/annotations.js';
import { resultDocument } from '../core/render/document.js';
import type { CommandContext } from './context.js';
import { asWriter, type WriterOptions } from './writer.js';

export interface CleanupOptions extends WriterOptions {
  all: boolean;
  yes: boolean;
  dryRun: boolean;
}

export interface CleanupCandidate {
  readonly name: string;
  readonly uuid: string;
  readonly service: string | null;
  /** `orphan`: no live Service refers to it; `stray`: its Service uses another one; `all`: --all. */
  readonly kind: 'orphan' | 'stray' | 'all';
  readonly why: string;
}

export interface CleanupReport {
  readonly version: 1;
  readonly clusterId: string;
  readonly dryRun: boolean;
  readonly candidates: readonly CleanupCandidate[];
  readonly deleted: readonly string[];
  /** Candidates of the lists that a read by name or UUID showed to be still in use. */
  readonly kept: readonly { readonly uuid: string; readonly name: string; readonly why: string }[];
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

export async function cleanupCommand(options: CleanupOptions, ctx: CommandContext): Promise<CleanupReport> {
  if (options.dryRun) return cleanupPass(options, ctx);
  return asWriter('cleanup', ctx, options, (leased) => cleanupPass(options, leased));
}

async function cleanupPass(options: CleanupOptions, ctx: CommandContext): Promise<CleanupReport> {
  const conn = ctx.kube();
  const [cloud, clusterId] = await Promise.all([ctx.cloudscale(), ctx.clusterId()]);
  // Load balancers first, then Services: see the contract at the top.
  const loadBalancers = await cloud.loadBalancers.list();
  const services = await listServices(conn);
  const candidates = cleanupCandidates(loadBalancers, clusterId, services, options.all);
  const byUuid = new Map(loadBalancers.map((lb) => [lb.uuid, lb]));

  const text = ctx.globals.output === 'text';
  if (text) {
    if (candidates.length === 0) ctx.stdout.write(`nothing to clean up for cluster ${clusterId}\n`);
    for (const c of candidates) ctx.stdout.write(`load balancer ${c.name} (${c.uuid}): ${c.why}\n`);
  }
  const deleted: string[] = [];
  const kept: CleanupReport['kept'][number][] = [];
  const failures: { object: string; error: Error }[] = [];
  const done = (): CleanupReport => ({ version: 1, clusterId, dryRun: options.dryRun, candidates, deleted, kept });
  if (!options.dryRun && candidates.length > 0) {
    if (!options.yes) {
      if (!ctx.interactive) {
        throw new UsageError(`cleanup would delete ${candidates.length} load balancer(s) and needs a confirmation`, {
          hint: 'pass --yes to delete without asking (or --dry-run to only list them)',
        });
      }
      const what = options.all ? 'EVERY load balancer of this cluster' : `${candidates.length} load balancer(s)`;
      if (!(await ctx.confirm(`Delete ${what}? Their Floating IPs stay in the project, unassigned. [y/N] `))) {
        if (text) ctx.stdout.write('nothing deleted\n');
        return done();
      }
    }
    for (const candidate of candidates) {
      ctx.signal.throwIfAborted();
      const lb = byUuid.get(candidate.uuid)!;
      try {
        const inUse = await stillInUse(candidate, lb, conn, cloud);
        if (inUse !== null) {
          kept.push({ uuid: lb.uuid, name: lb.name, why: inUse });
          if (text) ctx.stdout.write(`kept load balancer ${lb.name}: ${inUse}\n`);
          continue;
        }
        await cloud.deleteByHref(lb.href);
        deleted.push(candidate.uuid);
        if (text) ctx.stdout.write(`deleted load balancer ${candidate.name}\n`);
      } catch (error) {
        failures.push({ object: `load balancer ${candidate.name}`, error: error instanceof Error ? error : new Error(errorMessage(error)) });
      }
    }
  }
  const report = done();
  const document = resultDocument('CleanupResult', 1, report);
  if (ctx.globals.output === 'json') ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  if (ctx.globals.output === 'yaml') ctx.stdout.write(toYaml(document));
  if (failures.length > 0) {
    throw new PartialFailureError(`cleanup: ${failures.length} of ${candidates.length} load balancer(s) could not be deleted`, failures);
  }
  return report;
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
