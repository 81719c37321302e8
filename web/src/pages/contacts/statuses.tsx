import { ContactStatus, ContactStatusSchema } from "@gen/mail/v1/mail_pb.js";
import { enumEntries, enumName } from "../../app/enums.ts";

/** The contact statuses of the contract, by the name the REST answers and the URL use (`subscribed`, `pending`, ...). */
export const CONTACT_STATUSES = enumEntries<ContactStatus>(ContactStatusSchema);

/** Statuses the service set after a bounce, a complaint or a suppression: the address gets no more mail. */
const BLOCKED = new Set<ContactStatus>([ContactStatus.SUPPRESSED, ContactStatus.BOUNCED, ContactStatus.COMPLAINED]);

export function ContactStatusBadge({ status }: { status: ContactStatus }) {
  const tone = status === ContactStatus.SUBSCRIBED ? "badge badge-ok" : BLOCKED.has(status) ? "badge badge-bad" : "badge";
  return <span className={tone}>{enumName(CONTACT_STATUSES, status)}</span>;
}

/** What each status means, in the screen's words (the contract's rules). */
export const STATUS_MEANING: Readonly<Record<ContactStatus, string>> = {
  [ContactStatus.UNSPECIFIED]: "",
  [ContactStatus.SUBSCRIBED]: "gave consent: receives marketing email",
  [ContactStatus.PENDING]: "no consent yet (or a double opt-in not confirmed): no marketing email",
  [ContactStatus.UNSUBSCRIBED]: "unsubscribed: no marketing email; kept whatever a later write says",
  [ContactStatus.SUPPRESSED]: "on the suppression list (added by hand): no email at all",
  [ContactStatus.BOUNCED]: "the address bounced: no email at all",
  [ContactStatus.COMPLAINED]: "reported mail as spam: no email at all",
};
