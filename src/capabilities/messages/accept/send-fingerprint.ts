import { requestFingerprint } from "../../idempotency/index.ts";
import type { JsonObject, JsonValue } from "../../shared/json.ts";
import type { SendCommand } from "./types.ts";

/**
 * The label of a send's fingerprint: the name the contract gives the send
 * (its RPC), as the per-key records of other POSTs are labelled. Messages
 * keep fingerprints made with it, so it is fixed: a retry of a stored send
 * must give the same bytes.
 */
const SEND_LABEL = "mail.v1.MailService/SendMessage";

/**
 * What a send asked for, as a message keeps it with its idempotency key: the
 * fingerprint (capabilities/idempotency) of the send's fields as the caller
 * wrote them, in the contract's JSON names, without the key itself (where
 * the key was written, header or body, does not count). Absent fields are
 * left out and so are empty tags, as the contract's JSON form leaves them
 * out; the address is taken as written, not normalised.
 */
export function sendFingerprint(command: SendCommand): Buffer {
  const tags = command.tags && Object.keys(command.tags).length > 0 ? command.tags : undefined;
  const fields: Record<string, JsonValue | undefined> = {
    to: command.to,
    templateId: command.templateId,
    variables: command.variables,
    subject: command.subject,
    html: command.html,
    text: command.text,
    senderId: command.senderId,
    replyTo: command.replyTo,
    tags,
  };
  const asked: JsonObject = Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, JsonValue] => entry[1] !== undefined));
  return requestFingerprint(SEND_LABEL, asked);
}
