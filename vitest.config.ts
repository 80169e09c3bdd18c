import { defineConfig } from 'vitest/config';

// Two projects: `unit` is pure logic and runs anywhere in seconds; `integration` needs the
// simulator (started in-process) and a real kube-apiserver (test/global-setup.ts starts one).
// Integration files run one at a time: they share one control plane, and whole-cluster passes
// (every Node, every Service) must not see another file's objects.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.{ts,tsx}', 'test/cli/**/*.test.{ts,tsx}'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
