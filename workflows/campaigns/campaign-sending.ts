import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, upsertSearchAttributes } from "@temporalio/workflow";
import { MAIL_STATUS } from "../search-attributes.ts";
import type { CampaignActivities, CampaignWorkflowState } from "./activities.ts";

/**
 * One workflow per campaign (id `campaign-<campaignId>`): it waits for the
 * campaign's time on a durable timer, fixes its audience, hands its
 * recipients over in batches (one activity per batch, never a workflow per
 * recipient), and publishes `campaign.sent` at the end.
 *
 * The campaign's state lives in PostgreSQL: rescheduling, pausing,
 * resuming and cancelling change it there and then send the `changed`
 * signal, which only wakes the workflow; every decision is taken on what
 * an activity reads back. So a change takes effect within one batch, and
 * a lost signal only delays it (a paused or scheduled workflow looks again
 * at least every POLL).
 *
 * Temporal actions: the start, one activity per BATCH_SIZE recipients, one
 * timer per wait, and a continue-as-new every BATCHES_PER_RUN batches (a
 * bounded history for any audience): about 0.01 actions per recipient.
 *
 * Deterministic: every I/O is an activity (./activities.ts; implemented in
 * src/adapters/temporal/campaigns/activities.ts).
 */
export interface CampaignWorkflowInput {
  readonly companyId: string;
  readonly campaignId: string;
  /** Continued as new while sending: the audience is fixed already. */
  readonly sending?: boolean;
}

export const campaignChanged = defineSignal("changed");

/** Recipients per batch activity. */
export const BATCH_SIZE = 100;
/** Batches before the workflow continues as new. */
export const BATCHES_PER_RUN = 200;
/** The longest a paused or scheduled campaign sleeps without looking at its state again. */
const POLL = "1 hour";

export async function campaignSending(input: CampaignWorkflowInput): Promise<CampaignWorkflowState> {
  const { companyId, campaignId } = input;
  const { startCampaign, finishCampaign } = proxyActivities<Pick<CampaignActivities, "startCampaign" | "finishCampaign">>({
    startToCloseTimeout: "5 minutes",
    retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
  });
  const { sendCampaignBatch } = proxyActivities<Pick<CampaignActivities, "sendCampaignBatch">>({
    // A batch waits for the sending pace between copies: long enough for a slow pace, its heartbeats tell a dead worker.
    startToCloseTimeout: "1 hour",
    heartbeatTimeout: "30s",
    retry: { initialInterval: "2s", backoffCoefficient: 2, maximumInterval: "5m" },
  });

  let woken = false;
  setHandler(campaignChanged, () => {
    woken = true;
  });
  const sleepUntilWoken = async (ms: number | string): Promise<void> => {
    await condition(() => woken, ms);
    woken = false;
  };

  let shown: CampaignWorkflowState = input.sending ? "sending" : "scheduled";
  const show = (state: CampaignWorkflowState): void => {
    if (state !== shown) upsertSearchAttributes([{ key: MAIL_STATUS, value: state }]);
    shown = state;
  };

  if (!input.sending) {
    for (;;) {
      const start = await startCampaign(companyId, campaignId);
      show(start.state);
      if (start.state === "cancelled" || start.state === "sent" || start.state === "draft") return start.state;
      if (start.state !== "scheduled") break;
      await sleepUntilWoken(Math.min(start.waitMs, 3_600_000) || POLL);
    }
  }

  for (let batches = 0; ; ) {
    const batch = await sendCampaignBatch(companyId, campaignId, BATCH_SIZE);
    show(batch.state);
    if (batch.state === "paused") {
      await sleepUntilWoken(POLL);
      continue;
    }
    if (batch.state !== "sending" || batch.waiting === 0) break;
    batches += 1;
    if (batches >= BATCHES_PER_RUN) await continueAsNew<typeof campaignSending>({ companyId, campaignId, sending: true });
  }
  await finishCampaign(companyId, campaignId);
  return shown === "cancelled" ? "cancelled" : "sent";
}
