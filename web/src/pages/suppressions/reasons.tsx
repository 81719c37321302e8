import { SuppressionReason, SuppressionReasonSchema } from "@gen/mail/v1/suppressions_pb.js";
import { enumEntries, enumName } from "../../app/enums.ts";

/** The reasons of the contract (`bounce`, `complaint`, `manual`), by the name the REST answers and the URL use. */
export const REASONS = enumEntries<SuppressionReason>(SuppressionReasonSchema);

/** What each reason means, in the screen's words. */
export const REASON_HINTS: Record<SuppressionReason, string> = {
  [SuppressionReason.UNSPECIFIED]: "",
  [SuppressionReason.BOUNCE]: "a message to it bounced permanently",
  [SuppressionReason.COMPLAINT]: "the recipient reported a message as spam",
  [SuppressionReason.MANUAL]: "added by hand",
};

export function ReasonBadge({ reason }: { reason: SuppressionReason }) {
  return <span className={reason === SuppressionReason.MANUAL ? "badge" : "badge badge-bad"}>{enumName(REASONS, reason)}</span>;
}
