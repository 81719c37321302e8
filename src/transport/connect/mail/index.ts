import type { ServiceImpl } from "@connectrpc/connect";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { type AccountLimits, accountRpcs } from "./account.ts";
import type { Contacts } from "../../../capabilities/contacts/index.ts";
import type { Credits } from "../../../capabilities/credits/index.ts";
import { contactRpcs } from "../contacts/index.ts";
import { type ConversionRecorder, conversionRpcs } from "../conversions/index.ts";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import { listFormsRpc } from "../forms/index.ts";
import { type MessagesDependencies, messagesRpcs } from "./messages.ts";

export { API_VERSION } from "./account.ts";

/** What the MailService handlers call. */
export interface MailServiceDeps extends MessagesDependencies {
  /** The limits GET /mail/v1/me reports. */
  readonly config: AccountLimits;
  /** The balance GET /mail/v1/me shows. */
  readonly credits: Pick<Credits, "balance">;
  readonly contacts: Contacts;
  /** Records conversions (src/capabilities/conversions). */
  readonly conversions: ConversionRecorder;
  /** Active sign-up forms (src/capabilities/forms). */
  readonly forms: SignupForms;
}

/**
 * The MailService. Each module maps between the contract's messages and one
 * capability (the rules live in src/capabilities); this file only puts them
 * together. Operations whose feature is not built yet answer NOT_IMPLEMENTED
 * (HTTP 501, gRPC UNIMPLEMENTED).
 */
export function mailServiceImpl(deps: MailServiceDeps): ServiceImpl<typeof MailService> {
  return {
    ...accountRpcs(deps.config, deps.credits),
    ...messagesRpcs(deps),
    ...contactRpcs(deps.contacts),
    ...listFormsRpc(deps.forms),
    ...conversionRpcs(deps.conversions),
  };
}
