import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { HistoryAndWorkflowId } from "@temporalio/client";
import { temporal } from "@temporalio/proto";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { describe, expect, it } from "vitest";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";

/**
 * Every recorded history of the campaign workflow (histories/*.json, written
 * by record-histories.ts) replays against today's workflow code: a change
 * that alters the commands of a workflow under way fails here, before it
 * breaks the workflows running in production (use patched() for it).
 *
 * The files hold @temporalio/proto's object form of a history (its toJSON),
 * read back with History.fromObject: the SDK's historyFromJSON needs
 * @temporalio/common and @temporalio/proto to share one protobufjs, which
 * this install does not guarantee.
 */
const HISTORIES = path.join(path.dirname(fileURLToPath(import.meta.url)), "histories");

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

describe("the campaign workflow's recorded histories", () => {
  it("replay against today's workflow code", async () => {
    const histories = await recordedHistories();
    expect(histories.map((h) => h.workflowId)).toEqual(expect.arrayContaining(["cancelled-v1", "paused-v1", "sent-v1", "timer-v1"]));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});
