import { getOption } from "@bufbuild/protobuf";
import { MessageStatus, MessageStatusSchema } from "@gen/mail/v1/mail_pb.js";
import { moves_to } from "@gen/mail/v1/options_pb.js";
import { enumEntries, enumName } from "../../app/enums.ts";

/** The message statuses of the contract, by the name the REST answers and the URL use (`queued`, `sent`, ...). */
export const STATUSES = enumEntries<MessageStatus>(MessageStatusSchema);

/**
 * Statuses after which nothing more happens to a message (the timeline stops
 * refreshing): those the contract lets move nowhere (`moves_to`). A
 * `delivered` message may still bounce or draw a complaint, so it is not one.
 */
const FINAL = new Set<MessageStatus>(MessageStatusSchema.values.filter((v) => getOption(v, moves_to).length === 0).map((v) => v.number as MessageStatus));

export function isFinalStatus(value: MessageStatus): boolean {
  return FINAL.has(value);
}

const GOOD = new Set<MessageStatus>([MessageStatus.SENT, MessageStatus.DELIVERED]);

export function StatusBadge({ status }: { status: MessageStatus }) {
  const tone = GOOD.has(status) ? "badge badge-ok" : isFinalStatus(status) ? "badge badge-bad" : "badge";
  return <span className={tone}>{enumName(STATUSES, status)}</span>;
}
