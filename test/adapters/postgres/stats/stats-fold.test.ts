import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertQueuedValues, MESSAGE_STATEMENTS, moveValues } from "../../../../src/adapters/postgres/messages/message-store.ts";
import { migrate, type MikroORM, openOrm } from "../../../../src/adapters/postgres/orm.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { PostgresStatsStore } from "../../../../src/adapters/postgres/stats/postgres-stats-store.ts";
import { PostgresStatsFold } from "../../../../src/adapters/postgres/stats/stats-fold.ts";
import type { Move, NewMessage } from "../../../../src/capabilities/messages/ports.ts";
import { createTestDatabase, type TestDatabase } from "../../../support/test-database.ts";

/**
 * The statistics' fold against real PostgreSQL: the send path's statements
 * (as the message store runs them) record outcomes while two folds run
 * concurrently, as two API processes would; the aggregates then hold every
 * outcome exactly once, for the company, each tag key and the template.
 */
describe("the statistics' fold (message_stats_pending -> message_stats_hour)", () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let companyId: string;
  let senderId: string;
  let templateId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm(db.url, { poolMax: 12 });
    await migrate(orm);
    companyId = (await db.query<{ id: string }>(`insert into company (name) values ('fold') returning id`)).rows[0]?.id ?? "";
    const domainId = (
      await db.query<{ id: string }>(
        `insert into sending_domain (company_id, domain, return_path_domain, dkim_selector, dkim_public_key, dkim_private_key_sealed)
         values ($1, 'fold.example', 'bounces.fold.example', 'fold', 'x', 'x') returning id`,
        [companyId],
      )
    ).rows[0]?.id;
    senderId = (await db.query<{ id: string }>(`insert into sender (company_id, domain_id, email) values ($1, $2, 'noreply@fold.example') returning id`, [companyId, domainId])).rows[0]?.id ?? "";
    templateId = (
      await db.query<{ id: string }>(`insert into template (company_id, name, subject, html) values ($1, 'receipt', 'Your receipt', '<p>Thanks</p>') returning id`, [companyId])
    ).rows[0]?.id ?? "";
  });

  afterAll(async () => {
    await orm?.close();
    await db?.drop();
  });

  /** A new message of the company to the recipient, with the given tags and template. */
  function newMessage(recipient: string, extra: Pick<NewMessage, "templateId" | "tags" | "idempotencyKey">): NewMessage {
    return {
      id: randomUUID(),
      companyId,
      apiKeyId: null,
      recipient,
      recipientName: null,
      senderId,
      fromEmail: "noreply@fold.example",
      fromName: null,
      replyTo: null,
      subject: "Your receipt",
      html: "<p>Thanks</p>",
      text: null,
      ...extra,
    };
  }

  /** One message accepted, then sent, then delivered or bounced, through the counted statements. */
  async function deliver(index: number): Promise<void> {
    const pool = await poolOf(orm)();
    const message = newMessage(`user-${index}@customer.example`, {
      idempotencyKey: null,
      templateId: index % 2 === 0 ? templateId : null,
      tags: index % 3 === 0 ? { order: String(index), vip: "yes" } : { order: String(index) },
    });
    const id = message.id;
    await pool.query({ text: MESSAGE_STATEMENTS.counted.insert, values: insertQueuedValues(message, message.html ?? null, null) });
    await pool.query(`update message set status = 'processing' where company_id = $1 and id = $2`, [companyId, id]);
    const move = (to: Move["to"], eventType: string): Promise<unknown> =>
      pool.query({ text: MESSAGE_STATEMENTS.counted.move, values: moveValues(companyId, id, { to, at: new Date(), eventType, webhooks: [] }, null) });
    await move("sent", "sent");
    await (index % 10 === 0 ? move("bounced", "bounce") : move("delivered", "delivery"));
  }

  it("counts each recorded outcome exactly once, with two folds running beside the sends", async () => {
    const folds = [new PostgresStatsFold(poolOf(orm)), new PostgresStatsFold(poolOf(orm))];
    let sending = true;
    const folding = folds.map(async (fold) => {
      while (sending) {
        await fold.fold();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    const total = 400;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < total) await deliver(next++);
      }),
    );
    sending = false;
    await Promise.all(folding);

    // The read folds what is still pending: it counts everything recorded before it.
    const store = new PostgresStatsStore(poolOf(orm));
    const since = new Date(Date.now() - 3_600_000);
    const until = new Date(Date.now() + 3_600_000);
    const sum = async (segment: Parameters<PostgresStatsStore["series"]>[0]["segment"]): Promise<Record<string, number>> => {
      const buckets = await store.series({ companyId, segment, since, until, intervalHours: 24 });
      const counts: Record<string, number> = {};
      for (const bucket of buckets) for (const [name, value] of Object.entries(bucket.counts)) counts[name] = (counts[name] ?? 0) + value;
      return counts;
    };
    expect(await sum({ kind: "all" })).toMatchObject({ accepted: 400, sent: 400, delivered: 360, bounced: 40, complained: 0 });
    expect(await sum({ kind: "tag", tag: "order" })).toMatchObject({ accepted: 400, sent: 400, delivered: 360, bounced: 40 });
    // Every third message carries `vip`: 134 of 400 (0, 3, ..., 399), of which the multiples of 30 bounced (14).
    expect(await sum({ kind: "tag", tag: "vip" })).toMatchObject({ accepted: 134, sent: 134, delivered: 120, bounced: 14 });
    // Every second message is the template's: 200, of which the multiples of 10 bounced (40).
    expect(await sum({ kind: "template", templateId })).toMatchObject({ accepted: 200, sent: 200, delivered: 160, bounced: 40 });
    const pending = await db.query<{ n: string }>(`select count(*) as n from message_stats_pending`);
    expect(Number(pending.rows[0]?.n)).toBe(0);
  });

  it("a replayed acceptance or a repeated move records nothing more", async () => {
    const store = new PostgresStatsStore(poolOf(orm));
    const since = new Date(Date.now() - 3_600_000);
    const until = new Date(Date.now() + 3_600_000);
    const before = (await store.series({ companyId, segment: { kind: "all" }, since, until, intervalHours: 24 }))[0]?.counts;
    const pool = await poolOf(orm)();
    const message = newMessage("replay@customer.example", { idempotencyKey: "replayed-once", templateId: null, tags: {} });
    const id = message.id;
    for (let n = 0; n < 2; n++) {
      await pool.query({ text: MESSAGE_STATEMENTS.counted.insert, values: insertQueuedValues({ ...message, id: n === 0 ? id : randomUUID() }, message.html, null) });
    }
    await pool.query(`update message set status = 'processing' where company_id = $1 and id = $2`, [companyId, id]);
    for (let n = 0; n < 2; n++) {
      await pool.query({ text: MESSAGE_STATEMENTS.counted.move, values: moveValues(companyId, id, { to: "sent", at: new Date(), eventType: "sent", webhooks: [] }, null) });
    }
    const after = (await store.series({ companyId, segment: { kind: "all" }, since, until, intervalHours: 24 }))[0]?.counts;
    expect(after?.accepted).toBe((before?.accepted ?? 0) + 1);
    expect(after?.sent).toBe((before?.sent ?? 0) + 1);
  });
});
