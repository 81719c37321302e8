import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresOwnerDirectory } from "../../../src/adapters/postgres/owner-notices/owner-directory.ts";
import { openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

/**
 * The owner directory over real PostgreSQL: who a notice goes to is the
 * company's enabled owners, by address, and nobody of another company.
 */
describe("the owner directory (PostgreSQL)", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });
  afterAll(async () => h?.close());

  async function member(companyId: string, email: string, role: string, disabled = false): Promise<void> {
    await h.db.query(`insert into member (company_id, email, role, disabled_at) values ($1, $2, $3, case when $4 then now() end)`, [companyId, email, role, disabled]);
  }

  it("answers the company's enabled owners by address: not its admins, members or disabled owners, nor another company's owners", async () => {
    const shop = await h.newCompany();
    const rival = await h.newCompany();
    await member(shop, "zoe@shop.example", "owner");
    await member(shop, "ada@shop.example", "owner");
    await member(shop, "old@shop.example", "owner", true);
    await member(shop, "adm@shop.example", "admin");
    await member(shop, "mem@shop.example", "member");
    await member(rival, "boss@rival.example", "owner");

    const owners = postgresOwnerDirectory(h.orm);
    expect(await owners.activeOwners({ companyId: shop })).toEqual(["ada@shop.example", "zoe@shop.example"]);
    expect(await owners.activeOwners({ companyId: rival })).toEqual(["boss@rival.example"]);
    expect(await owners.activeOwners({ companyId: "0f8fad5b-d9cb-469f-a165-70867728950e" })).toEqual([]);
    expect(await owners.activeOwners({ companyId: "not-a-company" })).toEqual([]);
  });
});
