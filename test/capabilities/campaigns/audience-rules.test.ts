import { describe, expect, it } from "vitest";
import { outcomeBeforeHandoff } from "../../../src/capabilities/campaigns/campaign-sending.ts";
import { outcomeOf } from "../../../src/capabilities/campaigns/lifecycle-handoff.ts";

/** The audience rules at the handoff, and how a copy's message status counts (docs/campaigns.md). */
describe("campaign audience rules", () => {
  it("only a subscribed, unsuppressed contact is handed over; pending and unsubscribed are skipped; bounced, complained and suppressed are suppressed", () => {
    const at = (contactStatus: string | undefined, suppressed = false) => outcomeBeforeHandoff({ contactStatus, suppressed });
    expect(at("subscribed")).toBeUndefined();
    expect(at("pending")).toBe("skipped");
    expect(at("unsubscribed")).toBe("skipped");
    // A contact deleted since the audience was fixed is not written to.
    expect(at(undefined)).toBe("skipped");
    expect(at("bounced")).toBe("suppressed");
    expect(at("complained")).toBe("suppressed");
    expect(at("suppressed")).toBe("suppressed");
    expect(at("subscribed", true)).toBe("suppressed");
    // Unsubscribing wins over a suppression: the contact said no.
    expect(at("unsubscribed", true)).toBe("skipped");
  });

  it("counts a copy by its message's status: past the handoff accepted, refused or not sent failed, suppressed suppressed", () => {
    for (const status of ["sent", "delivered", "bounced", "complained"] as const) expect(outcomeOf(status), status).toBe("accepted");
    for (const status of ["rejected", "failed"] as const) expect(outcomeOf(status), status).toBe("failed");
    expect(outcomeOf("suppressed")).toBe("suppressed");
    for (const status of ["queued", "deferred", "processing"] as const) expect(outcomeOf(status), status).toBe("unknown");
  });
});
