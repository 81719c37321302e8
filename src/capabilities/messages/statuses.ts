/**
 * Message statuses (spec: States and transitions) and the moves between
 * them. A move not listed here is refused, so late or repeated provider
 * events can never take a message backwards (a `delivered` arriving after a
 * `complained` records the event but keeps the status).
 */
export type MessageStatusName =
  | "queued"
  | "deferred"
  | "processing"
  | "sent"
  | "delivered"
  | "bounced"
  | "complained"
  | "rejected"
  | "failed"
  | "suppressed";

const MOVES: Readonly<Record<MessageStatusName, readonly MessageStatusName[]>> = {
  queued: ["deferred", "processing", "failed", "suppressed"],
  deferred: ["processing", "failed", "suppressed"],
  processing: ["sent", "rejected", "failed"],
  // Spec: "any -> rejected" when the email service permanently rejects; after
  // the handoff that is a service that accepted, then refused to deliver
  // (SES's Reject). A delivered message is past it.
  sent: ["delivered", "bounced", "complained", "rejected"],
  delivered: ["bounced", "complained"],
  bounced: [],
  complained: [],
  rejected: [],
  failed: [],
  suppressed: [],
};

/** The statuses a message may be in when it moves to `to`. */
export function statusesBefore(to: MessageStatusName): MessageStatusName[] {
  return (Object.keys(MOVES) as MessageStatusName[]).filter((from) => MOVES[from].includes(to));
}

export function isFinal(status: MessageStatusName): boolean {
  return MOVES[status].length === 0;
}

/** Statuses of a message not handed over yet: a handoff attempt may claim it (`processing`: a retried attempt). */
export const BEFORE_HANDOFF: readonly MessageStatusName[] = ["queued", "deferred", "processing"];

/** Statuses after which nothing more is handed to the email service. */
export function isPastHandoff(status: MessageStatusName): boolean {
  return !BEFORE_HANDOFF.includes(status);
}

/** Error codes of messages that were not sent (spec: Message.errorCode). */
export type MessageErrorCode = "MAIL_CREDITS_EXHAUSTED" | "SENDING_SUSPENDED" | "SUPPRESSED";
