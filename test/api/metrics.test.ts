import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * GET /metrics on the operator listener: Prometheus text whose counters
 * move with the requests of every door, and the gauges read from the
 * database at scrape time.
 */
describe("GET /metrics", () => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    // A small budget, to see rate-limit rejections.
    h = await startApiHarness({ requestsPerMinute: 6 });
    ({ secret } = await h.newCompanyWithKey(["mail.events.read"]));
  });
  afterAll(async () => h?.close());

  async function scrape(): Promise<string> {
    const response = await fetch(new URL("/metrics", h.app.operatorUrl));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    return response.text();
  }

  /** The value of the sample whose name and labels are given (0 when absent). */
  function sample(text: string, name: string, labels: Record<string, string>): number {
    for (const line of text.split("\n")) {
      if (!line.startsWith(`${name}{`)) continue;
      const labelText = line.slice(name.length + 1, line.lastIndexOf("}"));
      const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return 0;
  }

  it("counts requests by door, route and status, RPCs by code, and reads the gauges at scrape time", async () => {
    const before = await scrape();
    const auth = { headers: { authorization: `Bearer ${secret}` } };

    expect((await h.fetch("/mail/v1/me", bearer(secret))).status).toBe(200);
    expect((await h.fetch("/mail/v1/me", bearer("tml_unknown00000000000000000000000000000000000"))).status).toBe(401);
    await createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl })).getAccount({}, auth);
    await createClient(MailService, createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" })).getAccount({}, auth);
    await createClient(MailService, createGrpcWebTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" })).getAccount({}, auth);
    // 4 of the budget of 6 are spent: 2 more answer 200, then 429.
    for (let i = 0; i < 4; i++) await h.fetch("/mail/v1/me", bearer(secret));

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);

    expect(moved("mail_http_requests_total", { listener: "public", door: "rest", route: "/mail/v1/me", status: "200" })).toBe(3);
    expect(moved("mail_http_requests_total", { listener: "public", door: "rest", route: "/mail/v1/me", status: "401" })).toBe(1);
    expect(moved("mail_http_requests_total", { listener: "public", door: "rest", route: "/mail/v1/me", status: "429" })).toBe(2);
    expect(moved("mail_http_requests_total", { door: "grpc", route: "/mail.v1.MailService/GetAccount" })).toBe(1);
    expect(moved("mail_http_requests_total", { door: "connect", route: "/mail.v1.MailService/GetAccount" })).toBe(1);
    expect(moved("mail_http_requests_total", { door: "grpc-web", route: "/mail.v1.MailService/GetAccount" })).toBe(1);
    expect(moved("mail_http_request_duration_seconds_count", { door: "rest", route: "/mail/v1/me" })).toBe(6);

    const rpc = "mail.v1.MailService/GetAccount";
    expect(moved("mail_rpc_requests_total", { door: "grpc", rpc, code: "ok" })).toBe(1);
    expect(moved("mail_rpc_requests_total", { door: "rest", rpc, code: "ok" })).toBe(3);
    expect(moved("mail_rpc_requests_total", { door: "rest", rpc, code: "Unauthenticated" })).toBe(1);
    expect(moved("mail_rpc_requests_total", { door: "rest", rpc, code: "ResourceExhausted" })).toBe(2);

    // Gauges and process metrics.
    expect(after).toMatch(/^mail_db_pool_connections\{state="max"\} 10$/m);
    expect(after).toMatch(/^mail_db_pool_connections\{state="total"\} \d+$/m);
    expect(after).toMatch(/^# TYPE mail_messages gauge$/m);
    expect(after).toMatch(/^# TYPE mail_webhook_deliveries gauge$/m);
    expect(after).toMatch(/^# TYPE mail_webhook_attempts gauge$/m);
    expect(after).toMatch(/^process_cpu_seconds_total \S+$/m);
  });

  it("shows messages by status, read from the database", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.events.read"], "Gauge Co");
    await h.db.query(
      `insert into message (id, company_id, recipient, recipient_domain, from_email, subject, status)
       values (gen_random_uuid(), $1, 'a@example.com', 'example.com', 'from@example.com', 's', 'queued'),
              (gen_random_uuid(), $1, 'b@example.com', 'example.com', 'from@example.com', 's', 'queued')`,
      [companyId],
    );
    expect(sample(await scrape(), "mail_messages", { status: "queued" })).toBe(2);
  });

  it("observes the time from acceptance to handoff of messages sent since the previous scrape", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.events.read"], "Handoff Co");
    const before = await scrape();
    await h.db.query(
      `with sent as (
         insert into message (id, company_id, recipient, recipient_domain, from_email, subject, status, created_at, sent_at)
         values (gen_random_uuid(), $1, 'c@example.com', 'example.com', 'from@example.com', 's', 'sent', now() - interval '3 seconds', now())
         returning id, created_at
       )
       insert into message_event (message_id, company_id, type, at)
       select id, $1, 'sent', created_at + interval '3 seconds' from sent`,
      [companyId],
    );
    const after = await scrape();
    const count = (text: string) => Number(/^mail_message_handoff_seconds_count (\S+)$/m.exec(text)?.[1] ?? "0");
    const within = (text: string) => Number(/^mail_message_handoff_seconds_bucket\{le="5"\} (\S+)$/m.exec(text)?.[1] ?? "0");
    const under = (text: string) => Number(/^mail_message_handoff_seconds_bucket\{le="2.5"\} (\S+)$/m.exec(text)?.[1] ?? "0");
    expect(count(after) - count(before)).toBe(1);
    expect(within(after) - within(before)).toBe(1);
    expect(under(after) - under(before)).toBe(0);
  });
});
