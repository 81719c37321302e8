import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectApiError } from "../accounts/harness.ts";
import { openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

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

      const ledger = await h.credits.ledger({ companyId });
      expect(ledger.map(({ delta, reason, note, messageId }) => ({ delta, reason, note, messageId }))).toEqual([
        { delta: -3, reason: "adjustment", note: "correction", messageId: null },
        { delta: 10, reason: "grant", note: "welcome grant", messageId: null },
      ]);
      expect(ledger[0]?.createdAt).toBeInstanceOf(Date);
      expect(await h.credits.ledger({ companyId, limit: 1 })).toHaveLength(1);
      expect(await h.credits.wallet({ companyId })).toMatchObject({ companyId, balance: 7, ledger: [{ delta: -3 }, { delta: 10 }] });
    });

    it("never goes below zero: the change is refused and nothing is recorded", async () => {
      const companyId = await h.newCompany();
      const empty = await expectApiError(h.credits.adjust({ companyId, amount: -1, note: "take one" }), "VALIDATION_ERROR");
      expect(empty.message).toMatch(/^amount: /);
      await h.credits.adjust({ companyId, amount: 2, note: "grant" });
      await expectApiError(h.credits.adjust({ companyId, amount: -3, note: "too much" }), "VALIDATION_ERROR");
      expect(await h.credits.balance({ companyId })).toBe(2);
      expect(await h.credits.ledger({ companyId })).toHaveLength(1);
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
      await expectApiError(h.credits.wallet({ companyId: "00000000-0000-4000-8000-000000000000" }), "NOT_FOUND");
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

      const ledger = await h.credits.ledger({ companyId });
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
      expect(await h.credits.ledger({ companyId })).toEqual([]);
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
      expect(await h.credits.ledger({ companyId: b })).toEqual([]);
      expect(await h.credits.wallet({ companyId: b })).toMatchObject({ balance: 0, ledger: [] });

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
});
