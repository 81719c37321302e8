import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests start real PostgreSQL and Temporal servers; on a 2-core CI
    // machine their startup alone can take tens of seconds.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Child processes (postgres, temporal) and native modules behave better
    // in separate processes than in worker threads.
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
