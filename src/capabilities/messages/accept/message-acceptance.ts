import { randomUUID } from "node:crypto";
import { ApiError } from "../../../contract/api-error.ts";
import { sanitizeEmailHtml } from "../compose/sanitize-html.ts";
import { renderMessageContent } from "../compose/template.ts";
import { type ValidatedSend, validateSend } from "../compose/validate-send.ts";
import type { KeyedMessage, MessageStore, StoredMessage } from "../ports.ts";
import type { SenderDirectoryPort, TemplatesPort, WalletPort } from "./ports.ts";
import { sendFingerprint } from "./send-fingerprint.ts";
import type { SendCommand, SendResult } from "./types.ts";

export interface MessageAcceptanceDependencies {
  readonly store: MessageStore;
  readonly senders: SenderDirectoryPort;
  readonly templates: TemplatesPort;
  readonly wallet: WalletPort;
  /** Called once the message is committed (starts its workflow). */
  readonly onAccepted: (message: StoredMessage) => void;
}

interface Content {
  readonly subject: string;
  readonly html: string | null;
  readonly text: string | null;
  readonly templateId: string | null;
}

/**
 * Accepting sends: POST /mail/v1/send, and the service's own mail (sign-in
 * links, double opt-in confirmations), which takes the same path with a
 * `system` origin. Checks, composes and durably records one message as
 * `queued`. The answer (202) is given only after the row is committed; the
 * message's workflow is started right after (and by the outbox relay if
 * Temporal cannot be reached now), so an accepted message is never lost.
 *
 * Order of checks: the request (400), the template (404), the sender (404,
 * 409 SENDER_NOT_VERIFIED), the wallet (402 INSUFFICIENT_CREDITS: nothing
 * queued). Suppressed addresses are accepted and end as `suppressed`.
 *
 * With a template, its subject, html and text are rendered with the
 * variables; a subject, html or text sent alongside replaces the template's
 * (and is not rendered). HTML is sanitised after rendering.
 */
export class MessageAcceptance {
  readonly #deps: MessageAcceptanceDependencies;

  constructor(deps: MessageAcceptanceDependencies) {
    this.#deps = deps;
  }

  async send(command: SendCommand): Promise<SendResult> {
    const send = validateSend(command);
    const { companyId } = command;
    const deps = this.#deps;

    // The key names the message for the whole company (spec, Idempotency rule
    // 4): a later call with it, from any key of the company, gets the original
    // message back and nothing new is sent, if it asks for the same thing.
    // This is a send's only idempotency (the per-API-key records of other
    // POSTs are not kept for it): concurrent sends with one key meet at the
    // message's unique key, and the losers answer the winner's message.
    const fingerprint = send.idempotencyKey ? sendFingerprint(command) : null;
    if (send.idempotencyKey) {
      const existing = await deps.store.findByIdempotencyKey(companyId, send.idempotencyKey);
      if (existing) return originalMessage(existing, fingerprint);
    }

    const content = await this.#compose(companyId, send);
    const sender = await deps.senders.checkSender(companyId, send.senderId);
    if (!(await deps.wallet.hasCredits({ companyId }))) {
      throw new ApiError("INSUFFICIENT_CREDITS", "No Mail credits left: nothing was queued. Add credits and send again.");
    }

    const system = command.origin.kind === "system";
    const { message, created } = await deps.store.insertQueued({
      id: randomUUID(),
      companyId,
      apiKeyId: command.origin.kind === "api_key" ? command.origin.apiKeyId : null,
      idempotencyKey: send.idempotencyKey ?? null,
      requestFingerprint: fingerprint,
      recipient: send.to.email,
      recipientName: send.to.name ?? null,
      senderId: sender.senderId,
      fromEmail: sender.email,
      fromName: sender.name ?? null,
      replyTo: send.replyTo ?? null,
      subject: content.subject,
      html: content.html === null ? null : sanitizeEmailHtml(content.html),
      text: content.text,
      templateId: content.templateId,
      tags: send.tags,
      ...(system ? { system } : {}),
    });
    if (!created) return originalMessage(message, fingerprint);
    deps.onAccepted(message);
    return { id: message.id, status: "queued", replayed: false };
  }

  async #compose(companyId: string, send: ValidatedSend): Promise<Content> {
    if (!send.templateId) {
      return { subject: send.subject ?? "", html: send.html ?? null, text: send.text ?? null, templateId: null };
    }
    const template = await this.#deps.templates.getTemplate(companyId, send.templateId);
    const rendered = renderMessageContent(
      { subject: template.subject, html: template.html, ...(template.text ? { text: template.text } : {}) },
      send.variables,
      { subject: send.subject, html: send.html, text: send.text },
    );
    return {
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text ?? null,
      templateId: template.id,
    };
  }
}

/**
 * The answer to a send whose key already names a message: the same answer
 * as the first time (the message's id, `queued`: the send answer reports
 * the acceptance; the message log has its status since) with
 * `replayed: true`, when the send asks for what created it (the fingerprint
 * ignores where the key was written); 409 IDEMPOTENCY_CONFLICT when it asks
 * for something else. A message kept without a fingerprint counts as the
 * same request.
 */
function originalMessage(existing: KeyedMessage, fingerprint: Uint8Array | null): SendResult {
  if (existing.requestFingerprint && fingerprint && !sameBytes(existing.requestFingerprint, fingerprint)) {
    throw new ApiError("IDEMPOTENCY_CONFLICT", "Idempotency key already used with a different body.");
  }
  return { id: existing.id, status: "queued", replayed: true };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
