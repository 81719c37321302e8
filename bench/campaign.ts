/**
 * `npm run bench:campaign`: a campaign to CAMPAIGN_RECIPIENTS subscribed
 * contacts (default 10,000) through the service as deployed (an API
 * process and a worker process, the simulator as the email service, a
 * Temporal dev server), on a scratch database. It prints:
 *
 * - recipients handed over per second, from "send now" to `sent`, beside
 *   the ceiling of a workflow per recipient measured in the same run (an
 *   empty workflow with one empty activity, on the same Temporal);
 * - Temporal billable actions per recipient, read from every run of the
 *   campaign's workflow (continue-as-new included);
 * - a transactional message's time from 202 to `sent`, p50 and p99, with
 *   the service idle and while the campaign sends (TRANSACTIONAL messages
 *   each, default 60, one every 100 ms).
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Client as TemporalClient, Connection } from "@temporalio/client";
import pg from "pg";
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { campaignWorkflowId } from "../src/adapters/temporal/campaigns/dispatcher.ts";
import { CampaignsService, CampaignState } from "../src/gen/mail/v1/campaigns_pb.js";
import { ListsService } from "../src/gen/mail/v1/lists_pb.js";
import { createScratchDatabase } from "./lib/database.ts";
import { startChild } from "./lib/processes.ts";
import { OPERATOR_TOKEN, setupCompany, startDeployedService } from "./lib/service.ts";
import { percentile } from "./lib/stats.ts";
import { describeCost, temporalCost } from "./lib/temporal-cost.ts";

const EMPTY_WORKFLOW = path.join(import.meta.dirname, "baselines", "empty-workflow.ts");

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

const RECIPIENTS = setting("CAMPAIGN_RECIPIENTS", 10_000);
const TRANSACTIONAL = setting("TRANSACTIONAL", 60);
const CEILING_WORKFLOWS = setting("CEILING_WORKFLOWS", 2_000);
const verbose = process.env.BENCH_VERBOSE === "1";

/** Sends one transactional message every 100 ms and answers each one's milliseconds from the 202 to `sent`. */
async function transactional(db: pg.Client, httpUrl: string, secret: string, count: number): Promise<number[]> {
  const accepted = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${httpUrl}/mail/v1/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ to: { email: `receipt-${i}@customer.example` }, subject: "Your receipt", html: "<p>Thanks</p>" }),
    });
    if (response.status !== 202) throw new Error(`send answered ${response.status}: ${await response.text()}`);
    accepted.set(((await response.json()) as { id: string }).id, Date.now());
    await sleep(100);
  }
  const ids = [...accepted.keys()];
  for (;;) {
    const { rows } = await db.query<{ id: string; sent_ms: string }>(
      `select message_id as id, (extract(epoch from at) * 1000)::text as sent_ms from message_event where message_id = any($1::uuid[]) and type = 'sent'`,
      [ids],
    );
    if (rows.length === ids.length) return rows.map((row) => Number(row.sent_ms) - (accepted.get(row.id) ?? 0));
    await sleep(200);
  }
}

function describe(ms: readonly number[]): string {
  return `p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms`;
}

async function main(): Promise<void> {
  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    const database = await createScratchDatabase("mail_bench_campaign");
    cleanup.unshift(() => database.drop());
    const orm = await openOrm(database.url, { poolMax: 3 });
    await migrate(orm);
    await orm.close();
    const { api, temporalAddress, taskQueue, stop } = await startDeployedService(database.url, "campaign", verbose);
    cleanup.unshift(stop);
    const company = await setupCompany(api.operatorUrl, RECIPIENTS + 10 * TRANSACTIONAL);
    const forCompany: Interceptor = (next) => (request) => {
      request.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
      request.header.set("x-mail-company-id", company.companyId);
      return next(request);
    };
    const transport = createConnectTransport({ baseUrl: api.operatorUrl, httpVersion: "1.1", interceptors: [forCompany] });
    const campaigns = createClient(CampaignsService, transport);
    const { list } = await createClient(ListsService, transport).createContactList({ name: "Everyone" });

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanup.unshift(() => db.end());
    // The audience, written where the contacts capability keeps it: subscribed contacts in one list.
    await db.query(
      `with made as (
         insert into contact (company_id, email, email_normalized, status)
         select $1, 'reader-' || i || '@customer.example', 'reader-' || i || '@customer.example', 'subscribed' from generate_series(1, $2) as i
         returning id)
       insert into contact_list_member (company_id, list_id, contact_id) select $1, $3, id from made`,
      [company.companyId, RECIPIENTS, list?.id ?? ""],
    );
    console.log(`${RECIPIENTS} subscribed contacts in one list; ${TRANSACTIONAL} transactional messages per measure`);

    // Warm-up, then the idle figure.
    await transactional(db, api.httpUrl, company.secret, 10);
    const idle = await transactional(db, api.httpUrl, company.secret, TRANSACTIONAL);
    console.log(`transactional 202 -> sent, idle:             ${describe(idle)}`);

    const { campaign } = await campaigns.createCampaign({
      name: "Bench",
      audience: { listIds: [list?.id ?? ""] },
      content: { subject: "News for {{ email }}", html: '<p>Hello</p><p><a href="https://shop.example/news">Read</a></p>', text: "Hello" },
    });
    const id = campaign?.id ?? "";
    const started = performance.now();
    await campaigns.scheduleCampaign({ id });
    const during = transactional(db, api.httpUrl, company.secret, TRANSACTIONAL);
    let seconds = 0;
    for (;;) {
      const { campaign: now } = await campaigns.getCampaign({ id });
      if (now?.state === CampaignState.SENT) {
        seconds = (performance.now() - started) / 1000;
        const counters = now.counters;
        console.log(`campaign sent: accepted ${counters?.accepted}, failed ${counters?.failed}, unknown ${counters?.unknown}, audience ${counters?.audience}`);
        break;
      }
      await sleep(250);
    }
    const busy = await during;
    console.log(`transactional 202 -> sent, during campaign:  ${describe(busy)} (p50 ${(percentile(busy, 50) / percentile(idle, 50)).toFixed(2)}x idle)`);
    console.log(`campaign: ${RECIPIENTS} recipients in ${seconds.toFixed(1)} s = ${(RECIPIENTS / seconds).toFixed(0)} recipients/s`);

    const connection = await Connection.connect({ address: temporalAddress });
    cleanup.unshift(() => connection.close());
    const client = new TemporalClient({ connection, namespace: "default" });
    const runs: { workflowId: string; runId: string }[] = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = "${campaignWorkflowId(id)}"` })) {
      runs.push({ workflowId: execution.workflowId, runId: execution.runId });
    }
    const cost = await temporalCost(client, runs);
    const perRecipient = (cost.actions * cost.workflows) / RECIPIENTS;
    console.log(`Temporal: ${runs.length} run(s) of the campaign workflow; per run ${describeCost(cost)}`);
    console.log(`Temporal billable actions per recipient: ${perRecipient.toFixed(4)} (target at most 0.05)`);

    // The ceiling of a workflow per recipient on the same Temporal: an empty workflow with one empty activity.
    const empty = await startChild({
      name: "empty-workflow baseline",
      script: EMPTY_WORKFLOW,
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TASK_QUEUE: `${taskQueue}-empty`, MAX_ACTIVITIES: "8" },
      verbose,
    });
    cleanup.unshift(() => empty.stop());
    await empty.call<number>({ batch: 50, concurrency: 32 });
    const ceilingSeconds = await empty.call<number>({ batch: CEILING_WORKFLOWS, concurrency: 32 });
    const ceiling = CEILING_WORKFLOWS / ceilingSeconds;
    console.log(`ceiling of a workflow per recipient (empty workflow + activity, same Temporal): ${ceiling.toFixed(0)} workflows/s`);
    console.log(`campaign / ceiling: ${(RECIPIENTS / seconds / ceiling).toFixed(2)}x`);
  } finally {
    for (const step of cleanup) await step().catch((error: unknown) => console.error("cleanup:", error));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
