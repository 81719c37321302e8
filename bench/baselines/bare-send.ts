/**
 * The bare baseline of the API's hot paths: one Fastify server with `pg`,
 * running the SQL statements the service runs before it answers, and
 * nothing else (no Connect, no REST bridge, no validation beyond the
 * shape, no HTML sanitiser, no workflow start). It answers the same routes
 * with the same statuses:
 *
 * - POST /mail/v1/send (202): the key lookup, the rate-limit window upsert,
 *   the default sender with its domain, the wallet balance, the message
 *   insert (what the service ran before its 202 when this was written);
 * - GET /mail/v1/messages/:id and GET /mail/v1/messages (a page of 25):
 *   the key lookup, the rate-limit upsert, the message (or page) and its
 *   events.
 *
 * The statements are in bare-statements.ts. The census of bench/run.ts
 * counts the statements of both through a PostgreSQL proxy and passes the
 * kinds the service runs in BARE_STATEMENTS (e.g. `rate,sender,balance,insert`
 * once the service caches the key lookup): a read whose kind is left out
 * runs once and is then reused, a write or check whose kind is left out
 * does not run. Unset: all of them.
 *
 * Run by bench/run.ts as a child process (so that its memory is measured on
 * its own): DATABASE_URL, API_KEY_PEPPER, PORT, POOL_MAX (default 10, the
 * API's default pool), BARE_STATEMENTS.
 */
import { createHmac, randomUUID } from "node:crypto";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import pg from "pg";
import {
  BALANCE,
  CONSUME_RATE,
  DEFAULT_SENDER,
  EVENTS,
  INSERT_MESSAGE,
  LOOKUP_KEY,
  MESSAGE,
  PAGE,
  parseKinds,
  type StatementKind,
} from "./bare-statements.ts";

const databaseUrl = process.env.DATABASE_URL;
const pepper = process.env.API_KEY_PEPPER;
if (!databaseUrl || !pepper) throw new Error("set DATABASE_URL and API_KEY_PEPPER");
const port = Number(process.env.PORT ?? 0);
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.POOL_MAX ?? 10) });

const kinds = parseKinds(process.env.BARE_STATEMENTS);

/**
 * A read whose kind is off runs once and is then reused (what a cache in
 * the service does); a write or check whose kind is off does not run.
 */
const reused = new Map<string, Promise<unknown>>();
function readOnce<T>(kind: StatementKind, key: string, read: () => Promise<T>): Promise<T> {
  if (kinds.has(kind)) return read();
  let value = reused.get(`${kind}:${key}`) as Promise<T> | undefined;
  if (!value) {
    value = read();
    reused.set(`${kind}:${key}`, value);
  }
  return value;
}

interface Caller {
  readonly keyId: string;
  readonly companyId: string;
}

interface MessageRow {
  id: string;
  recipient: string;
  subject: string;
  template_id: string | null;
  status: string;
  provider_message_id: string | null;
  error_code: string | null;
  position_at: string;
}

/** The key lookup and the rate-limit upsert every authenticated route runs; null after answering 401. */
async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Caller | null> {
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1];
  const hash = token ? createHmac("sha256", pepper as string).update(token, "utf8").digest() : null;
  const rows = hash
    ? await readOnce("key", hash.toString("hex"), async () => (await pool.query<{ id: string; company_id: string }>({ ...LOOKUP_KEY, values: [hash] })).rows)
    : [];
  const key = rows[0];
  if (!key) {
    await reply.code(401).send({ error: { code: "API_KEY_INVALID" } });
    return null;
  }
  if (kinds.has("rate")) await pool.query({ ...CONSUME_RATE, values: [`${key.id}:default`] });
  return { keyId: key.id, companyId: key.company_id };
}

type EventRow = { message_id: string; type: string; at: Date };

async function eventsOf(ids: string[], companyId: string): Promise<EventRow[]> {
  if (!kinds.has("events")) return [];
  return (await pool.query<EventRow>(EVENTS, [ids, companyId])).rows;
}

function messageJson(row: MessageRow, events: EventRow[]) {
  return {
    id: row.id,
    recipient: row.recipient,
    subject: row.subject,
    templateId: row.template_id,
    status: row.status,
    providerMessageId: row.provider_message_id,
    errorCode: row.error_code,
    createdAt: row.position_at,
    events: events.filter((event) => event.message_id === row.id).map((event) => ({ type: event.type, at: event.at.toISOString() })),
  };
}

const app = Fastify({ logger: false });

app.get("/livez", async () => ({ status: "ok" }));

app.post("/mail/v1/send", async (request, reply) => {
  const caller = await authenticate(request, reply);
  if (!caller) return reply;
  const body = request.body as { to?: unknown; subject?: unknown; html?: unknown } | null;
  if (typeof body?.to !== "string" || typeof body.subject !== "string" || typeof body.html !== "string") {
    return reply.code(400).send({ error: { code: "INVALID_ARGUMENT" } });
  }
  const senders = await readOnce(
    "sender",
    caller.companyId,
    async () => (await pool.query<{ id: string; email: string; name: string | null }>(DEFAULT_SENDER, [caller.companyId])).rows,
  );
  const sender = senders[0];
  if (!sender) return reply.code(409).send({ error: { code: "SENDER_NOT_VERIFIED" } });
  if (kinds.has("balance")) {
    const { rows: wallet } = await pool.query<{ balance: string }>(BALANCE, [caller.companyId]);
    if (Number(wallet[0]?.balance ?? 0) < 1) return reply.code(402).send({ error: { code: "INSUFFICIENT_CREDITS" } });
  }
  const id = randomUUID();
  if (kinds.has("insert")) await pool.query(INSERT_MESSAGE, [
    id,
    caller.companyId,
    caller.keyId,
    null,
    body.to,
    null,
    body.to.slice(body.to.lastIndexOf("@") + 1).toLowerCase(),
    sender.id,
    sender.email,
    sender.name,
    null,
    body.subject,
    body.html,
    null,
    null,
    "{}",
    null,
  ]);
  return reply.code(202).send({ id, status: "queued", replayed: false });
});

app.get("/mail/v1/messages/:id", async (request, reply) => {
  const caller = await authenticate(request, reply);
  if (!caller) return reply;
  const { id } = request.params as { id: string };
  const rows = await readOnce("message", id, async () => (await pool.query<MessageRow>(MESSAGE, [caller.companyId, id])).rows);
  const row = rows[0];
  if (!row) return reply.code(404).send({ error: { code: "NOT_FOUND" } });
  return messageJson(row, await eventsOf([row.id], caller.companyId));
});

app.get("/mail/v1/messages", async (request, reply) => {
  const caller = await authenticate(request, reply);
  if (!caller) return reply;
  const limit = 25;
  const rows = await readOnce("page", caller.companyId, async () => (await pool.query<MessageRow>(PAGE, [caller.companyId, limit + 1])).rows);
  const page = rows.slice(0, limit);
  const events = await eventsOf(
    page.map((row) => row.id),
    caller.companyId,
  );
  return { items: page.map((row) => messageJson(row, events)), nextCursor: rows.length > limit ? "more" : null };
});

const address = await app.listen({ host: "127.0.0.1", port });
console.log(`bare baseline listening on ${address}`);

const stop = async (): Promise<void> => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
