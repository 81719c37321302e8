import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer } from "../support/api-harness.ts";
import { startTestDnsServer, type TestDnsServer } from "../support/dns-server.ts";
import { type SmtpRecorder, startSmtpRecorder } from "../support/smtp-sink.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { signedIn } from "../api/members-support.ts";

/**
 * A sending domain checked by the service itself (its Temporal workflow,
 * short intervals here) against a local authoritative DNS server: it turns
 * verified once its records are published, with no "check now"; when its
 * DKIM record disappears it turns degraded, its owners get one email
 * (counted where it lands: a real SMTP server behind the SMTP email service,
 * from a system sender company), however many checks follow, and its
 * senders go on sending.
 */

interface DomainJson {
  id: string;
  status: string;
  records: Array<{ type: string; name: string; value: string; purpose: string; state: string }>;
  lastCheckedAt: string | null;
}

describe("automatic domain checks: verified, then degraded with one owner email, and sending goes on", () => {
  const SYSTEM_COMPANY = "5e5e5e5e-0000-4000-8000-0000000000d5";
  let dns: TestDnsServer;
  let smtp: SmtpRecorder;
  let h: SendingHarness;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    smtp = await startSmtpRecorder();
    h = await startSendingHarness({
      trustProxy: true,
      dnsServers: [dns.address],
      systemSenderCompanyId: SYSTEM_COMPANY,
      publicBaseUrl: "https://mail.example.test",
      emailProvider: "smtp",
      smtp: { host: "127.0.0.1", port: smtp.port, secure: false, user: undefined, password: undefined },
      domainChecks: { pendingIntervalSeconds: 1, pendingHours: 1, verifiedIntervalSeconds: 1 },
    });
    await h.db.query(`insert into company (id, name) values ($1, 'System')`, [SYSTEM_COMPANY]);
    const domain = await h.admin.createSendingDomain({ companyId: SYSTEM_COMPANY, domain: "system-domains.example" });
    await h.admin.verifySendingDomain({ companyId: SYSTEM_COMPANY, domainId: domain.domain?.id ?? "", override: true });
    await h.admin.createSender({ companyId: SYSTEM_COMPANY, email: "no-reply@system-domains.example", makeDefault: true });
    await h.admin.adjustCredits({ companyId: SYSTEM_COMPANY, amount: 100n, note: "owner notices" });
  });
  afterAll(async () => {
    await h?.close();
    await smtp?.close();
    await dns?.close();
  });

  const notices = (address: string) => smtp.landedAt(address).filter((mail) => mail.raw.includes("Subject: Sending domain"));

  it("checks by itself; a lost DKIM record degrades the domain, emails each owner once, and mail still goes out", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.admin", "mail.events.read", "mail.transactional.send"], "Checked Shop");
    await h.admin.adjustCredits({ companyId, amount: 10n, note: "test credits" });
    await signedIn(h, companyId, "owner@checked.example", "owner");
    await signedIn(h, companyId, "admin@checked.example", "admin");
    const created = await h.fetch("/mail/v1/domains", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ domain: "checked.example" }),
    });
    expect(created.status).toBe(201);
    const { domain } = (await created.json()) as { domain: DomainJson };
    await h.fetch("/mail/v1/senders", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "receipts@checked.example" }),
    });
    const read = async () => ((await (await h.fetch(`/mail/v1/domains/${domain.id}`, bearer(secret))).json()) as { domain: DomainJson }).domain;

    // Published: the service finds it by itself.
    for (const record of domain.records) {
      if (record.type === "txt") dns.addTxt(record.name, record.value);
      if (record.type === "mx") dns.addMx(record.name, record.value.split(" ")[1] ?? "", Number(record.value.split(" ")[0]));
    }
    await expect.poll(async () => (await read()).status, { timeout: 60_000, interval: 500 }).toBe("verified");

    // The DKIM record disappears.
    const dkim = domain.records.find((record) => record.purpose === "dkim");
    dns.clear(dkim?.name);
    await expect.poll(async () => (await read()).status, { timeout: 60_000, interval: 500 }).toBe("degraded");
    const degraded = await read();
    expect(degraded.records.map((record) => [record.purpose, record.state])).toEqual([
      ["dkim", "missing"],
      ["spf", "verified"],
      ["return_path", "verified"],
      ["dmarc", "verified"],
    ]);

    // One email to the owner, none to the admin.
    await expect.poll(() => notices("owner@checked.example").length, { timeout: 60_000 }).toBe(1);
    const mail = await simpleParser(notices("owner@checked.example")[0]?.raw ?? "");
    expect(mail.subject).toBe("Sending domain checked.example has lost DNS records");
    expect(mail.text).toContain(`TXT ${dkim?.name} (dkim) is missing`);
    expect(mail.text).toContain("https://mail.example.test/admin/domains");

    // More checks while degraded: still one email.
    const checkedAt = degraded.lastCheckedAt;
    await expect.poll(async () => (await read()).lastCheckedAt !== checkedAt, { timeout: 30_000, interval: 500 }).toBe(true);
    expect(notices("owner@checked.example")).toHaveLength(1);
    expect(notices("admin@checked.example")).toHaveLength(0);

    // Sending goes on from the degraded domain.
    const sent = await h.send(secret, { to: "buyer@customer.example", subject: "Your receipt", html: "<p>Thanks</p>" });
    expect(sent.status).toBe(202);
    const { id } = (await sent.json()) as { id: string };
    await h.waitForMessage(secret, id, (m) => m.status === "sent");
    await expect.poll(() => smtp.landedAt("buyer@customer.example").length, { timeout: 30_000 }).toBe(1);
  });
});
