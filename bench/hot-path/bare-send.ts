/**
 * The baseline of POST /mail/v1/send: a bare Fastify route on a `pg` pool
 * that runs the same five statements the service runs before its 202 (the
 * key lookup, the rate-limit upsert, the default sender with its domain, the
 * balance, the insert), with the same key hashing and no framework of ours.
 * Whatever the service spends above this is the price of its layers.
 *
 *   node bench/hot-path/bare-send.ts <database-url> <api-key-pepper> [pool-size=10]
 *
 * Prints `bare listening: <url>` once ready.
 */
import { createHmac, randomUUID } from "node:crypto";
import Fastify from "fastify";
import pg from "pg";

const [databaseUrl, pepper, poolSize = "10"] = process.argv.slice(2);
if (!databaseUrl || !pepper) throw new Error("usage: bare-send.ts <database-url> <api-key-pepper> [pool-size]");

const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(poolSize) });

const LOOKUP = `select k.id, k.name, k.prefix, k.scopes, k.secret_hash, k.expires_at, k.revoked_at,
                       c.id as company_id, c.name as company_name, c.entitlement_api, c.entitlement_smtp
                  from api_key k join company c on c.id = k.company_id
                 where k.secret_hash = $1`;
const RATE = `insert into rate_limit as r (bucket, window_start, count)
              values ($1, date_trunc('minute', now()), 1)
              on conflict (bucket, window_start) do update set count = r.count + 1
              returning r.count, (extract(epoch from (r.window_start + interval '1 minute' - now())) * 1000)::float8 as reset_ms`;
const SENDER = `select s.id, s.email, s.name, d.domain, d.return_path_domain, d.dkim_verified, d.spf_verified, d.dmarc_verified,
                       d.verification_overridden
                  from sender s join sending_domain d on d.id = s.domain_id
                 where s.company_id = $1 and s.is_default`;
const BALANCE = `select balance from credit_wallet where company_id = $1`;
const INSERT = `insert into message (id, company_id, api_key_id, idempotency_key, recipient, recipient_name,
                  recipient_domain, sender_id, from_email, from_name, reply_to, subject, html, text_body, template_id, tags, status,
                  request_fingerprint)
                values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'queued', $17)
                on conflict (company_id, idempotency_key) do nothing
                returning *`;

interface SendBody {
  to?: string;
  subject?: string;
  html?: string;
}

const app = Fastify({ logger: false });
app.post("/mail/v1/send", async (request, reply) => {
  const token = /^Bearer\s+(\S+)$/.exec(request.headers.authorization ?? "")?.[1];
  if (!token) return reply.code(401).send({ error: { code: "AUTHENTICATION_REQUIRED" } });
  const hash = createHmac("sha256", pepper).update(token, "utf8").digest();
  const key = (await pool.query({ name: "lookup", text: LOOKUP, values: [hash] })).rows[0] as
    | { id: string; company_id: string; revoked_at: unknown }
    | undefined;
  if (!key || key.revoked_at) return reply.code(401).send({ error: { code: "API_KEY_INVALID" } });
  const rate = (await pool.query({ name: "rate", text: RATE, values: [`${key.id}:SendMessage`] })).rows[0] as { count: number };
  reply.header("ratelimit-limit", "10000000").header("ratelimit-remaining", String(10_000_000 - rate.count));
  const body = request.body as SendBody;
  if (typeof body.to !== "string" || typeof body.subject !== "string") return reply.code(400).send({ error: { code: "VALIDATION_ERROR" } });
  const sender = (await pool.query({ name: "sender", text: SENDER, values: [key.company_id] })).rows[0] as
    | { id: string; email: string; name: string | null }
    | undefined;
  if (!sender) return reply.code(409).send({ error: { code: "SENDER_NOT_VERIFIED" } });
  const balance = (await pool.query({ name: "balance", text: BALANCE, values: [key.company_id] })).rows[0] as { balance: string } | undefined;
  if (!balance || Number(balance.balance) < 1) return reply.code(402).send({ error: { code: "INSUFFICIENT_CREDITS" } });
  const id = randomUUID();
  await pool.query({
    name: "insert",
    text: INSERT,
    values: [
      id,
      key.company_id,
      key.id,
      null,
      body.to,
      null,
      body.to.slice(body.to.lastIndexOf("@") + 1).toLowerCase(),
      sender.id,
      sender.email,
      sender.name,
      null,
      body.subject,
      body.html ?? null,
      null,
      null,
      "[]",
      null,
    ],
  });
  return reply.code(202).send({ id, status: "queued", replayed: false });
});

const url = await app.listen({ host: "127.0.0.1", port: 0 });
console.log(`bare listening: ${url}`);
const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
