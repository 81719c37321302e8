import type { CampaignRevenue } from "../conversions/types.ts";
import type { AuditNote } from "../audit/types.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";

/**
 * What the campaigns capability needs from storage, from the send path and
 * from its neighbours. The PostgreSQL store is
 * src/adapters/postgres/campaigns/postgres-campaign-store.ts; the rest is
 * put together in src/wiring/campaigns.ts.
 *
 * TENANT ISOLATION: every store method takes the company id first and sees
 * that company's campaigns only.
 */

export type CampaignState = "draft" | "scheduled" | "sending" | "paused" | "sent" | "cancelled";

/** What became of one recipient; the campaign.sent counters count these. */
export type RecipientOutcome = "waiting" | "accepted" | "failed" | "unknown" | "suppressed" | "skipped";

/** The spec's campaign.sent counters, plus the audience and the recipients not handed over yet. */
export interface CampaignCounters {
  readonly audience: number;
  readonly accepted: number;
  readonly failed: number;
  readonly unknown: number;
  readonly suppressed: number;
  readonly skipped: number;
  readonly waiting: number;
}

/** Everything a draft says: who, what, from whom, tracked or not. */
export interface CampaignDraft {
  readonly name: string;
  readonly listIds: readonly string[];
  readonly tag: string | null;
  readonly templateId: string | null;
  readonly subject: string | null;
  readonly html: string | null;
  readonly text: string | null;
  readonly senderId: string | null;
  readonly replyTo: string | null;
  readonly trackOpens: boolean;
  readonly trackClicks: boolean;
}

export interface CampaignRecord extends CampaignDraft {
  readonly id: string;
  readonly companyId: string;
  readonly state: CampaignState;
  readonly sendAt: Date | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly counters: CampaignCounters;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Before sending: the audience now, and how it splits. */
export interface AudiencePreview {
  readonly audience: number;
  readonly receive: number;
  readonly skipped: number;
  readonly suppressed: number;
}

/** What the campaign's recipients record: the counters and the engagement of each recipient. */
export interface CampaignRecipientResults {
  readonly counters: CampaignCounters;
  readonly opened: number;
  readonly clicked: number;
  readonly unsubscribed: number;
  /** When the audience was fixed; null before. */
  readonly startedAt: Date | null;
}

/** One tracked link of a campaign and its clicks. */
export interface CampaignLinkResult {
  readonly linkId: string;
  readonly url: string;
  /** Verified clicks. */
  readonly clicks: number;
  /** Recipients with a verified click on it. */
  readonly clickers: number;
  readonly suspectClicks: number;
}

/** The width of a timeline bucket. */
export type EngagementInterval = "hour" | "day";

/** Opens (not a machine's) and verified clicks in one bucket. */
export interface EngagementBucket {
  readonly start: Date;
  readonly opens: number;
  readonly clicks: number;
}

export interface CampaignResults extends CampaignRecipientResults {
  readonly links: readonly CampaignLinkResult[];
  readonly revenue: readonly CampaignRevenue[];
  readonly interval: EngagementInterval;
  readonly timeline: readonly EngagementBucket[];
}

/**
 * What other capabilities know of a campaign's results: tracking (clicks
 * per link, opens and clicks over time) and conversions (the revenue
 * attributed to its links).
 */
export interface CampaignInsightsPort {
  links(companyId: string, campaignId: string): Promise<CampaignLinkResult[]>;
  timeline(companyId: string, campaignId: string, interval: EngagementInterval): Promise<EngagementBucket[]>;
  revenue(companyId: string, campaignId: string): Promise<CampaignRevenue[]>;
}

/** A change of state a store applies under a row lock, with its audit row; `undefined` from `decide`: nothing to change. */
export interface StateChange {
  readonly state: CampaignState;
  readonly sendAt?: Date | null;
  /** Ends the campaign now (a scheduled campaign cancelled before it started). */
  readonly finished?: boolean;
  readonly audit: AuditNote;
}

/** A recipient waiting for its copy, with what its copy needs. */
export interface WaitingRecipient {
  readonly id: string;
  readonly contactId: string;
  readonly email: string;
  /** The contact's status now (undefined: the contact was deleted). */
  readonly contactStatus: string | undefined;
  /** The address is on the suppression list now. */
  readonly suppressed: boolean;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly companyName: string | null;
  readonly locale: string | null;
  readonly attributes: Readonly<Record<string, string | number | boolean | null>>;
  /** The copy exists already (an earlier attempt of this batch made it). */
  readonly copyMade: boolean;
}

export interface CampaignStore {
  create(companyId: string, id: string, draft: CampaignDraft, audit: AuditNote): Promise<CampaignRecord>;
  /** Locks the campaign, shows it to `decide` (which throws to refuse), stores what it answers. Undefined: no such campaign. */
  update(companyId: string, id: string, decide: (current: CampaignRecord) => { readonly draft: CampaignDraft; readonly audit: AuditNote }): Promise<CampaignRecord | undefined>;
  /** Locks the campaign, shows it to `decide` (which throws to refuse), applies the change. Undefined: no such campaign. */
  changeState(companyId: string, id: string, decide: (current: CampaignRecord) => StateChange): Promise<CampaignRecord | undefined>;
  find(companyId: string, id: string): Promise<CampaignRecord | undefined>;
  /** The campaign's state alone (undefined: no such campaign). */
  stateOf(companyId: string, id: string): Promise<CampaignState | undefined>;
  /** Newest first (created_at, id descending), strictly after `after`, at most `limit`. */
  list(companyId: string, state: CampaignState | undefined, after: KeysetPosition | null, limit: number): Promise<Positioned<CampaignRecord>[]>;
  /** The ids among `listIds` that name no list of the company. */
  missingLists(companyId: string, listIds: readonly string[]): Promise<string[]>;
  previewAudience(companyId: string, listIds: readonly string[], tag: string | null): Promise<AudiencePreview>;
  results(companyId: string, id: string): Promise<CampaignRecipientResults | undefined>;
  markWorkflowStarted(companyId: string, id: string): Promise<void>;

  /**
   * Sending starts: when the campaign is `scheduled` and its time has come,
   * its audience is fixed (one recipient per contact of its lists and tag,
   * each with its first outcome: `waiting`, `skipped` or `suppressed`) and
   * it becomes `sending`, in one transaction. Answers the state afterwards
   * and, while still scheduled, the milliseconds to its time.
   */
  start(companyId: string, id: string): Promise<{ readonly state: CampaignState; readonly waitMs: number } | undefined>;
  /** Up to `limit` recipients still `waiting`, in id order. */
  waiting(companyId: string, campaignId: string, limit: number): Promise<WaitingRecipient[]>;
  countWaiting(companyId: string, campaignId: string): Promise<number>;
  /** Records a recipient's outcome (only while it is `waiting`). */
  settle(companyId: string, recipientId: string, outcome: Exclude<RecipientOutcome, "waiting">, at: Date): Promise<void>;
  /**
   * The end: a `sending` campaign becomes `sent`; a cancelled one counts
   * its waiting recipients `skipped`; the campaign.sent webhook event is
   * recorded once (with the counters) in the same transaction.
   */
  finish(companyId: string, id: string, at: Date): Promise<CampaignCounters | undefined>;
}

/** The engagement tracking and unsubscribe record on a campaign's recipients (set by src/capabilities/tracking). */
export interface CampaignEngagementPort {
  /** The first open of a recipient's copy (later ones change nothing). */
  recordOpen(companyId: string, recipientId: string, at: Date): Promise<void>;
  /** The first verified click of a recipient. */
  recordClick(companyId: string, recipientId: string, at: Date): Promise<void>;
  /** The recipient unsubscribed through this campaign. */
  recordUnsubscribe(companyId: string, recipientId: string, at: Date): Promise<void>;
}

/** One campaign copy before tracking and unsubscribe are added. */
export interface CampaignMessageInput {
  readonly companyId: string;
  readonly campaignId: string;
  /** The campaign recipient row's id (uuid). */
  readonly recipientId: string;
  readonly contactId: string;
  readonly email: string;
  /** Rendered and sanitised, before tracking. */
  readonly html: string;
  readonly text: string;
  readonly trackOpens: boolean;
  readonly trackClicks: boolean;
  /** The contact's/form's language if known, for the hosted unsubscribe page. */
  readonly language: string | undefined;
}

export interface DecoratedCampaignMessage {
  readonly html: string;
  readonly text: string;
  /** Added to the message and covered by its DKIM signature: List-Unsubscribe, List-Unsubscribe-Post. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Adds tracking and unsubscribe to every campaign copy (src/capabilities/tracking implements it). */
export interface CampaignMessageDecorator {
  decorate(input: CampaignMessageInput): Promise<DecoratedCampaignMessage>;
}

/** The sender a campaign sends from, checked as a send checks it. */
export interface CampaignSender {
  readonly senderId: string;
  readonly email: string;
  readonly name?: string;
}

export interface CampaignSendersPort {
  /** The chosen or default verified sender; ApiError NOT_FOUND or SENDER_NOT_VERIFIED otherwise. */
  checkSender(companyId: string, senderId?: string): Promise<CampaignSender>;
}

export interface CampaignTemplate {
  readonly id: string;
  readonly subject: string;
  readonly html: string;
  readonly text?: string | null;
}

export interface CampaignTemplatesPort {
  /** A template of the company; ApiError NOT_FOUND otherwise. */
  getTemplate(companyId: string, templateId: string): Promise<CampaignTemplate>;
}

/** The test copy: a transactional send (the send path). */
export interface TestSendPort {
  send(command: {
    readonly companyId: string;
    readonly to: string;
    readonly senderId: string | undefined;
    readonly replyTo: string | undefined;
    readonly subject: string;
    readonly html: string | undefined;
    readonly text: string | undefined;
  }): Promise<{ readonly messageId: string }>;
}

/** One campaign copy for the send path: recorded as a message (its id the recipient's), then handed over. */
export interface CampaignCopy {
  readonly id: string;
  readonly companyId: string;
  readonly campaignId: string;
  readonly contactId: string;
  readonly recipient: string;
  readonly senderId: string;
  readonly fromEmail: string;
  readonly fromName: string | null;
  readonly replyTo: string | null;
  readonly subject: string;
  readonly html: string | null;
  readonly text: string | null;
  readonly templateId: string | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** How a copy's handoff ended, as the counters see it. */
export type HandoffOutcome = "accepted" | "failed" | "suppressed" | "unknown";

/** The send path (src/capabilities/messages): records a copy and hands it over through the message lifecycle. */
export interface CampaignHandoffPort {
  /** Records the copy as a `queued` message unless it exists (same id). */
  recordCopy(copy: CampaignCopy): Promise<void>;
  /**
   * Hands the copy over as the message lifecycle does (suppression, the
   * sending pace at campaign priority, credit, DKIM, the handoff lease),
   * waiting for the pace as long as needed; `heartbeat` is called while it
   * runs. Answers how it ended.
   */
  handOver(companyId: string, messageId: string, heartbeat: () => void): Promise<HandoffOutcome>;
}

/** The campaign's workflow (src/adapters/temporal/campaigns). */
export interface CampaignWorkflowsPort {
  /** Starts the campaign's workflow (one per campaign; an existing one is woken instead). */
  start(companyId: string, campaignId: string): Promise<void>;
  /** Tells the workflow its campaign changed (rescheduled, paused, resumed, cancelled). */
  wake(companyId: string, campaignId: string): Promise<void>;
}
