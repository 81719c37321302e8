import type { TemplateVariables } from "../messages/compose/template.ts";
import { renderCampaignContent } from "./content.ts";
import type {
  CampaignCounters,
  CampaignHandoffPort,
  CampaignMessageDecorator,
  CampaignRecord,
  CampaignSendersPort,
  CampaignState,
  CampaignStore,
  CampaignTemplate,
  CampaignTemplatesPort,
  RecipientOutcome,
  WaitingRecipient,
} from "./ports.ts";

/** Copies handed over between two looks at the campaign's state within a batch. */
const STATE_CHECK_EVERY = 5;

export interface CampaignSendingDependencies {
  readonly store: CampaignStore;
  readonly senders: CampaignSendersPort;
  readonly templates: CampaignTemplatesPort;
  readonly decorator: CampaignMessageDecorator;
  readonly handoff: CampaignHandoffPort;
  readonly clock?: () => Date;
}

export interface CampaignRef {
  readonly companyId: string;
  readonly campaignId: string;
}

export interface StartResult {
  readonly state: CampaignState;
  /** While `scheduled`: milliseconds to its time. */
  readonly waitMs: number;
}

export interface SendBatchCommand extends CampaignRef {
  /** How many recipients at most. */
  readonly size: number;
  /** Told the batch is alive while it runs (the Temporal activity's heartbeats). */
  readonly heartbeat?: (() => void) | undefined;
}

export interface SendBatchResult {
  /** The campaign's state when the batch began (`sending`: the batch ran). */
  readonly state: CampaignState;
  /** Recipients handed over or counted by this batch. */
  readonly settled: number;
  /** Recipients still waiting afterwards. */
  readonly waiting: number;
}

/**
 * Sending a campaign, step by step, for its workflow (each step idempotent,
 * so a retried activity repeats nothing): start (the audience fixed when
 * its time has come), batches of recipients handed over through the send
 * path (each copy a message whose id is its recipient's, so a retried
 * batch finds the copies it made and the handoff lease stops a second
 * one), and the end (campaign.sent, once).
 *
 * Per recipient, just before its handoff: a contact that became
 * `unsubscribed` or `pending` is skipped; `bounced`, `complained` or a
 * suppressed address is suppressed (the lifecycle checks the list again).
 */
export class CampaignSending {
  readonly #deps: CampaignSendingDependencies;
  readonly #now: () => Date;

  constructor(deps: CampaignSendingDependencies) {
    this.#deps = deps;
    this.#now = deps.clock ?? (() => new Date());
  }

  async start(ref: CampaignRef): Promise<StartResult> {
    const started = await this.#deps.store.start(ref.companyId, ref.campaignId);
    return started ?? { state: "cancelled", waitMs: 0 };
  }

  async sendBatch(command: SendBatchCommand): Promise<SendBatchResult> {
    const { store } = this.#deps;
    const { companyId, campaignId } = command;
    const campaign = await store.find(companyId, campaignId);
    if (!campaign) return { state: "cancelled", settled: 0, waiting: 0 };
    if (campaign.state !== "sending") return { state: campaign.state, settled: 0, waiting: await store.countWaiting(companyId, campaignId) };
    const recipients = await store.waiting(companyId, campaignId, command.size);
    const beat = command.heartbeat ?? (() => {});
    const sender = recipients.length > 0 ? await this.#deps.senders.checkSender(companyId, campaign.senderId ?? undefined) : undefined;
    const template = recipients.length > 0 && campaign.templateId ? await this.#deps.templates.getTemplate(companyId, campaign.templateId) : undefined;
    let settled = 0;
    for (const recipient of recipients) {
      // A pause or a cancel stops the batch between two copies, not only at its end.
      if (settled > 0 && settled % STATE_CHECK_EVERY === 0) {
        const state = await store.stateOf(companyId, campaignId);
        if (state !== "sending") return { state: state ?? "cancelled", settled, waiting: await store.countWaiting(companyId, campaignId) };
      }
      beat();
      const outcome = await this.#handOverOne(campaign, recipient, sender, template, beat);
      await store.settle(companyId, recipient.id, outcome, this.#now());
      settled += 1;
    }
    return { state: "sending", settled, waiting: await store.countWaiting(companyId, campaignId) };
  }

  async finish(ref: CampaignRef): Promise<CampaignCounters | undefined> {
    return this.#deps.store.finish(ref.companyId, ref.campaignId, this.#now());
  }

  async #handOverOne(
    campaign: CampaignRecord,
    recipient: WaitingRecipient,
    sender: Awaited<ReturnType<CampaignSendingDependencies["senders"]["checkSender"]>> | undefined,
    template: CampaignTemplate | undefined,
    heartbeat: () => void,
  ): Promise<Exclude<RecipientOutcome, "waiting">> {
    if (!recipient.copyMade) {
      const early = outcomeBeforeHandoff(recipient);
      if (early) return early;
      if (!sender) throw new Error("campaign sender missing");
      await this.#recordCopy(campaign, recipient, sender, template);
    }
    // A copy made by an earlier attempt may have left already: the handoff finds out (and sends nothing twice).
    return this.#deps.handoff.handOver(campaign.companyId, recipient.id, heartbeat);
  }

  async #recordCopy(
    campaign: CampaignRecord,
    recipient: WaitingRecipient,
    sender: { readonly senderId: string; readonly email: string; readonly name?: string },
    template: CampaignTemplate | undefined,
  ): Promise<void> {
    const variables: TemplateVariables = {
      ...recipient.attributes,
      email: recipient.email,
      firstName: recipient.firstName,
      lastName: recipient.lastName,
      companyName: recipient.companyName,
    };
    const content = renderCampaignContent(campaign, template, variables);
    const decorated = await this.#deps.decorator.decorate({
      companyId: campaign.companyId,
      campaignId: campaign.id,
      recipientId: recipient.id,
      contactId: recipient.contactId,
      email: recipient.email,
      html: content.html ?? "",
      text: content.text ?? "",
      trackOpens: campaign.trackOpens,
      trackClicks: campaign.trackClicks,
      language: recipient.locale ?? undefined,
    });
    await this.#deps.handoff.recordCopy({
      id: recipient.id,
      companyId: campaign.companyId,
      campaignId: campaign.id,
      contactId: recipient.contactId,
      recipient: recipient.email,
      senderId: sender.senderId,
      fromEmail: sender.email,
      fromName: sender.name ?? null,
      replyTo: campaign.replyTo,
      subject: content.subject,
      html: content.html === null ? null : decorated.html,
      text: content.text === null && decorated.text === "" ? null : decorated.text,
      templateId: template?.id ?? null,
      headers: decorated.headers,
    });
  }
}

/**
 * The audience rules at the moment of handoff: only a `subscribed` contact
 * gets its copy. Undefined: hand it over.
 */
export function outcomeBeforeHandoff(recipient: Pick<WaitingRecipient, "contactStatus" | "suppressed">): Exclude<RecipientOutcome, "waiting"> | undefined {
  const status = recipient.contactStatus;
  if (status === undefined || status === "pending" || status === "unsubscribed") return "skipped";
  if (recipient.suppressed || status === "bounced" || status === "complained" || status === "suppressed") return "suppressed";
  return undefined;
}
