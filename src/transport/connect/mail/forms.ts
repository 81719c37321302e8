import type { ServiceImpl } from "@connectrpc/connect";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { notImplemented } from "../not-implemented.ts";

export type FormsRpcs = Pick<ServiceImpl<typeof MailService>, "listForms">;

/** ListForms: not built yet (501 NOT_IMPLEMENTED). */
export function formsRpcs(): FormsRpcs {
  return { listForms: notImplemented("ListForms") };
}
