import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MessageEventSchema, MessageSchema, MessageStatus, type Message } from "../../../gen/mail/v1/mail_pb.js";
import type { MessageRecord } from "../../../capabilities/messages/read/types.ts";
import { MESSAGE_STATUS_TABLE } from "../../../contract/enums.ts";

const STATUS: ReadonlyMap<string, MessageStatus> = new Map(MESSAGE_STATUS_TABLE.map((s) => [s.name, s.value]));

/** A stored status as the contract enum; a value the contract does not know is UNSPECIFIED, not an error. */
export function messageStatusToProto(status: string): MessageStatus {
  return STATUS.get(status) ?? MessageStatus.UNSPECIFIED;
}

/** A message record as the contract's `Message`; null fields stay unset (JSON: absent). */
export function toMessageProto(record: MessageRecord): Message {
  return create(MessageSchema, {
    id: record.id,
    recipient: record.recipient,
    subject: record.subject,
    templateId: record.templateId ?? undefined,
    status: messageStatusToProto(record.status),
    providerMessageId: record.providerMessageId ?? undefined,
    errorCode: record.errorCode ?? undefined,
    createdAt: timestampFromDate(record.createdAt),
    sentAt: record.sentAt ? timestampFromDate(record.sentAt) : undefined,
    lastEventAt: record.lastEventAt ? timestampFromDate(record.lastEventAt) : undefined,
    events: record.events.map((event) => create(MessageEventSchema, { type: event.type, at: timestampFromDate(event.at) })),
    tags: { ...record.tags },
  });
}
