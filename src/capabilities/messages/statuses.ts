import { MESSAGE_STATUS_TABLE, type MessageStatusName } from "../../contract/enums.ts";

export type { MessageStatusName };

/**
 * Message statuses (spec: States and transitions) and the moves between
 * them, declared once in the contract (`mail.v1.MessageStatus`, option
 * `moves_to`). A move not listed there is refused, so late or repeated
 * provider events can never take a message backwards (a `delivered`
 * arriving after a `complained` records the event but keeps the status).
 */
const MOVES: ReadonlyMap<MessageStatusName, readonly MessageStatusName[]> = new Map(MESSAGE_STATUS_TABLE.map((s) => [s.name, s.movesTo]));

/** Every status, in the contract's order (as stored in `message.status`). */
export const MESSAGE_STATUSES: readonly MessageStatusName[] = MESSAGE_STATUS_TABLE.map((s) => s.name);

export function isMessageStatus(value: string): value is MessageStatusName {
  return MOVES.has(value as MessageStatusName);
}

/** The statuses a message may be in when it moves to `to`. */
export function statusesBefore(to: MessageStatusName): MessageStatusName[] {
  return MESSAGE_STATUSES.filter((from) => MOVES.get(from)?.includes(to));
}

/** No move leaves it: nothing more happens to the message's status. */
export function isFinal(status: MessageStatusName): boolean {
  return (MOVES.get(status) ?? []).length === 0;
}

/** Statuses of a message not handed over yet: a handoff attempt may claim it (`processing`: a retried attempt). */
export const BEFORE_HANDOFF: readonly MessageStatusName[] = ["queued", "deferred", "processing"];

/** Statuses after which nothing more is handed to the email service. */
export function isPastHandoff(status: MessageStatusName): boolean {
  return !BEFORE_HANDOFF.includes(status);
}

/** Error codes of messages that were not sent (spec: Message.errorCode). */
export type MessageErrorCode = "MAIL_CREDITS_EXHAUSTED" | "SENDING_SUSPENDED" | "SUPPRESSED";
