import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";
import type { MessageFilters } from "./read/filters.ts";
import type { MessageAttachmentFile, MessageContentRecord, MessageRecord } from "./read/types.ts";
import type { MessageErrorCode, MessageStatusName } from "./statuses.ts";

/**
 * What the messages capability needs from storage. The PostgreSQL adapters
 * in src/adapters/postgres/messages implement these; the email service is
 * the EmailProvider port of email-provider.ts.
 */

/** A message as accepted (POST /mail/v1/send, the service's own mail), before it is recorded. */
export interface NewMessage {
  readonly id: string;
  readonly companyId: string;
  readonly apiKeyId: string | null;
  readonly idempotencyKey: string | null;
  /** The send's fingerprint (accept/send-fingerprint.ts), kept with the key; absent without a key. */
  readonly requestFingerprint?: Uint8Array | null;
  readonly recipient: string;
  readonly recipientName: string | null;
  readonly senderId: string;
  readonly fromEmail: string;
  readonly fromName: string | null;
  readonly replyTo: string | null;
  readonly subject: string;
  readonly html: string | null;
  readonly text: string | null;
  readonly templateId: string | null;
  readonly tags: Readonly<Record<string, string>>;
  /**
   * The service's own mail (sign-in links, invitations, double opt-in
   * confirmations, owner notices): its one-time links must reach the
   * recipient only, so its content is sealed at rest and withheld from every read.
   */
  readonly system?: boolean;
  /** Files sent with it, stored apart from the message row, in this order. */
  readonly attachments?: readonly MessageAttachment[];
}

/** A file of a message (compose/attachments.ts says what a valid one is). */
export interface MessageAttachment {
  readonly filename: string;
  readonly contentType: string;
  readonly content: Uint8Array;
  /** An inline image's `cid:`; absent for an ordinary attachment. */
  readonly contentId?: string;
}

/** A recorded message, with what the lifecycle needs to hand it off. */
export interface StoredMessage {
  readonly id: string;
  readonly companyId: string;
  readonly status: MessageStatusName;
  readonly recipient: string;
  readonly recipientName: string | null;
  readonly recipientDomain: string;
  readonly senderId: string | null;
  readonly fromEmail: string;
  readonly fromName: string | null;
  readonly replyTo: string | null;
  readonly subject: string;
  readonly html: string | null;
  readonly text: string | null;
  readonly provider: string | null;
  readonly providerMessageId: string | null;
  readonly errorCode: string | null;
  readonly createdAt: Date;
  /** It has files (MessageStore.attachments); read with the handoff, absent elsewhere. */
  readonly hasAttachments?: boolean;
  /** A campaign's copy (its id is the campaign recipient's): its webhook events carry the campaign fields. */
  readonly campaign?: CampaignCopyOf | undefined;
  /** Headers added to it and covered by its DKIM signature (a campaign copy's List-Unsubscribe). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Whose copy a campaign message is. */
export interface CampaignCopyOf {
  readonly campaignId: string;
  readonly contactId: string;
}

/** A campaign's copy for one contact, recorded as a message whose id is the campaign recipient's. */
export interface NewCampaignCopy {
  readonly id: string;
  readonly companyId: string;
  readonly campaign: CampaignCopyOf;
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

/** A message as found by its idempotency key: with the fingerprint of the send that created it (null: none kept). */
export interface KeyedMessage extends StoredMessage {
  readonly requestFingerprint: Uint8Array | null;
}

/** A webhook event to record with a move (spec: Event kinds). */
export interface WebhookEventDraft {
  readonly event: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A change of status, with the event and webhook events recorded with it. */
export interface Move {
  readonly to: MessageStatusName;
  /**
   * Records the event (and advances lastEventAt) without moving the status:
   * a report that is news about the message but not a new state (a delay).
   */
  readonly keepStatus?: boolean;
  readonly at: Date;
  /** The type written in the message's events array (`sent`, `delivery`, ...). */
  readonly eventType?: string;
  readonly providerEventId?: string;
  readonly detail?: string;
  readonly errorCode?: MessageErrorCode;
  readonly provider?: string;
  readonly providerMessageId?: string;
  readonly webhooks?: readonly WebhookEventDraft[];
}

export interface MoveResult {
  /** False when the move is not allowed from the current status (nothing changed but the event). */
  readonly moved: boolean;
  /** The status after the call. */
  readonly status: MessageStatusName;
}

/** What one handoff attempt reads: the message and whether its company may send now. */
export interface HandoffCandidate {
  readonly message: StoredMessage;
  /** The company is entitled to send through the API and its sending is not suspended (the sending guard). */
  readonly companyMaySend: boolean;
}

/** A message whose workflow is not known to exist yet. */
export interface UnstartedMessage {
  readonly id: string;
  readonly companyId: string;
  readonly recipientDomain: string;
}

/** MessageStore.claimHandoff's answer; `token` names the lease for its renewals and its release. */
export type HandoffClaim =
  | { readonly claimed: true; readonly token: string }
  | { readonly claimed: false; readonly status: MessageStatusName; readonly heldForMs: number };

/**
 * The messages of every company. Every call but the provider lookup and the
 * outbox scan is scoped by company id.
 */
export interface MessageStore {
  /**
   * Records an accepted message as `queued`. With an idempotency key,
   * concurrent identical sends create one message: the others get the
   * existing one back (`created: false`).
   */
  insertQueued(message: NewMessage): Promise<{ message: KeyedMessage; created: boolean }>;
  /**
   * Records a campaign copy as `queued`, unless a message with its id exists
   * (a retried batch): no workflow of its own (the campaign's hands it over),
   * so the message outbox never starts one.
   */
  insertCampaignCopy(copy: NewCampaignCopy): Promise<void>;
  findByIdempotencyKey(companyId: string, key: string): Promise<KeyedMessage | undefined>;
  load(companyId: string, messageId: string): Promise<StoredMessage | undefined>;
  /** The message and whether its company may send, in one read (a handoff attempt's). */
  loadForHandoff(companyId: string, messageId: string): Promise<HandoffCandidate | undefined>;
  /**
   * Takes the handoff lease of a message about to be handed to the email
   * service: moves it to `processing` (from `queued` or `deferred`, or from
   * `processing` whose lease ended: a retried attempt) with a lease ending
   * `leaseMs` from now. While the lease runs, the attempt holding it may be
   * talking to the relay, so no other attempt may send the message (it
   * would be a second copy). Answers why not when not claimed: the message
   * is past its handoff, or another attempt holds the lease `heldForMs` more.
   * A claim stores a new random token with the lease: only its holder
   * renews or releases it.
   */
  claimHandoff(companyId: string, messageId: string, leaseMs: number): Promise<HandoffClaim>;
  /**
   * The attempt holding lease `token` is alive: its lease ends `leaseMs`
   * from now. False when the lease is no longer `token`'s (an attempt that
   * stalled past its lease: another one took the message over, or it moved
   * past its handoff); nothing changes then.
   */
  renewHandoff(companyId: string, messageId: string, token: string, leaseMs: number): Promise<boolean>;
  /** The attempt holding lease `token` ended without the email service taking the message: the next one need not wait. Nothing when the lease is another's. */
  releaseHandoff(companyId: string, messageId: string, token: string): Promise<void>;
  /** The message a provider event is about (the caller is the provider, not a tenant: no company id). */
  findByProviderMessageId(provider: string, providerMessageId: string): Promise<StoredMessage | undefined>;
  /**
   * Moves a message to `move.to` if the statuses allow it from where it is,
   * recording its event and webhook events atomically with it; each is
   * recorded at most once, so a repeated move records nothing twice. The
   * status answered when the move was not allowed is read after the move
   * (a concurrent move it waited for is seen).
   */
  move(companyId: string, messageId: string, move: Move): Promise<MoveResult>;
  /**
   * The move of a provider event, unless an event with this provider event
   * id was recorded already (`applied: false`, status unchanged). The check
   * and the move are one atomic step.
   */
  /** Whether an event with this provider event id is recorded (on any message). */
  providerEventRecorded(providerEventId: string): Promise<boolean>;
  moveForProviderEvent(companyId: string, messageId: string, move: Move & { readonly providerEventId: string }): Promise<{ applied: boolean; status: MessageStatusName }>;
  /** The files of a message of the company, in the order they were sent (none: `[]`). */
  attachments(companyId: string, messageId: string): Promise<MessageAttachment[]>;
  /** Whether the company is entitled to send through the API and not suspended (false for an unknown company). */
  companyMaySend(companyId: string): Promise<boolean>;
  /** The outbox: messages whose workflow is not known to exist yet, older than `olderThanMs`, oldest first. */
  unstarted(limit: number, olderThanMs: number): Promise<UnstartedMessage[]>;
  markWorkflowStarted(companyId: string, messageId: string): Promise<void>;
  /** markWorkflowStarted for many messages at once (one statement). */
  markWorkflowsStarted(messages: readonly Pick<UnstartedMessage, "companyId" | "id">[]): Promise<void>;
}

/** The read side of the message log. */
export interface MessageLogStore {
  /** One message of the company with its events, oldest first. `id` is a UUID. */
  message(companyId: string, id: string): Promise<MessageRecord | undefined>;
  /**
   * Up to `limit` messages of the company matching `filters`, newest first
   * (created_at desc, id desc), strictly after `after`, each with its
   * events and where it sits in the log (the next page's cursor).
   */
  page(companyId: string, filters: MessageFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<MessageRecord>[]>;
}

/** The content of the message log's messages (the administration screen shows it). */
export interface MessageContentStore {
  /** The content of one message of the company as it was sent. `id` is a UUID. */
  content(companyId: string, id: string): Promise<MessageContentRecord | undefined>;
  /** One file of a message of the company, by its position; undefined when there is none (or no longer). */
  attachment(companyId: string, messageId: string, position: number): Promise<MessageAttachmentFile | undefined>;
}

/**
 * The token buckets of the sending pace, one per provider, shared by every
 * worker. `take` refills the bucket for the time since it was last touched
 * (`ratePerSecond`, at most `burst` tokens; a new bucket starts full), takes
 * one token when at least one is there, and answers the tokens that were
 * available before taking: all in one atomic step, by one clock shared by
 * every worker.
 */
export interface SendingPaceStore {
  /**
   * With `companyId`, the slot is fair between tenants: a company takes
   * nothing while companies served less recently than it wait too; `needed`
   * is then out of reach (more than `available`, by one per such company),
   * and a token is taken only when `available >= needed`. Without it, `needed` is 1,
   * or 1 + `keep`: a take at lower priority leaves `keep` tokens in the bucket.
   */
  take(provider: string, ratePerSecond: number, burst: number, companyId?: string, keep?: number): Promise<{ readonly available: number; readonly needed?: number }>;
}
