// A saved plan (`plan --out FILE`, `apply FILE`): the plan document, what it was planned for
// (cluster, cloudscale API, Services, options), and a fingerprint of every input the planner
// read. All of it is pure: reading files, the cluster and the cloud is the command's business.
//
// The contract: `apply` executes a saved plan only when the fingerprint of the state it reads
// again equals the saved one AND planning that state again gives the saved actions; otherwise
// the plan is stale and nothing is written. The file's integrity digest catches truncation and
// edits by hand; it is no signature (whoever can write the file can recompute it).
import { createHash } from 'node:crypto';
import type { V1Service } from '@kubernetes/client-node';
import { ConfigError, RefusedError } from '../errors.js';
import { toNodeSnapshot } from '../kube/nodes.js';
import { findLoadBalancer } from '../lb/actual.js';
import { LB_ANNOTATIONS } from '../lb/annotations.js';
import { parseProviderId } from '../nodes/provider-id.js';
import type { PlannedAction } from '../lb/actions.js';
import { restoreHeld } from '../lb/budget.js';
import type { ServicePlan } from '../lb/planner.js';
import { MEMBER_DRAINING_TAG } from '../lb/strategies.js';
import type { NodeAction } from '../nodes/types.js';
import type { PlanDocument } from '../render/plan.js';
import { servicesInPlay, type LbPassSnapshot } from './snapshot.js';

export const SAVED_PLAN_FORMAT = 'cloudscale-ccm/plan';
/** Bumped on any change of the file's meaning; an older tool refuses a newer file. */
export const SAVED_PLAN_VERSION = 1;

/** What a plan was made against; `apply` refuses a plan made against anything else. */
export interface PlanTarget {
  readonly clusterId: string;
  readonly kubeSystemUid: string;
  /** The API server URL the plan was read from: shown in messages, not compared (one cluster has many). */
  readonly server: string;
  /** The cloudscale API base URL. */
  readonly apiUrl: string;
}

/** Which Services a saved plan covers: every one in play (with the Nodes), or the named ones. */
export type SavedSelection = { readonly all: true } | { readonly names: readonly { readonly namespace: string; readonly name: string }[] };

export interface SavedPlanContent {
  readonly format: typeof SAVED_PLAN_FORMAT;
  readonly version: typeof SAVED_PLAN_VERSION;
  readonly cluster: { readonly clusterId: string; readonly kubeSystemUid: string; readonly server: string };
  readonly api: { readonly url: string };
  readonly createdAt: string;
  readonly selection: SavedSelection;
  /** The options the plan was made with; `apply` plans again with the same ones. */
  readonly options: { readonly drainSeconds: number; readonly maxNodeDeletions: number | null };
  /** Input → digest (or resourceVersion) of everything the planner read; see fingerprintOf. */
  readonly fingerprint: Readonly<Record<string, string>>;
  readonly plan: PlanDocument;
}

export interface SavedPlanFile extends SavedPlanContent {
  /** `sha256:` and the hex digest of canonicalJson(content without this field). */
  readonly integrity: string;
}

/** JSON with object keys sorted at every level (and undefined fields dropped): one text per value. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

function digest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

/** The file's text: the content, its integrity digest, indented for people reading a review. */
export function serializeSavedPlan(content: SavedPlanContent): string {
  // Through JSON first: the digest must be of exactly what a reader will parse back.
  const plain = JSON.parse(JSON.stringify(content)) as SavedPlanContent;
  const file: SavedPlanFile = { ...plain, integrity: digest(plain) };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * Parses and checks a saved plan before anything is contacted: JSON, format, version,
 * integrity. `source` names the file in messages. Every refusal is a ConfigError naming what is
 * wrong and what to do.
 */
export function parseSavedPlan(text: string, source: string): SavedPlanFile {
  const again = 'run `cloudscale-ccm plan --out FILE` again and apply the new file';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${source} is not a saved plan: it is not valid JSON (${(error as Error).message}); the file is truncated or damaged`, {
      hint: again,
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(`${source} is not a saved plan: it holds no JSON object`, { hint: again });
  }
  const file = value as Partial<Record<keyof SavedPlanFile, unknown>>;
  if (file.format !== SAVED_PLAN_FORMAT) {
    const format = file.format === undefined ? 'it has no "format" field' : `its format is ${JSON.stringify(file.format)}`;
    throw new ConfigError(`${source} is not a saved plan: ${format}, not "${SAVED_PLAN_FORMAT}"`, {
      hint: 'pass a file written by `cloudscale-ccm plan --out FILE` (the output of `plan -o json` cannot be applied)',
    });
  }
  if (typeof file.version !== 'number' || !Number.isInteger(file.version) || file.version < 1) {
    throw new ConfigError(`${source}: the plan format version ${JSON.stringify(file.version)} is not valid`, { hint: again });
  }
  if (file.version > SAVED_PLAN_VERSION) {
    throw new ConfigError(
      `${source} was written in plan format version ${file.version}; this cloudscale-ccm reads version ${SAVED_PLAN_VERSION}`,
      { hint: 'apply it with the cloudscale-ccm version that wrote it, or plan again with this one' },
    );
  }
  if (typeof file.integrity !== 'string') {
    throw new ConfigError(`${source} has no integrity digest: it was not written by \`plan --out\`, or it was cut short`, { hint: again });
  }
  const { integrity, ...content } = file;
  if (digest(content) !== integrity) {
    throw new ConfigError(`${source} was changed after \`plan --out\` wrote it: its content does not match its integrity digest`, {
      hint: `a saved plan cannot be edited; ${again}`,
    });
  }
  // The digest matches: the rest was written by a tool of this version, so its shape is trusted.
  return file as unknown as SavedPlanFile;
}

/**
 * Refuses a plan made against another cluster or another cloudscale API: its load balancers,
 * Services and tags would be another's. The cluster is known by its id and its kube-system uid.
 */
export function checkPlanTarget(file: SavedPlanFile, current: PlanTarget, source: string): void {
  const planned = file.cluster;
  if (planned.clusterId !== current.clusterId || planned.kubeSystemUid !== current.kubeSystemUid) {
    const which =
      planned.kubeSystemUid !== current.kubeSystemUid
        ? `kube-system uid ${planned.kubeSystemUid}, this one ${current.kubeSystemUid}`
        : `cluster id ${planned.clusterId}, this one ${current.clusterId}`;
    throw new RefusedError(`${source} was planned against another cluster (${planned.server}: ${which}); nothing was applied`, {
      hint: 'select that cluster (--kubeconfig, --context, --cluster-id), or plan again against this one',
    });
  }
  if (normaliseUrl(file.api.url) !== normaliseUrl(current.apiUrl)) {
    throw new RefusedError(`${source} was planned against the cloudscale API at ${file.api.url}, not ${current.apiUrl}; nothing was applied`, {
      hint: 'set --api-url (or CLOUDSCALE_API_URL) to the API the plan was made against, or plan again',
    });
  }
}

function normaliseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Everything the load-balancer planner and the node pass read, one entry per object, keyed by
 * what a person recognises: the resourceVersion of each Service in play and of every other
 * Service of type LoadBalancer (their Floating IPs and ports conflict), a digest of each Node as
 * the passes see it (labels, annotations, taints, providerID, addresses, readiness: not the
 * resourceVersion, which the kubelet's status reports bump every few minutes), a digest of each
 * server, subnet and Floating IP, and of each load balancer in play with its pools, members,
 * listeners and health monitors, and what reads by UUID answered.
 */
export function fingerprintOf(snapshot: LbPassSnapshot, selection: SavedSelection): Record<string, string> {
  const entries: [string, string][] = [];
  entries.push([
    'API server',
    `minor version ${snapshot.apiServerMinor ?? 'unknown'}, ipMode ${snapshot.ipModeKept ? 'kept' : 'dropped'}`,
  ]);
  const inPlay = servicesInPlay(snapshot.services, selection);
  const considered = new Set<V1Service>([...inPlay, ...snapshot.services.filter((s) => s.spec?.type === 'LoadBalancer')]);
  for (const service of considered) {
    entries.push([`service ${service.metadata?.namespace}/${service.metadata?.name}`, `resourceVersion ${service.metadata?.resourceVersion}, ${digest(serviceContent(service))}`]);
  }
  if ('names' in selection) {
    for (const { namespace, name } of selection.names) {
      const key = `service ${namespace}/${name}`;
      if (!entries.some(([k]) => k === key)) entries.push([key, 'absent']);
    }
  }
  for (const node of snapshot.nodes) {
    const { resourceVersion: _bumpedByHeartbeats, ...seen } = toNodeSnapshot(node);
    entries.push([`node ${seen.name}`, digest(seen)]);
  }
  const lbUuids = new Set<string>();
  for (const service of inPlay) {
    try {
      const lb = findLoadBalancer(service, snapshot.loadBalancers, snapshot.clusterId);
      if (lb !== undefined) lbUuids.add(lb.uuid);
    } catch {
      // An ambiguous lookup: the planner refuses that Service; its candidates are fingerprinted below.
    }
  }
  for (const lb of snapshot.loadBalancers) {
    if (lbUuids.has(lb.uuid)) entries.push([`load balancer ${lb.name} (${lb.uuid})`, digest(lb)]);
  }
  for (const pool of snapshot.pools) {
    if (!lbUuids.has(pool.load_balancer.uuid)) continue;
    entries.push([`pool ${pool.name} (${pool.uuid})`, digest(pool)]);
    const unreadable = snapshot.unreadablePools.get(pool.uuid);
    entries.push([`members of pool ${pool.name} (${pool.uuid})`, unreadable === undefined ? digest(snapshot.membersByPool[pool.uuid] ?? []) : `unreadable: ${unreadable}`]);
  }
  for (const listener of snapshot.listeners) {
    if (lbUuids.has(listener.load_balancer.uuid)) {
      entries.push([`listener ${listener.name} (${listener.uuid})`, digest(listener)]);
    }
  }
  const poolUuids = new Set(snapshot.pools.filter((p) => lbUuids.has(p.load_balancer.uuid)).map((p) => p.uuid));
  for (const monitor of snapshot.monitors) {
    if (poolUuids.has(monitor.pool.uuid)) entries.push([`health monitor ${monitor.uuid}`, digest(monitor)]);
  }
  // The servers the cluster's objects point at (by a Node's name or providerID, or a member's
  // address): a project may hold other clusters' servers, whose every restart must not make
  // this plan stale. One left out that changes the plan after all is caught when the plan is
  // made again (planDifferences). Floating IPs are few and move rarely: all of them count.
  const memberAddresses = new Set(Object.values(snapshot.membersByPool).flatMap((members) => members.map((m) => m.address)));
  const nodeRefs = new Set(snapshot.nodes.flatMap((node) => [node.metadata?.name ?? '', providerUuid(node.spec?.providerID)]));
  for (const server of snapshot.servers) {
    const { uuid, name, status, zone, interfaces, tags } = server;
    const addresses = interfaces.flatMap((i) => i.addresses.map((a) => a.address));
    if (!nodeRefs.has(uuid) && !nodeRefs.has(name) && !addresses.some((a) => memberAddresses.has(a))) continue;
    entries.push([`server ${name} (${uuid})`, digest({ uuid, name, status, zone, interfaces, tags })]);
  }
  for (const ip of snapshot.floatingIps) entries.push([`floating IP ${ip.network}`, digest(ip)]);
  for (const subnet of snapshot.subnets) entries.push([`subnet ${subnet.cidr} (${subnet.uuid})`, digest(subnet)]);
  for (const [uuid, lookup] of snapshot.uuidLookups) {
    entries.push([`load balancer ${uuid} read by UUID`, lookup.kind === 'gone' ? 'gone' : `unreadable: ${lookup.error}`]);
  }
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** What differs between the saved fingerprint and the current one, one line per input. */
export function fingerprintChanges(saved: Readonly<Record<string, string>>, current: Readonly<Record<string, string>>): string[] {
  const changes: string[] = [];
  for (const [key, was] of Object.entries(saved)) {
    const now = current[key];
    if (now === undefined) changes.push(`${key} is gone`);
    else if (!sameInput(was, now)) changes.push(`${key} changed${changeDetail(was.replace(SERVICE_VALUE, '$1'), now.replace(SERVICE_VALUE, '$1'))}`);
  }
  for (const key of Object.keys(current)) if (!(key in saved)) changes.push(`${key} appeared`);
  return changes;
}

/**
 * What a plan rests on of a Service: all of it but the API server's bookkeeping (resourceVersion,
 * managedFields) and this tool's record of the changes it announced (announced-changes). A
 * budgeted pass writes that record when it holds a change, and a plan saved before that pass
 * must stay applicable: the record changes nothing any pass plans.
 */
function serviceContent(service: V1Service): unknown {
  const { resourceVersion: _version, managedFields: _managers, ...metadata } = service.metadata ?? {};
  const { [LB_ANNOTATIONS.announcedChanges.key]: _announced, ...annotations } = metadata.annotations ?? {};
  return { metadata: { ...metadata, annotations }, spec: service.spec, status: service.status };
}

/** A Service's fingerprint value: `resourceVersion N, sha256:…`; the digest decides, the version is for people. */
const SERVICE_VALUE = /^(resourceVersion \S+), (sha256:[0-9a-f]+)$/;

/** Whether an input is unchanged: a Service by its content digest, every other input by its value. */
function sameInput(was: string, now: string): boolean {
  const a = SERVICE_VALUE.exec(was);
  const b = SERVICE_VALUE.exec(now);
  return a !== null && b !== null ? a[2] === b[2] : was === now;
}

function providerUuid(providerId: string | undefined): string {
  const parsed = parseProviderId(providerId);
  return parsed.kind === 'cloudscale' ? parsed.uuid : '';
}

/** The values of a changed input where they say something (a digest says nothing to a person). */
function changeDetail(was: string, now: string): string {
  const digestOnly = (value: string) => value.startsWith('sha256:');
  if (digestOnly(was) && digestOnly(now)) return '';
  if (digestOnly(was)) return ` (now ${now})`;
  if (digestOnly(now)) return ` (was ${was})`;
  const label = 'resourceVersion ';
  if (was.startsWith(label) && now.startsWith(label)) return ` (${was} → ${now.slice(label.length)})`;
  return ` (${was} → ${now})`;
}

/**
 * The actions as compared between the saved plan and the plan of the state read again: plain
 * JSON (as the file holds them), with the time a drain began left out: a member drained by
 * `apply` is tagged with the time it is applied, not the time it was planned, so the drain
 * lasts its full period. A drain whose period ended between plan and apply is a difference (the
 * member would be deleted now): the plan is stale.
 */
function comparable(actions: readonly (PlannedAction | NodeAction)[]): string[] {
  return actions.map((action) => {
    const plain = JSON.parse(JSON.stringify(action)) as { kind: string; resourceVersion?: string; patch?: { tags?: Record<string, string> } };
    if (plain.kind === 'update-member' && plain.patch?.tags?.[MEMBER_DRAINING_TAG] !== undefined) {
      plain.patch.tags[MEMBER_DRAINING_TAG] = '(when applied)';
    }
    // A Node deletion is guarded by the resourceVersion read when applying (the kubelet bumps it;
    // the fingerprint covers what the plan rests on).
    if (plain.kind === 'delete-node') delete plain.resourceVersion;
    return canonicalJson(plain);
  });
}

/**
 * Where planning the current state again departs from the saved plan, one line per Service or
 * for the nodes; empty when it gives exactly the saved actions. The saved plan is compared
 * whole, its held-back actions (`plan --max-downtime`) back in place: applying it approves them.
 */
export function planDifferences(
  saved: PlanDocument,
  fresh: { readonly services: readonly ServicePlan[]; readonly nodeActions: readonly NodeAction[] | null },
): string[] {
  const differences: string[] = [];
  const freshByKey = new Map(fresh.services.filter((s) => s.mode !== 'ignore').map((s) => [serviceKey(s), s]));
  for (const plan of saved.services) {
    const now = freshByKey.get(serviceKey(plan));
    freshByKey.delete(serviceKey(plan));
    if (now === undefined) {
      differences.push(`service ${serviceKey(plan)}: no longer planned`);
      continue;
    }
    const difference = actionsDifference(restoreHeld(plan).actions, now.actions);
    if (difference !== null) differences.push(`service ${serviceKey(plan)}: ${difference}`);
  }
  for (const key of freshByKey.keys()) differences.push(`service ${key}: planned now, not in the saved plan`);
  if (saved.nodes !== null) {
    const difference = actionsDifference(saved.nodes.actions, fresh.nodeActions ?? []);
    if (difference !== null) differences.push(`nodes: ${difference}`);
  }
  return differences;
}

function actionsDifference(saved: readonly (PlannedAction | NodeAction)[], now: readonly (PlannedAction | NodeAction)[]): string | null {
  const a = comparable(saved);
  const b = comparable(now);
  const first = a.findIndex((text, i) => text !== b[i]);
  if (first === -1 && a.length === b.length) return null;
  const at = first === -1 ? a.length : first;
  const describe = (action: PlannedAction | NodeAction | undefined) => (action === undefined ? 'nothing' : `${action.kind} ${action.object}`);
  return `step ${at + 1} was ${describe(saved[at])}, is now ${describe(now[at])}`;
}

function serviceKey(plan: Pick<ServicePlan, 'service'>): string {
  return `${plan.service.namespace}/${plan.service.name}`;
}
