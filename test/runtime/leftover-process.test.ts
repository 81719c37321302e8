import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isRunning, runningProcess, stopProcess } from "../../src/runtime/leftover-process.ts";

/**
 * The probes behind "stop the server an earlier run left behind": a probe
 * that could not run must never answer "gone", or the next start would find
 * the port still held (the failure seen once in CI under load).
 */
describe("leftover process probes", () => {
  it("see a running process and its command line, and an ended one as gone", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    const pid = child.pid ?? 0;
    try {
      expect(await isRunning(pid)).toBe(true);
      expect((await runningProcess(pid))?.args).toContain("setInterval");
      await stopProcess(pid, { signal: "SIGTERM", forceSignal: "SIGKILL", graceMs: 5_000 });
      expect(await isRunning(pid)).toBe(false);
      expect(await runningProcess(pid)).toBeUndefined();
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("throw when ps cannot be run, instead of reporting the process gone", async () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await expect(runningProcess(process.pid)).rejects.toThrow(/ENOENT/);
    } finally {
      process.env.PATH = path;
    }
  });
});
