import { describe, expect, it } from "vitest";
import { HOURLY_TIMELINE_MS, timelineInterval } from "../../../src/capabilities/campaigns/campaigns.ts";

describe("a campaign's timeline interval", () => {
  const started = new Date("2026-11-20T08:00:00Z");

  it("is an hour before the campaign started and for its first three days", () => {
    expect(timelineInterval(null, started)).toBe("hour");
    expect(timelineInterval(started, new Date(started.getTime() + HOURLY_TIMELINE_MS))).toBe("hour");
  });

  it("is a day once the campaign is older than three days", () => {
    expect(timelineInterval(started, new Date(started.getTime() + HOURLY_TIMELINE_MS + 1))).toBe("day");
  });
});
