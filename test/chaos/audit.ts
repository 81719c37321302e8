import pg from "pg";
import type { ChaosReceiver } from "./receiver.ts";
import type { Behaviour, SendRecord } from "./send-stream.ts";
import { CHAOS_SCHEDULE } from "./settings.ts";

/**
 * The books of a chaos run, read from PostgreSQL once everything settled,
 * checked against what the client was told and what the receiver saw.
 * Answers the counts to print and every broken guarantee, one line each
 * (an empty list: none broken).
 */

/** How each recipient behaviour must end, and what it must leave behind. */
const EXPECTED: Readonly<
  Record<
    Behaviour,
    { status: string; handoff: "accepted" | "rejected"; events: readonly string[]; simulator: readonly string[]; webhooks: readonly string[] }
  >
> = {
  deliver: { status: "delivered", handoff: "accepted", events: ["sent", "delivery"], simulator: ["delivered"], webhooks: ["message.accepted", "sent", "delivered"] },
  transient: { status: "delivered", handoff: "accepted", events: ["sent", "delivery"], simulator: ["delivered"], webhooks: ["message.accepted", "sent", "delivered"] },
  bounce: { status: "bounced", handoff: "accepted", events: ["sent", "bounce"], simulator: ["bounced"], webhooks: ["message.accepted", "sent", "bounced"] },
  reject: { status: "rejected", handoff: "rejected", events: ["reject"], simulator: [], webhooks: ["failed"] },
};

/** Message statuses after which nothing more happens to the suite's messages. */
export const FINAL_STATUSES = ["delivered", "bounced", "rejected", "complained", "failed", "suppressed"] as const;

export interface AuditInput {
  readonly databaseUrl: string;
  readonly companyId: string;
  readonly endpointIds: readonly string[];
  /** Events the endpoints subscribe to. */
  readonly subscribed: readonly string[];
  readonly creditsGranted: number;
  readonly records: readonly SendRecord[];
  readonly receiver: ChaosReceiver;
}

export type Counts = Record<string, number | string>;

export interface AuditResult {
  readonly counts: Counts;
  readonly problems: string[];
}

function tally<K>(items: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

function describeCounts(map: Map<string, number>): string {
  return [...map.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}

/** At most `limit` offending items in a problem line, so a broken run stays readable. */
function some(items: readonly string[], limit = 5): string {
  return items.length <= limit ? items.join("; ") : `${items.slice(0, limit).join("; ")}; ... (${items.length} in all)`;
}

export async function audit(input: AuditInput): Promise<AuditResult> {
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  try {
    return await auditWith(client, input);
  } finally {
    await client.end();
  }
}

async function auditWith(db: pg.Client, input: AuditInput): Promise<AuditResult> {
  const problems: string[] = [];
  const check = (broken: readonly string[], what: string): void => {
    if (broken.length > 0) problems.push(`${what}: ${some(broken)}`);
  };
  const company = [input.companyId];

  // --- The client's view: one message per key, whatever the retries.
  const records = input.records;
  check(
    records.filter((r) => r.failure !== undefined).map((r) => `${r.key}: ${r.failure}`),
    "sends without a 202 (never answered, or answered with an error)",
  );
  check(
    records.filter((r) => r.ids.size > 1).map((r) => `${r.key} -> ${[...r.ids].join(", ")}`),
    "keys answered with more than one message id",
  );

  const { rows: messages } = await db.query<{ id: string; key: string | null; status: string; error_code: string | null; provider_message_id: string | null }>(
    `select id, idempotency_key as key, status, error_code, provider_message_id from message where company_id = $1`,
    company,
  );
  const byKey = new Map<string, typeof messages>();
  for (const m of messages) byKey.set(m.key ?? "(none)", [...(byKey.get(m.key ?? "(none)") ?? []), m]);
  check(
    [...byKey.entries()].filter(([, ms]) => ms.length > 1).map(([key, ms]) => `${key}: ${ms.map((m) => m.id).join(", ")}`),
    "idempotency keys with more than one message",
  );
  const recordByKey = new Map(records.map((r) => [r.key, r]));
  check(
    messages.filter((m) => m.key === null || !recordByKey.has(m.key)).map((m) => `${m.id} (key ${m.key ?? "none"})`),
    "messages no send of the stream asked for",
  );
  check(
    records
      .filter((r) => r.accepted)
      .filter((r) => byKey.get(r.key)?.[0]?.id !== [...r.ids][0])
      .map((r) => `${r.key}: answered ${[...r.ids][0]}, stored ${byKey.get(r.key)?.[0]?.id ?? "nothing"}`),
    "accepted sends whose message is not the one stored for their key",
  );

  // --- Every message at its expected end, its lifecycle events once each.
  const behaviourOf = new Map<string, Behaviour>();
  for (const m of messages) {
    const record = m.key ? recordByKey.get(m.key) : undefined;
    if (record) behaviourOf.set(m.id, record.behaviour);
  }
  check(
    messages
      .filter((m) => behaviourOf.has(m.id) && m.status !== EXPECTED[behaviourOf.get(m.id) as Behaviour].status)
      .map((m) => `${m.id} ${behaviourOf.get(m.id)}: ${m.status}${m.error_code ? ` (${m.error_code})` : ""}`),
    "messages not at their expected final status (stuck or wrong)",
  );
  const { rows: events } = await db.query<{ message_id: string; type: string; n: number }>(
    `select message_id, type, count(*)::int as n from message_event where company_id = $1 group by message_id, type`,
    company,
  );
  check(
    events.filter((e) => e.n > 1).map((e) => `${e.message_id} ${e.type} x${e.n}`),
    "message events recorded more than once",
  );
  const typesOf = new Map<string, Set<string>>();
  for (const e of events) typesOf.set(e.message_id, (typesOf.get(e.message_id) ?? new Set()).add(e.type));
  check(
    messages
      .filter((m) => behaviourOf.has(m.id))
      .flatMap((m) => EXPECTED[behaviourOf.get(m.id) as Behaviour].events.filter((t) => !typesOf.get(m.id)?.has(t)).map((t) => `${m.id} lacks ${t}`)),
    "message events missing",
  );

  // --- The provider's books (the simulator's journal): one handoff per message, every outcome reported once.
  const ids = messages.map((m) => m.id);
  const { rows: handoffs } = await db.query<{ message_id: string; outcome: string; provider_message_id: string | null }>(
    `select message_id::text, outcome, provider_message_id from simulator_handoff where message_id = any($1::uuid[])`,
    [ids],
  );
  const handoffOf = new Map(handoffs.map((h) => [h.message_id, h]));
  check(
    messages
      .filter((m) => behaviourOf.has(m.id))
      .filter((m) => {
        const h = handoffOf.get(m.id);
        const expected = EXPECTED[behaviourOf.get(m.id) as Behaviour];
        return !h || h.outcome !== expected.handoff || (h.outcome === "accepted" && h.provider_message_id !== m.provider_message_id);
      })
      .map((m) => `${m.id}: ${JSON.stringify(handoffOf.get(m.id) ?? null)} vs message provider id ${m.provider_message_id}`),
    "messages without exactly their one provider handoff",
  );
  const providerIds = handoffs.flatMap((h) => (h.provider_message_id ? [h.provider_message_id] : []));
  const { rows: outcomes } = await db.query<{ provider_message_id: string; type: string; done: boolean; dropped: boolean }>(
    `select provider_message_id, type, done_at is not null as done, dropped from simulator_event where provider_message_id = any($1::text[])`,
    [providerIds],
  );
  check(
    outcomes.filter((o) => !o.done || o.dropped).map((o) => `${o.provider_message_id} ${o.type}${o.dropped ? " dropped" : " not reported"}`),
    "provider outcomes never reported",
  );
  const outcomesOf = new Map<string, string[]>();
  for (const o of outcomes) outcomesOf.set(o.provider_message_id, [...(outcomesOf.get(o.provider_message_id) ?? []), o.type]);
  check(
    messages
      .filter((m) => behaviourOf.has(m.id) && m.provider_message_id !== null)
      .filter((m) => {
        const got = [...(outcomesOf.get(m.provider_message_id as string) ?? [])].sort().join(",");
        return got !== [...EXPECTED[behaviourOf.get(m.id) as Behaviour].simulator].sort().join(",");
      })
      .map((m) => `${m.id}: ${JSON.stringify(outcomesOf.get(m.provider_message_id as string) ?? [])}`),
    "provider outcomes other than planned",
  );

  // --- Credits: one charge per message handed off, one refund per rejected one, the wallet agrees.
  const { rows: ledger } = await db.query<{ message_id: string | null; reason: string; delta: string }>(
    `select message_id::text, reason, delta::text from credit_ledger where company_id = $1`,
    company,
  );
  const handedOff = messages.filter((m) => handoffOf.has(m.id));
  const charges = ledger.filter((l) => l.reason === "charge");
  const refunds = ledger.filter((l) => l.reason === "refund");
  const chargesOf = tally(charges.map((l) => l.message_id ?? ""));
  const refundsOf = tally(refunds.map((l) => l.message_id ?? ""));
  check(
    handedOff.filter((m) => chargesOf.get(m.id) !== 1).map((m) => `${m.id}: ${chargesOf.get(m.id) ?? 0} charges`),
    "messages handed off without exactly one charge",
  );
  check(
    charges.filter((l) => !handoffOf.has(l.message_id ?? "")).map((l) => `${l.message_id}`),
    "charges for messages never handed off",
  );
  check(
    messages
      .filter((m) => (refundsOf.get(m.id) ?? 0) !== (m.status === "rejected" ? 1 : 0))
      .map((m) => `${m.id} ${m.status}: ${refundsOf.get(m.id) ?? 0} refunds`),
    "refunds other than one per rejected message",
  );
  const { rows: wallet } = await db.query<{ balance: string }>(`select balance::text from credit_wallet where company_id = $1`, company);
  const balance = Number(wallet[0]?.balance);
  const ledgerSum = ledger.reduce((sum, l) => sum + Number(l.delta), 0);
  const expectedBalance = input.creditsGranted - charges.length + refunds.length;
  if (balance !== expectedBalance || ledgerSum !== balance) {
    problems.push(`wallet ${balance}, ledger sum ${ledgerSum}, expected ${expectedBalance} (granted ${input.creditsGranted} - ${charges.length} charges + ${refunds.length} refunds)`);
  }

  // --- Webhooks: each message's events recorded once, fanned out once per endpoint, each delivery settled.
  const { rows: hookEvents } = await db.query<{ id: string; event: string; message_id: string | null; fanned: boolean }>(
    `select id::text, event, data->>'messageId' as message_id, fanned_out_at is not null as fanned from webhook_event where company_id = $1`,
    company,
  );
  const hookEventsOf = new Map<string, string[]>();
  for (const e of hookEvents) if (e.message_id) hookEventsOf.set(e.message_id, [...(hookEventsOf.get(e.message_id) ?? []), e.event]);
  check(
    messages
      .filter((m) => behaviourOf.has(m.id))
      .filter((m) => [...(hookEventsOf.get(m.id) ?? [])].sort().join(",") !== [...EXPECTED[behaviourOf.get(m.id) as Behaviour].webhooks].sort().join(","))
      .map((m) => `${m.id} ${behaviourOf.get(m.id)}: ${JSON.stringify(hookEventsOf.get(m.id) ?? [])}`),
    "messages whose webhook events are not exactly the expected ones, once each",
  );
  check(hookEvents.filter((e) => !e.fanned).map((e) => `${e.id} ${e.event}`), "webhook events never fanned out");

  const { rows: deliveries } = await db.query<{ id: string; event_id: string; endpoint_id: string; state: string; attempt_count: number }>(
    `select id::text, event_id::text, endpoint_id::text, state, attempt_count from webhook_delivery where company_id = $1`,
    company,
  );
  const deliveriesOf = tally(deliveries.map((d) => `${d.event_id}/${d.endpoint_id}`));
  const subscribed = new Set(input.subscribed);
  check(
    hookEvents
      .filter((e) => subscribed.has(e.event))
      .flatMap((e) => input.endpointIds.filter((ep) => deliveriesOf.get(`${e.id}/${ep}`) !== 1).map((ep) => `${e.event} ${e.id} -> ${ep}: ${deliveriesOf.get(`${e.id}/${ep}`) ?? 0}`)),
    "(event, endpoint) pairs without exactly one delivery",
  );
  check(
    deliveries.filter((d) => d.state !== "succeeded" && d.state !== "dead_letter").map((d) => `${d.id} ${d.state} after ${d.attempt_count} attempts`),
    "deliveries neither succeeded nor dead-lettered",
  );

  const { rows: attempts } = await db.query<{ delivery_id: string; number: number; status: number | null; error_class: string | null }>(
    `select delivery_id::text, number, status, error_class from webhook_attempt where company_id = $1 order by delivery_id, number`,
    company,
  );
  const attemptsOf = new Map<string, typeof attempts>();
  for (const a of attempts) attemptsOf.set(a.delivery_id, [...(attemptsOf.get(a.delivery_id) ?? []), a]);
  const ok = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
  check(
    deliveries
      .filter((d) => {
        const list = attemptsOf.get(d.id) ?? [];
        return list.length !== d.attempt_count || list.some((a, i) => a.number !== i + 1) || list.some((a) => a.status === null && a.error_class === null);
      })
      .map((d) => `${d.id}: count ${d.attempt_count}, recorded ${JSON.stringify((attemptsOf.get(d.id) ?? []).map((a) => a.number))}`),
    "deliveries whose attempts are not all recorded, numbered 1..n, each with a status or an error",
  );
  check(
    deliveries
      .filter((d) => d.state === "succeeded")
      .filter((d) => {
        const list = attemptsOf.get(d.id) ?? [];
        return !ok(list.at(-1)?.status ?? null) || list.slice(0, -1).some((a) => ok(a.status));
      })
      .map((d) => `${d.id}: ${JSON.stringify((attemptsOf.get(d.id) ?? []).map((a) => a.status ?? a.error_class))}`),
    "succeeded deliveries whose last attempt, and only it, is not the 2xx",
  );
  const deadLetters = deliveries.filter((d) => d.state === "dead_letter");
  check(
    deadLetters
      .filter((d) => d.attempt_count !== CHAOS_SCHEDULE.maxAttempts || (attemptsOf.get(d.id) ?? []).some((a) => ok(a.status)))
      .map((d) => `${d.id}: ${JSON.stringify((attemptsOf.get(d.id) ?? []).map((a) => a.status ?? a.error_class))}`),
    `dead letters without ${CHAOS_SCHEDULE.maxAttempts} failed attempts`,
  );

  // --- What the receiver saw: every succeeded delivery answered 2xx at least once (more is allowed: spec, Delivery rules 5).
  const answered = input.receiver.answeredOk();
  check(
    deliveries.filter((d) => d.state === "succeeded" && !answered.has(d.id)).map((d) => d.id),
    "succeeded deliveries the receiver never answered 2xx",
  );
  const deliveryIds = new Set(deliveries.map((d) => d.id));
  check(
    [...new Set(input.receiver.receipts.map((r) => r.deliveryId))].filter((id) => !deliveryIds.has(id)),
    "requests at the receiver for deliveries that do not exist",
  );

  const receipts = input.receiver.receipts;
  const accepted = records.filter((r) => r.accepted);
  const counts: Counts = {
    "sends (idempotency keys)": records.length,
    "send requests": records.reduce((n, r) => n + r.requests, 0),
    "client retries after an error or timeout": records.reduce((n, r) => n + r.retries, 0),
    "keys sent again after their 202": records.reduce((n, r) => n + r.repeats, 0),
    "answers with replayed: true": records.reduce((n, r) => n + r.replayed, 0),
    "accepted (202)": accepted.length,
    "messages stored": messages.length,
    "final statuses": describeCounts(tally(messages.map((m) => m.status))),
    "provider handoffs (simulator_handoff)": handoffs.length,
    "provider outcomes reported (simulator_event)": outcomes.filter((o) => o.done && !o.dropped).length,
    "credit charges": charges.length,
    "credit refunds": refunds.length,
    "wallet balance": `${balance} of ${input.creditsGranted}`,
    "webhook events": hookEvents.length,
    "webhook deliveries": deliveries.length,
    "deliveries succeeded": deliveries.filter((d) => d.state === "succeeded").length,
    "deliveries dead-lettered": deadLetters.length,
    "delivery attempts recorded": attempts.length,
    "receiver requests": receipts.length,
    "receiver requests answered 2xx": receipts.filter((r) => r.outcome === "answered" && r.status !== undefined && r.status < 300).length,
    "deliveries answered 2xx more than once": [...answered.values()].filter((n) => n > 1).length,
    "receiver requests held (hang) / answered 500": `${receipts.filter((r) => r.mode === "hang").length} / ${receipts.filter((r) => r.status === 500).length}`,
  };
  return { counts, problems };
}
