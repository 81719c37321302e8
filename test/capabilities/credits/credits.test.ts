import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectApiError } from "../accounts/harness.ts";
import { createCredits } from "../../../src/wiring/credits.ts";
import { LIST_CONFIG, openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

describe("credits", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  describe("adjust, balance, ledger", () => {
    it("starts without a wallet at 0; every change is a ledger row, newest first", async () => {
      const companyId = await h.newCompany();
      expect(await h.credits.balance({ companyId })).toBe(0);
      expect(await h.credits.hasCredits({ companyId })).toBe(false);

      expect(await h.credits.adjust({ companyId, amount: 10, note: " welcome grant " })).toBe(10);
      expect(await h.credits.adjust({ companyId, amount: -3, note: "correction" })).toBe(7);
      expect(await h.credits.balance({ companyId })).toBe(7);
      expect(await h.credits.hasCredits({ companyId })).toBe(true);

      const ledger = (await h.credits.ledger({ companyId })).items;
      expect(ledger.map(({ delta, reason, note, messageId }) => ({ delta, reason, note, messageId }))).toEqual([
        { delta: -3, reason: "adjustment", note: "correction", messageId: null },
        { delta: 10, reason: "grant", note: "welcome grant", messageId: null },
      ]);
      expect(ledger[0]?.createdAt).toBeInstanceOf(Date);
      expect((await h.credits.ledger({ companyId, limit: 1 })).items).toHaveLength(1);
      expect(await h.credits.summary({ companyId })).toEqual({ balance: 7, lowThreshold: 100, low: true });
    });

    it("never goes below zero: the change is refused and nothing is recorded", async () => {
      const companyId = await h.newCompany();
      const empty = await expectApiError(h.credits.adjust({ companyId, amount: -1, note: "take one" }), "VALIDATION_ERROR");
      expect(empty.message).toMatch(/^amount: /);
      await h.credits.adjust({ companyId, amount: 2, note: "grant" });
      await expectApiError(h.credits.adjust({ companyId, amount: -3, note: "too much" }), "VALIDATION_ERROR");
      expect(await h.credits.balance({ companyId })).toBe(2);
      expect((await h.credits.ledger({ companyId })).items).toHaveLength(1);
      expect(await h.credits.adjust({ companyId, amount: -2, note: "all of it" })).toBe(0);
    });

    it("validates amount and note, and the company", async () => {
      const companyId = await h.newCompany();
      for (const amount of [0, 1.5, Number.NaN, 2_000_000_000]) {
        await expectApiError(h.credits.adjust({ companyId, amount, note: "x" }), "VALIDATION_ERROR");
      }
      const note = await expectApiError(h.credits.adjust({ companyId, amount: 1, note: "  " }), "VALIDATION_ERROR");
      expect(note.message).toMatch(/^note: /);
      await expectApiError(h.credits.adjust({ companyId: "00000000-0000-4000-8000-000000000000", amount: 1, note: "x" }), "NOT_FOUND");
    });
  });

  describe("charges and refunds of messages", () => {
    it("charges once per message, idempotently, and refunds once", async () => {
      const companyId = await h.newCompany();
      await h.credits.adjust({ companyId, amount: 2, note: "grant" });
      const message = randomUUID();
      expect(await h.credits.chargeForMessage({ companyId, messageId: message })).toBe("charged");
      expect(await h.credits.chargeForMessage({ companyId, messageId: message })).toBe("already_charged");
      expect(await h.credits.balance({ companyId })).toBe(1);

      expect(await h.credits.refundMessage({ companyId, messageId: message })).toBe("refunded");
      expect(await h.credits.refundMessage({ companyId, messageId: message })).toBe("already_refunded");
      expect(await h.credits.balance({ companyId })).toBe(2);
      // A refunded message is still charged: retries never charge again.
      expect(await h.credits.chargeForMessage({ companyId, messageId: message })).toBe("already_charged");
      expect(await h.credits.balance({ companyId })).toBe(2);

      const ledger = (await h.credits.ledger({ companyId })).items;
      expect(ledger.map((e) => [e.reason, e.delta, e.messageId])).toEqual([
        ["refund", 1, message],
        ["charge", -1, message],
        ["grant", 2, null],
      ]);
    });

    it("reports insufficient with an empty wallet and records nothing; a later charge works", async () => {
      const companyId = await h.newCompany();
      const message = randomUUID();
      expect(await h.credits.chargeForMessage({ companyId, messageId: message })).toBe("insufficient");
      expect((await h.credits.ledger({ companyId })).items).toEqual([]);
      await h.credits.adjust({ companyId, amount: 1, note: "grant" });
      expect(await h.credits.chargeForMessage({ companyId, messageId: message })).toBe("charged");
      expect(await h.credits.chargeForMessage({ companyId, messageId: randomUUID() })).toBe("insufficient");
      expect(await h.credits.balance({ companyId })).toBe(0);
    });

    it("does not refund a message that was never charged", async () => {
      const companyId = await h.newCompany();
      await h.credits.adjust({ companyId, amount: 1, note: "grant" });
      expect(await h.credits.refundMessage({ companyId, messageId: randomUUID() })).toBe("not_charged");
      expect(await h.credits.balance({ companyId })).toBe(1);
    });

    it("refuses ids that are not UUIDs (a caller bug)", async () => {
      const companyId = await h.newCompany();
      await expect(h.credits.chargeForMessage({ companyId, messageId: "m-1" })).rejects.toThrow(/UUID/);
      await expect(h.credits.refundMessage({ companyId: "c-1", messageId: randomUUID() })).rejects.toThrow(/UUID/);
    });
  });

  describe("tenant isolation", () => {
    it("wallets, ledgers, charges and refunds are per company", async () => {
      const a = await h.newCompany("A");
      const b = await h.newCompany("B");
      await h.credits.adjust({ companyId: a, amount: 3, note: "grant A" });
      expect(await h.credits.balance({ companyId: b })).toBe(0);
      expect(await h.credits.hasCredits({ companyId: b })).toBe(false);
      expect(await h.credits.ledger({ companyId: b })).toEqual({ items: [], nextCursor: null });
      expect(await h.credits.summary({ companyId: b })).toMatchObject({ balance: 0 });

      const message = randomUUID();
      expect(await h.credits.chargeForMessage({ companyId: a, messageId: message })).toBe("charged");
      // B cannot refund (and so gain a credit from) A's message...
      expect(await h.credits.refundMessage({ companyId: b, messageId: message })).toBe("not_charged");
      // ...and a charge of A's message for B is a bug, never a silent success.
      await expect(h.credits.chargeForMessage({ companyId: b, messageId: message })).rejects.toThrow(/another company/);
      expect(await h.credits.balance({ companyId: a })).toBe(2);
      expect(await h.credits.balance({ companyId: b })).toBe(0);
    });
  });

  describe("the ledger's pages", () => {
    it("pages newest first with a cursor bound to the company and the reason; filters by reason; refuses a bad limit or cursor", async () => {
      const companyId = await h.newCompany();
      await h.credits.adjust({ companyId, amount: 5, note: "grant" });
      const messages = [randomUUID(), randomUUID(), randomUUID()];
      for (const messageId of messages) await h.credits.chargeForMessage({ companyId, messageId });
      await h.credits.refundMessage({ companyId, messageId: messages[0] ?? "" });

      const first = await h.credits.ledger({ companyId, limit: 2 });
      expect(first.items.map((e) => e.reason)).toEqual(["refund", "charge"]);
      const second = await h.credits.ledger({ companyId, limit: 2, cursor: first.nextCursor ?? "" });
      expect(second.items.map((e) => e.reason)).toEqual(["charge", "charge"]);
      const last = await h.credits.ledger({ companyId, limit: 2, cursor: second.nextCursor ?? "" });
      expect(last).toMatchObject({ items: [{ reason: "grant", note: "grant" }], nextCursor: null });

      const charges = await h.credits.ledger({ companyId, reason: "charge" });
      expect(charges.items.map((e) => e.messageId)).toEqual([...messages].reverse());
      // A cursor works with the filters it was issued for only, and for its own company.
      const refused = await expectApiError(h.credits.ledger({ companyId, reason: "charge", cursor: first.nextCursor ?? "" }), "VALIDATION_ERROR");
      expect(refused.message).toMatch(/^cursor: /);
      const other = await h.newCompany("Other");
      await expectApiError(h.credits.ledger({ companyId: other, limit: 2, cursor: first.nextCursor ?? "" }), "VALIDATION_ERROR");
      expect((await expectApiError(h.credits.ledger({ companyId, limit: 0 }), "VALIDATION_ERROR")).message).toMatch(/^limit: /);
      expect((await expectApiError(h.credits.ledger({ companyId, reason: "gift" as "grant" }), "VALIDATION_ERROR")).message).toMatch(/^reason: /);
    });
  });

  describe("low credits", () => {
    it("the charge that leaves the balance below the mark tells the owners, once a day; a failed notice is tried again", async () => {
      let now = new Date("2030-03-01T10:00:00Z");
      const told: Array<{ companyName: string; balance: number; threshold: number }> = [];
      let failing = true;
      const credits = createCredits(h.orm, {
        config: { ...LIST_CONFIG, lowCreditsThreshold: 3 },
        clock: () => now,
        lowCreditsAlert: {
          async creditsLow(notice) {
            if (failing) return false;
            told.push({ companyName: notice.companyName, balance: notice.balance, threshold: notice.threshold });
            return true;
          },
        },
      });
      const companyId = await h.newCompany("Low Co");
      await credits.adjust({ companyId, amount: 6, note: "grant" });
      const charge = () => credits.chargeForMessage({ companyId, messageId: randomUUID() });
      await charge(); // 5
      await charge(); // 4
      await charge(); // 3: not below the mark yet
      expect(await credits.summary({ companyId })).toEqual({ balance: 3, lowThreshold: 3, low: false });
      await charge(); // 2: below, but the notice fails
      expect(told).toEqual([]);
      failing = false;
      await charge(); // 1: told
      await charge(); // 0: already told today
      expect(told).toEqual([{ companyName: "Low Co", balance: 1, threshold: 3 }]);
      expect(await credits.summary({ companyId })).toEqual({ balance: 0, lowThreshold: 3, low: true });

      // The next day, the next charge below the mark tells them again.
      now = new Date("2030-03-02T09:00:00Z");
      await credits.adjust({ companyId, amount: 2, note: "top-up" });
      await charge();
      expect(told).toHaveLength(2);
      // An operator's adjustment is no charge: it tells nobody.
      await credits.adjust({ companyId, amount: -1, note: "correction" });
      expect(told).toHaveLength(2);
    });

    it("a threshold of 0 is never low", async () => {
      const credits = createCredits(h.orm, { config: { ...LIST_CONFIG, lowCreditsThreshold: 0 } });
      const companyId = await h.newCompany();
      expect(await credits.summary({ companyId })).toEqual({ balance: 0, lowThreshold: 0, low: false });
    });
  });
});
