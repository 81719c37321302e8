import { ApiError } from "../../../contract/api-error.ts";
import type { EmailProvider, OutgoingEmail, ProviderEvent } from "../email-provider.ts";
import type { MessageStatusName } from "../statuses.ts";
import { isPastHandoff } from "../statuses.ts";
import type { HandoffCandidate, MessageStore, Move, StoredMessage } from "../ports.ts";
import type { CreditsPort, PacePort, SigningKeysPort, SuppressionsPort } from "./ports.ts";

/**
 * The steps of a message's life, each idempotent, so the Temporal activities
 * that run them can be retried at any point (worker crash, timeout) without
 * a second charge, a second handoff or a second event:
 *
 * - the credit is charged through a ledger row unique per message;
 * - the handoff passes our message id to the provider, which deduplicates
 *   on it where it can (the simulator durably; SMTP through a fixed
 *   Message-ID header);
 * - one attempt at a time talks to the provider: the handoff lease
 *   (MessageStore.claimHandoff) stops a second attempt while the first may
 *   still be at the relay, and the answer is recorded with retries, so a
 *   second copy needs the worker to die between the relay's answer and its
 *   record (docs/chaos.md, "The relay run"); the lease is the claiming
 *   attempt's own (a token), so one that stalled past it neither sends nor
 *   disturbs the lease of the attempt that took over;
 * - events and webhook events are unique per message and kind.
 */
export class TransientHandoffError extends Error {
  override readonly name: string = "TransientHandoffError";
}

/**
 * Another attempt holds the message's handoff lease: it may be talking to
 * the email service right now, so this one must not send. Retry after
 * `retryInMs` (the lease's remaining time), when that attempt has either
 * recorded the handoff or is taken for dead.
 */
export class HandoffInProgressError extends TransientHandoffError {
  override readonly name = "HandoffInProgressError";
  readonly retryInMs: number;

  constructor(retryInMs: number) {
    super(`another attempt is handing this message over (its lease ends in ${retryInMs} ms)`);
    this.retryInMs = retryInMs;
  }
}

/**
 * How long a handoff attempt's lease lasts without renewal, and how often a
 * running attempt renews it. Shorter than the handoff activity's heartbeat
 * timeout (10 s, workflows/messages/message-lifecycle.ts) plus its first
 * retry wait, so the lease of a worker that died has ended by the time
 * Temporal gives its attempt to another worker: the lease never delays a
 * takeover, and only stops an attempt while the other one is alive.
 */
export const HANDOFF_LEASE_MS = 9_000;
const LEASE_RENEW_EVERY_MS = 3_000;
/** How long an attempt keeps trying to record the email service's answer (the database away) before it gives up. */
const RECORD_ANSWER_WITHIN_MS = 20_000;

/**
 * The handoff lease one attempt holds, named by the token its claim
 * stored: renewed every LEASE_RENEW_EVERY_MS while the attempt runs, and
 * renewed or released only while it is still this attempt's. Once a
 * renewal finds another token, the lease is lost for good: the attempt
 * that took over holds it.
 */
class HeldLease {
  readonly leaseMs: number;
  readonly #store: MessageStore;
  readonly #ref: MessageRef;
  readonly #token: string;
  readonly #renewEveryMs: number;
  readonly #timer: NodeJS.Timeout;
  /** When the last claim or renewal that succeeded was sent: the lease runs at least leaseMs from then. */
  #confirmedFrom: number;
  #lost = false;

  constructor(store: MessageStore, ref: MessageRef, token: string, leaseMs: number, claimedFrom: number) {
    this.#store = store;
    this.#ref = ref;
    this.#token = token;
    this.leaseMs = leaseMs;
    this.#confirmedFrom = claimedFrom;
    this.#renewEveryMs = Math.min(LEASE_RENEW_EVERY_MS, leaseMs / 3);
    // A renewal that fails (the database away) lets the lease run out; Temporal still sees this attempt alive by its heartbeats.
    this.#timer = setInterval(() => void this.#renew().catch(() => {}), this.#renewEveryMs);
  }

  /**
   * Whether no other attempt can have taken the message over: without a
   * query while the last confirmation is recent (the lease runs well past
   * now), else by a renewal.
   */
  async stillHeld(): Promise<boolean> {
    if (this.#lost) return false;
    if (Date.now() - this.#confirmedFrom < this.#renewEveryMs) return true;
    return this.#renew();
  }

  release(): Promise<void> {
    this.stop();
    return this.#lost ? Promise.resolve() : this.#store.releaseHandoff(this.#ref.companyId, this.#ref.messageId, this.#token);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #renew(): Promise<boolean> {
    if (this.#lost) return false;
    const from = Date.now();
    const held = await this.#store.renewHandoff(this.#ref.companyId, this.#ref.messageId, this.#token, this.leaseMs);
    if (held) {
      this.#confirmedFrom = Math.max(this.#confirmedFrom, from);
    } else {
      this.#lost = true;
      this.stop();
    }
    return held;
  }
}

export interface LifecycleDependencies {
  readonly store: MessageStore;
  readonly provider: EmailProvider;
  readonly credits: CreditsPort;
  readonly suppressions: SuppressionsPort;
  readonly signingKeys: SigningKeysPort;
  /** The sending pace (SendingPace). */
  readonly pace: PacePort;
  readonly clock?: () => Date;
  /** How often a running handoff calls its `heartbeat`. Default 1000 ms. */
  readonly heartbeatEveryMs?: number;
  /** The handoff lease: HANDOFF_LEASE_MS unless told. */
  readonly handoffLeaseMs?: number;
}

/** One message of a company. */
export interface MessageRef {
  readonly companyId: string;
  readonly messageId: string;
}

/** Charges the message's credit and hands it to the email service. */
export interface HandOffCommand extends MessageRef {
  /** Told the attempt is alive while it runs (the Temporal activity's heartbeats). */
  readonly progress?: HandOffProgress | undefined;
}

/** One attempt of sending a message, as its workflow runs it. */
export interface HandOffAttemptCommand extends HandOffCommand {
  /** The email service the message goes to: the key of its sending pace. */
  readonly provider: string;
  /** A campaign copy takes the sending pace at a lower priority than transactional mail. */
  readonly priority?: "transactional" | "campaign" | undefined;
}

export interface HandOffAttemptResult {
  readonly status: MessageStatusName;
  /** Milliseconds to wait for the sending pace; 0 when the attempt is over. */
  readonly waitMs: number;
}

/** What applying a provider event did (undefined from applyProviderEvent: no message has that provider message id). */
export interface ProviderEventOutcome {
  /** False for a repeated report: nothing changed. */
  readonly applied: boolean;
  readonly messageId: string;
  readonly companyId: string;
  readonly status: MessageStatusName;
}

/** What the runner of a handoff (the Temporal activity) hears while it runs. */
export interface HandOffProgress {
  /**
   * Called when the handoff starts and then every `heartbeatEveryMs` until it
   * ends, whatever the email service does meanwhile: the runner learns
   * that the attempt is alive (and, without heartbeats, that it died).
   */
  readonly heartbeat: () => void;
}

/**
 * A webhook event's data (spec: Event kinds): a transactional message's
 * fields with `extra`, or a campaign copy's fields (campaignId,
 * recipientId, contactId, email, occurredAt), which carry no extras.
 */
function transactionalData(message: StoredMessage, at: Date, extra: Record<string, unknown> = {}): Record<string, unknown> {
  if (message.campaign) {
    return {
      campaignId: message.campaign.campaignId,
      recipientId: message.id,
      contactId: message.campaign.contactId,
      email: message.recipient,
      occurredAt: at.toISOString(),
    };
  }
  return { messageId: message.id, email: message.recipient, occurredAt: at.toISOString(), ...extra };
}

export class MessageLifecycle {
  readonly #deps: LifecycleDependencies;
  readonly #now: () => Date;

  constructor(deps: LifecycleDependencies) {
    this.#deps = deps;
    this.#now = deps.clock ?? (() => new Date());
  }

  get providerName(): string {
    return this.#deps.provider.name;
  }

  #notSent(message: StoredMessage, to: "failed" | "suppressed", errorCode: "MAIL_CREDITS_EXHAUSTED" | "SENDING_SUSPENDED" | "SUPPRESSED"): Move {
    const at = this.#now();
    return {
      to,
      at,
      eventType: to,
      errorCode,
      webhooks: [{ event: "failed", data: transactionalData(message, at, { error: errorCode }) }],
    };
  }

  /**
   * The status of a message past its handoff, once what must follow that
   * status is done: a `rejected` message gets its credit back. The move to
   * `rejected` and the refund are two steps (two capabilities); if the
   * refund failed or the worker died in between, the retried activity comes
   * here, and the refund is idempotent.
   */
  async #settled(message: StoredMessage): Promise<MessageStatusName> {
    if (message.status === "rejected") await this.#deps.credits.refundMessage({ companyId: message.companyId, messageId: message.id });
    return message.status;
  }

  /** The message waits for the sending pace: visibly `deferred`. */
  async markDeferred(command: MessageRef): Promise<MessageStatusName> {
    return (await this.#deps.store.move(command.companyId, command.messageId, { to: "deferred", at: this.#now(), eventType: "deferred" })).status;
  }

  /**
   * Charges the credit and hands the message to the email service. Answers
   * the status afterwards; throws TransientHandoffError when the service
   * could not take it right now (the activity is retried, never charged again).
   */
  async handOff(command: HandOffCommand): Promise<MessageStatusName> {
    return this.#beating(command.progress, async () => this.#handOff(await this.#loadCandidate(command)));
  }

  /**
   * One attempt of sending, as the message's workflow runs it (one activity
   * per message in the common case): ends the message as `suppressed` if
   * its address is; else asks the sending pace for a slot (it answers 0
   * when one was taken, or how long to wait for one: then nothing else is
   * done); else hands it off (handOff). The message is read once for the
   * whole attempt.
   */
  async attemptHandOff(command: HandOffAttemptCommand): Promise<HandOffAttemptResult> {
    const { companyId, messageId } = command;
    const candidate = await this.#loadCandidate(command);
    const { message } = candidate;
    if (isPastHandoff(message.status)) return { status: await this.#settled(message), waitMs: 0 };
    if (await this.#deps.suppressions.isSuppressed({ companyId, email: message.recipient })) {
      const moved = await this.#deps.store.move(companyId, messageId, this.#notSent(message, "suppressed", "SUPPRESSED"));
      return { status: moved.status, waitMs: 0 };
    }
    // A company that may not send takes no slot of the pace: its message fails at once.
    if (!candidate.companyMaySend) return { status: await this.#beating(command.progress, () => this.#handOff(candidate)), waitMs: 0 };
    const waitMs = await this.#deps.pace.reserve({ provider: command.provider, companyId, priority: command.priority });
    if (waitMs > 0) return { status: message.status, waitMs };
    return { status: await this.#beating(command.progress, () => this.#handOff(candidate)), waitMs: 0 };
  }

  async #loadCandidate({ companyId, messageId }: MessageRef): Promise<HandoffCandidate> {
    const candidate = await this.#deps.store.loadForHandoff(companyId, messageId);
    if (!candidate) throw new Error(`message ${messageId} of company ${companyId} does not exist`);
    return candidate;
  }

  /** Runs `work` with `progress` told it is alive at once and then every heartbeatEveryMs. */
  async #beating<T>(progress: HandOffProgress | undefined, work: () => Promise<T>): Promise<T> {
    if (!progress) return work();
    progress.heartbeat();
    const beat = setInterval(progress.heartbeat, this.#deps.heartbeatEveryMs ?? 1_000);
    try {
      return await work();
    } finally {
      clearInterval(beat);
    }
  }

  async #handOff({ message, companyMaySend }: HandoffCandidate): Promise<MessageStatusName> {
    if (isPastHandoff(message.status)) return this.#settled(message);
    const { store, credits } = this.#deps;
    const { companyId, id: messageId } = message;

    // A retry may find the credit charged by an attempt that then crashed:
    // the refunds below return it (they do nothing when nothing was charged).
    const credit = { companyId, messageId };
    if (!companyMaySend) {
      await credits.refundMessage(credit);
      return (await store.move(companyId, messageId, this.#notSent(message, "failed", "SENDING_SUSPENDED"))).status;
    }
    let dkim;
    try {
      dkim = (await this.#deps.signingKeys.resolveSender(companyId, message.senderId ?? undefined)).dkim;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The sender or its domain can no longer send (deleted, unverified).
      await credits.refundMessage(credit);
      return (await store.move(companyId, messageId, this.#notSent(message, "failed", "SENDING_SUSPENDED"))).status;
    }

    // The lease: from here until the answer is recorded, no other attempt
    // sends this message (one that Temporal started because this worker
    // looked dead, one whose activity timed out, a restarted workflow).
    const leaseMs = this.#deps.handoffLeaseMs ?? HANDOFF_LEASE_MS;
    const claimedFrom = Date.now();
    const claim = await store.claimHandoff(companyId, messageId, leaseMs);
    if (!claim.claimed) {
      if (isPastHandoff(claim.status)) return this.#settled({ ...message, status: claim.status });
      throw new HandoffInProgressError(Math.max(claim.heldForMs, 1_000));
    }
    const lease = new HeldLease(store, { companyId, messageId }, claim.token, leaseMs, claimedFrom);
    try {
      const charge = await credits.chargeForMessage(credit);
      if (charge === "insufficient") {
        return (await store.move(companyId, messageId, this.#notSent(message, "failed", "MAIL_CREDITS_EXHAUSTED"))).status;
      }
      return await this.#handOver(message, dkim, lease);
    } finally {
      lease.stop();
    }
  }

  /** Hands the claimed message to the email service and records its answer. */
  async #handOver(message: StoredMessage, dkim: OutgoingEmail["dkim"], lease: HeldLease): Promise<MessageStatusName> {
    const { store, credits, provider } = this.#deps;
    const { companyId, id: messageId } = message;
    const attachments = message.hasAttachments ? await store.attachments(companyId, messageId) : [];
    // This attempt stalled (the credit's charge, a pause of the process)
    // past its lease and another one took the message over: it may be at
    // the relay now, so this one must not send.
    if (!(await lease.stillHeld())) throw new HandoffInProgressError(lease.leaseMs);
    const result = await provider.send({
      messageId,
      companyId,
      from: { email: message.fromEmail, ...(message.fromName ? { name: message.fromName } : {}) },
      to: { email: message.recipient, ...(message.recipientName ? { name: message.recipientName } : {}) },
      ...(message.replyTo ? { replyTo: message.replyTo } : {}),
      subject: message.subject,
      ...(message.html !== null ? { html: message.html } : {}),
      ...(message.text !== null ? { text: message.text } : {}),
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(message.headers ? { headers: message.headers } : {}),
      dkim,
    });

    const at = this.#now();
    switch (result.outcome) {
      // Recorded even when this attempt lost its lease while at the relay:
      // the relay has this copy, and the record is what keeps any later
      // attempt (the one that took over may be turned away and retried)
      // from sending another. An attempt that took over finds the message
      // `sent` and records nothing.
      case "accepted": {
        const move: Move = {
          to: "sent",
          at,
          eventType: "sent",
          provider: provider.name,
          providerMessageId: result.providerMessageId,
          webhooks: [
            // Spec: message.accepted is a transactional message's only.
            ...(message.campaign
              ? []
              : [{ event: "message.accepted", data: transactionalData(message, at, { providerMessageId: result.providerMessageId }) }]),
            { event: "sent", data: transactionalData(message, at) },
          ],
        };
        return (await this.#recordAnswer(() => store.move(companyId, messageId, move))).status;
      }
      case "rejected": {
        // Only the lease's holder decides the message's fate: when another
        // attempt took it over meanwhile, its own answer stands (the relay
        // may take its copy), and this one's retry finds it recorded.
        if (!(await this.#recordAnswer(() => lease.stillHeld()))) throw new HandoffInProgressError(lease.leaseMs);
        // Spec: a message permanently rejected by the email service gets its credit back.
        const moved = await this.#recordAnswer(() => store.move(companyId, messageId, {
          to: "rejected",
          at,
          eventType: "reject",
          detail: result.reason,
          // Spec, Event kinds: `failed` carries the sent fields plus `error`, nothing more (the reason is in the message's events).
          webhooks: [{ event: "failed", data: transactionalData(message, at, { error: "REJECTED" }) }],
        }));
        // A separate step: when it fails, the retried activity finds the
        // message `rejected` and finishes it (see #settled).
        await credits.refundMessage({ companyId, messageId });
        return moved.status;
      }
      case "failed_transient":
        // The service did not take it: the next attempt need not wait for this one's lease (if it still holds it).
        await lease.release().catch(() => {});
        throw new TransientHandoffError(`the email service could not take the message now: ${result.reason}`);
    }
  }

  /**
   * Records the email service's answer, trying again for a while when the
   * database fails: the service has the message now, and an attempt that
   * gave up here would be retried and send it a second time. Meanwhile the
   * attempt is alive for Temporal (heartbeats) and holds the lease.
   */
  async #recordAnswer<T>(record: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + RECORD_ANSWER_WITHIN_MS;
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2_000)) {
      try {
        return await record();
      } catch (error) {
        if (Date.now() + waitMs > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }

  /**
   * Applies an outcome reported by the email service. Idempotent on the
   * provider's event id: a repeated report changes nothing and answers
   * `applied: false`. Unknown provider message id: undefined (the caller
   * may report again later, e.g. when the event raced the handoff record).
   */
  async applyProviderEvent(event: ProviderEvent): Promise<ProviderEventOutcome | undefined> {
    const message = await this.#deps.store.findByProviderMessageId(this.#deps.provider.name, event.providerMessageId);
    if (!message) return undefined;
    const data = transactionalData(message, event.occurredAt);
    const moves: Record<ProviderEvent["type"], Move> = {
      delivered: { to: "delivered", at: event.occurredAt, eventType: "delivery", webhooks: [{ event: "delivered", data }] },
      bounced: { to: "bounced", at: event.occurredAt, eventType: "bounce", webhooks: [{ event: "bounced", data }] },
      complained: { to: "complained", at: event.occurredAt, eventType: "complaint", webhooks: [{ event: "complaint", data }] },
      // As a rejection at the handoff: the `failed` webhook with error REJECTED, and the credit back (below).
      rejected: { to: "rejected", at: event.occurredAt, eventType: "reject", webhooks: [{ event: "failed", data: { ...data, error: "REJECTED" } }] },
      delayed: { to: message.status, keepStatus: true, at: event.occurredAt, eventType: "delayed" },
    };
    const move = { ...moves[event.type], providerEventId: event.providerEventId, ...(event.detail ? { detail: event.detail } : {}) };

    const { store, suppressions } = this.#deps;
    if (event.type === "bounced" || event.type === "complained") {
      // Rule 1: a hard bounce or a complaint suppresses the address. Done
      // before the event is recorded: once it is, a repeated report changes
      // nothing, so a suppression that failed after it would never be made.
      // A report repeated after a failure in between suppresses again
      // (suppress is idempotent) and then records the event.
      if (await store.providerEventRecorded(event.providerEventId)) {
        return { applied: false, status: message.status, messageId: message.id, companyId: message.companyId };
      }
      await suppressions.suppress({
        companyId: message.companyId,
        email: message.recipient,
        reason: event.type === "bounced" ? "bounce" : "complaint",
        messageId: message.id,
      });
    }
    const result = await store.moveForProviderEvent(message.companyId, message.id, move);
    // Spec: a permanently rejected message gets its credit back. Idempotent, so
    // a repeated report finishes a refund that failed after the move.
    if (result.status === "rejected") await this.#deps.credits.refundMessage({ companyId: message.companyId, messageId: message.id });
    return { ...result, messageId: message.id, companyId: message.companyId };
  }
}
