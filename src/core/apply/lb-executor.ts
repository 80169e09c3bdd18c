// The executor of one Service's plan: runs the planner's actions in order against the
// cloudscale API and the Service, resolving references to objects created earlier in the same
// plan. It decides nothing: what `plan` printed is what runs here. Pacing (waiting for a load
// balancer to leave `changing`, the pause between deleting and re-creating similar objects)
// lives here, not in the plan.
import type { V1LoadBalancerIngress } from '@kubernetes/client-node';
import type { CloudscaleClient } from '../cloudscale/client.js';
import { isOutcomeUnknown } from '../cloudscale/errors.js';
import type { LoadBalancer, MemberState, PoolMember } from '../cloudscale/types.js';
import { CcmError, CloudscaleApiError, InternalError, assertNever, errorMessage } from '../errors.js';
import { LB_REF, isPlannedRef, type ListenerPutBack, type ObjectRef, type PlannedAction } from '../lb/actions.js';
import { ingressFromVips } from '../lb/desired.js';
import { memberCompactor } from '../lb/actual.js';
import { servesStatus } from '../lb/health.js';
import { OWNER_SERVICE_UID_TAG } from '../lb/ownership.js';
import { LB_FINALIZER, type ServicePlan } from '../lb/service-plan.js';
import { abortableSleep } from '../sleep.js';
import { processStop, stepBoundaries } from '../stop.js';
import { ReadinessWatch } from './lb-watch.js';
import { completeCreate, PairNotCompletedError } from './pair-completion.js';
import { completingSteps, stepPairs } from './step-pairs.js';
import { createdBy, onlyMatch } from '../cloudscale/reread.js';

/** The writes to the Service the executor needs; implemented on client-node in src/core/kube. */
export interface ServiceWriter {
  addFinalizer(finalizer: string): Promise<void>;
  removeFinalizer(finalizer: string): Promise<void>;
  setAnnotations(annotations: Record<string, string>): Promise<void>;
  setIngress(ingress: readonly V1LoadBalancerIngress[]): Promise<void>;
}

export interface ExecuteOptions {
  readonly signal?: AbortSignal;
  /** Give up waiting for a load balancer to leave `changing` after this long. */
  readonly waitTimeoutMs: number;
  /** How often the load balancer is read while it is `changing`. */
  readonly pollIntervalMs: number;
  /**
   * Pause before re-creating an object of a kind deleted earlier in the same plan: the API
   * needs a moment to propagate deletes or the new object clashes (the Go CCM waits 5 s).
   */
  readonly settleMs: number;
  /** The load balancer as read for planning, to wait while it is `changing` before writing. */
  readonly actualLoadBalancer?: LoadBalancer | undefined;
  /**
   * Waits for a `changing` load balancer to leave that state and answers it as last read. The
   * pass shares one watch among its Services (and gives up the Service's concurrency slot while
   * it waits); without it, this plan polls on its own.
   */
  readonly awaitReady?: (lb: LoadBalancer) => Promise<LoadBalancer>;
  readonly onProgress?: (event: ExecutorEvent) => void;
}

export type ExecutorEvent =
  | { readonly type: 'start'; readonly action: PlannedAction; readonly index: number }
  | { readonly type: 'done'; readonly action: PlannedAction; readonly index: number; readonly ms: number }
  | { readonly type: 'waiting'; readonly loadBalancer: string; readonly status: string };

export interface ExecutedAction {
  readonly action: PlannedAction;
  readonly ms: number;
}

export interface ExecutionResult {
  readonly executed: readonly ExecutedAction[];
  /** The action that failed, with its error; the actions after it did not run. */
  readonly failed?: { readonly action: PlannedAction; readonly error: Error };
  /** The load balancer as last seen (created or awaited), for status and reporting. */
  readonly loadBalancer?: LoadBalancer;
  /** Pools this plan created, each with the members created in it: all the members it has. */
  readonly poolsCreated: ReadonlyMap<string, readonly MemberState[]>;
  /** Pools that existed before whose members this plan created or deleted. */
  readonly poolsChanged: ReadonlySet<string>;
  /** Wall time from the first action's start to the end (its waits included): the Event's "in 4.2 s". */
  readonly elapsedMs: number;
}

/** How long what a delete freed may stay taken (docs/cloudscale-api.md: "a moment"). */
const RELEASE_MS = 30_000;

/** The members a strategy waits for did not come up in time; what they would replace still serves. */
export class MembersNotHealthyError extends CcmError {}

/** How far the monitor has got with a set of members (`expected` of them should exist). */
function membersHealth(members: readonly Pick<PoolMember, 'monitor_status'>[], expected: number) {
  const up = members.filter((m) => servesStatus(m.monitor_status)).length;
  const down = members.filter((m) => m.monitor_status === 'down').length;
  const missing = expected - members.length;
  const checking = members.length - up - down;
  return { up, down, checking, missing, checked: missing === 0 && checking === 0 };
}

/** `; down: a, b` naming the members reported down (the first five), or nothing. */
function downNames(members: readonly Pick<PoolMember, 'name' | 'monitor_status'>[]): string {
  const down = members.filter((m) => m.monitor_status === 'down').map((m) => m.name);
  if (down.length === 0) return '';
  return `; down: ${down.slice(0, 5).join(', ')}${down.length > 5 ? ` and ${down.length - 5} more` : ''}`;
}

/** One action of a plan failed; the message names the object and the verb. */
export class ActionFailedError extends CcmError {
  readonly action: PlannedAction;
  constructor(action: PlannedAction, cause: unknown) {
    const hint = isOutcomeUnknown(cause)
      ? 'the API may have done it anyway: the next pass reads the state again and continues from there'
      : cause instanceof CcmError
        ? cause.hint
        : undefined;
    super(`${action.kind} ${action.object}: ${errorMessage(cause)}`, {
      cause,
      ...(hint === undefined ? {} : { hint }),
    });
    this.action = action;
  }
}


export async function executeServicePlan(
  plan: ServicePlan,
  deps: { readonly cloud: CloudscaleClient; readonly service: ServiceWriter },
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const run = new PlanRun(plan, deps, options);
  return run.execute();
}

class PlanRun {
  private readonly created = new Map<string, string>();
  private readonly deletedKinds = new Set<string>();
  private readonly executed: ExecutedAction[] = [];
  private readonly poolsCreated = new Map<string, MemberState[]>();
  private readonly poolsChanged = new Set<string>();
  private readonly compactMember = memberCompactor();
  private loadBalancer: LoadBalancer | undefined;
  private loadBalancerReady = false;
  private readonly started = performance.now();

  constructor(
    private readonly plan: ServicePlan,
    private readonly deps: { readonly cloud: CloudscaleClient; readonly service: ServiceWriter },
    private readonly options: ExecuteOptions,
  ) {
    this.loadBalancer = options.actualLoadBalancer;
    this.loadBalancerReady = options.actualLoadBalancer?.status !== 'changing';
  }

  /**
   * Runs the steps in order and stops between two of them once the signal aborts — never inside
   * a step pair (step-pairs.ts): a pair holds the process's stop gate from its first step to its
   * last, and does not begin once a stop was asked for.
   */
  async execute(): Promise<ExecutionResult> {
    const pairs = stepPairs(this.plan.actions);
    const completing = completingSteps(this.plan.actions);
    let release: (() => void) | undefined;
    try {
      for (const [index, action] of this.plan.actions.entries()) {
        const started = Date.now();
        try {
          if (pairs.some((pair) => pair.first === index)) {
            release = processStop.hold();
            // A stop was asked for while other pairs finish: this one does not begin.
            if (release === undefined) throw processStop.reason;
          }
          this.options.signal?.throwIfAborted();
          this.options.onProgress?.({ type: 'start', action, index });
          await (completing.has(index) ? this.complete(action) : this.run(action));
        } catch (error) {
          return {
            ...this.outcome(),
            failed: { action, error: new ActionFailedError(action, error) },
          };
        }
        const ms = Date.now() - started;
        this.executed.push({ action, ms });
        this.options.onProgress?.({ type: 'done', action, index, ms });
        if (pairs.some((pair) => pair.last === index)) release?.();
        await stepBoundaries.afterStep?.(`${action.kind} ${action.object}`);
      }
      return this.outcome();
    } finally {
      release?.();
    }
  }

  private outcome(): ExecutionResult {
    return {
      executed: this.executed,
      poolsCreated: this.poolsCreated,
      poolsChanged: this.poolsChanged,
      elapsedMs: performance.now() - this.started,
      ...(this.loadBalancer === undefined ? {} : { loadBalancer: this.loadBalancer }),
    };
  }

  /** Records a member written to a pool: part of a pool created here, or a change of an older one. */
  private memberWritten(poolUuid: string, created?: MemberState): void {
    const members = this.poolsCreated.get(poolUuid);
    if (members !== undefined && created !== undefined) members.push(created);
    else this.poolsChanged.add(poolUuid);
  }

  private async run(action: PlannedAction): Promise<void> {
    const { cloud, service } = this.deps;
    switch (action.kind) {
      case 'add-finalizer':
        return service.addFinalizer(LB_FINALIZER);
      case 'remove-finalizer':
        return service.removeFinalizer(LB_FINALIZER);
      case 'write-annotations': {
        const annotations: Record<string, string> = {};
        for (const change of action.changes) {
          annotations[change.key] =
            'value' in change.to ? change.to.value : this.createdLoadBalancerAttribute(change.to.attribute);
        }
        return service.setAnnotations(annotations);
      }
      case 'write-status': {
        const ingress =
          'ingress' in action.to
            ? action.to.ingress
            : ingressFromVips(this.requireCreatedLoadBalancer().vip_addresses, action.to.settings);
        return service.setIngress(ingress);
      }
      case 'create-lb': {
        const lb = await this.createLoadBalancerOnce(action);
        this.created.set(LB_REF, lb.uuid);
        this.loadBalancer = lb;
        this.loadBalancerReady = false;
        return;
      }
      case 'delete-lb':
        await this.awaitLoadBalancer();
        return cloud.deleteByHref(action.loadBalancer.href);
      case 'rename-lb':
      case 'tag-lb':
        await this.awaitLoadBalancer();
        return patchObject(cloud, action.patch, (patch) => cloud.loadBalancers.update(action.loadBalancer.uuid, patch));
      case 'create-pool': {
        await this.beforeCreate('pool');
        const pool = await cloud.pools.create({
          ...action.body,
          load_balancer: this.resolve(action.loadBalancer),
        });
        this.created.set(action.ref, pool.uuid);
        this.poolsCreated.set(pool.uuid, []);
        return;
      }
      case 'delete-pool':
        await this.awaitLoadBalancer();
        this.deletedKinds.add('pool');
        return cloud.deleteByHref(action.pool.href);
      case 'create-member': {
        await this.beforeCreate('member');
        const pool = this.resolve(action.pool);
        const member = await this.createWhenReleased(() => cloud.poolMembers.create(pool, action.body)).catch((error: unknown) => {
          // Its outcome is unknown, and so are the pool's members: it is listed when read back.
          this.poolsChanged.add(pool);
          throw error;
        });
        this.memberWritten(pool, this.compactMember(member));
        return;
      }
      case 'delete-member':
        await this.awaitLoadBalancer();
        this.deletedKinds.add('member');
        this.memberWritten(this.resolve(action.pool));
        return cloud.deleteByHref(action.member.href);
      case 'update-member':
        await this.awaitLoadBalancer();
        this.memberWritten(action.pool.uuid);
        return patchObject(cloud, action.patch, (patch) => cloud.poolMembers.update(action.pool.uuid, action.member.uuid, patch));
      case 'await-members':
        return this.awaitMembers(action);
      case 'create-listener':
        await this.beforeCreate('listener');
        await this.createWhenReleased(() => cloud.listeners.create({ ...action.body, pool: this.resolve(action.pool) }));
        return;
      case 'delete-listener':
        await this.awaitLoadBalancer();
        this.deletedKinds.add('listener');
        return cloud.deleteByHref(action.listener.href);
      case 'update-listener':
        await this.awaitLoadBalancer();
        return patchObject(cloud, action.patch, (patch) => cloud.listeners.update(action.listener.uuid, patch));
      case 'create-monitor':
        await this.beforeCreate('monitor');
        await this.createWhenReleased(() => cloud.healthMonitors.create({ ...action.body, pool: this.resolve(action.pool) }));
        return;
      case 'delete-monitor':
        await this.awaitLoadBalancer();
        this.deletedKinds.add('monitor');
        return cloud.deleteByHref(action.monitor.href);
      case 'update-monitor':
        await this.awaitLoadBalancer();
        return patchObject(cloud, action.patch, (patch) => cloud.healthMonitors.update(action.monitor.uuid, patch));
      case 'assign-floating-ip':
        await this.awaitLoadBalancer();
        return cloud.floatingIps.update(action.floatingIp.ip, {
          load_balancer: this.resolve(action.loadBalancer),
        });
      case 'refuse':
        // Refusals carry their problem; the pass reports it. Nothing is written.
        return;
      default:
        return assertNever(action, 'action');
    }
  }

  /**
   * A step that gives back what its pair took away (step-pairs.ts): sent as soon as the load
   * balancer takes writes — no settle pause, the port or pool lacks it meanwhile — and sent
   * again through transient failures (pair-completion.ts). A listener move whose create still
   * fails puts the moved listener back on the pool it served (`putBack`), then reports the
   * failure: the port serves as before the move, and the next pass moves it again.
   */
  private async complete(action: PlannedAction): Promise<void> {
    const { cloud } = this.deps;
    const signal = this.options.signal;
    if (action.kind === 'create-listener') {
      await this.awaitLoadBalancer();
      const body = { ...action.body, pool: this.resolve(action.pool) };
      try {
        await completeCreate({
          what: action.object,
          signal,
          create: () => cloud.listeners.create(body),
          findMade: async () => onlyMatch(await cloud.listeners.list(), createdBy.listener(body)),
        });
        return;
      } catch (error) {
        if (!(error instanceof PairNotCompletedError) || action.putBack === undefined) throw error;
        throw await this.putListenerBack(action.putBack, error);
      }
    }
    if (action.kind === 'create-member') {
      await this.awaitLoadBalancer();
      const pool = this.resolve(action.pool);
      // Its pool's other members serve meanwhile: a member is replaced in place only beside a
      // serving one (pool-swap.ts, swapInPlaceReason); nothing to put back.
      const member = await completeCreate({
        what: action.object,
        signal,
        create: () => cloud.poolMembers.create(pool, action.body),
        findMade: async () => onlyMatch(await cloud.poolMembers.list(pool), createdBy.member({ ...action.body })),
      }).catch((error: unknown) => {
        this.poolsChanged.add(pool);
        throw error;
      });
      this.memberWritten(pool, this.compactMember(member));
      return;
    }
    return this.run(action);
  }

  /**
   * Creates the listener a move deleted again on the pool it served, with the same retries.
   * Answers the error the step fails with: the move's, saying whether the port serves again.
   */
  private async putListenerBack(putBack: ListenerPutBack, failed: PairNotCompletedError): Promise<Error> {
    const { cloud } = this.deps;
    const body = { ...putBack.body, pool: putBack.pool.uuid };
    const port = `${body.protocol.toUpperCase()} ${body.protocol_port}`;
    try {
      await completeCreate({
        what: `listener ${body.name} of pool ${putBack.poolName}`,
        signal: this.options.signal,
        create: () => cloud.listeners.create(body),
        findMade: async () => onlyMatch(await cloud.listeners.list(), createdBy.listener(body)),
      });
    } catch (error) {
      return new PairNotCompletedError(
        `${failed.message}; putting listener ${body.name} back on pool ${putBack.poolName} failed too (${errorMessage(error)}): port ${port} serves nothing until a pass creates its listener`,
        { cause: failed, hint: 'the next pass creates the missing listener first; check the API status' },
      );
    }
    return new PairNotCompletedError(
      `${failed.message}; listener ${body.name} was put back on pool ${putBack.poolName}, which serves port ${port} again as before the move`,
      { cause: failed, hint: 'the next pass moves the port again once the API takes the create' },
    );
  }

  /**
   * Sends a create of a listener, member or monitor. A delete takes a moment to propagate
   * (docs/cloudscale-api.md), and until it has the API may still hold what the new object needs —
   * the port, the address and port, the pool's monitor — and refuse it with a 400: after a delete
   * of this plan, and as well after one made outside it (by hand, or by a pass stopped moments
   * ago), which no read shows. A 400 is therefore tried again every poll interval for up to
   * RELEASE_MS, the shortest wait that works, instead of a long fixed pause before every create;
   * a refusal that outlasts it is the API's answer and fails the step.
   */
  private async createWhenReleased<T>(create: () => Promise<T>): Promise<T> {
    const started = performance.now();
    for (;;) {
      try {
        return await create();
      } catch (error) {
        const refused = error instanceof CloudscaleApiError && error.status === 400;
        if (!refused || performance.now() - started >= RELEASE_MS) throw error;
      }
      await abortableSleep(Math.max(this.options.pollIntervalMs, 200), this.options.signal);
    }
  }

  /**
   * Polls the pool's members until the awaited ones were all checked by the monitor and one of
   * them is up, or until none of the members the next steps take out of service is up (nothing
   * left to protect). After the action's timeout it fails: the next steps do not run.
   */
  private async awaitMembers(action: Extract<PlannedAction, { kind: 'await-members' }>): Promise<void> {
    const { cloud } = this.deps;
    const pool = this.resolve(action.pool);
    const deadline = performance.now() + action.timeoutSeconds * 1000;
    const awaited = new Set(action.members);
    const protectedNames = new Set(action.protects.members);
    for (;;) {
      const members = await cloud.poolMembers.list(pool);
      const protectedMembers =
        action.protects.pool.uuid === pool ? members : await cloud.poolMembers.list(action.protects.pool.uuid);
      const watched = members.filter((m) => awaited.has(m.name));
      const state = membersHealth(watched, awaited.size);
      const protectedUp = protectedMembers.filter((m) => protectedNames.has(m.name) && servesStatus(m.monitor_status)).length;
      if ((state.checked && state.up > 0) || protectedUp === 0) return;
      if (performance.now() >= deadline) {
        throw new MembersNotHealthyError(
          `the members of pool ${action.poolName} that replace the serving ones did not pass their health checks within ${action.timeoutSeconds} s ` +
            `(${state.up} up, ${state.down} down, ${state.checking} still checked, ${state.missing} missing${downNames(watched)}): ` +
            'the old members keep serving and nothing was taken out of service',
          {
            hint:
              'the next pass checks again and goes on once they are up; if they stay down, check that the nodes answer on ' +
              'the health-check port (kubectl get endpoints, the health-monitor annotations)',
          },
        );
      }
      this.options.onProgress?.({ type: 'waiting', loadBalancer: this.loadBalancer?.name ?? action.poolName, status: `${state.up}/${awaited.size} new members up` });
      await abortableSleep(this.options.pollIntervalMs, this.options.signal);
    }
  }

  /**
   * Sends the create once. If its outcome is unknown (no answer, or an error answer after the
   * request left), the load balancer is looked up by name and ownership tags: found, it is the
   * one this create made; not found, the error stands and the next pass reads the state again.
   * The create is never sent a second time within a pass.
   */
  private async createLoadBalancerOnce(action: Extract<PlannedAction, { kind: 'create-lb' }>): Promise<LoadBalancer> {
    const { cloud } = this.deps;
    try {
      return await cloud.loadBalancers.create(action.body);
    } catch (error) {
      if (!isOutcomeUnknown(error)) throw error;
      const tags = action.body.tags ?? {};
      const uid = tags[OWNER_SERVICE_UID_TAG];
      const candidates = await cloud.loadBalancers.list(uid === undefined ? undefined : { [OWNER_SERVICE_UID_TAG]: uid });
      const made = candidates.filter(
        (lb) => lb.name === action.body.name && Object.entries(tags).every(([key, value]) => lb.tags[key] === value),
      );
      if (made.length === 1) return made[0]!;
      throw error;
    }
  }

  /** Waits for the load balancer, then pauses once if objects of this kind were just deleted. */
  private async beforeCreate(kind: string): Promise<void> {
    await this.awaitLoadBalancer();
    // Deleting a pool deletes its members, listener and monitor too: all of them need to settle.
    const settle = this.deletedKinds.has(kind) || this.deletedKinds.has('pool');
    if (settle && this.options.settleMs > 0) {
      await abortableSleep(this.options.settleMs, this.options.signal);
      this.deletedKinds.clear();
    }
  }

  /** Waits until the load balancer leaves `changing`; the API rejects or queues writes before. */
  private async awaitLoadBalancer(): Promise<void> {
    if (this.loadBalancerReady || this.loadBalancer === undefined) return;
    let lb = this.loadBalancer;
    if (lb.status === 'changing') {
      this.options.onProgress?.({ type: 'waiting', loadBalancer: lb.name, status: lb.status });
      const awaitReady =
        this.options.awaitReady ??
        ((changing: LoadBalancer) =>
          new ReadinessWatch(this.deps.cloud, this.options).ready(changing, this.options.waitTimeoutMs));
      lb = await awaitReady(lb);
    }
    // Any status but `changing` takes writes: in `error` (a pool with every member down) the
    // changes of the plan are the way out (docs/cloudscale-api.md), as cloudscale's own
    // controllers do.
    this.loadBalancer = lb;
    this.loadBalancerReady = true;
  }

  private resolve(ref: ObjectRef): string {
    if (!isPlannedRef(ref)) return ref.uuid;
    const uuid = this.created.get(ref.ref);
    if (uuid === undefined) {
      throw new InternalError(`plan refers to "${ref.ref}" before the action that creates it`);
    }
    return uuid;
  }

  private requireCreatedLoadBalancer(): LoadBalancer {
    if (this.loadBalancer === undefined || !this.created.has(LB_REF)) {
      throw new InternalError('plan refers to the new load balancer before create-lb');
    }
    return this.loadBalancer;
  }

  private createdLoadBalancerAttribute(attribute: 'uuid' | 'zone'): string {
    const lb = this.requireCreatedLoadBalancer();
    return attribute === 'uuid' ? lb.uuid : lb.zone.slug;
  }
}

/**
 * Every changed field of an object in one PATCH. The API refuses a PATCH of several attributes
 * of a server ("Only one attribute can be changed at a time."), and whether it has that rule for
 * load balancers and their children is not known (docs/cloudscale-api.md): if it answers so, the
 * fields are sent one PATCH each, in the order of the patch. Nothing was changed by the refused
 * request, so nothing is half-applied. The refusal is remembered for the client: its later
 * PATCHes of several fields go field by field at once, so the rule costs one refused request per
 * process, not one per object.
 */
async function patchObject<P extends object>(
  cloud: CloudscaleClient,
  patch: P,
  send: (patch: P) => Promise<void>,
): Promise<void> {
  const keys = Object.keys(patch) as (keyof P)[];
  const fieldByField = async () => {
    for (const key of keys) await send({ [key]: patch[key] } as unknown as P);
  };
  if (keys.length > 1 && clientsTakingOneAttribute.has(cloud)) return fieldByField();
  try {
    await send(patch);
  } catch (error) {
    if (!(error instanceof CloudscaleApiError && error.status === 400 && ONE_ATTRIBUTE.test(error.detail ?? '') && keys.length > 1)) throw error;
    clientsTakingOneAttribute.add(cloud);
    await fieldByField();
  }
}

/** Clients whose API refused a PATCH of several attributes once. */
const clientsTakingOneAttribute = new WeakSet<CloudscaleClient>();

/** The API's wording for a PATCH of more than one attribute (before 2025: "To keep changes atomic"). */
const ONE_ATTRIBUTE = /only one attribute|to keep changes atomic/i;
