import type { JsonObject, JsonValue } from "../../shared/json.ts";
import type { AttachmentInput } from "../compose/attachments.ts";
import type { MessageStatusName } from "../statuses.ts";

/** Who sends a message. */
export type SendOrigin =
  /** A company's API key (POST /mail/v1/send). */
  | { readonly kind: "api_key"; readonly apiKeyId: string }
  /**
   * A signed-in member (a template's test send to their own address, a send
   * over the session door): a normal message with no API key behind it.
   */
  | { readonly kind: "member"; readonly memberId: string }
  /** An operator acting for the company (x-mail-company-id): a normal message with no API key behind it. */
  | { readonly kind: "operator" }
  /**
   * The service's own mail (sign-in links, invitations, double opt-in
   * confirmations): no API key makes it, and its one-time links must reach
   * the recipient only, so its content is sealed at rest and withheld from
   * every read.
   */
  | { readonly kind: "system" };

/**
 * One send, as the caller wrote it: the use case validates every field
 * (one VALIDATION_ERROR naming each bad one). Presence matters: an optional
 * field sent empty is not the same request as one not sent.
 */
export interface SendCommand {
  readonly companyId: string;
  readonly origin: SendOrigin;
  /** An address, or `{ email, name? }`. */
  readonly to?: JsonValue | undefined;
  readonly templateId?: string | undefined;
  /** The template's variables (strings, numbers, booleans, null). */
  readonly variables?: JsonObject | undefined;
  readonly subject?: string | undefined;
  readonly html?: string | undefined;
  readonly text?: string | undefined;
  /** The sender to send from; absent: the company's default sender. */
  readonly senderId?: string | undefined;
  readonly replyTo?: string | undefined;
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /** The key written in the request itself (`idempotencyKey`). */
  readonly idempotencyKey?: string | undefined;
  /** The `Idempotency-Key` header of the call, when it had one: the key "may be sent in the header instead". */
  readonly idempotencyKeyHeader?: string | undefined;
  /** Files sent with the message (compose/attachments.ts); absent or empty: none. */
  readonly attachments?: readonly AttachmentInput[] | undefined;
}

/** The answer to a send: the message, `queued`; `replayed` when the key named a message already. */
export interface SendResult {
  readonly id: string;
  readonly status: MessageStatusName;
  readonly replayed: boolean;
}
