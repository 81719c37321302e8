import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, openOrm, type MikroORM } from "../../../src/adapters/postgres/orm.ts";
import { MIGRATIONS } from "../../../src/adapters/postgres/migrations/index.ts";
import { createTestDatabase, type TestDatabase } from "../../support/test-database.ts";

describe("migrations", () => {
  let db: TestDatabase;
  let orm: MikroORM;

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm(db.url, { poolMax: 3 });
  });

  afterAll(async () => {
    await orm?.close();
    await db?.drop();
  });

  it("apply every migration on an empty database", async () => {
    const applied = await migrate(orm);
    expect(applied).toEqual(MIGRATIONS.map((m) => m.name));

    const tables = await db.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      "api_key",
      "audit_event",
      "campaign",
      "campaign_click",
      "campaign_recipient",
      "company",
      "contact",
      "contact_list",
      "contact_list_member",
      "conversion",
      "credit_ledger",
      "credit_wallet",
      "delivery_report",
      "idempotency_record",
      "member",
      "member_session",
      "message",
      "message_attachment",
      "message_event",
      "message_stats_hour",
      "message_stats_pending",
      "mikro_orm_migrations",
      "rate_limit",
      "sender",
      "sending_domain",
      "sending_guard",
      "sending_pace",
      "sending_pace_company",
      "sign_in_link",
      "signup_confirmation_hour",
      "signup_form",
      "signup_form_token_use",
      "simulator_event",
      "simulator_handoff",
      "store_integration",
      "store_order",
      "suppression",
      "template",
      "template_version",
      "tracking_first",
      "tracking_hit",
      "tracking_link",
      "tracking_recipient",
      "webhook_attempt",
      "webhook_delivery",
      "webhook_endpoint",
      "webhook_event",
    ]);

    const columns = await db.query<{ column_name: string; data_type: string; is_nullable: string }>(
      `select column_name, data_type, is_nullable from information_schema.columns
        where table_name = 'api_key' order by ordinal_position`,
    );
    expect(columns.rows).toContainEqual({ column_name: "secret_hash", data_type: "bytea", is_nullable: "NO" });
    expect(columns.rows).toContainEqual({ column_name: "scopes", data_type: "ARRAY", is_nullable: "NO" });
    expect(columns.rows).toContainEqual({ column_name: "last_used_at", data_type: "timestamp with time zone", is_nullable: "YES" });

    const indexes = await db.query<{ indexdef: string }>(`select indexdef from pg_indexes where indexname = 'api_key_secret_hash_unique'`);
    expect(indexes.rows[0]?.indexdef).toMatch(/UNIQUE INDEX .* \(secret_hash\)/);

    const pk = await db.query<{ def: string }>(
      `select pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'rate_limit'::regclass and contype = 'p'`,
    );
    expect(pk.rows[0]?.def).toBe("PRIMARY KEY (bucket, window_start)");
  });

  it("are idempotent: a second run applies nothing", async () => {
    expect(await migrate(orm)).toEqual([]);
    expect(await orm.migrator.getPending()).toEqual([]);
    const executed = await db.query<{ name: string }>(`select name from mikro_orm_migrations order by id`);
    expect(executed.rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
  });

  it("narrow the kinds of kept delivery reports, keeping a report of the dropped kind as unmatched", async () => {
    const fresh = await createTestDatabase();
    const before = await openOrm(fresh.url, { poolMax: 2 });
    try {
      const previous = MIGRATIONS[MIGRATIONS.findIndex((m) => m.name === "Migration20261127024049_delivery_report_kinds") - 1]?.name ?? "";
      await before.migrator.up({ to: previous });
      await fresh.query(
        `insert into delivery_report (id, source, kind, reason, received_at, expires_at)
         values (gen_random_uuid(), 'ses', 'rejected_by_provider', 'Reject: bad content', now(), now() + interval '7 days')`,
      );
      expect(await migrate(before)).toContain("Migration20261127024049_delivery_report_kinds");
      const kept = await fresh.query<{ kind: string; reason: string }>("select kind, reason from delivery_report");
      expect(kept.rows).toEqual([{ kind: "unmatched", reason: "rejected_by_provider: Reject: bad content" }]);
      await expect(
        fresh.query(
          `insert into delivery_report (id, source, kind, reason, received_at, expires_at)
           values (gen_random_uuid(), 'ses', 'rejected_by_provider', 'x', now(), now())`,
        ),
      ).rejects.toThrow(/delivery_report_kind_check/);
    } finally {
      await before.close();
      await fresh.drop();
    }
  });

  it("serialise concurrent runs from several processes", async () => {
    const fresh = await createTestDatabase();
    const orms = await Promise.all([openOrm(fresh.url, { poolMax: 2 }), openOrm(fresh.url, { poolMax: 2 })]);
    try {
      const results = await Promise.all(orms.map((o) => migrate(o)));
      // One of them applied everything, the other found nothing left to do.
      expect(results.map((r) => r.length).sort()).toEqual([0, MIGRATIONS.length]);
    } finally {
      await Promise.all(orms.map((o) => o.close()));
      await fresh.drop();
    }
  });
});
