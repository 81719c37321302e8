import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import { ApiError } from "../../../contract/api-error.ts";
import type { CampaignWorkflowsPort } from "../../../capabilities/campaigns/ports.ts";
import { boundedCall, START_DEADLINE_MS } from "../client.ts";
import { campaignChanged, campaignSending, type CampaignWorkflowInput } from "../../../../workflows/campaigns/campaign-sending.ts";
import { MAIL_CAMPAIGN_ID, MAIL_COMPANY_ID, MAIL_STATUS } from "../../../../workflows/search-attributes.ts";

export interface CampaignDispatcherOptions {
  /** The process's shared client (src/adapters/temporal/client.ts); its owner closes it. */
  readonly client: Client;
  readonly taskQueue: string;
  readonly store: { markWorkflowStarted(companyId: string, campaignId: string): Promise<void> };
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  readonly startDeadlineMs?: number;
}

export function campaignWorkflowId(campaignId: string): string {
  return `campaign-${campaignId}`;
}

/**
 * Starts and wakes campaign workflows: one per campaign (id derived from
 * the campaign's), started with the `changed` signal (signal-with-start: a
 * workflow already there is only woken), searchable by company and
 * campaign. A campaign whose workflow could not be started answers 503 and
 * stays `scheduled`: scheduling it again starts it.
 */
export class CampaignDispatcher implements CampaignWorkflowsPort {
  readonly #options: CampaignDispatcherOptions;

  constructor(options: CampaignDispatcherOptions) {
    this.#options = options;
  }

  async start(companyId: string, campaignId: string): Promise<void> {
    const o = this.#options;
    const input: CampaignWorkflowInput = { companyId, campaignId };
    try {
      await boundedCall(o.client, o.startDeadlineMs ?? START_DEADLINE_MS, () =>
        o.client.workflow.signalWithStart(campaignSending, {
          workflowId: campaignWorkflowId(campaignId),
          taskQueue: o.taskQueue,
          args: [input],
          signal: campaignChanged,
          signalArgs: [],
          typedSearchAttributes: [
            { key: MAIL_COMPANY_ID, value: companyId },
            { key: MAIL_CAMPAIGN_ID, value: campaignId },
            { key: MAIL_STATUS, value: "scheduled" },
          ],
        }),
      );
    } catch (error) {
      o.log.warn({ campaignId, err: error }, "could not start the campaign workflow");
      throw new ApiError("SERVICE_UNAVAILABLE", "The campaign is scheduled but its sending could not be started now: schedule it again in a moment.");
    }
    await o.store.markWorkflowStarted(companyId, campaignId);
  }

  async wake(companyId: string, campaignId: string): Promise<void> {
    const o = this.#options;
    try {
      await boundedCall(o.client, o.startDeadlineMs ?? START_DEADLINE_MS, () => o.client.workflow.getHandle(campaignWorkflowId(campaignId)).signal(campaignChanged));
    } catch (error) {
      // A workflow that ended (or never started) has nothing to wake; a lost wake-up only delays the change (the workflow looks again).
      if (!(error instanceof WorkflowNotFoundError)) o.log.warn({ campaignId, companyId, err: error }, "could not wake the campaign workflow");
    }
  }
}
