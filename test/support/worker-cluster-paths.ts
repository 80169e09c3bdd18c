// Names shared by test/global-setup.ts (vitest's main process) and test/support/worker-cluster.ts
// (each test worker): this module imports nothing from vitest, so both sides can load it.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The environment variables that carry a test cluster from the setup to workers and spawned CLIs. */
export const TEST_CLUSTER_ENV = {
  /** The directory holding one control plane per worker (`worker-N`); set by the global setup. */
  root: 'CCM_TEST_CLUSTER_ROOT',
  /** Admin kubeconfig of this worker's cluster (or of TEST_KUBECONFIG). */
  kubeconfig: 'CCM_TEST_KUBECONFIG',
  /** Kubeconfig of an authenticated user without RBAC rights; '' when there is none. */
  kubeconfigNoAccess: 'CCM_TEST_KUBECONFIG_NOACCESS',
  /** The helpers/test-cluster directory of this worker's cluster; '' for TEST_KUBECONFIG. */
  clusterDir: 'CCM_TEST_CLUSTER_DIR',
} as const;

/** The run's directory of worker control planes: one per vitest main process. */
export function clusterRootOf(pid: number): string {
  return join(tmpdir(), `ccm-test-clusters-${pid}`);
}
