import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";

/**
 * Operators run contact lists, sign-up forms and the revenue report through
 * `mailctl list ...`, `mailctl form ...` and `mailctl revenue` (the
 * AdminService, company as a field): the real command line against the
 * running service, JSON on stdout, the contract's errors on stderr.
 */

interface ListJson {
  id: string;
  name: string;
}

interface FormJson {
  publicId: string;
  name: string;
  fields: Array<{ name: string; label: string; type: string; required: boolean; options: string[] }>;
  doubleOptIn: boolean;
  language: string;
  url: string;
}

let h: ApiHarness;
let dir: string;

beforeAll(async () => {
  h = await startApiHarness();
  dir = await mkdtemp(path.join(tmpdir(), "mailctl-"));
});
afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const { mailctl, ok, errorCode } = mailctlAgainst(() => h.app.operatorUrl);

describe("mailctl list", () => {
  it("creates, lists, renames and removes a company's contact lists", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.admin"], "CLI Lists");
    const company = ["--company", companyId];
    const { list } = await ok<{ list: ListJson }>(["list", "create", ...company, "--name", "Customers"]);
    expect(list).toMatchObject({ name: "Customers", id: expect.any(String) });
    await ok(["list", "create", ...company, "--name", "Prospects"]);
    expect((await ok<{ items: ListJson[] }>(["list", "ls", ...company])).items.map((l) => l.name)).toEqual(["Customers", "Prospects"]);

    expect((await ok<{ list: ListJson }>(["list", "rename", ...company, "--list", list.id, "--name", "Buyers"])).list.name).toBe("Buyers");
    expect(await ok(["list", "rm", ...company, "--list", list.id])).toEqual({ id: list.id });
    // The company's administrators see what the operator did.
    const seen = (await (await h.fetch("/mail/v1/lists", bearer(secret))).json()) as { items: ListJson[] };
    expect(seen.items.map((l) => l.name)).toEqual(["Prospects"]);
  });

  it("reports the contract's errors and usage mistakes", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.admin"], "CLI List Errors");
    const other = await h.newCompanyWithKey(["mail.admin"], "CLI Other");
    const theirs = await ok<{ list: ListJson }>(["list", "create", "--company", other.companyId, "--name", "Theirs"]);
    await ok(["list", "create", "--company", companyId, "--name", "Taken"]);
    expect(await errorCode(["list", "create", "--company", companyId, "--name", "TAKEN"])).toBe("VALIDATION_ERROR");
    expect(await errorCode(["list", "rm", "--company", companyId, "--list", theirs.list.id])).toBe("NOT_FOUND");
    expect(await errorCode(["list", "rename", "--company", companyId, "--list", theirs.list.id, "--name", "Mine"])).toBe("NOT_FOUND");
    expect(await errorCode(["list", "ls", "--company", randomUUID()])).toBe("NOT_FOUND");
    const usage = await mailctl(["list", "rename", "--company", companyId, "--list", theirs.list.id]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--name is required");
  });
});

describe("mailctl form", () => {
  it("creates a form with one email field by default or the fields of a file, lists and deactivates it", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.events.read"], "CLI Forms");
    const company = ["--company", companyId];
    const simple = await ok<{ form: FormJson }>(["form", "create", ...company, "--name", "Newsletter", "--consent-text", "Ja, bitte.", "--language", "de", "--double-opt-in"]);
    expect(simple.form).toMatchObject({
      name: "Newsletter",
      doubleOptIn: true,
      language: "de",
      fields: [{ name: "email", label: "E-Mail", type: "email", required: true, options: [] }],
    });

    const file = path.join(dir, "fields.json");
    await writeFile(file, JSON.stringify([{ name: "email", label: "Your email", type: "email", required: true }, { name: "topic", label: "Topic", type: "select", options: ["A", "B"] }]));
    const designed = await ok<{ form: FormJson }>(["form", "create", ...company, "--name", "Topics", "--consent-text", "Yes", "--language", "en", "--fields-file", file]);
    expect(designed.form.fields.map((f) => [f.name, f.type, f.options])).toEqual([["email", "email", []], ["topic", "select", ["A", "B"]]]);
    expect(designed.form.doubleOptIn).toBe(false);

    const listed = await ok<{ items: FormJson[] }>(["form", "ls", ...company]);
    expect(listed.items.map((f) => f.publicId)).toEqual([simple.form.publicId, designed.form.publicId]);
    expect((await ok<{ form: FormJson }>(["form", "deactivate", ...company, "--form", simple.form.publicId])).form.publicId).toBe(simple.form.publicId);
    // GET /mail/v1/forms, the company's API view, agrees.
    const active = (await (await h.fetch("/mail/v1/forms", bearer(secret))).json()) as { items: FormJson[] };
    expect(active.items.map((f) => f.publicId)).toEqual([designed.form.publicId]);
  });

  it("takes a form id that begins with a dash, as `--form -id` (ids drawn before new ids avoided a leading dash)", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.events.read"], "CLI Dash Form");
    const { form } = await ok<{ form: FormJson }>(["form", "create", "--company", companyId, "--name", "Dash", "--consent-text", "Yes", "--language", "en"]);
    expect(form.publicId).toMatch(/^[A-Za-z0-9]/);
    const dashed = `-${form.publicId.slice(1)}`;
    await h.db.query(`update signup_form set public_id = $1 where public_id = $2`, [dashed, form.publicId]);
    expect((await ok<{ form: FormJson }>(["form", "deactivate", "--company", companyId, "--form", dashed])).form.publicId).toBe(dashed);
    // A missing value is still a usage mistake, not the next option taken as the id.
    const usage = await mailctl(["form", "deactivate", "--form", "--company", companyId]);
    expect(usage.code).not.toBe(0);
  });

  it("reports a bad design, another company's form and usage mistakes", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.events.read"], "CLI Form Errors");
    const other = await h.newCompanyWithKey(["mail.events.read"], "CLI Form Other");
    const theirs = await ok<{ form: FormJson }>(["form", "create", "--company", other.companyId, "--name", "Theirs", "--consent-text", "Yes", "--language", "en"]);
    expect(await errorCode(["form", "deactivate", "--company", companyId, "--form", theirs.form.publicId])).toBe("NOT_FOUND");
    expect(await errorCode(["form", "create", "--company", companyId, "--name", "x", "--consent-text", "Yes", "--language", "!!"])).toBe("VALIDATION_ERROR");
    const file = path.join(dir, "no-email.json");
    await writeFile(file, JSON.stringify([{ name: "first", label: "First name", type: "text" }]));
    expect(await errorCode(["form", "create", "--company", companyId, "--name", "x", "--consent-text", "Yes", "--language", "en", "--fields-file", file])).toBe(
      "VALIDATION_ERROR",
    );
    await writeFile(file, "{not json");
    const notJson = await mailctl(["form", "create", "--company", companyId, "--name", "x", "--consent-text", "Yes", "--language", "en", "--fields-file", file]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("--fields-file");
    const usage = await mailctl(["form", "create", "--company", companyId, "--name", "x", "--language", "en"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--consent-text is required");
    // The operator's form stays active.
    expect((await ok<{ items: FormJson[] }>(["form", "ls", "--company", other.companyId])).items.map((f) => f.publicId)).toEqual([theirs.form.publicId]);
  });
});

describe("mailctl revenue", () => {
  it("prints gross, refunded and net revenue per campaign as exact decimals", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.conversions.write"], "CLI Revenue");
    const operator: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
      return next(req);
    };
    const events = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    const at = new Date(Date.now() - 60 * 60_000);
    const email = "buyer@example.com";
    await events.publishEvent({
      companyId,
      eventId: randomUUID(),
      event: "campaign.click",
      occurredAt: timestampFromDate(new Date(at.getTime() - 60_000)),
      data: { case: "campaign", value: { campaignId: "winter", recipientId: "r1", contactId: "c1", email, linkId: "hero", suspect: false } },
    });
    const convert = async (body: Record<string, unknown>) => {
      const response = await h.fetch("/mail/v1/conversions", {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ eventType: "purchase", email, occurredAt: at.toISOString(), ...body }),
      });
      expect(response.status).toBe(202);
    };
    await convert({ eventId: "o-1", revenue: "19.99" });
    await convert({ eventId: "o-2", revenue: "0.01" });
    await convert({ eventId: "o-2", status: "refunded" });

    const report = await ok<{ items: unknown[] }>(["revenue", "--company", companyId]);
    expect(report.items).toEqual([{ campaignId: "winter", currency: "USD", conversions: "2", gross: "20", refunded: "0.01", net: "19.99" }]);
    expect(await ok(["revenue", "--company", companyId, "--since", new Date().toISOString()])).toEqual({ items: [] });
    expect(await errorCode(["revenue", "--company", randomUUID()])).toBe("NOT_FOUND");
    expect((await mailctl(["revenue", "--company", companyId, "--until", "soon"])).code).toBe(2);
  });
});
