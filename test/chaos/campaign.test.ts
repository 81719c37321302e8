import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignsService } from "../../src/gen/mail/v1/campaigns_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { operatorClient } from "../support/api-harness.ts";
import { type SinkTransaction, type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts";
import { copiesByMessageId, inFlightAt, type Kill, killInTransaction, type RelayWorkers, takeovers } from "./relay-kills.ts";
import { ServiceChild } from "./service-child.ts";
import { type ChaosStack, createSendingCompany, queryOnce, startChaosStack } from "./stack.ts";

/**
 * The campaign chaos run (`npm run test:chaos`, docs/chaos.md): a campaign
 * to RECIPIENTS subscribed contacts through EMAIL_PROVIDER=smtp, counted
 * where the mail arrives (test/support/smtp-sink.ts keeps every message
 * with its Message-ID, which is the recipient's id).
 *
 * An API process and two worker processes (each with its own EHLO name).
 * The sink answers every SLOW_EVERY-th message SLOW_MS after its final
 * "."; twice, the worker that has such a transaction open is SIGKILLed in
 * the middle of it and started again a second later, and between the two
 * the API process is SIGKILLed and started again. The campaign's batch
 * activity is taken over by the other worker once its heartbeat times out.
 *
 * Nobody may be skipped, and a second copy is allowed only for a copy
 * whose transaction was in flight at a kill (as in the relay run: SMTP
 * cannot tell a sender that died before reading the 250 whether the relay
 * has it). The counters add up to the audience, `campaign.sent` is
 * recorded once, and one credit is charged per recipient.
 */

const RECIPIENTS = 2_000;
const CREDITS = RECIPIENTS + 100;
const MESSAGE_ID_DOMAIN = "campaign.chaos.example";
const SLOW_EVERY = 50;
const SLOW_MS = 1_500;
const SETTLE_TIMEOUT_MS = 600_000;
const WORKERS = ["worker-a", "worker-b"] as const;

let stack: ChaosStack;
let keep = false;
let sink: SmtpSink;
let api: ServiceChild;
const workers = new Map<string, ServiceChild>();
const started = Date.now();

const note = (what: string): void => stack.note(what);
const ehloOf = (worker: string): string => `${worker}.campaign-chaos.example`;

function assertChildrenAlive(): void {
  for (const child of [api, ...workers.values()]) {
    if (child.unexpectedExits.length > 0) throw new Error(`${child.name} exited on its own (${child.unexpectedExits.join(", ")}); log: ${child.logFile}`);
  }
}

const relay = (): RelayWorkers => ({ sink, workers, ehloOf, slowMs: SLOW_MS, assertAlive: assertChildrenAlive });

/** Recipients whose copy is settled (anything but `waiting`). */
async function settled(campaignId: string): Promise<number> {
  const rows = await queryOnce<{ n: number }>(stack.postgres, `select count(*)::int as n from campaign_recipient where campaign_id = $1 and outcome <> 'waiting'`, [campaignId]);
  return rows?.[0]?.n ?? 0;
}

async function waitForSettled(campaignId: string, what: string, count: number): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    assertChildrenAlive();
    const now = await settled(campaignId);
    if (now >= count) return note(`${what}: ${now} recipients settled`);
    if (Date.now() > deadline) throw new Error(`${what}: fewer than ${count} recipients settled within 180 s (${now}); logs: ${stack.root}`);
    await sleep(250);
  }
}

beforeAll(async () => {
  stack = await startChaosStack("campaign-chaos");
  sink = await startSmtpSink({ slowEvery: SLOW_EVERY, slowMs: SLOW_MS });
  [stack.postgres, stack.temporal] = await Promise.all([stack.startPostgres(), stack.startTemporal()]);
  note(`PostgreSQL on ${stack.ports.pg}, Temporal on ${stack.ports.temporal}, SMTP sink on ${sink.port}; logs in ${stack.root}`);
  const env: NodeJS.ProcessEnv = {
    ...stack.serviceEnv(),
    EMAIL_PROVIDER: "smtp",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(sink.port),
    MESSAGE_ID_DOMAIN,
    HANDOFF_TIMEOUT_SECONDS: "20",
  };
  api = new ServiceChild("api", { env, caFile: stack.caFile, logDir: stack.root });
  for (const name of WORKERS) workers.set(name, new ServiceChild("worker", { env: { ...env, SMTP_EHLO_NAME: ehloOf(name) }, caFile: stack.caFile, logDir: stack.root, name }));
  await Promise.all([api.start(), ...[...workers.values()].map((w) => w.start())]);
  note("API and two worker processes ready");
}, 300_000);

afterAll(async () => {
  await api?.close();
  for (const worker of workers.values()) await worker.close();
  await sink?.close();
  await stack?.close(keep);
}, 120_000);

describe("campaign chaos: workers killed in the middle of a campaign's SMTP transactions", () => {
  it("every recipient's copy reaches the relay, a second copy only for a transaction in flight at a kill, and the counters add up", async () => {
    keep = true;
    const { companyId } = await createSendingCompany(stack.ports.operator, CREDITS);
    const operator = `http://127.0.0.1:${stack.ports.operator}`;
    const { list } = await operatorClient(operator, ListsService, companyId).createContactList({ name: "Everyone" });
    const inserted = await queryOnce<{ n: number }>(
      stack.postgres,
      `with made as (
         insert into contact (company_id, email, email_normalized, status)
         select $1, 'reader-' || i || '@customer.example', 'reader-' || i || '@customer.example', 'subscribed' from generate_series(1, $2) as i
         returning id),
       listed as (insert into contact_list_member (company_id, list_id, contact_id) select $1, $3, id from made returning 1)
       select count(*)::int as n from listed`,
      [companyId, RECIPIENTS, list?.id ?? ""],
    );
    expect(inserted?.[0]?.n).toBe(RECIPIENTS);
    const campaigns = operatorClient(operator, CampaignsService, companyId);
    const { campaign } = await campaigns.createCampaign({
      name: "Chaos",
      audience: { listIds: [list?.id ?? ""] },
      content: { subject: "News for {{ email }}", html: "<p>Hello</p>", text: "Hello" },
      trackOpens: false,
      trackClicks: false,
    });
    const campaignId = campaign?.id ?? "";
    await campaigns.scheduleCampaign({ id: campaignId });
    note(`campaign ${campaignId} to ${RECIPIENTS} recipients: sending now`);
    await waitForSettled(campaignId, "warm-up", 100);

    const kills: Kill[] = [];
    for (const [i, prefer] of WORKERS.entries()) {
      const kill = await killInTransaction(relay(), prefer, kills);
      kills.push(kill);
      note(`${kill.worker}: SIGKILL with ${kill.open.length} SMTP transaction(s) unanswered (${kill.open.filter((t) => t.slow).length} held by the sink)`);
      await sleep(1_000);
      await workers.get(kill.worker)?.start();
      note(`${kill.worker}: started again`);
      await waitForSettled(campaignId, `after ${kill.worker}'s kill`, (i + 2) * 300);
      if (i === 0) {
        // The API process too: it only scheduled the campaign, which goes on in the workers meanwhile.
        const before = await settled(campaignId);
        await api.kill();
        note(`api: SIGKILL with ${before} recipients settled`);
        await sleep(1_000);
        await api.start();
        note("api: started again");
      }
    }

    const settleBy = Date.now() + SETTLE_TIMEOUT_MS;
    let state = "";
    while (state !== "sent" && Date.now() < settleBy) {
      assertChildrenAlive();
      state = (await queryOnce<{ state: string }>(stack.postgres, `select state from campaign where id = $1`, [campaignId]))?.[0]?.state ?? state;
      if (state !== "sent") await sleep(500);
    }
    note(state === "sent" ? "campaign sent" : `not finished: the campaign is ${state}`);

    // --- The books, at the sink.
    const outcomes = (await queryOnce<{ id: string; outcome: string }>(stack.postgres, `select id, outcome from campaign_recipient where campaign_id = $1`, [campaignId])) ?? [];
    const byOutcome = new Map<string, number>();
    for (const r of outcomes) byOutcome.set(r.outcome, (byOutcome.get(r.outcome) ?? 0) + 1);
    const expected = new Set(outcomes.map((r) => `${r.id}@${MESSAGE_ID_DOMAIN}`));
    const copies = copiesByMessageId(sink);
    const problems: string[] = [];
    const lost = [...expected].filter((id) => !copies.has(id));
    if (lost.length > 0) problems.push(`recipients whose copy never reached the relay: ${lost.slice(0, 5).join(", ")} (${lost.length})`);
    const unasked = [...copies.keys()].filter((id) => !expected.has(id));
    if (unasked.length > 0) problems.push(`messages at the relay nobody asked for: ${unasked.slice(0, 5).join(", ")} (${unasked.length})`);
    const twice = [...copies.entries()].filter(([, list]) => list.length > 1);
    const explained: string[] = [];
    for (const [messageId, list] of twice) {
      const first = list[0] as SinkTransaction;
      if (inFlightAt(kills, ehloOf, first)) explained.push(messageId);
      else problems.push(`${messageId} received ${list.length} times; its first copy was not in flight at a kill (${first.client})`);
    }
    const summary = await queryOnce<{ n: number }>(stack.postgres, `select count(*)::int as n from webhook_event where company_id = $1 and event = 'campaign.sent'`, [companyId]);
    const charges = await queryOnce<{ n: number; messages: number }>(
      stack.postgres,
      `select count(*)::int as n, count(distinct message_id)::int as messages from credit_ledger where company_id = $1 and reason = 'charge'`,
      [companyId],
    );

    const counts: Record<string, string | number> = {
      recipients: outcomes.length,
      "outcomes": [...byOutcome.entries()].map(([k, v]) => `${k} ${v}`).join(", "),
      "SMTP transactions at the sink": sink.transactions.length,
      "distinct Message-IDs at the sink": copies.size,
      "recipients never received": lost.length,
      "received twice or more": twice.length,
      "  of which in flight at a kill": explained.length,
      "transactions open at the kills": kills.map((k) => `${k.worker} ${k.open.length}`).join(", "),
      "takeover, SIGKILL to the copy sent again (s)": takeovers(kills, copies).map((ms) => (ms / 1000).toFixed(1)).join(", ") || "none",
      "campaign.sent events": summary?.[0]?.n ?? "?",
      "credit charges (messages)": `${charges?.[0]?.n ?? "?"} (${charges?.[0]?.messages ?? "?"})`,
      "run time": `${Math.round((Date.now() - started) / 1000)} s`,
    };
    const width = Math.max(...Object.keys(counts).map((k) => k.length));
    console.log(
      ["", "Campaign chaos run: counts", ...Object.entries(counts).map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), "", "Timeline", ...stack.timeline.map((t) => `  ${t}`), ""].join("\n"),
    );

    expect({ state, problems }).toEqual({ state: "sent", problems: [] });
    expect(outcomes).toHaveLength(RECIPIENTS);
    expect(Object.fromEntries(byOutcome)).toEqual({ accepted: RECIPIENTS });
    expect(summary?.[0]?.n).toBe(1);
    expect(charges?.[0]).toEqual({ n: RECIPIENTS, messages: RECIPIENTS });
    // The run did what it claims: each kill cut off a transaction the sink held.
    expect(kills.every((k) => k.open.some((t) => t.slow))).toBe(true);
    keep = false;
  }, 900_000);
});
