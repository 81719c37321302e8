import { randomUUID } from "node:crypto";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { apiErrorFrom, type ErrorCodeName } from "../../src/contract/api-error.ts";
import { AdminService, type SendingDomain } from "../../src/gen/mail/v1/admin_pb.js";
import { CreditLedgerReason, CreditsService } from "../../src/gen/mail/v1/credits_pb.js";
import { startTestDnsServer, type TestDnsServer } from "../support/dns-server.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";


/** Awaits a failing RPC and returns its contract error code and Connect code. */
async function failure(call: Promise<unknown>): Promise<{ code: ErrorCodeName | undefined; connect: Code; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  const connectError = error as ConnectError;
  return { code: apiErrorFrom(connectError)?.code, connect: connectError.code, message: connectError.rawMessage };
}

function publish(dns: TestDnsServer, domain: SendingDomain): void {
  for (const record of domain.dnsRecords) {
    if (record.type === "TXT") dns.addTxt(record.name, record.value);
    if (record.type === "MX") {
      const [priority, host] = record.value.split(" ");
      dns.addMx(record.name, host ?? "", Number(priority));
    }
  }
}

describe("AdminService: sending domains, senders, templates, credits", () => {
  let h: ApiHarness;
  let dns: TestDnsServer;
  let companyId: string;
  let otherCompanyId: string;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    h = await startApiHarness({ dnsServers: [dns.address], spfInclude: "spf.mail.test", returnPathMxHost: "feedback.mail.test" });
    companyId = (await h.newCompanyWithKey()).companyId;
    otherCompanyId = (await h.newCompanyWithKey(undefined, "Other Inc.")).companyId;
  });

  afterAll(async () => {
    await h?.close();
    await dns?.close();
  });

  beforeEach(() => dns.clear());

  it("requires the operator token", async () => {
    const anonymous = createClient(AdminService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const { connect } = await failure(anonymous.listSendingDomains({ companyId }));
    expect(connect).toBe(Code.Unauthenticated);
  });

  describe("sending domains", () => {
    it("create -> DNS records; verify against real DNS; list", async () => {
      const { domain } = await h.admin.createSendingDomain({ companyId, domain: "Shop.Example" });
      expect(domain).toMatchObject({
        companyId,
        domain: "shop.example",
        returnPathDomain: "bounces.shop.example",
        verified: false,
        dkimVerified: false,
        verificationOverridden: false,
      });
      expect(domain?.createdAt).toBeDefined();
      expect(domain?.lastCheckedAt).toBeUndefined();
      expect(domain?.dnsRecords.map((r) => [r.type, r.name, r.purpose])).toEqual([
        ["TXT", `${domain?.dkimSelector}._domainkey.shop.example`, "dkim"],
        ["TXT", "bounces.shop.example", "spf"],
        ["MX", "bounces.shop.example", "return_path"],
        ["TXT", "_dmarc.shop.example", "dmarc"],
      ]);
      expect(domain?.dnsRecords[1]?.value).toBe("v=spf1 include:spf.mail.test -all");
      expect(domain?.dnsRecords[2]?.value).toBe("10 feedback.mail.test");
      expect(domain?.dnsRecords[3]?.value).toMatch(/^v=DMARC1/);
      if (!domain) throw new Error("no domain");

      // Nothing published yet.
      const unverified = await h.admin.verifySendingDomain({ companyId, domainId: domain.id });
      expect(unverified.domain).toMatchObject({ verified: false, dkimVerified: false, spfVerified: false, dmarcVerified: false });
      expect(unverified.domain?.lastCheckedAt).toBeDefined();

      publish(dns, domain);
      const verified = await h.admin.verifySendingDomain({ companyId, domainId: domain.id });
      expect(verified.domain).toMatchObject({ verified: true, dkimVerified: true, spfVerified: true, dmarcVerified: true });
      expect(verified.domain?.dnsRecords.every((r) => r.verified)).toBe(true);

      const { domains } = await h.admin.listSendingDomains({ companyId });
      expect(domains.map((d) => [d.domain, d.verified])).toEqual([["shop.example", true]]);
    });

    it("override verifies without DNS and is recorded", async () => {
      const { domain } = await h.admin.createSendingDomain({ companyId, domain: "dev.example" });
      const { domain: overridden } = await h.admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });
      expect(overridden).toMatchObject({ verified: true, verificationOverridden: true, dkimVerified: false });
    });

    it("errors: invalid domain, duplicate, unknown company, another company's domain", async () => {
      expect((await failure(h.admin.createSendingDomain({ companyId, domain: "not a domain" }))).code).toBe("VALIDATION_ERROR");
      await h.admin.createSendingDomain({ companyId, domain: "dup.example" });
      const duplicate = await failure(h.admin.createSendingDomain({ companyId, domain: "dup.example" }));
      expect(duplicate).toMatchObject({ code: "VALIDATION_ERROR", connect: Code.InvalidArgument });
      expect((await failure(h.admin.createSendingDomain({ companyId: randomUUID(), domain: "x.example" }))).code).toBe("NOT_FOUND");

      const { domains } = await h.admin.listSendingDomains({ companyId });
      const mine = domains[0]?.id ?? "";
      expect((await h.admin.listSendingDomains({ companyId: otherCompanyId })).domains).toEqual([]);
      const foreign = await failure(h.admin.verifySendingDomain({ companyId: otherCompanyId, domainId: mine, override: true }));
      expect(foreign).toMatchObject({ code: "NOT_FOUND", connect: Code.NotFound });
    });
  });

  describe("senders", () => {
    it("create (first is default), list, switch default; NOT_FOUND for an unknown domain or another company's sender", async () => {
      const { domain } = await h.admin.createSendingDomain({ companyId, domain: "senders.example" });
      await h.admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });

      const { sender: first } = await h.admin.createSender({ companyId, email: "hello@senders.example", name: "Hello" });
      expect(first).toMatchObject({ companyId, domainId: domain?.id, email: "hello@senders.example", name: "Hello", isDefault: true, verified: true });
      const { sender: second } = await h.admin.createSender({ companyId, email: "news@senders.example" });
      expect(second).toMatchObject({ isDefault: false });
      expect(second?.name).toBeUndefined();

      const { sender: switched } = await h.admin.setDefaultSender({ companyId, senderId: second?.id ?? "" });
      expect(switched).toMatchObject({ id: second?.id, isDefault: true });
      const { senders } = await h.admin.listSenders({ companyId });
      expect(senders.map((s) => [s.email, s.isDefault])).toEqual([
        ["hello@senders.example", false],
        ["news@senders.example", true],
      ]);

      // The send path's view of it.
      expect((await h.app.sendingSetup.senders.resolveSender(companyId)).senderId).toBe(second?.id);

      expect((await failure(h.admin.createSender({ companyId, email: "a@unknown.example" }))).code).toBe("NOT_FOUND");
      expect((await failure(h.admin.createSender({ companyId: otherCompanyId, email: "a@senders.example" }))).code).toBe("NOT_FOUND");
      expect((await failure(h.admin.setDefaultSender({ companyId: otherCompanyId, senderId: first?.id ?? "" }))).code).toBe("NOT_FOUND");
      expect((await h.admin.listSenders({ companyId: otherCompanyId })).senders).toEqual([]);
    });
  });

  describe("templates", () => {
    it("put creates, put again replaces (same id), list", async () => {
      const { template: created } = await h.forCompany(TemplatesService, companyId).putTemplate({ name: "welcome", subject: "Hi {{ name }}", html: "<p>Hi</p>" });
      expect(created).toMatchObject({ companyId, name: "welcome", subject: "Hi {{ name }}", html: "<p>Hi</p>" });
      expect(created?.text).toBeUndefined();
      const { template: replaced } = await h.forCompany(TemplatesService, companyId).putTemplate({ name: "welcome", subject: "Hello", html: "<p>Hello</p>", text: "Hello" });
      expect(replaced).toMatchObject({ id: created?.id, subject: "Hello", text: "Hello" });
      const { templates } = await h.forCompany(TemplatesService, companyId).listTemplates({});
      expect(templates.map((t) => [t.id, t.name])).toEqual([[created?.id, "welcome"]]);
      expect((await h.forCompany(TemplatesService, otherCompanyId).listTemplates({})).templates).toEqual([]);
      expect((await h.app.sendingSetup.templates.getTemplate(companyId, "welcome")).subject).toBe("Hello");

      expect((await failure(h.forCompany(TemplatesService, companyId).putTemplate({ name: "", subject: "s", html: "h" }))).code).toBe("VALIDATION_ERROR");
    });

    it("the company's own key holding mail.admin puts and lists over JSON (PUT /mail/v1/templates/{name}); other keys and companies do not reach them", async () => {
      const admin = await h.newCompanyWithKey(["mail.admin"], "Templates by key");
      const reader = await h.newKey(admin.companyId, ["mail.events.read"]);
      const other = await h.newCompanyWithKey(["mail.admin"], "Other templates");
      const put = (secret: string, body: unknown) =>
        h.fetch("/mail/v1/templates/receipt", {
          method: "PUT",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const created = await put(admin.secret, { subject: "Receipt {{ order }}", html: "<p>Thanks</p>" });
      expect(created.status).toBe(200);
      const { template } = (await created.json()) as { template: { id: string; name: string; companyId: string; subject: string } };
      expect(template).toMatchObject({ name: "receipt", companyId: admin.companyId, subject: "Receipt {{ order }}" });
      const listed = (await (await h.fetch("/mail/v1/templates", { headers: { authorization: `Bearer ${admin.secret}` } })).json()) as { templates: { id: string }[] };
      expect(listed.templates.map((t) => t.id)).toEqual([template.id]);
      // The operator, acting for the company, sees the same template through the same service.
      expect((await h.forCompany(TemplatesService, admin.companyId).listTemplates({})).templates.map((t) => t.id)).toEqual([template.id]);

      const refused = await put(reader.secret, { subject: "x", html: "x" });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
      const theirs = (await (await h.fetch("/mail/v1/templates", { headers: { authorization: `Bearer ${other.secret}` } })).json()) as { templates: unknown[] };
      expect(theirs.templates).toEqual([]);
    });
  });

  describe("credits", () => {
    it("adjust grants and removes; the wallet shows the balance and the ledger, newest first", async () => {
      expect((await h.admin.adjustCredits({ companyId, amount: 25n, note: "initial grant" })).balance).toBe(25n);
      expect((await h.admin.adjustCredits({ companyId, amount: -5n, note: "correction" })).balance).toBe(20n);
      const refused = await failure(h.admin.adjustCredits({ companyId, amount: -100n, note: "too much" }));
      expect(refused).toMatchObject({ code: "VALIDATION_ERROR" });
      expect(refused.message).toContain("below zero");
      expect((await failure(h.admin.adjustCredits({ companyId, amount: 1n << 60n, note: "huge" }))).code).toBe("VALIDATION_ERROR");

      const messageId = randomUUID();
      expect(await h.app.credits.chargeForMessage({ companyId, messageId: messageId })).toBe("charged");

      // The company reads them through its CreditsService (here an operator acting for it).
      const credits = h.forCompany(CreditsService, companyId);
      expect((await credits.getCredits({})).balance).toBe(19n);
      const { items } = await credits.listCreditLedger({});
      expect(items.map((e) => [e.delta, e.reason, e.messageId, e.note])).toEqual([
        [-1n, CreditLedgerReason.CHARGE, messageId, ""],
        [-5n, CreditLedgerReason.ADJUSTMENT, undefined, "correction"],
        [25n, CreditLedgerReason.GRANT, undefined, "initial grant"],
      ]);
      expect(items[0]?.createdAt).toBeDefined();

      const other = h.forCompany(CreditsService, otherCompanyId);
      expect((await other.getCredits({})).balance).toBe(0n);
      expect((await other.listCreditLedger({})).items).toEqual([]);
      expect((await failure(h.forCompany(CreditsService, randomUUID()).getCredits({}))).code).toBe("NOT_FOUND");
    });
  });

  describe("mailctl", () => {
    const cli = mailctlAgainst(() => h.app.operatorUrl);
    /** Runs mailctl against the harness: its parsed JSON answer (when it succeeded), stderr and exit code. */
    async function mailctl(...args: string[]): Promise<{ out: unknown; stderr: string; code: number }> {
      const { stdout, stderr, code } = await cli.mailctl(args);
      return { out: code === 0 ? JSON.parse(stdout) : undefined, stderr, code };
    }

    it("domain, sender, template, credits and suppression commands", async () => {
      const company = (await h.admin.createCompany({ name: "CLI Co" })).company?.id ?? "";
      const created = await mailctl("domain", "create", "--company", company, "--domain", "cli.example");
      expect(created.out).toMatchObject({ domain: { domain: "cli.example", verified: false } });
      // --domain takes the name as well as the id.
      expect((await mailctl("domain", "verify", "--company", company, "--domain", "cli.example", "--override")).out).toMatchObject({
        domain: { verified: true, verificationOverridden: true },
      });
      const missing = await mailctl("domain", "verify", "--company", company, "--domain", "nope.example");
      expect(missing.code).toBe(1);
      expect((JSON.parse(missing.stderr) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
      expect((await mailctl("domain", "list", "--company", company)).out).toMatchObject({ domains: [{ domain: "cli.example" }] });

      await mailctl("sender", "create", "--company", company, "--email", "a@cli.example", "--name", "A");
      const second = (await mailctl("sender", "create", "--company", company, "--email", "b@cli.example")).out as { sender: { id: string } };
      expect((await mailctl("sender", "default", "--company", company, "--sender", second.sender.id)).out).toMatchObject({
        sender: { isDefault: true },
      });
      expect((await mailctl("sender", "list", "--company", company)).out).toMatchObject({
        senders: [{ email: "a@cli.example", isDefault: false }, { email: "b@cli.example", isDefault: true }],
      });

      const html = path.join(tmpdir(), `mailctl-${randomUUID()}.html`);
      const text = path.join(tmpdir(), `mailctl-${randomUUID()}.txt`);
      await writeFile(html, "<p>Hi {{ name }}</p>");
      await writeFile(text, "Hi {{ name }}");
      const put = await mailctl("template", "put", "--company", company, "--name", "welcome", "--subject", "Hello", "--html-file", html, "--text-file", text);
      expect(put.out).toMatchObject({ template: { name: "welcome", html: "<p>Hi {{ name }}</p>", text: "Hi {{ name }}" } });
      expect((await mailctl("template", "list", "--company", company)).out).toMatchObject({ templates: [{ name: "welcome" }] });
      await Promise.all([rm(html), rm(text)]);

      expect((await mailctl("credits", "add", "--company", company, "--amount", "10", "--note", "invoice 42")).out).toEqual({ balance: "10" });
      expect((await mailctl("credits", "add", "--company", company, "--amount=-4", "--note", "fix")).out).toEqual({ balance: "6" });
      expect((await mailctl("credits", "add", "--company", company, "--amount", "ten", "--note", "x")).code).toBe(2);
      expect((await mailctl("credits", "show", "--company", company)).out).toEqual({ balance: "6", lowBalanceThreshold: "100", low: true });
      expect((await mailctl("credits", "ledger", "--company", company)).out).toMatchObject({
        items: [{ delta: "-4", reason: "adjustment" }, { delta: "10", reason: "grant", note: "invoice 42" }],
        nextCursor: null,
      });
      expect((await mailctl("credits", "ledger", "--company", company, "--reason", "grant", "--limit", "1")).out).toMatchObject({
        items: [{ delta: "10", reason: "grant" }],
      });
      expect((await mailctl("credits", "ledger", "--company", company, "--reason", "gift")).code).toBe(2);
      // A negative amount also reads as the option's value when written apart.
      expect((await mailctl("credits", "add", "--company", company, "--amount", "-1", "--note", "fix")).out).toEqual({ balance: "5" });
      expect((await mailctl("credits", "add", "--company", company, "--amount", "1", "--note", "fix")).out).toEqual({ balance: "6" });

      await h.app.suppressions.suppress({ companyId: company, email: "gone@example.net", reason: "bounce" });
      expect((await mailctl("suppression", "add", "--company", company, "--email", "Hand@Example.net")).out).toMatchObject({
        created: true,
        suppression: { email: "hand@example.net", reason: "manual", messageId: null },
      });
      expect((await mailctl("suppression", "list", "--company", company)).out).toMatchObject({
        items: [{ email: "hand@example.net" }, { email: "gone@example.net", reason: "bounce" }],
      });
      expect((await mailctl("suppression", "list", "--company", company, "--q", "gone", "--reason", "bounce")).out).toMatchObject({
        items: [{ email: "gone@example.net" }],
      });
      expect((await mailctl("suppression", "get", "--company", company, "--email", "gone@example.net")).out).toMatchObject({ suppression: { reason: "bounce" } });
      // A removal says why (the operator holds the owner role).
      expect((await mailctl("suppression", "remove", "--company", company, "--email", "GONE@example.net")).code).toBe(2);
      expect((await mailctl("suppression", "remove", "--company", company, "--email", "GONE@example.net", "--reason", "address fixed")).out).toMatchObject({
        suppression: { email: "gone@example.net", reason: "bounce" },
      });
      const gone = await mailctl("suppression", "get", "--company", company, "--email", "gone@example.net");
      expect((JSON.parse(gone.stderr) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    });
  });
});
