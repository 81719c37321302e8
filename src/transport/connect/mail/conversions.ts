import type { ServiceImpl } from "@connectrpc/connect";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { notImplemented } from "../not-implemented.ts";

export type ConversionsRpcs = Pick<ServiceImpl<typeof MailService>, "recordConversion">;

/** RecordConversion: not built yet (501 NOT_IMPLEMENTED). */
export function conversionsRpcs(): ConversionsRpcs {
  return { recordConversion: notImplemented("RecordConversion") };
}
