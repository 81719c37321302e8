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
 * fingerprint (capabilities/idempotency) of every field of the command but
 * who sends and the key itself (where the key was written, header or body,
 * does not count), as the caller wrote them: the address is not normalised.
 * The command's field names are the contract's JSON names, and absent
 * fields and empty tags are left out as the contract's JSON form leaves
 * them out, so a field added to the send is part of what was asked when it
 * is sent, and changes nothing for the sends without it.
 */
export function sendFingerprint(command: SendCommand): Buffer {
  const { companyId: _company, origin: _origin, idempotencyKey: _key, idempotencyKeyHeader: _header, ...asked } = command;
  const fields: Record<string, JsonValue | undefined> = {
    ...asked,
    tags: asked.tags && Object.keys(asked.tags).length > 0 ? asked.tags : undefined,
  };
  const written: JsonObject = Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, JsonValue] => entry[1] !== undefined));
  return requestFingerprint(SEND_LABEL, written);
}
