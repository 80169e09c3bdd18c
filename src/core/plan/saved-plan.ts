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
import { ConfigError, RefusedError, UsageError } from '../errors.js';
import { toNodeSnapshot } from '../kube/nodes.js';
import { locatedUuids, locationOf } from '../lb/actual.js';
import { LB_ANNOTATIONS } from '../lb/annotations.js';
import { parseProviderId } from '../nodes/provider-id.js';
import { clusterIdValue, namespaceName, nonNegativeNumber, serviceName, wholeNumberFrom } from '../option-values.js';
import type { PlannedAction } from '../lb/actions.js';
import { restoreHeld } from './budget.js';
import type { ServicePlan } from '../lb/service-plan.js';
import { MEMBER_DRAINING_TAG } from '../lb/strategies/member-drain.js';
import type { NodeAction } from '../nodes/types.js';
import type { PlanDocument } from './document.js';
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
  // The digest proves no accident, not the author: whoever edits the file can seal it again.
  // So it is read like the command line that made it, its options by the flags' own rules.
  checkContent(content, (what, problem) => {
    throw new ConfigError(`${source}: ${what} ${problem}; \`plan --out\` writes no such file`, {
      hint: `the file was edited and sealed again; ${again}`,
    });
  });
  return file as unknown as SavedPlanFile;
}

/** Reports the first field that `plan --out` could not have written; `refuse` throws. */
type Refuse = (what: string, problem: string) => never;

/**
 * Checks every field `apply` reads: the types of all of them, and each option by the rule of
 * the flag it comes from (src/core/option-values.ts). The saved actions need only their shape:
 * `apply` executes the actions it plans again, after comparing them with these.
 */
function checkContent(content: Partial<Record<keyof SavedPlanContent, unknown>>, refuse: Refuse): void {
  const { cluster, api, createdAt, selection, options, fingerprint, plan } = content;
  const cl = objectAt(cluster, 'cluster', refuse);
  flagValue(stringAt(cl.clusterId, 'cluster.clusterId', refuse), 'cluster.clusterId', clusterIdValue, refuse);
  stringAt(cl.kubeSystemUid, 'cluster.kubeSystemUid', refuse);
  stringAt(cl.server, 'cluster.server', refuse);
  stringAt(objectAt(api, 'api', refuse).url, 'api.url', refuse);
  if (Number.isNaN(Date.parse(stringAt(createdAt, 'createdAt', refuse)))) refuse('createdAt', `${JSON.stringify(createdAt)} is no time`);
  checkSelection(selection, refuse);
  const o = objectAt(options, 'options', refuse);
  flagValue(numberAt(o.drainSeconds, 'options.drainSeconds', refuse), 'options.drainSeconds', nonNegativeNumber('--drain-seconds'), refuse);
  if (o.maxNodeDeletions !== null) {
    const max = numberAt(o.maxNodeDeletions, 'options.maxNodeDeletions', refuse);
    flagValue(max, 'options.maxNodeDeletions', wholeNumberFrom('--max-node-deletions', 0), refuse);
  }
  for (const [key, value] of Object.entries(objectAt(fingerprint, 'fingerprint', refuse))) {
    stringAt(value, `fingerprint[${JSON.stringify(key)}]`, refuse);
  }
  const p = objectAt(plan, 'plan', refuse);
  if (p.nodes !== null) actionsAt(objectAt(p.nodes, 'plan.nodes', refuse).actions, 'plan.nodes.actions', refuse);
  arrayAt(p.services, 'plan.services', refuse).forEach((item, i) => checkServicePlan(item, `plan.services[${i}]`, refuse));
}

function checkSelection(value: unknown, refuse: Refuse): void {
  const selection = objectAt(value, 'selection', refuse);
  if (selection.all === true && !('names' in selection)) return;
  if ('all' in selection) refuse('selection', 'is neither {"all": true} nor {"names": […]}');
  arrayAt(selection.names, 'selection.names', refuse).forEach((item, i) => {
    const at = `selection.names[${i}]`;
    const { namespace, name } = objectAt(item, at, refuse);
    const ns = stringAt(namespace, `${at}.namespace`, refuse);
    flagValue(ns, `${at}.namespace`, namespaceName, refuse);
    flagValue(stringAt(name, `${at}.name`, refuse), `${at}.name`, (text) => serviceName(`service/${text}`, text), refuse);
  });
}

/** What planDifferences reads of a saved Service's plan: its Service, actions and held changes. */
function checkServicePlan(value: unknown, at: string, refuse: Refuse): void {
  const plan = objectAt(value, at, refuse);
  const service = objectAt(plan.service, `${at}.service`, refuse);
  stringAt(service.namespace, `${at}.service.namespace`, refuse);
  stringAt(service.name, `${at}.service.name`, refuse);
  const running = actionsAt(plan.actions, `${at}.actions`, refuse).length;
  if (plan.held === undefined) return;
  // restoreHeld puts each held action back at its position: together they fill every slot once.
  const held = arrayAt(plan.held, `${at}.held`, refuse).map((item, i) => objectAt(item, `${at}.held[${i}]`, refuse));
  const positions = held.flatMap((change, i) => {
    const actions = actionsAt(change.actions, `${at}.held[${i}].actions`, refuse);
    const list = arrayAt(change.positions, `${at}.held[${i}].positions`, refuse);
    if (list.length !== actions.length) refuse(`${at}.held[${i}].positions`, `has ${list.length} entries for ${actions.length} actions`);
    return list;
  });
  const total = running + positions.length;
  const valid = positions.every((n) => Number.isInteger(n) && (n as number) >= 0 && (n as number) < total);
  if (!valid || new Set(positions).size !== positions.length) {
    refuse(`${at}.held`, `puts its actions at positions ${JSON.stringify(positions)}, not distinct steps of the ${total}`);
  }
}

function actionsAt(value: unknown, at: string, refuse: Refuse): Record<string, unknown>[] {
  return arrayAt(value, at, refuse).map((item, i) => {
    const action = objectAt(item, `${at}[${i}]`, refuse);
    stringAt(action.kind, `${at}[${i}].kind`, refuse);
    stringAt(action.object, `${at}[${i}].object`, refuse);
    return action;
  });
}

/** A saved option checked by its flag's rule, given the text the flag would have been typed as. */
function flagValue<T>(value: string | number, at: string, rule: (text: string) => T, refuse: Refuse): void {
  try {
    rule(String(value));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    refuse(at, `is ${JSON.stringify(value)}, which the flag refuses: ${error.message}`);
  }
}

function objectAt(value: unknown, at: string, refuse: Refuse): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) refuse(at, `is ${describeJson(value)}, not an object`);
  return value as Record<string, unknown>;
}

function arrayAt(value: unknown, at: string, refuse: Refuse): unknown[] {
  if (!Array.isArray(value)) refuse(at, `is ${describeJson(value)}, not a list`);
  return value as unknown[];
}

function stringAt(value: unknown, at: string, refuse: Refuse): string {
  if (typeof value !== 'string') refuse(at, `is ${describeJson(value)}, not a string`);
  return value as string;
}

function numberAt(value: unknown, at: string, refuse: Refuse): number {
  if (typeof value !== 'number') refuse(at, `is ${describeJson(value)}, not a number`);
  return value as number;
}

function describeJson(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
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
 *
 * Health is left out (a load balancer's status, a member's monitor_status): it moves on its own
 * while members are checked, and a reviewed plan must not go stale for that. What health decides
 * (a step held until members are up, a swap held) is in the plan's actions, which apply makes
 * again and compares (planDifferences), and the executor's gates read health at each step.
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
  // An ambiguous lookup: the planner refuses that Service, and nothing of its candidates is read.
  const lbUuids = locatedUuids(inPlay.map((service) => locationOf(snapshot.locations, service)));
  for (const lb of snapshot.loadBalancers) {
    if (lbUuids.has(lb.uuid)) {
      const { status: _movesWithHealth, ...configured } = lb;
      entries.push([`load balancer ${lb.name} (${lb.uuid})`, digest(configured)]);
    }
  }
  for (const pool of snapshot.pools) {
    if (!lbUuids.has(pool.load_balancer.uuid)) continue;
    entries.push([`pool ${pool.name} (${pool.uuid})`, digest(pool)]);
    const unreadable = snapshot.unreadablePools.get(pool.uuid);
    const members = (snapshot.membersByPool[pool.uuid] ?? []).map(({ monitor_status: _checked, ...configured }) => configured);
    entries.push([`members of pool ${pool.name} (${pool.uuid})`, unreadable === undefined ? digest(members) : `unreadable: ${unreadable}`]);
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
  const was = saved[at];
  const is = now[at];
  if (was === undefined || is === undefined || describe(was) !== describe(is)) {
    return `step ${at + 1} was ${describe(was)}, is now ${describe(is)}`;
  }
  // The same kind of action on the same object: what tells them apart is in their fields.
  const fields = fieldDifferences(JSON.parse(a[at]!), JSON.parse(b[at]!), '');
  const shown = fields.slice(0, FIELDS_SHOWN).join(', ');
  const more = fields.length > FIELDS_SHOWN ? ` and ${fields.length - FIELDS_SHOWN} more fields` : '';
  return `step ${at + 1} (${describe(was)}) differs: ${shown}${more}`;
}

/** Of two actions that differ field by field, the fields named at most. */
const FIELDS_SHOWN = 5;

/** `path: saved → now` for every leaf in which two plain JSON values differ. */
function fieldDifferences(saved: unknown, now: unknown, path: string): string[] {
  const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';
  if (isRecord(saved) && isRecord(now) && Array.isArray(saved) === Array.isArray(now)) {
    const keys = [...new Set([...Object.keys(saved), ...Object.keys(now)])];
    const child = (key: string) => (Array.isArray(saved) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`);
    return keys.flatMap((key) => fieldDifferences(saved[key], now[key], child(key)));
  }
  if (canonicalJson(saved) === canonicalJson(now)) return [];
  return [`${path || 'the action'}: saved ${shownValue(saved)}, planned now ${shownValue(now)}`];
}

function shownValue(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = canonicalJson(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function serviceKey(plan: Pick<ServicePlan, 'service'>): string {
  return `${plan.service.namespace}/${plan.service.name}`;
}
