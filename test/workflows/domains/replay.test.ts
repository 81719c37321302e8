import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { HistoryAndWorkflowId } from "@temporalio/client";
import { temporal } from "@temporalio/proto";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { describe, expect, it } from "vitest";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";

/**
 * Every recorded history of the domain re-check workflow (histories/*.json,
 * written by record-histories.ts) replays against today's workflow code: a
 * change that alters the commands of a run under way (a verified domain's
 * workflow runs for as long as the domain exists) fails here, before it
 * breaks the runs in production (use patched() for it).
 */
const HISTORIES = path.join(path.dirname(fileURLToPath(import.meta.url)), "histories");

const RECORDED = ["verified-degraded-gone", "unavailable-then-verified", "pending-window-ends"];

async function recordedHistories(): Promise<HistoryAndWorkflowId[]> {
  const files = (await readdir(HISTORIES)).filter((file) => file.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => ({
      workflowId: path.basename(file, ".json"),
      history: temporal.api.history.v1.History.fromObject(JSON.parse(await readFile(path.join(HISTORIES, file), "utf8")) as object),
    })),
  );
}

Runtime.install({ logger: new DefaultLogger("WARN") });

describe("the domain re-check workflow's recorded histories", () => {
  it("replay against today's workflow code", async () => {
    const histories = await recordedHistories();
    expect(histories.map((h) => h.workflowId)).toEqual(expect.arrayContaining(RECORDED));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});
