import { describe, expect, it } from "vitest";
import { type NotifyOwnersCommand, OwnerNotices } from "../../../src/capabilities/owner-notices/owner-notices.ts";
import type { OwnerDirectory, SystemMail, SystemMailer } from "../../../src/capabilities/owner-notices/ports.ts";

/**
 * Owner notices with an in-memory directory and a mailer that keeps the
 * send path's promise: a second send with the same idempotency key sends
 * nothing. What an owner notices is how often the notice arrives (once per
 * owner, notice and day, or period) and what it says.
 */

const COMPANY = "0f8fad5b-d9cb-469f-a165-70867728950e";
const OTHER_COMPANY = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";

/** The system sender company's send path: a key already used is a replay that sends nothing. */
class IdempotentMailer implements SystemMailer {
  readonly delivered: SystemMail[] = [];
  readonly #keys = new Set<string>();

  async send(mail: SystemMail): Promise<{ readonly replayed: boolean }> {
    if (this.#keys.has(mail.idempotencyKey)) return { replayed: true };
    this.#keys.add(mail.idempotencyKey);
    this.delivered.push(mail);
    return { replayed: false };
  }
}

function directory(owners: Record<string, readonly string[]>): OwnerDirectory {
  return { activeOwners: async ({ companyId }) => owners[companyId] ?? [] };
}

function notices(owners: Record<string, readonly string[]>, mailer: SystemMailer | undefined): OwnerNotices {
  return new OwnerNotices({ owners: directory(owners), mailer, publicBaseUrl: "https://mail.example" });
}

const LOW_CREDITS = (at: Date, overrides: Partial<NotifyOwnersCommand> = {}): NotifyOwnersCommand => ({
  companyId: COMPANY,
  companyName: "Shop GmbH",
  kind: "credits_low",
  subject: "Your credits are running low",
  paragraphs: ["You have 40 credits left.", "Buy more to keep sending."],
  screenPath: "/admin/credits",
  at,
  ...overrides,
});

describe("owner notices", () => {
  it("emails each active owner once a UTC day, however often the condition is seen that day", async () => {
    const mailer = new IdempotentMailer();
    const owners = notices({ [COMPANY]: ["ada@shop.example", "bob@shop.example"] }, mailer);
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-01T00:00:00.000Z")))).toEqual({ emailed: 2 });
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-01T13:00:00.000Z")))).toEqual({ emailed: 0 });
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-01T23:59:59.999Z")))).toEqual({ emailed: 0 });
    expect(mailer.delivered.map((m) => m.to)).toEqual(["ada@shop.example", "bob@shop.example"]);
    // The next UTC day, the condition still holding is news again.
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-02T00:00:00.000Z")))).toEqual({ emailed: 2 });
    expect(mailer.delivered).toHaveLength(4);
  });

  it("counts the day in UTC, not in the time of the place the check ran", async () => {
    const mailer = new IdempotentMailer();
    const owners = notices({ [COMPANY]: ["ada@shop.example"] }, mailer);
    // 23:30 on 1 March in New York and 04:30 on 2 March UTC are the same instant: 2 March, once.
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-01T23:30:00-05:00")))).toEqual({ emailed: 1 });
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-02T04:30:00Z")))).toEqual({ emailed: 0 });
  });

  it("emails an owner who joins later that day, and nobody twice", async () => {
    const mailer = new IdempotentMailer();
    const team: Record<string, string[]> = { [COMPANY]: ["ada@shop.example"] };
    const owners = notices(team, mailer);
    await owners.notify(LOW_CREDITS(new Date("2025-03-01T08:00:00Z")));
    team[COMPANY] = ["ada@shop.example", "cy@shop.example"];
    expect(await owners.notify(LOW_CREDITS(new Date("2025-03-01T09:00:00Z")))).toEqual({ emailed: 1 });
    expect(mailer.delivered.map((m) => m.to)).toEqual(["ada@shop.example", "cy@shop.example"]);
  });

  it("keeps notices of another kind, another company or another period apart", async () => {
    const mailer = new IdempotentMailer();
    const owners = notices({ [COMPANY]: ["ada@shop.example"], [OTHER_COMPANY]: ["ada@shop.example"] }, mailer);
    const at = new Date("2025-03-01T08:00:00Z");
    expect(await owners.notify(LOW_CREDITS(at))).toEqual({ emailed: 1 });
    expect(await owners.notify(LOW_CREDITS(at, { kind: "domain_degraded", subject: "A domain lost its records" }))).toEqual({ emailed: 1 });
    // The same person owning two companies hears of each.
    expect(await owners.notify(LOW_CREDITS(at, { companyId: OTHER_COMPANY }))).toEqual({ emailed: 1 });
    // A period of the caller's own (one suspension, one domain): a new one emails again the same day.
    const suspended = (period: string) => LOW_CREDITS(at, { kind: "sending_suspended", period });
    expect(await owners.notify(suspended("2025-03-01T08:00:00.000Z"))).toEqual({ emailed: 1 });
    expect(await owners.notify(suspended("2025-03-01T08:00:00.000Z"))).toEqual({ emailed: 0 });
    expect(await owners.notify(suspended("2025-03-01T17:00:00.000Z"))).toEqual({ emailed: 1 });
    expect(mailer.delivered).toHaveLength(5);
    expect(new Set(mailer.delivered.map((m) => m.idempotencyKey)).size).toBe(5);
  });

  it("names the notice in the key and the tags, but never the owner's address", async () => {
    const mailer = new IdempotentMailer();
    await notices({ [COMPANY]: ["ada@shop.example"] }, mailer).notify(LOW_CREDITS(new Date("2025-03-01T08:00:00Z")));
    const [mail] = mailer.delivered;
    expect(mail?.idempotencyKey).toMatch(new RegExp(`^owner-notice:credits_low:${COMPANY}:2025-03-01:[0-9a-f]{16}$`));
    expect(mail?.idempotencyKey).not.toContain("ada");
    expect(mail?.tags).toEqual({ kind: "owner-notice", notice: "credits_low" });
  });

  it("says why, where to act, and for which company, in text and in HTML with the company's words escaped", async () => {
    const mailer = new IdempotentMailer();
    await notices({ [COMPANY]: ["ada@shop.example"] }, mailer).notify(
      LOW_CREDITS(new Date("2025-03-01T08:00:00Z"), { companyName: `Tom & Jerry's <Shop>`, paragraphs: ["Credits < 50 & falling."] }),
    );
    const [mail] = mailer.delivered;
    expect(mail?.subject).toBe("Your credits are running low");
    expect(mail?.text).toBe("Credits < 50 & falling.\n\nOpen the administration screen: https://mail.example/admin/credits\n\n(Tom & Jerry's <Shop>)\n");
    expect(mail?.html).toBe(
      '<p>Credits &#60; 50 &#38; falling.</p><p><a href="https://mail.example/admin/credits">Open the administration screen</a></p><p>Tom &#38; Jerry&#39;s &#60;Shop&#62;</p>',
    );
  });

  it("leaves the link out without a screen path, and says `your company` when the name is unknown", async () => {
    const mailer = new IdempotentMailer();
    await notices({ [COMPANY]: ["ada@shop.example"] }, mailer).notify(
      LOW_CREDITS(new Date("2025-03-01T08:00:00Z"), { companyName: "", screenPath: undefined, paragraphs: ["One.", "Two."] }),
    );
    const [mail] = mailer.delivered;
    expect(mail?.text).toBe("One.\n\nTwo.\n\n(your company)\n");
    expect(mail?.html).toBe("<p>One.</p><p>Two.</p><p>your company</p>");
  });

  it("sends nothing and says why without a system sender or without an active owner", async () => {
    // SYSTEM_SENDER_COMPANY_ID not set: no mailer at all.
    expect(await notices({ [COMPANY]: ["ada@shop.example"] }, undefined).notify(LOW_CREDITS(new Date()))).toEqual({ emailed: 0, skipped: "no_system_sender" });
    const mailer = new IdempotentMailer();
    expect(await notices({}, mailer).notify(LOW_CREDITS(new Date()))).toEqual({ emailed: 0, skipped: "no_owner" });
    expect(mailer.delivered).toEqual([]);
  });

  it("a notice that failed half way sends the rest on the next try, and the first owner nothing twice", async () => {
    const inner = new IdempotentMailer();
    let failFor: string | undefined = "bob@shop.example";
    const flaky: SystemMailer = {
      send: async (mail) => {
        if (mail.to === failFor) throw new Error("database unavailable");
        return inner.send(mail);
      },
    };
    const owners = notices({ [COMPANY]: ["ada@shop.example", "bob@shop.example"] }, flaky);
    const at = new Date("2025-03-01T08:00:00Z");
    await expect(owners.notify(LOW_CREDITS(at))).rejects.toThrow("database unavailable");
    failFor = undefined;
    expect(await owners.notify(LOW_CREDITS(at))).toEqual({ emailed: 1 });
    expect(inner.delivered.map((m) => m.to)).toEqual(["ada@shop.example", "bob@shop.example"]);
  });

  it("an owner whose send fails does not keep the owners after them from hearing", async () => {
    const inner = new IdempotentMailer();
    const flaky: SystemMailer = {
      send: async (mail) => {
        if (mail.to === "ada@shop.example") throw new Error("mailbox refused");
        return inner.send(mail);
      },
    };
    const owners = notices({ [COMPANY]: ["ada@shop.example", "bob@shop.example", "cy@shop.example"] }, flaky);
    await expect(owners.notify(LOW_CREDITS(new Date("2025-03-01T08:00:00Z")))).rejects.toThrow("mailbox refused");
    expect(inner.delivered.map((m) => m.to)).toEqual(["bob@shop.example", "cy@shop.example"]);
  });
});
