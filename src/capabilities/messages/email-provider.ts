/**
 * The contract between our sending pipeline and "the email service behind
 * us" (an SMTP relay, a vendor API, or the local simulator).
 *
 * A provider does exactly two things for us:
 *   1. Handoff: `send()` gives one message to the service and reports, right
 *      away, whether the service took it (`accepted`), refused it for good
 *      (`rejected`), or could not be reached / asked us to come back later
 *      (`failed_transient`).
 *   2. Outcomes after acceptance (delivered, bounced, complained) arrive later
 *      and asynchronously, as `ProviderEvent`s pushed into a
 *      `ProviderEventSink`. How they arrive depends on the provider: the
 *      simulator calls the sink itself; a real service would feed it from its
 *      webhook / notification endpoint or from parsed DSN bounces.
 *
 * How the pipeline is expected to use the results (see the spec's message
 * statuses and credit rules):
 *   - accepted         -> message `sent`; keep `providerMessageId` to match
 *                         later events to the message.
 *   - rejected         -> message `rejected`; the credit is returned.
 *   - failed_transient -> nothing happened as far as we can tell; retry the
 *                         handoff later with the SAME `messageId`. No credit
 *                         is charged twice (credit rule 2).
 *   - bounced event    -> message `bounced`, address suppressed, credit kept.
 *   - complained event -> message `complained`, address suppressed.
 */

/** A mailbox, with an optional display name. */
export interface EmailAddress {
  readonly email: string;
  readonly name?: string;
}

/** DKIM signing material for the sender's verified domain. */
export interface DkimSigningKey {
  /** The `d=` domain, i.e. the company's verified sending domain. */
  readonly domainName: string;
  /** The `s=` selector published in DNS as `<selector>._domainkey.<domain>`. */
  readonly keySelector: string;
  /** RSA private key in PEM format. */
  readonly privateKey: string;
}

/** One fully rendered message, ready to hand to the email service. */
export interface OutgoingEmail {
  /**
   * Our message id (UUID), the `id` returned by POST /mail/v1/send. It is the
   * idempotency key of the handoff: see `EmailProvider.send`.
   */
  readonly messageId: string;
  /** Owning company; for tenant-aware providers and bookkeeping, never put in headers. */
  readonly companyId: string;
  readonly from: EmailAddress;
  readonly to: EmailAddress;
  readonly replyTo?: string;
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
  /**
   * Extra headers (e.g. List-Unsubscribe). Headers that the provider must
   * control itself (Message-ID, From, To, Subject, DKIM-Signature, MIME
   * structure, ...) are ignored here; see the adapters.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** When set, the message is DKIM-signed with this key before handoff. */
  readonly dkim?: DkimSigningKey;
  /**
   * Files sent with it: ordinary attachments, and inline images (with a
   * `contentId`, shown where the HTML says `cid:<contentId>`). Part of the
   * one MIME message that is built, signed and handed over.
   */
  readonly attachments?: readonly EmailAttachment[];
}

/** A file of an outgoing email. */
export interface EmailAttachment {
  readonly filename: string;
  readonly contentType: string;
  readonly content: Uint8Array;
  readonly contentId?: string;
}

/**
 * The service took the message. `providerMessageId` is the service's name for
 * it: every later `ProviderEvent` for this message carries the same value.
 */
export interface HandoffAccepted {
  readonly outcome: "accepted";
  readonly providerMessageId: string;
}

/**
 * The service refused the message for good (SMTP 5xx, invalid recipient,
 * unusable signing key...). Retrying the same message cannot succeed; the
 * credit is returned.
 */
export interface HandoffRejected {
  readonly outcome: "rejected";
  readonly permanent: true;
  /** Short, loggable reason (server reply or local check); never contains the body. */
  readonly reason: string;
}

/**
 * The handoff did not happen as far as we know (network error, timeout,
 * SMTP 4xx, provider closed). Retry later with the same `messageId`.
 */
export interface HandoffFailedTransient {
  readonly outcome: "failed_transient";
  readonly reason: string;
}

export type HandoffResult = HandoffAccepted | HandoffRejected | HandoffFailedTransient;

/**
 * An email service.
 *
 * IDEMPOTENCY CONTRACT. A handoff may be retried after a crash, a timeout or
 * an ambiguous failure (e.g. the connection dropped after the server got the
 * message but before we read its reply), so `send` must be idempotent per
 * `OutgoingEmail.messageId` as far as the service allows:
 *   - The simulator remembers every messageId it took (or refused) and answers
 *     a repeat with the same result and the same `providerMessageId`, without
 *     "sending" again and without emitting events again.
 *   - SMTP cannot deduplicate, so the SMTP adapter stamps a deterministic
 *     `Message-ID: <messageId@messageIdDomain>` on every attempt: a repeated
 *     attempt carries the same Message-ID, which lets the relay, the
 *     receiving servers and the recipient's client recognise the duplicate,
 *     and keeps `providerMessageId` stable across attempts. It also
 *     collapses concurrent in-process sends of one messageId into a single
 *     handoff.
 * Callers must therefore always retry with the same messageId, never mint a
 * new one for a retry.
 *
 * ERROR MAPPING. `send` resolves, it does not throw for service failures:
 *   - network errors, timeouts, SMTP 4xx, service-level problems (e.g. our own
 *     credentials refused)       -> `failed_transient`
 *   - SMTP 5xx on the message itself (MAIL FROM / RCPT TO / DATA) and local
 *     checks the message can never pass -> `rejected` (permanent)
 */
export interface EmailProvider {
  /** Short name for logs and configuration ("smtp", "simulator"). */
  readonly name: string;
  send(email: OutgoingEmail): Promise<HandoffResult>;
  /** Releases connections and timers. Later `send` calls fail transiently. */
  close(): Promise<void>;
}

/**
 * What an email service reports after the handoff. `delayed` (a delay or a
 * temporary failure it keeps retrying) is an event on the message with no
 * status change and no webhook; the others move the status.
 */
export type ProviderEventType = "delivered" | "bounced" | "complained" | "rejected" | "delayed";

/** An asynchronous outcome for a message the service accepted. */
export interface ProviderEvent {
  /**
   * Unique per event (services may deliver an event more than once; consumers
   * deduplicate on this id).
   */
  readonly providerEventId: string;
  /** The `providerMessageId` returned by the accepted handoff. */
  readonly providerMessageId: string;
  readonly type: ProviderEventType;
  readonly occurredAt: Date;
  /** Human-readable extra information, e.g. the remote server's bounce reply. */
  readonly detail?: string;
}

/**
 * Where a provider reports asynchronous outcomes. A rejected promise means
 * "not processed, report it again later": providers retry, so the sink must
 * be idempotent on `providerEventId`.
 */
export type ProviderEventSink = (event: ProviderEvent) => Promise<void>;
