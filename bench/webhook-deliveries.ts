/**
 * `npm run bench:webhooks`: the webhook figures of `npm run bench` only:
 * deliveries per second to a local HTTPS receiver against a bare loop
 * posting the same signed bodies, and the delay from an event to its first
 * attempt. Same settings as bench/run.ts (BENCH_RUNS, BENCH_EVENTS,
 * BENCH_LATENCY_EVENTS, PAUSE_MS, BENCH_QUICK...).
 */
import { runBench } from "./run.ts";

runBench({ phases: ["webhooks"] }).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
