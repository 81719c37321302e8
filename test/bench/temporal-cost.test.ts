import { readFile } from "node:fs/promises";
import path from "node:path";
import { temporal } from "@temporalio/proto";
import { describe, expect, it } from "vitest";
import { billableActions } from "../../bench/lib/temporal-cost.ts";

/**
 * The bench's count of Temporal Cloud billable actions, on histories the
 * workflows recorded (test/workflows/webhooks/histories): the figure the
 * bench holds against its target must be what Temporal Cloud would bill.
 */
const HISTORIES = path.resolve(import.meta.dirname, "../workflows/webhooks/histories");

async function recorded(name: string): Promise<temporal.api.history.v1.History> {
  return temporal.api.history.v1.History.fromObject(JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), "utf8")) as object);
}

const total = (byKind: Record<string, number>): number => Object.values(byKind).reduce((sum, n) => sum + n, 0);

describe("billable actions of a recorded history", () => {
  it("a first-attempt delivery costs 3: its start, the markers of its one workflow task, its status upsert; the patch's TemporalChangeVersion upsert is exempt", async () => {
    const byKind = billableActions(await recorded("first-attempt-success-patched"));
    expect(byKind).toEqual({ start: 1, markers: 1, upsert: 1 });
    expect(total(byKind)).toBe(3);
  });

  it("a delivery attempted as a remote activity counts the activity instead of markers", async () => {
    expect(billableActions(await recorded("remote-first-attempt-success"))).toEqual({ start: 1, activity: 1, upsert: 1 });
  });

  it("markers count once per workflow task that recorded any, beside each timer and status upsert", async () => {
    expect(billableActions(await recorded("failure-then-success-patched"))).toEqual({ start: 1, markers: 2, timer: 1, upsert: 2 });
    expect(billableActions(await recorded("dead-letter-retried-patched"))).toEqual({ start: 1, markers: 5, timer: 4, signal: 1, upsert: 4 });
  });

  it("the delivery workflow's patch bills nothing: every path costs what it cost before the patch", async () => {
    for (const name of ["first-attempt-success", "failure-then-success", "dead-letter", "dead-letter-retried", "dead-letter-new-run", "could-not-run"]) {
      expect({ name, actions: total(billableActions(await recorded(`${name}-patched`))) }).toEqual({ name, actions: total(billableActions(await recorded(name))) });
    }
  });
});
