/**
 * The sending guard's state in PostgreSQL (table `sending_guard`, one row
 * per company once it was first suspended), and the count of a company's
 * recent sends, always per company, through MikroORM: each method on its
 * own EntityManager fork.
 *
 * The count reads `message_sent_index` (company_id, sent_at) INCLUDE
 * (status): one range of the company's index entries, the status taken
 * from the index. It runs when a bounce or a complaint is recorded, never on
 * the send path.
 */
import { LockMode, raw, type EntityManager, type MikroORM } from "@mikro-orm/postgresql";
import type { AuditContext, AuditEntry } from "../../../capabilities/audit/types.ts";
import type { GuardState, SendingGuardStore, Suspension, SuspensionReason, WindowFigures } from "../../../capabilities/deliverability/ports.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import { CompanySchema, MessageSchema, SendingGuardSchema, type SendingGuard } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { formatPercent, percentOf } from "../../../capabilities/deliverability/sending-guard.ts";

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

function suspensionOf(guard: SendingGuard): Suspension | undefined {
  if (guard.suspendedAt == null || guard.reason == null || guard.windowFrom == null) return undefined;
  return {
    suspendedAt: guard.suspendedAt,
    // The column's check admits the two reasons only.
    reason: guard.reason as SuspensionReason,
    sends: guard.sends,
    bounces: guard.bounces,
    complaints: guard.complaints,
    windowFrom: guard.windowFrom,
  };
}

export class PostgresSendingGuardStore implements SendingGuardStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async state(companyId: string): Promise<GuardState> {
    if (!isUuid(companyId)) return { suspension: undefined, liftedAt: undefined };
    const guard = await this.#em().findOne(SendingGuardSchema, { company: companyId });
    if (!guard) return { suspension: undefined, liftedAt: undefined };
    return { suspension: suspensionOf(guard), liftedAt: guard.liftedAt ?? undefined };
  }

  async windowFigures(companyId: string, from: Date): Promise<WindowFigures> {
    if (!isUuid(companyId)) return { sends: 0, bounces: 0, complaints: 0 };
    // One statement: the filters through the ORM (`sent_at is not null` is the index's predicate), the three
    // counts as raw FILTER aggregates, which the query builder has no words for.
    // A message the email service rejected after accepting it was not sent (its credit came back).
    const row = await this.#em()
      .createQueryBuilder(MessageSchema)
      .select([
        raw(`count(*) filter (where status <> 'rejected')::int as sends`),
        raw(`count(*) filter (where status = 'bounced')::int as bounces`),
        raw(`count(*) filter (where status = 'complained')::int as complaints`),
      ])
      .where({ company: companyId, sentAt: { $gte: from, $ne: null } })
      .execute<WindowFigures | undefined>("get", false);
    return { sends: row?.sends ?? 0, bounces: row?.bounces ?? 0, complaints: row?.complaints ?? 0 };
  }

  /** A judgement that counted from before a lift made meanwhile (its window is stale) suspends nothing. */
  async suspend(companyId: string, s: Suspension): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    return this.#em().transactional(async (em) => {
      // The row exists from here on (a no-op once the company was first suspended); it is only ever committed
      // together with the suspension below, which cannot fail on a row this transaction inserted.
      await em.createQueryBuilder(SendingGuardSchema).insert({ company: companyId }).onConflict("company").ignore().execute("run");
      // A conditional update rather than a read and a write: racing judgements queue on the row's lock and
      // each re-checks the condition on the newest version, so exactly one of them suspends.
      const suspended = await em.nativeUpdate(
        SendingGuardSchema,
        { company: companyId, suspendedAt: null, $or: [{ liftedAt: null }, { liftedAt: { $lte: s.windowFrom } }] },
        { suspendedAt: s.suspendedAt, reason: s.reason, sends: s.sends, bounces: s.bounces, complaints: s.complaints, windowFrom: s.windowFrom },
      );
      if (suspended === 0) return false;
      persistAuditRow(em, companyId, {
        context: GUARD_ACTOR,
        action: "sending.suspended",
        targetType: "company",
        targetId: companyId,
        details: suspensionDetails(s),
      }, s.suspendedAt);
      await em.flush();
      return true;
    });
  }

  async lift(companyId: string, lift: { readonly at: Date; readonly reason: string; readonly audit: AuditContext }): Promise<"lifted" | "not_suspended"> {
    if (!isUuid(companyId)) return "not_suspended";
    return this.#em().transactional(async (em) => {
      // Locked (FOR UPDATE) while suspended: a concurrent lift waits, then finds the row lifted and reads nothing.
      const guard = await em.findOne(SendingGuardSchema, { company: companyId, suspendedAt: { $ne: null } }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const previous = guard ? suspensionOf(guard) : undefined;
      if (!guard || !previous) return "not_suspended" as const;
      guard.suspendedAt = null;
      guard.liftedAt = lift.at;
      persistAuditRow(em, companyId, {
        context: lift.audit,
        action: "sending.suspension_lifted",
        targetType: "company",
        targetId: companyId,
        details: { note: lift.reason, suspendedAt: previous.suspendedAt.toISOString(), ...suspensionDetails(previous) },
      }, lift.at);
      await em.flush();
      return "lifted" as const;
    });
  }

  async companyName(companyId: string): Promise<string | undefined> {
    if (!isUuid(companyId)) return undefined;
    const company = await this.#em().findOne(CompanySchema, { id: companyId }, { fields: ["name"] });
    return company?.name;
  }

  /** A fresh EntityManager per operation. */
  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}
