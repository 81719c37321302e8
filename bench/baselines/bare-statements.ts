/**
 * The statements the bare baseline (bare-send.ts) can run, each with the
 * pattern that recognises the service's own statement of the same kind at
 * the PostgreSQL wire (the census, bench/phases/census.ts). The texts
 * mirror src/adapters/postgres/{accounts,rate-limit,sending-setup,credits,messages}.
 *
 * The census tells which kinds the service's hot requests run before they
 * answer, and the baseline runs exactly those: when the service stops
 * running one (a cache, say), so does the baseline, and the ratio keeps
 * comparing the same database work. A statement of the service that no
 * kind recognises is reported: add its kind here.
 */
import { COUNT_ACCEPTED } from "../../src/adapters/postgres/messages/message-stats.ts";

export const STATEMENT_KINDS = ["key", "rate", "sender", "balance", "insert", "message", "page", "events"] as const;
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** How the service's statement of each kind starts or reads (whitespace collapsed, case-insensitive). */
const SIGNATURES: Readonly<Record<StatementKind, RegExp>> = {
  key: /\bfrom "?api_key"? (as )?"?k"?\b.*\bsecret_hash\b/i,
  rate: /^insert into "?rate_limit"?/i,
  sender: /\bfrom "?sender"? (as )?"?s0"?\b.*\bis_default\b/i,
  balance: /\bfrom "?credit_wallet"?\b/i,
  // The acceptance counts itself in the statistics: a CTE around the insert.
  insert: /^(with "?inserted"? as \( ?)?insert into "?message"? /i,
  message: /\bfrom "?message"? (as )?"?m"? where .*\bm"?\."?id"? = \$\d/i,
  page: /\bfrom "?message"? (as )?"?m"? where .*\border by\b/i,
  events: /\bfrom "?message_event"? (as )?"?e"?\b/i,
};

export function kindOf(text: string): StatementKind | undefined {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return STATEMENT_KINDS.find((kind) => SIGNATURES[kind].test(oneLine));
}

export const LOOKUP_KEY = {
  name: "bare_api_key_authenticate",
  text: `select k.id, k.name, k.prefix, k.scopes, k.secret_hash, k.expires_at, k.revoked_at,
                c.id as company_id, c.name as company_name, c.entitlement_api, c.entitlement_smtp
           from api_key k
           join company c on c.id = k.company_id
          where k.secret_hash = $1`,
};

export const CONSUME_RATE = {
  name: "bare_rate_limit_consume",
  text: `insert into rate_limit as r (bucket, window_start, count)
         values ($1, date_trunc('minute', now()), 1)
         on conflict (bucket, window_start) do update set count = r.count + 1
         returning r.count,
                   (extract(epoch from (r.window_start + interval '1 minute' - now())) * 1000)::float8 as reset_ms`,
};

// The ORM's statement (it inlines the company id; here it is a parameter).
export const DEFAULT_SENDER = `select s0.*, d1.id as d1__id, d1.company_id as d1__company_id, d1.domain as d1__domain,
         d1.return_path_domain as d1__return_path_domain, d1.dkim_selector as d1__dkim_selector,
         d1.dkim_public_key as d1__dkim_public_key, d1.dkim_private_key_sealed as d1__dkim_private_key_sealed,
         d1.dkim_verified as d1__dkim_verified, d1.spf_verified as d1__spf_verified, d1.dmarc_verified as d1__dmarc_verified,
         d1.verification_overridden as d1__verification_overridden, d1.last_checked_at as d1__last_checked_at,
         d1.created_at as d1__created_at
    from sender as s0 inner join sending_domain as d1 on s0.domain_id = d1.id
   where s0.company_id = $1 and s0.is_default = true limit 1`;

export const BALANCE = `select balance from credit_wallet where company_id = $1`;

// workflow_started_at is set so that the service's outbox relay, which
// shares the database, does not start workflows for the baseline's rows.
// The statistics are counted in the same statement, as the service does.
export const INSERT_MESSAGE = `with inserted as (
         insert into message (id, company_id, api_key_id, idempotency_key, recipient, recipient_name,
           recipient_domain, sender_id, from_email, from_name, reply_to, subject, html, text_body, template_id, tags, status,
           request_fingerprint, workflow_started_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'queued', $17, now())
         on conflict (company_id, idempotency_key) do nothing
         returning *
       )${COUNT_ACCEPTED}
       select * from inserted`;

const MESSAGE_COLUMNS = `m.id, m.recipient, m.subject, m.template_id, m.status, m.provider_message_id, m.error_code, m.created_at,
       m.sent_at, m.last_event_at, m.tags, to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at`;

export const MESSAGE = `select ${MESSAGE_COLUMNS} from message m where m.company_id = $1 and m.id = $2`;

export const PAGE = `select ${MESSAGE_COLUMNS} from message m where m.company_id = $1 order by m.created_at desc, m.id desc limit $2`;

export const EVENTS = `select e.message_id, e.type, e.at from message_event e
                 where e.message_id = any($1::uuid[]) and e.company_id = $2 order by e.message_id, e.at, e.id`;

/** BARE_STATEMENTS=key,rate,... -> the kinds to run; unset: all. */
export function parseKinds(raw: string | undefined): ReadonlySet<StatementKind> {
  if (raw === undefined || raw.trim() === "") return new Set(STATEMENT_KINDS);
  const kinds = raw.split(",").map((kind) => kind.trim()).filter((kind) => kind !== "");
  const unknown = kinds.filter((kind) => !(STATEMENT_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) throw new Error(`BARE_STATEMENTS: unknown ${unknown.join(", ")} (kinds: ${STATEMENT_KINDS.join(", ")})`);
  return new Set(kinds as StatementKind[]);
}
