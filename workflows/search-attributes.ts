import { defineSearchAttributeKey, SearchAttributeType } from "@temporalio/common";

/**
 * Search attributes of message workflows: operators find a message in the
 * Temporal UI with e.g. `MailStatus = "deferred" AND MailCompanyId = "…"`.
 * They are registered on the dev server at start (src/runtime) and through
 * the operator service on a real cluster.
 */
export const MAIL_COMPANY_ID = defineSearchAttributeKey("MailCompanyId", SearchAttributeType.KEYWORD);
export const MAIL_STATUS = defineSearchAttributeKey("MailStatus", SearchAttributeType.KEYWORD);
export const MAIL_RECIPIENT_DOMAIN = defineSearchAttributeKey("MailRecipientDomain", SearchAttributeType.KEYWORD);
export const MAIL_MESSAGE_ID = defineSearchAttributeKey("MailMessageId", SearchAttributeType.KEYWORD);
