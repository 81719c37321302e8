/**
 * npm start's demo company (src/wiring/demo-company.ts) on a database that
 * has other companies, and after a start that stopped half-way through
 * making it: the next start finishes it, and a seeded company is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_NAME, printDemoSignInLink, seedDemoCompany } from "../../src/wiring/demo-company.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";

describe("the demo company of npm start", () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApiHarness();
  });
  afterAll(async () => h?.close());

  it("is finished by the next start when the previous one stopped half-way, and made once", async () => {
    // Someone else's company first: it does not stop the demo company from being made.
    await h.admin.createCompany({ name: "Acme Widgets", entitlements: { api: true, smtp: false } });
    // A start that stopped right after making the company and its domain.
    const { company } = await h.admin.createCompany({ name: DEMO_COMPANY_NAME, entitlements: { api: true, smtp: false } });
    const companyId = company?.id ?? "";
    await h.admin.createSendingDomain({ companyId, domain: "demo.example" });

    const printed: string[] = [];
    await seedDemoCompany(h.app, (line) => printed.push(line));
    const secret = /^ {4}(tml_\S+)$/m.exec(printed.join("\n"))?.[1];
    expect(secret).toBeDefined();
    expect(printed.join("\n")).toContain(`Demo company ${companyId} created`);

    // The printed key is the demo company's (README's first curl).
    const me = await h.fetch("/mail/v1/me", { headers: { authorization: `Bearer ${secret}` } });
    expect(me.status).toBe(200);
    expect(JSON.stringify(await me.json())).toContain(companyId);

    // The next start: nothing is made twice, no key is printed again.
    const again: string[] = [];
    await seedDemoCompany(h.app, (line) => again.push(line));
    expect(again).toEqual([]);
    const { companies } = await h.admin.listCompanies({});
    expect(companies.map((c) => c.name).sort()).toEqual(["Acme Widgets", DEMO_COMPANY_NAME]);
    expect((await h.app.sendingSetup.domains.list({ companyId })).map((d) => [d.domain, d.verified])).toEqual([["demo.example", true]]);
    expect((await h.app.sendingSetup.senders.list({ companyId })).map((s) => s.email)).toEqual(["hello@demo.example"]);
    expect((await h.app.accounts.keys.list({ companyId })).items.map((k) => k.name)).toEqual(["demo key"]);
    const grants = await h.app.credits.ledger({ companyId, reason: "grant" });
    expect(grants.items.map((entry) => entry.delta)).toEqual([1000]);
    expect((await h.app.members.members.list({ companyId })).items.map((m) => [m.email, m.role])).toEqual([["owner@demo.example", "owner"]]);

    // The sign-in link is the demo owner's, of the demo company, though another company is older.
    const link: string[] = [];
    await printDemoSignInLink(h.app, (line) => link.push(line));
    expect(link.join("\n")).toMatch(/^Sign in to the administration screen as owner@demo\.example/);
  });
});
