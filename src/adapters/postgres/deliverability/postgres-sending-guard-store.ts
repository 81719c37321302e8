/**
 * The sending guard's state in PostgreSQL (table `sending_guard`, one row
 * per company once it was first suspended), and the count of a company's
 * recent sends, always per company.
 *
 * The count reads `message_sent_index` (company_id, sent_at) INCLUDE
 * (status): one range of the company's index entries, the status taken
 * from the index. It runs when a bounce or a complaint is recorded, never on
 * the send path.
 */
import type { AuditContext, AuditEntry } from "../../../capabilities/audit/types.ts";
import type { GuardState, SendingGuardStore, Suspension, SuspensionReason, WindowFigures } from "../../../capabilities/deliverability/ports.ts";
import { insertAuditRow } from "../audit/audit-rows.ts";
import { isUuid } from "../ids.ts";
import { toDate, type Pool } from "../sql.ts";
import { inTransaction, rollback } from "../transaction.ts";
import { formatPercent, percentOf } from "../../../capabilities/deliverability/sending-guard.ts";

interface GuardRow {
  suspended_at: string | Date | null;
  reason: SuspensionReason | null;
  sends: number;
  bounces: number;
  complaints: number;
  window_from: string | Date | null;
  lifted_at: string | Date | null;
}

/** Who suspends: the service itself. */
const GUARD_ACTOR: AuditContext = { actor: { kind: "system", label: "sending guard" }, requestId: "", clientIp: "" };

function suspensionDetails(s: Suspension): AuditEntry["details"] {
  return {
    reason: s.reason,
    sends: s.sends,
    bounces: s.bounces,
    complaints: s.complaints,
    bounceRate: formatPercent(percentOf(s.bounces, s.sends)),
    complaintRate: formatPercent(percentOf(s.complaints, s.sends)),
    windowFrom: s.windowFrom.toISOString(),
  };
}

function suspensionOf(row: GuardRow): Suspension | undefined {
  if (row.suspended_at === null || row.reason === null || row.window_from === null) return undefined;
  return {
    suspendedAt: toDate(row.suspended_at),
    reason: row.reason,
    sends: row.sends,
    bounces: row.bounces,
    complaints: row.complaints,
    windowFrom: toDate(row.window_from),
  };
}

export class PostgresSendingGuardStore implements SendingGuardStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async state(companyId: string): Promise<GuardState> {
    if (!isUuid(companyId)) return { suspension: undefined, liftedAt: undefined };
    const pool = await this.#pool();
    const { rows } = await pool.query<GuardRow>({
      name: "sending_guard_state",
      text: `select suspended_at, reason, sends, bounces, complaints, window_from, lifted_at from sending_guard where company_id = $1`,
      values: [companyId],
    });
    const row = rows[0];
    if (!row) return { suspension: undefined, liftedAt: undefined };
    return { suspension: suspensionOf(row), liftedAt: row.lifted_at === null ? undefined : toDate(row.lifted_at) };
  }

  async windowFigures(companyId: string, from: Date): Promise<WindowFigures> {
    if (!isUuid(companyId)) return { sends: 0, bounces: 0, complaints: 0 };
    const pool = await this.#pool();
    // A message the email service rejected after accepting it was not sent (its credit came back).
    const { rows } = await pool.query<{ sends: number; bounces: number; complaints: number }>({
      name: "sending_guard_window",
      text: `select count(*) filter (where status <> 'rejected')::int as sends,
                    count(*) filter (where status = 'bounced')::int as bounces,
                    count(*) filter (where status = 'complained')::int as complaints
               from message
              where company_id = $1 and sent_at >= $2 and sent_at is not null`,
      values: [companyId, from],
    });
    const row = rows[0];
    return { sends: row?.sends ?? 0, bounces: row?.bounces ?? 0, complaints: row?.complaints ?? 0 };
  }

  /** A judgement that counted from before a lift made meanwhile (its window is stale) suspends nothing. */
  async suspend(companyId: string, s: Suspension): Promise<boolean> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query(
        `insert into sending_guard as g (company_id, suspended_at, reason, sends, bounces, complaints, window_from)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (company_id) do update
            set suspended_at = excluded.suspended_at, reason = excluded.reason, sends = excluded.sends,
                bounces = excluded.bounces, complaints = excluded.complaints, window_from = excluded.window_from
          where g.suspended_at is null and (g.lifted_at is null or g.lifted_at <= excluded.window_from)
         returning 1`,
        [companyId, s.suspendedAt, s.reason, s.sends, s.bounces, s.complaints, s.windowFrom],
      );
      if (rows.length === 0) return rollback(false);
      await insertAuditRow(
        client,
        companyId,
        { context: GUARD_ACTOR, action: "sending.suspended", targetType: "company", targetId: companyId, details: suspensionDetails(s) },
        s.suspendedAt,
      );
      return true;
    });
  }

  async lift(companyId: string, lift: { readonly at: Date; readonly reason: string; readonly audit: AuditContext }): Promise<"lifted" | "not_suspended"> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<GuardRow>(
        `update sending_guard g set suspended_at = null, lifted_at = $2
           from sending_guard old
          where g.company_id = $1 and old.company_id = g.company_id and g.suspended_at is not null
          returning old.suspended_at, old.reason, old.sends, old.bounces, old.complaints, old.window_from, old.lifted_at`,
        [companyId, lift.at],
      );
      const previous = rows[0] ? suspensionOf(rows[0]) : undefined;
      if (!previous) return rollback("not_suspended" as const);
      await insertAuditRow(
        client,
        companyId,
        {
          context: lift.audit,
          action: "sending.suspension_lifted",
          targetType: "company",
          targetId: companyId,
          details: { note: lift.reason, suspendedAt: previous.suspendedAt.toISOString(), ...suspensionDetails(previous) },
        },
        lift.at,
      );
      return "lifted" as const;
    });
  }

  async companyName(companyId: string): Promise<string | undefined> {
    if (!isUuid(companyId)) return undefined;
    const pool = await this.#pool();
    const { rows } = await pool.query<{ name: string }>(`select name from company where id = $1`, [companyId]);
    return rows[0]?.name;
  }
}
