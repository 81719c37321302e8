import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { bearer } from "../support/api-harness.ts";
import { type SmtpRecorder, startSmtpRecorder } from "../support/smtp-sink.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type Browser, reasonOf, signedIn } from "../api/members-support.ts";

/**
 * Suppressions and credits through the delivery loop (a real Temporal dev
 * server and worker): an address taken off the list is mailed again, and
 * its next bounce or complaint (the simulator's magic addresses) lists it
 * again; the charge that takes a balance below the low mark emails the
 * company's owners once that day, counted where the email lands (a real
 * SMTP server behind the SMTP email service), however many charges follow.
 */

interface SuppressionJson {
  email: string;
  reason: string;
  messageId: string | null;
}

describe("suppressions and credits through the delivery loop", () => {
  let temporal: TemporalDevServer;

  beforeAll(async () => {
    temporal = await startTemporalDevServer();
  });
  afterAll(async () => temporal?.stop());

  describe("an address removed from the list is suppressed again by its next bounce or complaint (the simulator)", () => {
    let h: SendingHarness;
    let s: ReadySender;
    let owner: Browser;
    let admin: Browser;

    beforeAll(async () => {
      h = await startSendingHarness({ trustProxy: true }, temporal);
      s = await h.readySender({ credits: 20 });
      owner = await signedIn(h, s.companyId, "owner@loop.example", "owner");
      admin = await signedIn(h, s.companyId, "admin@loop.example", "admin");
    });
    afterAll(async () => h?.close());

    async function send(to: string): Promise<string> {
      const response = await h.send(s.secret, { to, subject: "Your receipt", html: "<p>Thanks</p>" });
      expect(response.status).toBe(202);
      return ((await response.json()) as { id: string }).id;
    }

    async function listed(email: string): Promise<SuppressionJson | undefined> {
      const response = await h.fetch(`/mail/v1/suppressions/${encodeURIComponent(email)}`, bearer(s.secret));
      return response.status === 200 ? ((await response.json()) as SuppressionJson) : undefined;
    }

    it("a bounce: listed with its message; an admin removes it with a reason; the next send goes out, bounces, and lists it again", async () => {
      const address = "bounce+loop@customer.example";
      const first = await send(address);
      await h.waitForMessage(s.secret, first, (m) => m.status === "bounced");
      expect(await listed(address)).toMatchObject({ reason: "bounce", messageId: first });

      const removed = await admin.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: address, reason: "the customer fixed their mailbox" });
      expect(removed.status).toBe(200);
      expect(await listed(address)).toBeUndefined();

      // Mailed again: handed over (charged), not `suppressed`; the simulator bounces it again.
      const second = await send(address);
      const again = await h.waitForMessage(s.secret, second, (m) => m.status === "bounced");
      expect(again.events.map((e) => e.type)).toEqual(["sent", "bounce"]);
      expect(await listed(address)).toMatchObject({ reason: "bounce", messageId: second });

      // And suppressed from then on.
      const third = await send(address);
      expect((await h.waitForMessage(s.secret, third, (m) => m.status === "suppressed")).errorCode).toBe("SUPPRESSED");
    });

    it("a complaint: an admin may not remove it, an owner may; the next complaint lists it again", async () => {
      const address = "complaint+loop@customer.example";
      const first = await send(address);
      await h.waitForMessage(s.secret, first, (m) => m.status === "complained");
      expect(await listed(address)).toMatchObject({ reason: "complaint", messageId: first });

      const refused = await admin.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: address, reason: "they asked" });
      expect(refused.status).toBe(403);
      expect(reasonOf(refused)).toBe("FORBIDDEN");
      const blocked = await send(address);
      expect((await h.waitForMessage(s.secret, blocked, (m) => m.status === "suppressed")).errorCode).toBe("SUPPRESSED");

      const removed = await owner.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: address, reason: "they asked to get receipts again" });
      expect(removed.status).toBe(200);
      const second = await send(address);
      await h.waitForMessage(s.secret, second, (m) => m.status === "complained");
      expect(await listed(address)).toMatchObject({ reason: "complaint", messageId: second });

      // Both removals are in the audit log, each with its reason and who made it.
      const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "suppression.removed" });
      expect(
        (audit.body.items as Array<{ actor: string; details: string }>).map((row) => [row.actor, (JSON.parse(row.details) as { reason: string }).reason]),
      ).toEqual([
        ["owner@loop.example", "they asked to get receipts again"],
        ["admin@loop.example", "the customer fixed their mailbox"],
      ]);
    });
  });

  describe("low credits: the owners are emailed once a day (SMTP email service, a system sender company)", () => {
    const SYSTEM_COMPANY = "5e5e5e5e-0000-4000-8000-0000000000c5";
    let smtp: SmtpRecorder;
    let h: SendingHarness;

    beforeAll(async () => {
      smtp = await startSmtpRecorder();
      h = await startSendingHarness(
        {
          trustProxy: true,
          systemSenderCompanyId: SYSTEM_COMPANY,
          lowCreditsThreshold: 3,
          publicBaseUrl: "https://mail.example.test",
          emailProvider: "smtp",
          smtp: { host: "127.0.0.1", port: smtp.port, secure: false, user: undefined, password: undefined },
        },
        temporal,
      );
      await h.db.query(`insert into company (id, name) values ($1, 'System')`, [SYSTEM_COMPANY]);
      const domain = await h.admin.createSendingDomain({ companyId: SYSTEM_COMPANY, domain: "system-credits.example" });
      await h.admin.verifySendingDomain({ companyId: SYSTEM_COMPANY, domainId: domain.domain?.id ?? "", override: true });
      await h.admin.createSender({ companyId: SYSTEM_COMPANY, email: "no-reply@system-credits.example", makeDefault: true });
      await h.admin.adjustCredits({ companyId: SYSTEM_COMPANY, amount: 100n, note: "owner notices" });
    });
    afterAll(async () => {
      await h?.close();
      await smtp?.close();
    });

    // The owners' invitations land at the same sink (a system sender emails them); only the notices count here.
    const landedAt = (address: string) => smtp.landedAt(address).filter((mail) => mail.raw.includes("Subject: Mail credits are low"));

    it("the charge that takes the balance below the mark emails each owner once; later charges that day email nobody", async () => {
      const s = await h.readySender({ credits: 5 });
      await h.db.query(`update company set name = 'Low Balance Shop' where id = $1`, [s.companyId]);
      await signedIn(h, s.companyId, "first-owner@low.example", "owner");
      await signedIn(h, s.companyId, "second-owner@low.example", "owner");
      await signedIn(h, s.companyId, "admin@low.example", "admin");

      // Five charges, one after the other: 4, 3 (at the mark, not below), then 2, 1, 0.
      for (let n = 1; n <= 5; n += 1) {
        const response = await h.send(s.secret, { to: `buyer-${n}@customer.example`, subject: `Receipt ${n}`, html: "<p>Thanks</p>" });
        expect(response.status).toBe(202);
        const { id } = (await response.json()) as { id: string };
        await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
        if (n === 2) {
          // At the mark: not low yet, nobody told.
          expect(await (await h.fetch("/mail/v1/credits", bearer(s.secret))).json()).toEqual({ balance: "3", lowBalanceThreshold: "3", low: false });
          const notices = await h.db.query(`select 1 from message where company_id = $1 and tags->>'notice' = 'credits_low'`, [SYSTEM_COMPANY]);
          expect(notices.rows).toHaveLength(0);
        }
      }
      // Every notice the charges asked for was accepted before its charge's handoff went on: all are in the system company's log now.
      const notices = await h.db.query<{ id: string; recipient: string }>(
        `select id, recipient from message where company_id = $1 and tags->>'notice' = 'credits_low' order by recipient`,
        [SYSTEM_COMPANY],
      );
      expect(notices.rows.map((row) => row.recipient)).toEqual(["first-owner@low.example", "second-owner@low.example"]);

      // Where they land: one email per owner, none for the admin.
      for (const owner of ["first-owner@low.example", "second-owner@low.example"]) {
        await expect.poll(() => landedAt(owner).length, { timeout: 30_000 }).toBe(1);
      }
      expect(landedAt("first-owner@low.example")).toHaveLength(1);
      expect(landedAt("second-owner@low.example")).toHaveLength(1);
      expect(landedAt("admin@low.example")).toHaveLength(0);

      const mail = await simpleParser(landedAt("first-owner@low.example")[0]?.raw ?? "");
      expect(mail.subject).toBe("Mail credits are low: 2 left");
      expect(mail.text).toContain("2 Mail credits are left for Low Balance Shop (the low-balance mark is 3).");
      expect(mail.text).toContain("https://mail.example.test/admin/credits");

      // The company sees the same: the balance on /me and the low flag.
      const me = (await (await h.fetch("/mail/v1/me", bearer(s.secret))).json()) as { credits: unknown };
      expect(me.credits).toEqual({ balance: "0" });
      expect(await (await h.fetch("/mail/v1/credits", bearer(s.secret))).json()).toEqual({ balance: "0", lowBalanceThreshold: "3", low: true });

      // A top-up and more charges below the mark the same day: still one email each.
      await h.admin.adjustCredits({ companyId: s.companyId, amount: 2n, note: "top-up" });
      for (let n = 6; n <= 7; n += 1) {
        const { id } = (await (await h.send(s.secret, { to: `buyer-${n}@customer.example`, subject: `Receipt ${n}`, html: "<p>Thanks</p>" })).json()) as { id: string };
        await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
      }
      await expect.poll(() => smtp.landedAt("buyer-7@customer.example").length, { timeout: 30_000 }).toBe(1);
      const after = await h.db.query(`select 1 from message where company_id = $1 and tags->>'notice' = 'credits_low'`, [SYSTEM_COMPANY]);
      expect(after.rows).toHaveLength(2);
      expect(landedAt("first-owner@low.example")).toHaveLength(1);
    });
  });
});
