import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/contract/api-error.ts";
import { MailStatistics, type StatsStore } from "../../../src/capabilities/stats/index.ts";
import type { StatsSeriesQuery, StoredBucket } from "../../../src/capabilities/stats/ports.ts";

/** The rules of a statistics read above the store: the range on bucket boundaries, empty buckets, the rates, the refusals. */

const ZERO = { accepted: 0, sent: 0, delivered: 0, bounced: 0, complained: 0, rejected: 0, failed: 0, suppressed: 0, deferred: 0 };
const NOW = new Date("2026-11-27T10:20:00Z");

function statistics(buckets: StoredBucket[] = []): { stats: MailStatistics; asked: StatsSeriesQuery[] } {
  const asked: StatsSeriesQuery[] = [];
  const store: StatsStore = {
    async series(query) {
      asked.push(query);
      return buckets;
    },
    async leaders() {
      return [];
    },
  };
  return { stats: new MailStatistics({ store, clock: () => NOW }), asked };
}

describe("MailStatistics", () => {
  it("rounds since down and until up to whole UTC days, fills the empty days and takes the rates over sent", async () => {
    const { stats, asked } = statistics([{ start: new Date("2026-11-26T00:00:00Z"), counts: { ...ZERO, accepted: 10, sent: 8, bounced: 2, complained: 1 } }]);
    const series = await stats.series({ companyId: "c", since: new Date("2026-11-25T13:00:00Z") });
    expect(asked[0]).toMatchObject({ since: new Date("2026-11-25T00:00:00Z"), until: new Date("2026-11-28T00:00:00Z"), intervalHours: 24, segment: { kind: "all" } });
    expect(series.buckets.map((b) => [b.start.toISOString().slice(0, 10), b.counts.accepted, b.counts.bounceRate])).toEqual([
      ["2026-11-25", 0, null],
      ["2026-11-26", 10, 0.25],
      ["2026-11-27", 0, null],
    ]);
    expect(series.totals).toMatchObject({ accepted: 10, bounceRate: 0.25, complaintRate: 0.125 });
  });

  it("by hour: the last 24 hours by default, up to the hour begun", async () => {
    const { stats, asked } = statistics();
    const series = await stats.series({ companyId: "c", interval: "hour" });
    expect(series.buckets).toHaveLength(24);
    expect(asked[0]).toMatchObject({ since: new Date("2026-11-26T11:00:00Z"), until: new Date("2026-11-27T11:00:00Z"), intervalHours: 1 });
  });

  it("refuses reversed or too long ranges, a bad template id and a tag with a template, naming the field", async () => {
    const { stats } = statistics();
    const fieldOf = (promise: Promise<unknown>) => promise.then(() => "", (error: unknown) => (error instanceof ValidationError ? error.fields.map((f) => f.field).join(",") : String(error)));
    expect(await fieldOf(stats.series({ companyId: "c", since: NOW, until: NOW }))).toBe("since");
    expect(await fieldOf(stats.series({ companyId: "c", interval: "hour", since: new Date(NOW.getTime() - 32 * 86_400_000) }))).toBe("until");
    expect(await fieldOf(stats.series({ companyId: "c", since: new Date(NOW.getTime() - 401 * 86_400_000) }))).toBe("until");
    expect(await fieldOf(stats.series({ companyId: "c", templateId: "nope" }))).toBe("templateId");
    expect(await fieldOf(stats.series({ companyId: "c", tag: "a", templateId: "00000000-0000-4000-8000-000000000001" }))).toBe("templateId");
    expect(await fieldOf(stats.leaders({ companyId: "c", since: new Date(NOW.getTime() - 401 * 86_400_000) }))).toBe("until");
  });
});
