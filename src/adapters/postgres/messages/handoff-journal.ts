import type { Pool } from "pg";
import type { HandoffJournal } from "../../email/simulator.ts";
import type { HandoffAccepted, HandoffRejected } from "../../../capabilities/messages/email-provider.ts";

/**
 * The simulator's durable memory (table simulator_handoff): the first final
 * answer per message, shared by every worker, so a handoff repeated after a
 * crash is recognised as the same one, as a real email service recognises
 * a repeated idempotency key.
 */
interface Row {
  outcome: "accepted" | "rejected";
  provider_message_id: string | null;
  reason: string | null;
}

function toResult(row: Row): HandoffAccepted | HandoffRejected {
  return row.outcome === "accepted"
    ? { outcome: "accepted", providerMessageId: row.provider_message_id ?? "" }
    : { outcome: "rejected", permanent: true, reason: row.reason ?? "" };
}

export function postgresHandoffJournal(db: () => Promise<Pool>): HandoffJournal {
  return {
    async recall(messageId) {
      const { rows } = await (await db()).query<Row>(
        `select outcome, provider_message_id, reason from simulator_handoff where message_id = $1`,
        [messageId],
      );
      return rows[0] ? toResult(rows[0]) : undefined;
    },
    async remember(messageId, result) {
      const pool = await db();
      const inserted = await pool.query(
        `insert into simulator_handoff (message_id, outcome, provider_message_id, reason)
         values ($1, $2, $3, $4) on conflict (message_id) do nothing`,
        [
          messageId,
          result.outcome,
          result.outcome === "accepted" ? result.providerMessageId : null,
          result.outcome === "rejected" ? result.reason : null,
        ],
      );
      if (inserted.rowCount === 1) return result;
      const { rows } = await pool.query<Row>(
        `select outcome, provider_message_id, reason from simulator_handoff where message_id = $1`,
        [messageId],
      );
      return rows[0] ? toResult(rows[0]) : result;
    },
  };
}
