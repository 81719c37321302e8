import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiError, ValidationError } from "../../../../src/contract/api-error.ts";
import { type ListMessagesCommand, MessageLog, type MessageRecord } from "../../../../src/capabilities/messages/read/index.ts";
import { migrate, openOrm, type MikroORM } from "../../../../src/adapters/postgres/orm.ts";
import { poolOf, type Pool } from "../../../../src/adapters/postgres/sql.ts";
import { postgresMessageLog } from "../../../../src/adapters/postgres/messages/message-log.ts";
import { postgresMessageContent } from "../../../../src/adapters/postgres/messages/message-content.ts";
import { createTestDatabase, type TestDatabase } from "../../../support/test-database.ts";

const SECRET = "test-cursor-secret";

interface NewMessage {
  readonly createdAt?: string;
  readonly status?: string;
  readonly recipient?: string;
  readonly subject?: string;
  readonly tags?: Record<string, string>;
  readonly templateId?: string | null;
  readonly providerMessageId?: string | null;
  readonly errorCode?: string | null;
  readonly sentAt?: string | null;
  readonly lastEventAt?: string | null;
}

/** The list's filters and page, without the company (each call names it). */
type ListOptions = Omit<ListMessagesCommand, "companyId">;

describe("MessageLog", () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let pool: () => Promise<Pool>;
  let reader: MessageLog;

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm(db.url, { poolMax: 4 });
    await migrate(orm);
    pool = poolOf(orm);
    reader = logWith(SECRET);
  });

  function logWith(cursorSecret: string): MessageLog {
    return new MessageLog({ store: postgresMessageLog(pool), contents: postgresMessageContent(pool), cursorSecret });
  }

  afterAll(async () => {
    await orm?.close();
    await db?.drop();
  });

  /** Each test works in companies of its own, so tests never see each other's rows. */
  async function newCompany(): Promise<string> {
    const { rows } = await db.query<{ id: string }>(`insert into company (name) values ('acme') returning id`);
    const id = rows[0]?.id;
    if (!id) throw new Error("no company");
    return id;
  }

  async function insertMessage(companyId: string, m: NewMessage = {}): Promise<string> {
    const recipient = m.recipient ?? "someone@example.com";
    const { rows } = await db.query<{ id: string }>(
      `insert into message (id, company_id, recipient, recipient_domain, from_email, subject, status, tags,
                            created_at, template_id, provider_message_id, error_code, sent_at, last_event_at)
       values (gen_random_uuid(), $1, $2, split_part($2, '@', 2), 'from@sender.test', $3, $4, $5::jsonb,
               coalesce($6::timestamptz, now()), $7, $8, $9, $10, $11)
       returning id`,
      [
        companyId,
        recipient,
        m.subject ?? "Hello",
        m.status ?? "queued",
        JSON.stringify(m.tags ?? {}),
        m.createdAt ?? null,
        m.templateId ?? null,
        m.providerMessageId ?? null,
        m.errorCode ?? null,
        m.sentAt ?? null,
        m.lastEventAt ?? null,
      ],
    );
    const id = rows[0]?.id;
    if (!id) throw new Error("no message");
    return id;
  }

  async function insertEvent(companyId: string, messageId: string, type: string, at: string): Promise<void> {
    await db.query(`insert into message_event (message_id, company_id, type, at, provider_event_id) values ($1, $2, $3, $4, $5)`, [
      messageId,
      companyId,
      type,
      at,
      `${messageId}:${type}:${at}`,
    ]);
  }

  /** The defining order of the log, computed by PostgreSQL itself. */
  async function expectedOrder(companyId: string): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `select id from message where company_id = $1 order by created_at desc, id desc`,
      [companyId],
    );
    return rows.map((r) => r.id);
  }

  async function walk(companyId: string, options: ListOptions, between?: () => Promise<void>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const page = await reader.list({ companyId, ...options, cursor });
      ids.push(...page.items.map((m) => m.id));
      if (page.nextCursor === null) return ids;
      cursor = page.nextCursor;
      await between?.();
    }
    throw new Error("walk did not end");
  }

  async function errorOf(promise: Promise<unknown>): Promise<unknown> {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error("expected a rejection");
  }

  async function expectValidation(promise: Promise<unknown>, field: string): Promise<void> {
    const error = await errorOf(promise);
    expect(error).toBeInstanceOf(ValidationError);
    const validation = error as ValidationError;
    expect(validation.httpStatus).toBe(400);
    expect(validation.code).toBe("VALIDATION_ERROR");
    expect(validation.fields.map((f) => f.field)).toEqual([field]);
    expect(validation.message).toContain(field);
  }

  async function expectNotFound(promise: Promise<unknown>): Promise<void> {
    const error = await errorOf(promise);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("NOT_FOUND");
    expect((error as ApiError).httpStatus).toBe(404);
  }

  /** A cursor of `companyId` (which needs at least 2 messages) for these filters. */
  async function cursorOf(companyId: string, options: ListOptions = {}): Promise<string> {
    const page = await reader.list({ companyId, ...options, limit: 1 });
    if (!page.nextCursor) throw new Error("expected a next page");
    return page.nextCursor;
  }

  describe("getMessage", () => {
    it("returns the company's message with all fields and its events, oldest first", async () => {
      const company = await newCompany();
      const templateId = "7f8d9a66-0c1e-4c4b-9a56-8f0d6c1a2b3c";
      const id = await insertMessage(company, {
        createdAt: "2025-03-01T10:00:00.123456Z",
        status: "delivered",
        recipient: "alice@example.com",
        subject: "Your receipt",
        tags: { order: "1234", channel: "web" },
        templateId,
        providerMessageId: "prov-1",
        sentAt: "2025-03-01T10:00:01.500Z",
        lastEventAt: "2025-03-01T10:00:05Z",
      });
      // Inserted out of order: the reader sorts by time.
      await insertEvent(company, id, "delivery", "2025-03-01T10:00:05Z");
      await insertEvent(company, id, "sent", "2025-03-01T10:00:01.500Z");

      const message = await reader.get({ companyId: company, id });
      expect(message).toEqual<MessageRecord>({
        id,
        recipient: "alice@example.com",
        subject: "Your receipt",
        templateId,
        status: "delivered",
        providerMessageId: "prov-1",
        errorCode: null,
        createdAt: new Date("2025-03-01T10:00:00.123Z"),
        sentAt: new Date("2025-03-01T10:00:01.500Z"),
        lastEventAt: new Date("2025-03-01T10:00:05Z"),
        events: [
          { type: "sent", at: new Date("2025-03-01T10:00:01.500Z") },
          { type: "delivery", at: new Date("2025-03-01T10:00:05Z") },
        ],
        tags: { order: "1234", channel: "web" },
      });
    });

    it("returns nulls and no events for a message not sent yet", async () => {
      const company = await newCompany();
      const id = await insertMessage(company, { status: "failed", errorCode: "MAIL_CREDITS_EXHAUSTED" });
      const message = await reader.get({ companyId: company, id });
      expect(message).toMatchObject({
        templateId: null,
        providerMessageId: null,
        errorCode: "MAIL_CREDITS_EXHAUSTED",
        sentAt: null,
        lastEventAt: null,
        events: [],
        tags: {},
      });
    });

    it("answers NOT_FOUND for another company's message, never showing it", async () => {
      const owner = await newCompany();
      const other = await newCompany();
      const id = await insertMessage(owner);
      await expectNotFound(reader.get({ companyId: other, id }));
    });

    it("answers NOT_FOUND for an unknown id and for malformed ids (no SQL error)", async () => {
      const company = await newCompany();
      await insertMessage(company);
      for (const id of [
        "00000000-0000-4000-8000-000000000000",
        "not-a-uuid",
        "",
        "'; drop table message; --",
        "00000000-0000-4000-8000-00000000000",
        "00000000-0000-4000-8000-0000000000000",
        "{00000000-0000-4000-8000-000000000000}",
        "g0000000-0000-4000-8000-000000000000",
      ]) {
        await expectNotFound(reader.get({ companyId: company, id }));
      }
    });

    it("accepts an upper-case id", async () => {
      const company = await newCompany();
      const id = await insertMessage(company);
      expect((await reader.get({ companyId: company, id: id.toUpperCase() })).id).toBe(id);
    });
  });

  describe("listMessages", () => {
    it("lists newest first, only the company's own messages, default limit 25", async () => {
      const company = await newCompany();
      const other = await newCompany();
      for (let i = 0; i < 30; i++) {
        await insertMessage(company, { createdAt: `2025-03-01T10:00:${String(i).padStart(2, "0")}Z` });
      }
      await insertMessage(other, { createdAt: "2025-03-01T11:00:00Z" });

      const page = await reader.list({ companyId: company });
      const expected = await expectedOrder(company);
      expect(page.items.map((m) => m.id)).toEqual(expected.slice(0, 25));
      expect(page.items[0]?.createdAt).toEqual(new Date("2025-03-01T10:00:29Z"));
      expect(page.nextCursor).toEqual(expect.any(String));

      const rest = await reader.list({ companyId: company, cursor: page.nextCursor ?? undefined });
      expect(rest.items.map((m) => m.id)).toEqual(expected.slice(25));
      expect(rest.nextCursor).toBeNull();
    });

    it("returns an empty page without a cursor for a company without messages", async () => {
      const company = await newCompany();
      expect(await reader.list({ companyId: company })).toEqual({ items: [], nextCursor: null });
    });

    it("has no next page when the last page is exactly full", async () => {
      const company = await newCompany();
      await insertMessage(company);
      await insertMessage(company);
      const page = await reader.list({ companyId: company, limit: 2 });
      expect(page.items).toHaveLength(2);
      expect(page.nextCursor).toBeNull();
    });

    it("walks every row exactly once, ties on created_at broken by id, microseconds kept", async () => {
      const company = await newCompany();
      const times = [
        // Four rows in the same microsecond: only the id orders them.
        "2025-03-01T10:00:00.000001Z",
        "2025-03-01T10:00:00.000001Z",
        "2025-03-01T10:00:00.000001Z",
        "2025-03-01T10:00:00.000001Z",
        // Same millisecond, other microseconds: a cursor rounded to the
        // millisecond would skip or repeat these.
        "2025-03-01T10:00:00.000002Z",
        "2025-03-01T10:00:00.000999Z",
        "2025-03-01T10:00:00.000500Z",
        "2025-03-01T10:00:00.000500Z",
        "2025-03-01T10:00:00.001000Z",
        "2025-03-01T10:00:00.001001Z",
        "2025-03-01T09:59:59.999999Z",
        "2025-03-01T10:00:01Z",
        "2025-03-01T10:00:01Z",
      ];
      for (const createdAt of times) await insertMessage(company, { createdAt });
      const expected = await expectedOrder(company);
      expect(expected).toHaveLength(times.length);

      for (const limit of [1, 2, 3]) {
        const walked = await walk(company, { limit });
        expect(walked).toEqual(expected);
      }
    });

    it("keeps a started walk free of duplicates and gaps while new messages arrive", async () => {
      const company = await newCompany();
      for (let i = 0; i < 9; i++) {
        await insertMessage(company, { createdAt: `2025-03-01T10:00:0${i % 3}.000007Z` });
      }
      const original = await expectedOrder(company);
      const inserted: string[] = [];

      const walked = await walk(company, { limit: 2 }, async () => {
        // Messages created while the caller pages: newer than everything walked so far.
        for (let i = 0; i < 3; i++) inserted.push(await insertMessage(company));
      });

      expect(new Set(walked).size).toBe(walked.length);
      expect(walked.filter((id) => !inserted.includes(id))).toEqual(original);
      // They were all created after the walk started, so it never reaches them.
      expect(walked.filter((id) => inserted.includes(id))).toEqual([]);
    });

    it("loads the page's events in one extra query, each message's oldest first", async () => {
      const company = await newCompany();
      const a = await insertMessage(company, { createdAt: "2025-03-01T10:00:00Z" });
      const b = await insertMessage(company, { createdAt: "2025-03-01T10:00:01Z" });
      const c = await insertMessage(company, { createdAt: "2025-03-01T10:00:02Z" });
      await insertEvent(company, a, "delivery", "2025-03-01T10:00:09Z");
      await insertEvent(company, a, "sent", "2025-03-01T10:00:03Z");
      await insertEvent(company, b, "sent", "2025-03-01T10:00:04Z");
      await insertEvent(company, b, "bounce", "2025-03-01T10:00:08Z");
      await insertEvent(company, b, "delivery", "2025-03-01T10:00:05Z");

      const realPool = await pool();
      const spy = vi.spyOn(realPool, "query");
      try {
        const page = await reader.list({ companyId: company });
        expect(spy).toHaveBeenCalledTimes(2);
        expect(page.items.map((m) => m.id)).toEqual([c, b, a]);
        const events = Object.fromEntries(page.items.map((m) => [m.id, m.events.map((e) => `${e.type}@${e.at.toISOString()}`)]));
        expect(events).toEqual({
          [c]: [],
          [b]: ["sent@2025-03-01T10:00:04.000Z", "delivery@2025-03-01T10:00:05.000Z", "bounce@2025-03-01T10:00:08.000Z"],
          [a]: ["sent@2025-03-01T10:00:03.000Z", "delivery@2025-03-01T10:00:09.000Z"],
        });
      } finally {
        spy.mockRestore();
      }
    });

    describe("filters", () => {
      it("status: only that status, paged", async () => {
        const company = await newCompany();
        const statuses = ["sent", "queued", "sent", "bounced", "sent", "failed", "sent"];
        const ids: Record<string, string[]> = {};
        for (const [i, status] of statuses.entries()) {
          const id = await insertMessage(company, { status, createdAt: `2025-03-01T10:00:0${i}Z` });
          (ids[status] ??= []).unshift(id);
        }
        expect(await walk(company, { status: "sent", limit: 1 })).toEqual(ids.sent);
        expect(await walk(company, { status: "bounced" })).toEqual(ids.bounced);
        expect(await walk(company, { status: "delivered" })).toEqual([]);
      });

      it("q: part of recipient or subject, case-insensitive, % and _ taken literally", async () => {
        const company = await newCompany();
        const alice = await insertMessage(company, { recipient: "Alice@Example.com", subject: "Receipt", createdAt: "2025-03-01T10:00:01Z" });
        const invoice = await insertMessage(company, { recipient: "bob@example.com", subject: "Your ALICE invoice", createdAt: "2025-03-01T10:00:02Z" });
        const percent = await insertMessage(company, { recipient: "c@example.com", subject: "100% off", createdAt: "2025-03-01T10:00:03Z" });
        await insertMessage(company, { recipient: "d@example.com", subject: "100 off", createdAt: "2025-03-01T10:00:04Z" });
        const underscore = await insertMessage(company, { recipient: "a_b@example.com", subject: "x", createdAt: "2025-03-01T10:00:05Z" });
        await insertMessage(company, { recipient: "axb@example.com", subject: "x", createdAt: "2025-03-01T10:00:06Z" });
        const backslash = await insertMessage(company, { recipient: "e@example.com", subject: "C:\\temp", createdAt: "2025-03-01T10:00:07Z" });

        expect(await walk(company, { q: "alice", limit: 1 })).toEqual([invoice, alice]);
        expect(await walk(company, { q: "EXAMPLE.COM" })).toHaveLength(7);
        expect(await walk(company, { q: "%" })).toEqual([percent]);
        expect(await walk(company, { q: "a_b" })).toEqual([underscore]);
        expect(await walk(company, { q: ":\\t" })).toEqual([backslash]);
        expect(await walk(company, { q: "nothing like it" })).toEqual([]);
        // An empty search is no search.
        expect(await walk(company, { q: "" })).toHaveLength(7);
      });

      it("since: created at or after the instant", async () => {
        const company = await newCompany();
        await insertMessage(company, { createdAt: "2025-03-01T09:59:59.999999Z" });
        const at = await insertMessage(company, { createdAt: "2025-03-01T10:00:00Z" });
        const after = await insertMessage(company, { createdAt: "2025-03-01T10:00:00.000001Z" });
        expect(await walk(company, { since: new Date("2025-03-01T10:00:00Z"), limit: 1 })).toEqual([after, at]);
        expect(await walk(company, { since: new Date("2030-01-01T00:00:00Z") })).toEqual([]);
      });

      it("tag: messages whose tags have the key, whatever its value", async () => {
        const company = await newCompany();
        const spring = await insertMessage(company, { tags: { campaign: "spring" }, createdAt: "2025-03-01T10:00:01Z" });
        const empty = await insertMessage(company, { tags: { campaign: "", other: "x" }, createdAt: "2025-03-01T10:00:02Z" });
        await insertMessage(company, { tags: { other: "campaign" }, createdAt: "2025-03-01T10:00:03Z" });
        await insertMessage(company, { createdAt: "2025-03-01T10:00:04Z" });
        const odd = await insertMessage(company, { tags: { 'we"ird ?key': "1" }, createdAt: "2025-03-01T10:00:05Z" });

        expect(await walk(company, { tag: "campaign", limit: 1 })).toEqual([empty, spring]);
        expect(await walk(company, { tag: 'we"ird ?key' })).toEqual([odd]);
        expect(await walk(company, { tag: "Campaign" })).toEqual([]);
        expect((await reader.get({ companyId: company, id: empty })).tags).toEqual({ campaign: "", other: "x" });
      });

      it("combines filters", async () => {
        const company = await newCompany();
        const match = await insertMessage(company, {
          status: "sent",
          subject: "Order shipped",
          tags: { order: "1" },
          createdAt: "2025-03-02T00:00:00Z",
        });
        await insertMessage(company, { status: "queued", subject: "Order shipped", tags: { order: "2" }, createdAt: "2025-03-02T00:00:01Z" });
        await insertMessage(company, { status: "sent", subject: "Welcome", tags: { order: "3" }, createdAt: "2025-03-02T00:00:02Z" });
        await insertMessage(company, { status: "sent", subject: "Order shipped", createdAt: "2025-03-02T00:00:03Z" });
        await insertMessage(company, { status: "sent", subject: "Order shipped", tags: { order: "4" }, createdAt: "2025-03-01T00:00:00Z" });
        expect(
          await walk(company, { status: "sent", q: "order", tag: "order", since: new Date("2025-03-02T00:00:00Z") }),
        ).toEqual([match]);
      });
    });

    describe("validation", () => {
      it("refuses a limit outside 1..100, naming limit", async () => {
        const company = await newCompany();
        for (const limit of [0, 101, -1, 2.5, Number.NaN]) {
          await expectValidation(reader.list({ companyId: company, limit }), "limit");
        }
        expect((await reader.list({ companyId: company, limit: 100 })).items).toEqual([]);
        expect((await reader.list({ companyId: company, limit: 1 })).items).toEqual([]);
      });

      it("refuses an unknown status, an invalid since, an overlong q and NUL characters", async () => {
        const company = await newCompany();
        await expectValidation(reader.list({ companyId: company, status: "lost" }), "status");
        await expectValidation(reader.list({ companyId: company, status: "SENT" }), "status");
        await expectValidation(reader.list({ companyId: company, since: new Date("nope") }), "since");
        await expectValidation(reader.list({ companyId: company, q: "x".repeat(501) }), "q");
        await expectValidation(reader.list({ companyId: company, q: "a\0b" }), "q");
        await expectValidation(reader.list({ companyId: company, tag: "a\0b" }), "tag");
      });

      it("names every bad field at once", async () => {
        const company = await newCompany();
        const error = await errorOf(reader.list({ companyId: company, limit: 0, status: "lost" }));
        expect((error as ValidationError).fields.map((f) => f.field)).toEqual(["limit", "status"]);
      });
    });

    describe("cursors", () => {
      it("refuses a cursor with any one character changed, naming cursor", async () => {
        const company = await newCompany();
        for (let i = 0; i < 3; i++) await insertMessage(company);
        const cursor = await cursorOf(company);
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for (let i = 0; i < cursor.length; i++) {
          const original = cursor.charAt(i);
          const replacement = alphabet.charAt((alphabet.indexOf(original) + 1) % alphabet.length);
          const tampered = cursor.slice(0, i) + replacement + cursor.slice(i + 1);
          await expectValidation(reader.list({ companyId: company, cursor: tampered }), "cursor");
        }
        // The untouched cursor still works.
        expect((await reader.list({ companyId: company, cursor })).items).toHaveLength(2);
      });

      it("refuses malformed cursors", async () => {
        const company = await newCompany();
        const cursor = await (async () => {
          await insertMessage(company);
          await insertMessage(company);
          return cursorOf(company);
        })();
        for (const bad of [
          "x",
          "not a cursor",
          "!!!!",
          `${cursor}=`,
          `${cursor}A`,
          cursor.slice(0, -1),
          cursor.slice(0, 40),
          Buffer.from('{"c":"x","f":"y","t":"z","i":"w"}').toString("base64url"),
          "A".repeat(10_000),
        ]) {
          await expectValidation(reader.list({ companyId: company, cursor: bad }), "cursor");
        }
      });

      it("refuses another company's cursor", async () => {
        const owner = await newCompany();
        const other = await newCompany();
        for (let i = 0; i < 3; i++) {
          await insertMessage(owner);
          await insertMessage(other);
        }
        const cursor = await cursorOf(owner);
        await expectValidation(reader.list({ companyId: other, cursor }), "cursor");
      });

      it("refuses a cursor used with other filters, accepts another page size", async () => {
        const company = await newCompany();
        for (let i = 0; i < 4; i++) {
          await insertMessage(company, { status: "sent", subject: "Order", tags: { order: String(i) }, createdAt: `2025-03-01T10:00:0${i}Z` });
        }
        const since = new Date("2025-01-01T00:00:00Z");
        const filters: ListOptions = { status: "sent", q: "order", tag: "order", since };
        const cursor = await cursorOf(company, filters);

        for (const changed of [
          { ...filters, status: undefined },
          { ...filters, status: "queued" },
          { ...filters, q: "orde" },
          { ...filters, q: undefined },
          { ...filters, tag: "other" },
          { ...filters, tag: undefined },
          { ...filters, since: new Date("2025-01-01T00:00:00.001Z") },
          { ...filters, since: undefined },
          {},
        ]) {
          await expectValidation(reader.list({ companyId: company, ...changed, cursor }), "cursor");
        }
        expect((await reader.list({ companyId: company, ...filters, limit: 10, cursor })).items).toHaveLength(3);
      });

      it("is accepted by another reader with the same secret, refused with another secret", async () => {
        const company = await newCompany();
        await insertMessage(company);
        await insertMessage(company);
        const cursor = await cursorOf(company);
        const sameSecret = logWith(SECRET);
        expect((await sameSecret.list({ companyId: company, cursor })).items).toHaveLength(1);
        const otherSecret = logWith("another-secret");
        await expectValidation(otherSecret.list({ companyId: company, cursor }), "cursor");
      });

      it("treats an empty cursor as the first page", async () => {
        const company = await newCompany();
        const id = await insertMessage(company);
        expect((await reader.list({ companyId: company, cursor: "" })).items.map((m) => m.id)).toEqual([id]);
      });

      it("pages with a cursor of the fixed format, so cursors in flight survive a deploy", async () => {
        // MAC context mail.v1.message-log.cursor.v1, fingerprint of (status, q, since, tag), issued for
        // this company with status=sent and tag=golden, after (2030-01-01T12:00:00.000000Z, ffffffff-…).
        const company = "7a1c0e52-3d4b-4c5e-8f6a-0b1c2d3e4f50";
        const issued =
          "eyJjIjoiN2ExYzBlNTItM2Q0Yi00YzVlLThmNmEtMGIxYzJkM2U0ZjUwIiwiZiI6ImcyUXVwU3JsSEV2bXpKbVRKZUVhV1EiLCJ0IjoiMjAzMC0wMS0wMVQxMjowMDowMC4wMDAwMDBaIiwiaSI6ImZmZmZmZmZmLWZmZmYtNGZmZi1iZmZmLWZmZmZmZmZmZmZmZiJ91HJ5ntRICjwrcD3gNZxd16U2sB_T-Gb3jWFBVE8vPzs";
        await db.query(`insert into company (id, name) values ($1, 'Golden')`, [company]);
        const before = await insertMessage(company, { status: "sent", tags: { golden: "1" }, createdAt: "2029-12-31T00:00:00Z" });
        await insertMessage(company, { status: "sent", tags: { golden: "1" }, createdAt: "2030-01-02T00:00:00Z" });
        expect((await reader.list({ companyId: company, status: "sent", tag: "golden", cursor: issued })).items.map((m) => m.id)).toEqual([before]);
        await expectValidation(reader.list({ companyId: company, status: "sent", tag: "other", cursor: issued }), "cursor");
      });
    });
  });
});
