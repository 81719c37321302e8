import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSendingGuard } from "../../../src/wiring/deliverability.ts";
import { crossedLine, type SuspensionNotice, suspensionEmail } from "../../../src/capabilities/deliverability/index.ts";
import { PostgresMessageStore } from "../../../src/adapters/postgres/messages/message-store.ts";
import { poolOf } from "../../../src/adapters/postgres/sql.ts";
import { OPERATOR_ACTOR } from "../../../src/capabilities/audit/types.ts";
import { PostgresSendingGuardStore } from "../../../src/adapters/postgres/deliverability/postgres-sending-guard-store.ts";
import { openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

/**
 * The sending guard over real PostgreSQL: what counts as a send, the line
 * (strictly above), the minimum of sends, one suspension however many
 * judgements race, the lift that resets the window, and the handoff's read.
 */
const LIMITS = { bouncePercent: 5, complaintPercent: 0.3, minSends: 20 };
const CONFIG = { sendingGuard: LIMITS };
const OPERATOR = { actor: OPERATOR_ACTOR, requestId: "req-1", clientIp: "203.0.113.9" };

describe("the sending guard", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });
  afterAll(async () => h?.close());

  /** `count` messages of the company in `status`, handed over `minutesAgo` (null: never handed over). */
  async function messages(companyId: string, status: string, count: number, minutesAgo: number | null = 1): Promise<void> {
    for (let n = 0; n < count; n += 1) {
      await h.db.query(
        `insert into message (id, company_id, recipient, recipient_domain, from_email, subject, status, sent_at)
         values ($1, $2, 'a@b.example', 'b.example', 'shop@s.example', 'Hi', $3,
                 case when $4::int is null then null else now() - make_interval(mins => $4::int) end)`,
        [randomUUID(), companyId, status, minutesAgo],
      );
    }
  }

  it("counts the sends of the last 24 hours: accepted by the email service, not rejected afterwards; bounces and complaints among them", async () => {
    const guard = createSendingGuard(h.orm, { config: CONFIG });
    const companyId = await h.newCompany();
    await messages(companyId, "delivered", 5);
    await messages(companyId, "sent", 2);
    await messages(companyId, "bounced", 2);
    await messages(companyId, "complained", 1);
    await messages(companyId, "rejected", 3);
    await messages(companyId, "failed", 4, null);
    await messages(companyId, "queued", 4, null);
    await messages(companyId, "bounced", 6, 25 * 60);
    const other = await h.newCompany();
    await messages(other, "bounced", 3);

    const status = await guard.status({ companyId });
    expect(status.window).toMatchObject({ sends: 10, bounces: 2, complaints: 1 });
    expect(Date.now() - status.window.from.getTime()).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(status.suspension).toBeUndefined();
  });

  it("the line is strictly above, and judged only from the minimum of sends", () => {
    expect(crossedLine({ sends: 19, bounces: 19, complaints: 0 }, LIMITS)).toBeUndefined();
    expect(crossedLine({ sends: 20, bounces: 1, complaints: 0 }, LIMITS)).toBeUndefined();
    expect(crossedLine({ sends: 200, bounces: 10, complaints: 0 }, LIMITS)).toBeUndefined();
    expect(crossedLine({ sends: 211, bounces: 11, complaints: 0 }, LIMITS)).toBe("bounce_rate");
    expect(crossedLine({ sends: 1000, bounces: 0, complaints: 3 }, LIMITS)).toBeUndefined();
    expect(crossedLine({ sends: 1000, bounces: 0, complaints: 4 }, LIMITS)).toBe("complaint_rate");
    expect(crossedLine({ sends: 1000, bounces: 60, complaints: 4 }, LIMITS)).toBe("bounce_rate");
  });

  it("racing judgements suspend once, tell the owners once, and write one audit row; the handoff then reads that the company may not send", async () => {
    const told: SuspensionNotice[] = [];
    const guard = createSendingGuard(h.orm, { config: CONFIG, alert: { sendingSuspended: async (notice) => void told.push(notice) } });
    const second = createSendingGuard(h.orm, { config: CONFIG, alert: { sendingSuspended: async (notice) => void told.push(notice) } });
    const companyId = await h.newCompany("Bouncy Shop");
    await messages(companyId, "delivered", 18);
    await messages(companyId, "bounced", 2);

    await Promise.all([
      ...Array.from({ length: 5 }, () => guard.outcomeRecorded({ companyId })),
      ...Array.from({ length: 5 }, () => second.outcomeRecorded({ companyId })),
    ]);
    expect(told).toHaveLength(1);
    expect(told[0]?.suspension).toMatchObject({ reason: "bounce_rate", sends: 20, bounces: 2, complaints: 0 });
    const email = suspensionEmail(told[0] as SuspensionNotice);
    expect(email.subject).toBe("Sending is suspended: 10 % of your emails bounced");
    expect(email.paragraphs[0]).toBe("2 of the last 20 emails of Bouncy Shop bounced: 10 %, above the limit of 5 %.");

    const audit = await h.db.query(`select actor_kind, actor, action, target_type, details from audit_event where company_id = $1`, [companyId]);
    expect(audit.rows).toEqual([
      {
        actor_kind: "system",
        actor: "sending guard",
        action: "sending.suspended",
        target_type: "company",
        details: expect.objectContaining({ reason: "bounce_rate", sends: 20, bounces: 2, bounceRate: "10" }),
      },
    ]);
    const store = new PostgresMessageStore(poolOf(h.orm));
    expect(await store.companyMaySend(companyId)).toBe(false);
  });

  it("a lift is audited with the operator's reason and resets the window: the old bounces no longer count", async () => {
    const guard = createSendingGuard(h.orm, { config: CONFIG });
    const companyId = await h.newCompany();
    await messages(companyId, "bounced", 20, 10);
    await guard.outcomeRecorded({ companyId });
    expect((await guard.status({ companyId })).suspension?.reason).toBe("bounce_rate");

    await expect(guard.lift({ companyId, reason: "  ", audit: OPERATOR })).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    await expect(guard.lift({ companyId: randomUUID(), reason: "x", audit: OPERATOR })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await guard.lift({ companyId, reason: "list cleaned", audit: OPERATOR })).toEqual({ lifted: true });
    expect(await guard.lift({ companyId, reason: "list cleaned", audit: OPERATOR })).toEqual({ lifted: false });

    const after = await guard.status({ companyId });
    expect(after.suspension).toBeUndefined();
    expect(after.window).toMatchObject({ sends: 0, bounces: 0 });
    // The next bounce judges only what was sent after the lift.
    await guard.outcomeRecorded({ companyId });
    expect((await guard.status({ companyId })).suspension).toBeUndefined();
    // A judgement that counted from before the lift (it ran while the lift was made) suspends nothing.
    const stale = { suspendedAt: new Date(), reason: "bounce_rate" as const, sends: 20, bounces: 20, complaints: 0, windowFrom: new Date(Date.now() - 3_600_000) };
    expect(await new PostgresSendingGuardStore(h.orm).suspend(companyId, stale)).toBe(false);

    const audit = await h.db.query<{ action: string }>(`select actor_kind, action, request_id, client_ip, details from audit_event where company_id = $1 order by occurred_at`, [companyId]);
    expect(audit.rows.map((row) => row.action)).toEqual(["sending.suspended", "sending.suspension_lifted"]);
    expect(audit.rows[1]).toMatchObject({ actor_kind: "operator", request_id: "req-1", client_ip: "203.0.113.9", details: { note: "list cleaned", bounces: 20 } });
  });
});
