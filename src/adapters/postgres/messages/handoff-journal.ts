import type { Pool } from "../sql.ts";
import type { DueEvent, HandoffJournal } from "../../email/simulator.ts";
import type { HandoffAccepted, HandoffRejected, ProviderEventType } from "../../../capabilities/messages/email-provider.ts";

/**
 * The simulator's durable memory, shared by every worker:
 * - simulator_handoff: the first final answer per message, so a handoff
 *   repeated after a crash is recognised as the same one, as a real email
 *   service recognises a repeated idempotency key;
 * - simulator_event: the outcomes still to report, written with the
 *   accepted answer, so they outlive the process that accepted the message.
 */
interface HandoffRow {
  outcome: "accepted" | "rejected";
  provider_message_id: string | null;
  reason: string | null;
}

interface EventRow {
  provider_event_id: string;
  provider_message_id: string;
  type: ProviderEventType;
  detail: string | null;
  attempts: number;
}

function toResult(row: HandoffRow): HandoffAccepted | HandoffRejected {
  return row.outcome === "accepted"
    ? { outcome: "accepted", providerMessageId: row.provider_message_id ?? "" }
    : { outcome: "rejected", permanent: true, reason: row.reason ?? "" };
}

function toDueEvent(row: EventRow): DueEvent {
  return {
    providerEventId: row.provider_event_id,
    providerMessageId: row.provider_message_id,
    type: row.type,
    attempts: row.attempts,
    ...(row.detail === null ? {} : { detail: row.detail }),
  };
}

/** Named: every handoff runs it; each connection plans it once. */
const RECALL = { name: "simulator_recall", text: `select outcome, provider_message_id, reason from simulator_handoff where message_id = $1` };

export function postgresHandoffJournal(db: () => Promise<Pool>): HandoffJournal {
  async function recall(messageId: string): Promise<HandoffAccepted | HandoffRejected | undefined> {
    const { rows } = await (await db()).query<HandoffRow>({ ...RECALL, values: [messageId] });
    return rows[0] ? toResult(rows[0]) : undefined;
  }

  return {
    recall,

    async remember(messageId, result, events) {
      // One statement: the answer and its events go in together or not at
      // all (a data-modifying CTE), in one round trip instead of four.
      const accepted = result.outcome === "accepted";
      const recorded = accepted && events.length > 0 ? events : [];
      const { rows } = await (await db()).query<{ inserted: boolean }>({
        name: "simulator_remember",
        text: `with handoff as (
                 insert into simulator_handoff (message_id, outcome, provider_message_id, reason)
                 values ($1, $2, $3, $4) on conflict (message_id) do nothing
                 returning message_id
               ),
               events as (
                 insert into simulator_event (provider_event_id, provider_message_id, position, type, detail, due_at)
                 select e.id, $3, e.position, e.type, e.detail, now() + make_interval(secs => e.due_in_ms / 1000.0)
                   from unnest($5::text[], $6::text[], $7::text[], $8::double precision[]) with ordinality
                        as e(id, type, detail, due_in_ms, position)
                  where exists (select 1 from handoff)
               )
               select exists (select 1 from handoff) as inserted`,
        values: [
          messageId,
          result.outcome,
          accepted ? result.providerMessageId : null,
          result.outcome === "rejected" ? result.reason : null,
          recorded.map((e) => e.providerEventId),
          recorded.map((e) => e.type),
          recorded.map((e) => e.detail ?? null),
          recorded.map((e) => e.dueInMs),
        ],
      });
      if (rows[0]?.inserted) return result;
      // Another process answered first: its answer (and its events) stand.
      return (await recall(messageId)) ?? result;
    },

    async claimDue(limit, leaseMs) {
      // SKIP LOCKED: pollers of several processes split the due rows instead
      // of queueing behind each other; the lease keeps a claimed row from
      // being claimed again while its report is under way.
      const { rows } = await (await db()).query<EventRow & { due_at: Date | string }>(
        `update simulator_event e
            set claimed_until = now() + make_interval(secs => $2::double precision / 1000)
          where e.provider_event_id in (
                select c.provider_event_id
                  from simulator_event c
                 where c.done_at is null
                   and c.due_at <= now()
                   and (c.claimed_until is null or c.claimed_until < now())
                   and not exists (
                         select 1 from simulator_event b
                          where b.provider_message_id = c.provider_message_id
                            and b.position < c.position
                            and b.done_at is null)
                 order by c.due_at
                 limit $1
                   for update skip locked)
          returning e.provider_event_id, e.provider_message_id, e.type, e.detail, e.attempts, e.due_at`,
        [limit, leaseMs],
      );
      return rows.sort((a, b) => new Date(a.due_at).getTime() - new Date(b.due_at).getTime()).map(toDueEvent);
    },

    async reported(providerEventId) {
      await (await db()).query({
        name: "simulator_event_reported",
        text: `update simulator_event set done_at = now(), claimed_until = null where provider_event_id = $1`,
        values: [providerEventId],
      });
    },

    async failed(providerEventId, retryInMs) {
      const pool = await db();
      if (retryInMs === "drop") {
        await pool.query(
          `update simulator_event set done_at = now(), dropped = true, attempts = attempts + 1, claimed_until = null
            where provider_event_id = $1`,
          [providerEventId],
        );
        return;
      }
      await pool.query(
        `update simulator_event
            set attempts = attempts + 1, claimed_until = null,
                due_at = now() + make_interval(secs => $2::double precision / 1000)
          where provider_event_id = $1`,
        [providerEventId, retryInMs],
      );
    },

    async pending(providerMessageIds) {
      if (providerMessageIds.length === 0) return 0;
      const { rows } = await (await db()).query<{ n: number }>(
        `select count(*)::int as n from simulator_event where done_at is null and provider_message_id = any($1::text[])`,
        [providerMessageIds],
      );
      return rows[0]?.n ?? 0;
    },
  };
}
