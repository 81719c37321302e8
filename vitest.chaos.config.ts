import { defineConfig } from "vitest/config";

/**
 * `npm run test:chaos`: the chaos suite (test/chaos/, see docs/chaos.md).
 * Three files (the main run, the relay run and the campaign run), one after the other, alone on
 * the machine: each starts its own PostgreSQL, Temporal server, API and
 * worker processes, and kills them on purpose.
 */
export default defineConfig({
  test: {
    include: ["test/chaos/**/*.test.ts"],
    testTimeout: 900_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
    maxWorkers: 1,
  },
});
