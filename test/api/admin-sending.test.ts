import { randomUUID } from "node:crypto";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorFrom, type ErrorCodeName } from "../../src/contract/api-error.ts";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { AuditService } from "../../src/gen/mail/v1/audit_pb.js";
import { DomainStatus } from "../../src/gen/mail/v1/domains_pb.js";
import { CreditLedgerReason, CreditsService } from "../../src/gen/mail/v1/credits_pb.js";
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

describe("AdminService: the verification override, templates, credits", () => {
  let h: ApiHarness;
  let companyId: string;
  let otherCompanyId: string;

  beforeAll(async () => {
    h = await startApiHarness();
    companyId = (await h.newCompanyWithKey()).companyId;
    otherCompanyId = (await h.newCompanyWithKey(undefined, "Other Inc.")).companyId;
  });

  afterAll(async () => {
    await h?.close();
  });

  it("requires the operator token", async () => {
    const anonymous = createClient(AdminService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const { connect } = await failure(anonymous.overrideDomainVerification({ companyId, domainId: randomUUID() }));
    expect(connect).toBe(Code.Unauthenticated);
  });

  it("overrides a domain's verification (development only), audited; another company's domain is NOT_FOUND", async () => {
    const { domain } = await h.admin.createSendingDomain({ companyId, domain: "dev.example" });
    const { domain: overridden } = await h.admin.overrideDomainVerification({ companyId, domainId: domain?.id ?? "" });
    expect(overridden).toMatchObject({ status: DomainStatus.VERIFIED, verificationOverridden: true });
    expect(overridden?.verifiedAt).toBeDefined();
    const foreign = await failure(h.admin.overrideDomainVerification({ companyId: otherCompanyId, domainId: domain?.id ?? "" }));
    expect(foreign).toMatchObject({ code: "NOT_FOUND", connect: Code.NotFound });
    const audit = await h.forCompany(AuditService, companyId).listAuditEvents({ action: "sending_domain.verified" });
    expect(audit.items.map((row) => [row.actor, row.targetId, JSON.parse(row.details) as unknown])).toEqual([
      ["operator", domain?.id, { domain: "dev.example", override: true }],
    ]);
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

    it("the company's own key puts (mail.admin) and lists (mail.events.read) over JSON (PUT /mail/v1/templates/{name}); other keys and companies do not reach them", async () => {
      const admin = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Templates by key");
      const reader = await h.newKey(admin.companyId, ["mail.events.read"]);
      const other = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Other templates");
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
      expect(created.out).toMatchObject({ domain: { domain: "cli.example", status: "pending" } });
      // --domain takes the name as well as the id.
      expect((await mailctl("domain", "verify", "--company", company, "--domain", "cli.example", "--override")).out).toMatchObject({
        domain: { status: "verified", verificationOverridden: true },
      });
      const missing = await mailctl("domain", "verify", "--company", company, "--domain", "nope.example");
      expect(missing.code).toBe(1);
      expect((JSON.parse(missing.stderr) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
      expect((await mailctl("domain", "list", "--company", company)).out).toMatchObject({ items: [{ domain: "cli.example" }] });

      const first = (await mailctl("sender", "create", "--company", company, "--email", "a@cli.example", "--name", "A")).out as { sender: { id: string } };
      const second = (await mailctl("sender", "create", "--company", company, "--email", "b@cli.example")).out as { sender: { id: string } };
      expect((await mailctl("sender", "default", "--company", company, "--sender", second.sender.id)).out).toMatchObject({
        sender: { isDefault: true },
      });
      expect((await mailctl("sender", "list", "--company", company)).out).toMatchObject({
        items: [{ email: "a@cli.example", isDefault: false }, { email: "b@cli.example", isDefault: true }],
      });
      expect((await mailctl("sender", "rm", "--company", company, "--sender", first.sender.id)).out).toEqual({ id: first.sender.id });
      // The domain still has a sender: refused, naming the field.
      const busy = await mailctl("domain", "rm", "--company", company, "--domain", "cli.example");
      expect(busy.code).toBe(1);
      expect((JSON.parse(busy.stderr) as { error: { code: string; message: string } }).error).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringMatching(/^id: /) });

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
      // Some thirty mailctl processes, each a Node start: slow on a busy machine.
    }, 600_000);
  });
});
