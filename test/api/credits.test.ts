import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreditLedgerReason, CreditsService } from "../../src/gen/mail/v1/credits_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { type Browser, newCompany, reasonOf, signedIn } from "./members-support.ts";

/**
 * The company reads its Mail credits (CreditsService: /mail/v1/credits and
 * /mail/v1/credits/ledger, and the balance on GET /mail/v1/me) over REST
 * and gRPC with API keys, and through the session door for every role.
 * Credits change only by the operator (AdjustCredits) and the send path.
 */

interface LedgerJson {
  id: string;
  delta: string;
  reason: string;
  messageId: string | null;
  note: string;
  createdAt: string;
}

interface ErrorJson {
  error: { code: string; message: string };
}

describe("the company's credits (CreditsService, /mail/v1/credits)", () => {
  let h: ApiHarness;
  let companyId: string;
  let reader: { secret: string };
  let member: Browser;
  const charged = [randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    // A low-balance mark of 10: the company below ends at 8.
    h = await startApiHarness({ trustProxy: true, lowCreditsThreshold: 10 });
    companyId = await newCompany(h, "Credits Co");
    reader = await h.newKey(companyId, ["mail.events.read"], "reader");
    member = await signedIn(h, companyId, "member@credits.example", "member");
    await h.admin.adjustCredits({ companyId, amount: 12n, note: "invoice 42" });
    await h.admin.adjustCredits({ companyId, amount: -2n, note: "correction" });
    for (const messageId of charged) await h.app.credits.chargeForMessage({ companyId, messageId });
    await h.app.credits.refundMessage({ companyId, messageId: charged[0] ?? "" });
  });
  afterAll(async () => h?.close());

  it("answers the balance, the low-balance mark and whether it is low, over REST, gRPC and the session door", async () => {
    const rest = await h.fetch("/mail/v1/credits", bearer(reader.secret));
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual({ balance: "8", lowBalanceThreshold: "10", low: true });
    const grpc = await createClient(CreditsService, createGrpcTransport({ baseUrl: h.app.grpcUrl })).getCredits({}, { headers: { authorization: `Bearer ${reader.secret}` } });
    expect(grpc).toMatchObject({ balance: 8n, lowBalanceThreshold: 10n, low: true });
    const session = await member.call("mail.v1.CreditsService", "GetCredits");
    expect(session.status).toBe(200);
    expect(session.body).toEqual({ balance: "8", lowBalanceThreshold: "10", low: true });
  });

  it("GET /mail/v1/me shows the balance, for a key and for a member's session; the spec's fields stay as they are", async () => {
    const me = (await (await h.fetch("/mail/v1/me", bearer(reader.secret))).json()) as Record<string, unknown>;
    expect(me.credits).toEqual({ balance: "8" });
    expect(Object.keys(me).sort()).toEqual(["apiVersion", "credits", "entitlements", "key", "limits", "organization"]);
    expect(me.organization).toEqual({ id: companyId, name: "Credits Co" });
    const session = await member.call("mail.v1.MailService", "GetAccount");
    expect(session.body.credits).toEqual({ balance: "8" });
    // A company that never had credits: 0.
    const fresh = await h.newCompanyWithKey(["mail.events.read"], "Fresh Co");
    expect(((await (await h.fetch("/mail/v1/me", bearer(fresh.secret))).json()) as { credits: unknown }).credits).toEqual({ balance: "0" });
  });

  it("lists the ledger newest first with the message or note behind each entry, by reason, a page at a time", async () => {
    const rest = await h.fetch("/mail/v1/credits/ledger", bearer(reader.secret));
    expect(rest.status).toBe(200);
    const page = (await rest.json()) as { items: LedgerJson[]; nextCursor: string | null };
    expect(page.items.map(({ delta, reason, messageId, note }) => ({ delta, reason, messageId, note }))).toEqual([
      { delta: "1", reason: "refund", messageId: charged[0], note: "" },
      { delta: "-1", reason: "charge", messageId: charged[2], note: "" },
      { delta: "-1", reason: "charge", messageId: charged[1], note: "" },
      { delta: "-1", reason: "charge", messageId: charged[0], note: "" },
      { delta: "-2", reason: "adjustment", messageId: null, note: "correction" },
      { delta: "12", reason: "grant", messageId: null, note: "invoice 42" },
    ]);
    expect(page.nextCursor).toBeNull();
    expect(page.items[0]?.id).toMatch(/^\d+$/);

    const seen: string[] = [];
    let cursor = "";
    for (;;) {
      const response = await h.fetch(`/mail/v1/credits/ledger?reason=charge&limit=2${cursor ? `&cursor=${cursor}` : ""}`, bearer(reader.secret));
      const body = (await response.json()) as { items: LedgerJson[]; nextCursor: string | null };
      seen.push(...body.items.map((e) => e.messageId ?? ""));
      if (!body.nextCursor) break;
      cursor = body.nextCursor;
      const otherFilter = await h.fetch(`/mail/v1/credits/ledger?reason=grant&limit=2&cursor=${cursor}`, bearer(reader.secret));
      expect(otherFilter.status).toBe(400);
    }
    expect(seen).toEqual([charged[2], charged[1], charged[0]]);

    const grpc = await createClient(CreditsService, createGrpcTransport({ baseUrl: h.app.grpcUrl })).listCreditLedger(
      { reason: CreditLedgerReason.GRANT },
      { headers: { authorization: `Bearer ${reader.secret}` } },
    );
    expect(grpc.items.map((e) => [e.delta, e.note])).toEqual([[12n, "invoice 42"]]);
    const session = await member.call("mail.v1.CreditsService", "ListCreditLedger", { reason: "CREDIT_LEDGER_REASON_ADJUSTMENT" });
    expect((session.body.items as LedgerJson[]).map((e) => e.note)).toEqual(["correction"]);
  });

  it("every company reads its own credits only; another's cursor is refused", async () => {
    const other = await h.newCompanyWithKey(["mail.events.read"], "Other Co");
    await h.admin.adjustCredits({ companyId: other.companyId, amount: 500n, note: "theirs" });
    expect(await (await h.fetch("/mail/v1/credits", bearer(other.secret))).json()).toEqual({ balance: "500", lowBalanceThreshold: "10", low: false });
    const theirs = (await (await h.fetch("/mail/v1/credits/ledger", bearer(other.secret))).json()) as { items: LedgerJson[] };
    expect(theirs.items.map((e) => e.note)).toEqual(["theirs"]);
    const mine = (await (await h.fetch("/mail/v1/credits/ledger?limit=1", bearer(reader.secret))).json()) as { items: LedgerJson[]; nextCursor: string };
    expect(mine.items.map((e) => e.note)).not.toContain("theirs");
    const borrowed = await h.fetch(`/mail/v1/credits/ledger?limit=1&cursor=${mine.nextCursor}`, bearer(other.secret));
    expect(borrowed.status).toBe(400);
    expect(((await borrowed.json()) as ErrorJson).error.message).toMatch(/^cursor: /);
  });

  it("needs mail.events.read: a sending key is refused (403); members and admins read; nobody changes credits here", async () => {
    const sender = await h.newKey(companyId, ["mail.transactional.send"], "sender");
    for (const url of ["/mail/v1/credits", "/mail/v1/credits/ledger"]) {
      const refused = await h.fetch(url, bearer(sender.secret));
      expect(refused.status, url).toBe(403);
      expect(((await refused.json()) as ErrorJson).error.code).toBe("FORBIDDEN");
    }
    const error = await createClient(CreditsService, createGrpcTransport({ baseUrl: h.app.grpcUrl }))
      .getCredits({}, { headers: { authorization: `Bearer ${sender.secret}` } })
      .catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.PermissionDenied);
    const admin = await signedIn(h, companyId, "admin@credits.example", "admin");
    expect((await admin.call("mail.v1.CreditsService", "GetCredits")).status).toBe(200);
    // The contract has no way to change credits but the operator's AdjustCredits.
    const posted = await h.fetch("/mail/v1/credits", { method: "POST", headers: { authorization: `Bearer ${reader.secret}`, "content-type": "application/json" }, body: "{}" });
    expect(posted.status).toBe(404);
    const adjust = await member.call("mail.v1.AdminService", "AdjustCredits", { companyId, amount: "1000", note: "free" });
    expect(adjust.status).not.toBe(200);
  });

  it("bad input answers 400 VALIDATION_ERROR naming the field", async () => {
    for (const [url, field] of [
      ["/mail/v1/credits/ledger?limit=101", "limit"],
      ["/mail/v1/credits/ledger?reason=gift", "reason"],
      ["/mail/v1/credits/ledger?cursor=forged", "cursor"],
      ["/mail/v1/credits?balance=1000", "balance"],
    ] as const) {
      const response = await h.fetch(url, bearer(reader.secret));
      expect(response.status, url).toBe(400);
      const body = (await response.json()) as ErrorJson;
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.message, url).toMatch(new RegExp(`\\b${field}\\b`));
    }
    const session = await member.call("mail.v1.CreditsService", "ListCreditLedger", { limit: 0 });
    expect(session.status).toBe(400);
    expect(reasonOf(session)).toBe("VALIDATION_ERROR");
  });
});
