/**
 * `npm run bench:send`: the send figures of `npm run bench` only (the
 * statement census, POST /mail/v1/send over REST and gRPC against the bare
 * baseline, and end to end against the empty workflow). Same settings as
 * bench/run.ts (BENCH_RUNS, BENCH_DURATION, BENCH_MESSAGES, BENCH_QUICK...).
 */
import { runBench } from "./run.ts";

runBench({ phases: ["census", "send", "grpc", "e2e"] }).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
