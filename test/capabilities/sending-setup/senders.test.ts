import { createPublicKey, createSign, createVerify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectApiError, OPERATOR_AUDIT } from "../accounts/harness.ts";
import { openSendingHarness, type SendingHarness } from "./harness.ts";

describe("senders", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  /** A company with a domain, verified by override unless told otherwise. */
  async function companyWithDomain(domain = "example.com", verified = true): Promise<{ companyId: string; domainId: string }> {
    const companyId = await h.newCompany();
    const created = await h.setup.domains.create({ companyId, domain: domain, audit: OPERATOR_AUDIT });
    if (verified) await h.setup.domains.overrideVerification({ companyId, domainId: created.id, audit: OPERATOR_AUDIT });
    return { companyId, domainId: created.id };
  }

  describe("create", () => {
    it("adds an address on one of the company's domains; the first sender becomes the default", async () => {
      const { companyId, domainId } = await companyWithDomain();
      const first = await h.setup.senders.create({ companyId, email: "Receipts@EXAMPLE.com", name: "  Acme Receipts ", audit: OPERATOR_AUDIT });
      expect(first).toMatchObject({ companyId, domainId, email: "Receipts@example.com", name: "Acme Receipts", isDefault: true, verified: true });
      const second = await h.setup.senders.create({ companyId, email: "news@example.com", audit: OPERATOR_AUDIT });
      expect(second).toMatchObject({ isDefault: false, name: null });
      const third = await h.setup.senders.create({ companyId, email: "alerts@example.com", makeDefault: true, audit: OPERATOR_AUDIT });
      expect(third.isDefault).toBe(true);
      const list = await h.setup.senders.list({ companyId });
      expect(list.map((s) => [s.email, s.isDefault])).toEqual([
        ["Receipts@example.com", false],
        ["news@example.com", false],
        ["alerts@example.com", true],
      ]);
    });

    it("answers NOT_FOUND for an address on a domain the company does not have", async () => {
      const { companyId } = await companyWithDomain();
      const error = await expectApiError(h.setup.senders.create({ companyId, email: "a@other.example", audit: OPERATOR_AUDIT }), "NOT_FOUND");
      expect(error.message).toContain("other.example");
      // A subdomain is another domain.
      await expectApiError(h.setup.senders.create({ companyId, email: "a@mail.example.com", audit: OPERATOR_AUDIT }), "NOT_FOUND");
    });

    it("validates the address and the display name, and refuses duplicates (case-insensitively)", async () => {
      const { companyId } = await companyWithDomain();
      await expectApiError(h.setup.senders.create({ companyId, email: "not an address", audit: OPERATOR_AUDIT }), "VALIDATION_ERROR");
      const injected = await expectApiError(
        h.setup.senders.create({ companyId, email: "a@example.com", name: "Acme\r\nBcc: victim@example.net", audit: OPERATOR_AUDIT }),
        "VALIDATION_ERROR",
      );
      expect(injected.message).toMatch(/^name: /);
      await expectApiError(h.setup.senders.create({ companyId, email: "a@example.com", name: "x".repeat(121), audit: OPERATOR_AUDIT }), "VALIDATION_ERROR");
      await h.setup.senders.create({ companyId, email: "dup@example.com", audit: OPERATOR_AUDIT });
      await expectApiError(h.setup.senders.create({ companyId, email: "DUP@example.com", audit: OPERATOR_AUDIT }), "VALIDATION_ERROR");
    });

    it("a sender on an unverified domain exists but is not verified", async () => {
      const { companyId } = await companyWithDomain("pending.example", false);
      expect(await h.setup.senders.create({ companyId, email: "a@pending.example", audit: OPERATOR_AUDIT })).toMatchObject({ verified: false, isDefault: true });
    });
  });

  describe("default sender", () => {
    it("switches the default: the new one has it, the previous one no longer", async () => {
      const { companyId } = await companyWithDomain();
      const senders = [];
      for (let i = 0; i < 6; i++) senders.push(await h.setup.senders.create({ companyId, email: `s${i}@example.com`, audit: OPERATOR_AUDIT }));

      const switched = await h.setup.senders.setDefault({ companyId, senderId: senders[3]?.id ?? "", audit: OPERATOR_AUDIT });
      expect(switched).toMatchObject({ id: senders[3]?.id, isDefault: true });
      // Idempotent.
      expect(await h.setup.senders.setDefault({ companyId, senderId: senders[3]?.id ?? "", audit: OPERATOR_AUDIT })).toMatchObject({ isDefault: true });

      const defaults = (await h.setup.senders.list({ companyId })).filter((s) => s.isDefault);
      expect(defaults.map((s) => s.id)).toEqual([senders[3]?.id]);
    });

    it("answers NOT_FOUND for an unknown sender", async () => {
      const { companyId } = await companyWithDomain();
      await expectApiError(h.setup.senders.setDefault({ companyId, senderId: "00000000-0000-4000-8000-000000000000", audit: OPERATOR_AUDIT }), "NOT_FOUND");
      await expectApiError(h.setup.senders.setDefault({ companyId, senderId: "nope", audit: OPERATOR_AUDIT }), "NOT_FOUND");
    });
  });

  describe("resolveSender (the send path)", () => {
    it("gives the default sender with its return path and a usable DKIM key", async () => {
      const { companyId, domainId } = await companyWithDomain("signed.example");
      const sender = await h.setup.senders.create({ companyId, email: "hello@signed.example", name: "Signed", audit: OPERATOR_AUDIT });
      const resolved = await h.setup.senders.resolveSender(companyId);
      const domain = await h.setup.domains.get({ companyId, domainId: domainId });
      expect(resolved).toMatchObject({
        senderId: sender.id,
        email: "hello@signed.example",
        name: "Signed",
        domain: "signed.example",
        returnPathDomain: "bounces.signed.example",
        dkim: { domainName: "signed.example", keySelector: domain.dkimSelector },
      });
      expect(resolved.dkim.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      // Accepting a send checks the same sender but never handles the key.
      const { dkim: _key, ...sendable } = resolved;
      expect(await h.setup.senders.checkSender(companyId)).toEqual(sendable);
      // The key signs what the published record verifies.
      const published = /p=(.+)$/.exec(domain.dnsRecords.find((r) => r.purpose === "dkim")?.value ?? "")?.[1] ?? "";
      const signature = createSign("sha256").update("data").sign(resolved.dkim.privateKey);
      const publicKey = createPublicKey({ key: Buffer.from(published, "base64"), format: "der", type: "spki" });
      expect(createVerify("sha256").update("data").verify(publicKey, signature)).toBe(true);
    });

    it("gives a named sender; an empty senderId means the default", async () => {
      const { companyId } = await companyWithDomain();
      await h.setup.senders.create({ companyId, email: "default@example.com", audit: OPERATOR_AUDIT });
      const other = await h.setup.senders.create({ companyId, email: "other@example.com", audit: OPERATOR_AUDIT });
      expect((await h.setup.senders.resolveSender(companyId, other.id)).email).toBe("other@example.com");
      expect((await h.setup.senders.resolveSender(companyId, "")).email).toBe("default@example.com");
      expect(await h.setup.senders.resolveSender(companyId, other.id)).not.toHaveProperty("name");
    });

    it("answers NOT_FOUND for an unknown senderId, naming it", async () => {
      const { companyId } = await companyWithDomain();
      await h.setup.senders.create({ companyId, email: "a@example.com", audit: OPERATOR_AUDIT });
      const unknown = "00000000-0000-4000-8000-000000000000";
      const error = await expectApiError(h.setup.senders.resolveSender(companyId, unknown), "NOT_FOUND");
      expect(error.message).toContain(unknown);
      expect(error.message).toContain("senderId");
      await expectApiError(h.setup.senders.resolveSender(companyId, "garbage"), "NOT_FOUND");
    });

    it("answers SENDER_NOT_VERIFIED without senders, or when the domain is not verified", async () => {
      const { companyId } = await companyWithDomain("unverified.example", false);
      await expectApiError(h.setup.senders.resolveSender(companyId), "SENDER_NOT_VERIFIED");
      const sender = await h.setup.senders.create({ companyId, email: "a@unverified.example", audit: OPERATOR_AUDIT });
      await expectApiError(h.setup.senders.resolveSender(companyId), "SENDER_NOT_VERIFIED");
      await expectApiError(h.setup.senders.resolveSender(companyId, sender.id), "SENDER_NOT_VERIFIED");
      const companyWithout = await h.newCompany();
      await expectApiError(h.setup.senders.resolveSender(companyWithout), "SENDER_NOT_VERIFIED");
    });

    it("only unseals with the deployment's data encryption key", async () => {
      const { companyId } = await companyWithDomain();
      await h.setup.senders.create({ companyId, email: "a@example.com", audit: OPERATOR_AUDIT });
      const other = h.setupWith({ dataEncryptionKey: "another-key" });
      await expect(other.senders.resolveSender(companyId)).rejects.toThrow();
    });
  });

  describe("tenant isolation", () => {
    it("company B can neither see, nor use, nor change A's senders or domains", async () => {
      const a = await companyWithDomain("a.example");
      const b = await companyWithDomain("b.example");
      const senderA = await h.setup.senders.create({ companyId: a.companyId, email: "x@a.example", audit: OPERATOR_AUDIT });
      await h.setup.senders.create({ companyId: b.companyId, email: "x@b.example", audit: OPERATOR_AUDIT });

      expect((await h.setup.senders.list({ companyId: b.companyId })).map((s) => s.email)).toEqual(["x@b.example"]);
      // B cannot put a sender on A's domain.
      await expectApiError(h.setup.senders.create({ companyId: b.companyId, email: "y@a.example", audit: OPERATOR_AUDIT }), "NOT_FOUND");
      // Nor send as, nor make default, A's sender.
      await expectApiError(h.setup.senders.resolveSender(b.companyId, senderA.id), "NOT_FOUND");
      await expectApiError(h.setup.senders.setDefault({ companyId: b.companyId, senderId: senderA.id, audit: OPERATOR_AUDIT }), "NOT_FOUND");
      expect((await h.setup.senders.resolveSender(b.companyId)).email).toBe("x@b.example");
      expect((await h.setup.senders.resolveSender(a.companyId)).email).toBe("x@a.example");
    });
  });
});
