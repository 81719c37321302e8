import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { SuppressionReason, SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";

interface LedgerRow {
  reason: string;
  delta: string;
}

describe("the message lifecycle through Temporal and the simulator", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await startSendingHarness();
  });
  afterAll(async () => h?.close());

  async function ledger(messageId: string): Promise<LedgerRow[]> {
    return (await h.db.query<LedgerRow>(`select reason, delta::text from credit_ledger where message_id = $1 order by id`, [messageId])).rows;
  }

  async function balance(companyId: string): Promise<number> {
    const { rows } = await h.db.query<{ balance: string }>(`select balance::text from credit_wallet where company_id = $1`, [companyId]);
    return Number(rows[0]?.balance ?? 0);
  }

  it("queued -> sent -> delivered, with events, one charge and webhook events tied by the message id", async () => {
    const s = await h.readySender({ credits: 5 });
    const response = await h.send(s.secret, { to: { email: "delivered@customer.example", name: "Ada" }, subject: "Your receipt", html: "<p>Thanks</p>", tags: { kind: "receipt" } });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; status: string; replayed: boolean };
    expect(accepted).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "queued", replayed: false });

    const message = await h.waitForMessage(s.secret, accepted.id, (m) => m.status === "delivered");
    expect(message.recipient).toBe("delivered@customer.example");
    expect(message.subject).toBe("Your receipt");
    expect(message.providerMessageId).toMatch(/^sim_/);
    expect(message.errorCode).toBeNull();
    expect(message.sentAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(message.createdAt).toMatch(/\.\d{3}Z$/);
    expect(message.events.map((e) => e.type)).toEqual(["sent", "delivery"]);
    expect(message.lastEventAt).toBe(message.events[1]?.at);
    expect(message.tags).toEqual({ kind: "receipt" });

    expect(await ledger(accepted.id)).toEqual([{ reason: "charge", delta: "-1" }]);
    expect(await balance(s.companyId)).toBe(4);

    const webhooks = await h.db.query<{ event: string; data: { messageId: string; email: string; providerMessageId?: string } }>(
      `select event, data from webhook_event where company_id = $1 order by occurred_at, event`,
      [s.companyId],
    );
    expect(webhooks.rows.map((r) => r.event).sort()).toEqual(["delivered", "message.accepted", "sent"]);
    for (const row of webhooks.rows) {
      expect(row.data.messageId).toBe(accepted.id);
      expect(row.data.email).toBe("delivered@customer.example");
    }
    expect(webhooks.rows.find((r) => r.event === "message.accepted")?.data.providerMessageId).toBe(message.providerMessageId);
  });

  it("a bounce suppresses the address: later sends end `suppressed` without using a credit", async () => {
    const s = await h.readySender({ credits: 5 });
    const first = (await (await h.send(s.secret, { to: "bounce@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    const bounced = await h.waitForMessage(s.secret, first.id, (m) => m.status === "bounced");
    expect(bounced.events.map((e) => e.type)).toEqual(["sent", "bounce"]);
    // A bounce after acceptance does not return the credit.
    expect(await ledger(first.id)).toEqual([{ reason: "charge", delta: "-1" }]);

    const suppressions = await h.forCompany(SuppressionsService, s.companyId).listSuppressions({});
    expect(suppressions.items.map((x) => [x.email, x.reason])).toEqual([["bounce@customer.example", SuppressionReason.BOUNCE]]);

    const second = (await (await h.send(s.secret, { to: "bounce@customer.example", subject: "Again", html: "<p>x</p>" })).json()) as { id: string };
    const suppressed = await h.waitForMessage(s.secret, second.id, (m) => m.status === "suppressed");
    expect(suppressed.errorCode).toBe("SUPPRESSED");
    expect(await ledger(second.id)).toEqual([]);
    expect(await balance(s.companyId)).toBe(4);

    const failed = await h.db.query<{ data: { error: string } }>(
      `select data from webhook_event where company_id = $1 and event = 'failed' and data->>'messageId' = $2`,
      [s.companyId, second.id],
    );
    expect(failed.rows[0]?.data.error).toBe("SUPPRESSED");

    // Another company's suppressions are its own.
    const other = await h.readySender({ credits: 1 });
    const elsewhere = (await (await h.send(other.secret, { to: "bounce@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    expect((await h.waitForMessage(other.secret, elsewhere.id, (m) => m.status === "bounced")).errorCode).toBeNull();
  });

  it("a complaint suppresses the address too", async () => {
    const s = await h.readySender({ credits: 2 });
    const { id } = (await (await h.send(s.secret, { to: "complaint@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "complained");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "delivery", "complaint"]);
    const suppressions = await h.forCompany(SuppressionsService, s.companyId).listSuppressions({});
    expect(suppressions.items[0]?.reason).toBe(SuppressionReason.COMPLAINT);
  });

  it("a permanent rejection by the email service returns the credit", async () => {
    const s = await h.readySender({ credits: 3 });
    const { id } = (await (await h.send(s.secret, { to: "reject@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "rejected");
    expect(message.events.map((e) => e.type)).toEqual(["reject"]);
    expect(await ledger(id)).toEqual([
      { reason: "charge", delta: "-1" },
      { reason: "refund", delta: "1" },
    ]);
    expect(await balance(s.companyId)).toBe(3);
  });

  it("a transient failure is retried and charged once", async () => {
    const s = await h.readySender({ credits: 3 });
    const { id } = (await (await h.send(s.secret, { to: "transient@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    await h.waitForMessage(s.secret, id, (m) => m.status === "delivered");
    expect(await ledger(id)).toEqual([{ reason: "charge", delta: "-1" }]);
    const handoffs = await h.db.query(`select 1 from simulator_handoff where message_id = $1`, [id]);
    expect(handoffs.rowCount).toBe(1);
  });

  it("operators find the message's workflow in Temporal by company, status and recipient domain", async () => {
    const s = await h.readySender({ credits: 2 });
    const { id } = (await (await h.send(s.secret, { to: "delivered@findme.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    await h.waitForMessage(s.secret, id, (m) => m.status === "delivered");
    const connection = await Connection.connect({ address: h.temporal.address });
    try {
      const client = new Client({ connection });
      // The workflow ends at the handoff: MailStatus is where the sending lifecycle ended.
      const query = `MailCompanyId = "${s.companyId}" AND MailRecipientDomain = "findme.example" AND MailStatus = "sent"`;
      let found: string[] = [];
      for (let i = 0; i < 50 && found.length === 0; i++) {
        found = [];
        for await (const wf of client.workflow.list({ query })) found.push(wf.workflowId);
        if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
      }
      expect(found).toEqual([`message-${id}`]);
    } finally {
      await connection.close();
    }
  });

  it("a message waiting for the sending pace is visibly deferred, and credits gone before handoff fail it", async () => {
    const slow = await startSendingHarness({ sendingRatePerSecond: 0.5, sendingBurst: 1 }, h.temporal);
    try {
      const s = await slow.readySender({ credits: 1 });
      const ids: string[] = [];
      for (const to of ["delivered@a.example", "delivered@b.example"]) {
        ids.push(((await (await slow.send(s.secret, { to, subject: "Pace", html: "<p>x</p>" })).json()) as { id: string }).id);
      }
      // One token in the bucket: one message goes now, the other waits as `deferred`.
      const settled = await Promise.all(
        ids.map((id) => slow.waitForMessage(s.secret, id, (m) => ["delivered", "failed"].includes(m.status), 20_000)),
      );
      const delivered = settled.filter((m) => m.status === "delivered");
      const failed = settled.filter((m) => m.status === "failed");
      expect(delivered).toHaveLength(1);
      expect(failed).toHaveLength(1);
      // The one that waited was visibly deferred, then found the only credit gone.
      expect(failed[0]?.events.map((e) => e.type)).toEqual(["deferred", "failed"]);
      expect(failed[0]?.errorCode).toBe("MAIL_CREDITS_EXHAUSTED");
      expect((await slow.db.query(`select 1 from credit_ledger where message_id = $1`, [failed[0]?.id])).rowCount).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it("reads the message log newest first with filters", async () => {
    const s = await h.readySender({ credits: 5 });
    const ids: string[] = [];
    for (const to of ["delivered@one.example", "delivered@two.example", "reject@three.example"]) {
      ids.push(((await (await h.send(s.secret, { to, subject: `Order for ${to}`, html: "<p>x</p>", tags: { order: "1" } })).json()) as { id: string }).id);
    }
    await h.waitForMessage(s.secret, ids[2] as string, (m) => m.status === "rejected");
    const page = (await (await h.fetch("/mail/v1/messages?limit=2", bearer(s.secret))).json()) as { items: Array<{ id: string }>; nextCursor: string | null };
    expect(page.items.map((m) => m.id)).toEqual([ids[2], ids[1]]);
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = (await (await h.fetch(`/mail/v1/messages?limit=2&cursor=${encodeURIComponent(page.nextCursor ?? "")}`, bearer(s.secret))).json()) as { items: Array<{ id: string }>; nextCursor: string | null };
    expect(next.items.map((m) => m.id)).toEqual([ids[0]]);
    expect(next.nextCursor).toBeNull();
    const rejected = (await (await h.fetch("/mail/v1/messages?status=rejected", bearer(s.secret))).json()) as { items: Array<{ id: string }> };
    expect(rejected.items.map((m) => m.id)).toEqual([ids[2]]);
    const q = (await (await h.fetch("/mail/v1/messages?q=two.example", bearer(s.secret))).json()) as { items: Array<{ id: string }> };
    expect(q.items.map((m) => m.id)).toEqual([ids[1]]);
    const tag = (await (await h.fetch("/mail/v1/messages?tag=order", bearer(s.secret))).json()) as { items: unknown[] };
    expect(tag.items).toHaveLength(3);
    const noTag = (await (await h.fetch("/mail/v1/messages?tag=nope", bearer(s.secret))).json()) as { items: unknown[] };
    expect(noTag.items).toHaveLength(0);

    // Another company sees none of them.
    const other = await h.readySender({ credits: 0 });
    const foreign = await h.fetch(`/mail/v1/messages/${ids[0]}`, bearer(other.secret));
    expect(foreign.status).toBe(404);
    const otherLog = (await (await h.fetch("/mail/v1/messages", bearer(other.secret))).json()) as { items: unknown[] };
    expect(otherLog.items).toEqual([]);
    const foreignCursor = await h.fetch(`/mail/v1/messages?cursor=${encodeURIComponent(page.nextCursor ?? "")}`, bearer(other.secret));
    expect(foreignCursor.status).toBe(400);
  });
});
