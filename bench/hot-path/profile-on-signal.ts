/**
 * Preloaded into a process of the service (node --import) by the hot-path
 * benches: SIGUSR2 starts the V8 CPU profiler, the next SIGUSR2 stops it and
 * writes `<HOTPATH_PROFILE_DIR>/<HOTPATH_PROFILE_NAME>-<n>.cpuprofile`. Unlike
 * `--cpu-prof`, the profile then covers the load window only, not start-up
 * and idle time.
 */
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import path from "node:path";

const dir = process.env.HOTPATH_PROFILE_DIR ?? ".";
const name = process.env.HOTPATH_PROFILE_NAME ?? `process-${process.pid}`;
let session: Session | undefined;
let count = 0;

process.on("SIGUSR2", () => {
  void (async () => {
    if (!session) {
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 500 });
      await session.post("Profiler.start");
      return;
    }
    const current = session;
    session = undefined;
    const { profile } = await current.post("Profiler.stop");
    current.disconnect();
    writeFileSync(path.join(dir, `${name}-${++count}.cpuprofile`), JSON.stringify(profile));
  })();
});
