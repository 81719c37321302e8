import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The chaos suite kills servers on purpose and takes minutes: `npm run test:chaos` (vitest.chaos.config.ts).
    exclude: [...configDefaults.exclude, "test/chaos/**"],
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
