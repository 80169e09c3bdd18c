// Why a Service's load balancer cannot be (fully) reconciled, and what the user should do.
import type { AnnotationError } from '../errors.js';

export type ProblemKind =
  /** A malformed `k8s.cloudscale.ch/loadbalancer-*` annotation. */
  | 'annotation'
  /** A Service spec the load balancer cannot serve (SCTP port, nodePort 0, duplicate port name). */
  | 'service-spec'
  /** A selected node that maps to no server, or to several. */
  | 'node-mapping'
  /** No zone annotation and the nodes' servers are in several zones; or members outside the zone set. */
  | 'zone'
  /**
   * The UUID annotation and the name point to different load balancers, or the name to several;
   * or the load balancer the UUID annotation names is missing from the list and its absence is
   * not confirmed by a read by UUID.
   */
  | 'lookup'
  /**
   * The load balancer belongs to another cluster or another Service, or it is untagged and found
   * only through a custom name (no proof that it is this Service's).
   */
  | 'ownership'
  /** Another Service names the same load balancer (`loadbalancer-name`) and neither owns it. */
  | 'name-conflict'
  /** Flavor, zone or VIP addresses differ from the existing load balancer. */
  | 'forbidden-change'
  /** Another Service claims one of this Service's Floating IPs. */
  | 'floating-ip-conflict'
  /** A Floating IP of the annotation does not exist in the project. */
  | 'floating-ip-missing'
  /** A subnet of `listener-allowed-subnets` or `vip-addresses` does not exist (or a VIP address is outside it). */
  | 'subnet-missing'
  /** `spec.loadBalancerSourceRanges` and the annotation `listener-allowed-cidrs` are both set and differ. */
  | 'source-ranges-conflict';

export interface Problem {
  readonly kind: ProblemKind;
  /** What it is about: an annotation key, `node worker-1`, `port dns/SCTP`, `load balancer <name>`. */
  readonly subject: string;
  readonly message: string;
  /** How to fix it. */
  readonly hint: string;
}

/** One line for people: the subject, then the message (which often starts with it already). */
export function problemSummary(problem: Problem): string {
  return problem.message.startsWith(problem.subject) ? problem.message : `${problem.subject}: ${problem.message}`;
}

export function annotationProblem(error: AnnotationError): Problem {
  return {
    kind: 'annotation',
    subject: error.annotation,
    message: error.message,
    hint: error.hint ?? `Fix or remove the annotation ${error.annotation}.`,
  };
}

/** Event-worthy notes that do not stop reconciliation. `reason` is the Kubernetes Event reason. */
export interface PlanWarning {
  readonly reason:
    /** The node selector matched no node (Go CCM event; every member is removed). */
    | 'NoValidNodes'
    /** No node is eligible at all (generic service controller event). */
    | 'UnAvailableLoadBalancer'
    /** An annotation was accepted but will not do what it says (unknown JSON field, overridden). */
    | 'AnnotationWarning'
    /** A load balancer found only by a custom name, never adopted: left alone when the Service goes. */
    | 'UnownedLoadBalancer'
    /** A Floating IP the annotation lists was on a server or another load balancer: it is moved back. */
    | 'FloatingIPReassigned'
    /**
     * Members that serve are kept because nothing up would replace them: every selected node of
     * the pool is leaving, or the members that stay are down (the plan waits for them first).
     */
    | 'MembersKept'
    /** A pool swap whose successor would have no member: the listener stays on the old pool. */
    | 'PoolSwapHeld'
    /** The load balancer is in status `error`: which pool is down, why, and whether the plan repairs it. */
    | 'LoadBalancerError';
  readonly message: string;
}
