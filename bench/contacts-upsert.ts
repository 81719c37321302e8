/**
 * Throughput of POST /mail/v1/contacts' use case against PostgreSQL (no
 * HTTP): C concurrent writers (default 16) doing W writes each (default
 * 250), first to distinct addresses (creates, then updates), then all to
 * one address (the row lock serialises them: the worst case).
 *
 *   createdb -h 127.0.0.1 -U postgres mail_bench_upsert
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/mail_bench_upsert node bench/contacts-upsert.ts [C] [W]
 *
 * Each run uses a new company, so runs do not disturb each other. Never
 * point this at a real database.
 */
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { pgPool } from "../src/adapters/postgres/sql.ts";
import { OPERATOR_ACTOR } from "../src/capabilities/audit/types.ts";
import { createContactsCapability } from "../src/wiring/contacts.ts";

async function timed(title: string, writes: number, run: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${title}: ${writes} writes in ${seconds.toFixed(2)} s, ${(writes / seconds).toFixed(0)} writes/s`);
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("set DATABASE_URL to a database for the benchmark");
  const writers = Number(process.argv[2] ?? 16);
  const each = Number(process.argv[3] ?? 250);
  const orm = await openOrm(databaseUrl, { poolMax: writers });
  try {
    await migrate(orm);
    const pool = await pgPool(orm);
    const { rows } = await pool.query<{ id: string }>(`insert into company (name) values ('Bench upsert') returning id`);
    const companyId = rows[0]?.id ?? "";
    const { contacts, lists } = createContactsCapability(orm, { cursorSecret: "bench" });
    const list = await lists.create({ companyId, name: "Bench", audit: { actor: OPERATOR_ACTOR, requestId: "bench", clientIp: "" } });

    const all = (write: (writer: number, i: number) => Promise<unknown>) =>
      Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          for (let i = 0; i < each; i++) await write(writer, i);
        }),
      );

    await timed("create, distinct addresses", writers * each, () =>
      all((w, i) => contacts.upsert({ companyId, email: `w${w}-${i}@example.com`, firstName: "New", tags: ["a"], listIds: [list.id] })),
    );
    await timed("update, distinct addresses (changes: one event each)", writers * each, () =>
      all((w, i) => contacts.upsert({ companyId, email: `w${w}-${i}@example.com`, firstName: "Changed", consent: { source: "bench" } })),
    );
    await timed("rewrite, nothing changes (no event)", writers * each, () =>
      all((w, i) => contacts.upsert({ companyId, email: `w${w}-${i}@example.com`, firstName: "Changed" })),
    );
    await timed("one hot address, every writer", writers * each, () =>
      all((w, i) => contacts.upsert({ companyId, email: "hot@example.com", attributes: { n: w * each + i } })),
    );
    const { rows: counts } = await pool.query<{ contacts: string; events: string }>(
      `select (select count(*) from contact where company_id = $1) as contacts,
              (select count(*) from webhook_event where company_id = $1) as events`,
      [companyId],
    );
    console.log(`contacts ${counts[0]?.contacts}, contact.updated events ${counts[0]?.events}`);
  } finally {
    await orm.close();
  }
}

await main();
