import { globSync } from 'node:fs';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { reaches } from './test/support/test-files.js';

// The projects (docs/testing.md, "Layout of the test run"):
//
//   unit        pure logic, anywhere, in seconds
//   simulator   integration and CLI files that need only the simulator (started in-process)
//   integration integration and CLI files that talk to a Kubernetes API server: each worker has a
//               control plane of its own (test/support/worker-cluster.ts), so files run in
//               parallel across workers and one after another within a worker; whole-cluster
//               passes (every Node, every Service, the Lease in kube-system) see only their
//               worker's objects
//   fault-race  the fault-and-race suite's fixed seeds (test/integration/fault-race.test.ts)
//   fault-race-soak  only with FAULT_RACE_SOAK=1 (`npm run soak:race`): the long random soak
//
// A file belongs to `integration` when it imports test/support/kube.ts, directly or through
// another module of test/ (test/support/test-files.ts); nobody keeps a list.
//
// Workers: TEST_WORKERS, default 3 (the files mostly wait on the API server, the simulator and
// spawned CLIs: 3 keep 2 cores busy). With TEST_KUBECONFIG (one existing cluster, shared by all)
// the Kubernetes projects run in a single worker, after the others.
const workers = Number(process.env.TEST_WORKERS ?? 3);
if (!Number.isInteger(workers) || workers < 1) {
  throw new Error(`TEST_WORKERS=${process.env.TEST_WORKERS}: expected a whole number of workers, at least 1`);
}
const existingCluster = (process.env.TEST_KUBECONFIG ?? '') !== '';
const soak = process.env.FAULT_RACE_SOAK === '1';

const FAULT_RACE = 'test/integration/fault-race.test.ts';
const candidates = [...globSync('test/integration/**/*.test.{ts,tsx}'), ...globSync('test/cli/**/*.test.{ts,tsx}')].sort();
const kubeFacing = candidates.filter((file) => reaches(file, 'test/support/kube.ts', 'test'));
const simulatorOnly = candidates.filter((file) => !kubeFacing.includes(file));

const kubeProject = (name: string, include: string[]): TestProjectInlineConfiguration => ({
  test: {
    name,
    include,
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/support/worker-cluster.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    maxWorkers: existingCluster ? 1 : workers,
    // Projects of one group share its workers; a single-worker group runs after the others.
    sequence: { groupOrder: existingCluster ? 1 : 0 },
  },
});

export default defineConfig({
  test: {
    maxWorkers: workers,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.{ts,tsx}'], maxWorkers: workers } },
      { test: { name: 'simulator', include: simulatorOnly, testTimeout: 120_000, hookTimeout: 180_000, maxWorkers: workers } },
      kubeProject(
        'integration',
        kubeFacing.filter((file) => file !== FAULT_RACE),
      ),
      kubeProject('fault-race', [FAULT_RACE]),
      ...(soak ? [kubeProject('fault-race-soak', ['test/soak/**/*.test.ts'])] : []),
    ],
  },
});
