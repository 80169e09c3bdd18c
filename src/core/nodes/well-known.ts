// Names the Kubernetes cloud-provider framework and kubelet agree on. They are part of the
// drop-in contract with the Go CCM and the generic controllers: they MUST NOT change.

/** Added by kubelet `--cloud-provider=external`; removed once a CCM initialised the node. */
export const UNINITIALIZED_TAINT_KEY = 'node.cloudprovider.kubernetes.io/uninitialized';

/** Set by the node-lifecycle controller while the node is NotReady and its server is stopped. */
export const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
export const SHUTDOWN_TAINT_EFFECT = 'NoSchedule';

/** Set by kubelet `--node-ip`: one IP or a dual-stack pair, comma-separated. */
export const PROVIDED_NODE_IP_ANNOTATION = 'alpha.kubernetes.io/provided-node-ip';

/** The generic node controller writes each GA label together with its deprecated beta twin. */
export const NODE_LABELS = {
  instanceType: 'node.kubernetes.io/instance-type',
  instanceTypeBeta: 'beta.kubernetes.io/instance-type',
  zone: 'topology.kubernetes.io/zone',
  zoneBeta: 'failure-domain.beta.kubernetes.io/zone',
  region: 'topology.kubernetes.io/region',
  regionBeta: 'failure-domain.beta.kubernetes.io/region',
} as const;

/** `cloudscale://<uuid>`: the Go CCM's providerID scheme; nodes carry it for life. */
export const PROVIDER_ID_SCHEME = 'cloudscale';
