import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Value } from "@bufbuild/protobuf/wkt";
import type { Principal } from "../../../capabilities/accounts/principal.ts";
import type { SendCommand, SendResult } from "../../../capabilities/messages/accept/types.ts";
import type { GetMessageCommand, ListMessagesCommand, MessageRecord } from "../../../capabilities/messages/read/index.ts";
import type { JsonValue } from "../../../capabilities/shared/json.ts";
import type { Page } from "../../../capabilities/shared/paging.ts";
import { MESSAGE_STATUS_TABLE } from "../../../contract/enums.ts";
import { enumValueToJson } from "../../../contract/json-codec.ts";
import {
  type GetMessageRequest,
  type ListMessagesRequest,
  type ListMessagesResponseSchema,
  MessageEventSchema,
  MessageSchema,
  MessageStatus,
  MessageStatusSchema,
  type Message,
  type SendMessageRequest,
  type SendMessageResponseSchema,
} from "../../../gen/mail/v1/mail_pb.js";

/**
 * The messages of MailService (SendMessage, GetMessage, ListMessages)
 * between the contract and the messages capability, both ways: requests to
 * commands, results to responses.
 */

const STATUS: ReadonlyMap<string, MessageStatus> = new Map(MESSAGE_STATUS_TABLE.map((s) => [s.name, s.value]));

/** A stored status as the contract enum; a value the contract does not know is UNSPECIFIED, not an error. */
export function messageStatusToProto(status: string): MessageStatus {
  return STATUS.get(status) ?? MessageStatus.UNSPECIFIED;
}

/**
 * A google.protobuf.Value as the JSON value it holds; undefined when it
 * holds none (unset, or a Value without a kind). Inside a struct or a list
 * a Value without a kind is null: JSON has no absent member.
 */
export function jsonOfValue(value: Value | undefined): JsonValue | undefined {
  const kind = value?.kind;
  switch (kind?.case) {
    case undefined:
      return undefined;
    case "nullValue":
      return null;
    case "numberValue":
    case "stringValue":
    case "boolValue":
      return kind.value;
    case "structValue":
      // fromEntries defines own properties, so a key like "__proto__" stays data.
      return Object.fromEntries(Object.entries(kind.value.fields).map(([key, member]) => [key, jsonOfValue(member) ?? null]));
    case "listValue":
      return kind.value.values.map((member) => jsonOfValue(member) ?? null);
  }
}

function sendOriginOf(caller: Pick<Principal, "keyId" | "actor">): SendCommand["origin"] {
  switch (caller.actor.kind) {
    case "key":
      return { kind: "api_key", apiKeyId: caller.keyId };
    case "member":
      return { kind: "member", memberId: caller.actor.memberId };
    case "operator":
      return { kind: "operator" };
  }
}

/**
 * A send as the messages capability takes it, from the caller's API key (or
 * a member or operator, who sends with no key).
 * `keyHeader`: the call's `Idempotency-Key` header (null when absent); the
 * capability reads it with the body's key.
 */
export function sendCommandOf(req: SendMessageRequest, caller: Pick<Principal, "companyId" | "keyId" | "actor">, keyHeader: string | null): SendCommand {
  return {
    companyId: caller.companyId,
    origin: sendOriginOf(caller),
    to: jsonOfValue(req.to),
    templateId: req.templateId,
    variables: req.variables,
    subject: req.subject,
    html: req.html,
    text: req.text,
    senderId: req.senderId,
    replyTo: req.replyTo,
    tags: req.tags,
    idempotencyKey: req.idempotencyKey,
    idempotencyKeyHeader: keyHeader ?? undefined,
    // A repeated field has no presence: none sent is none.
    attachments:
      req.attachments.length > 0
        ? req.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content, contentId: a.contentId }))
        : undefined,
  };
}

export function sendMessageResponseOf(result: SendResult): MessageInitShape<typeof SendMessageResponseSchema> {
  return { id: result.id, status: messageStatusToProto(result.status), replayed: result.replayed };
}

export function getMessageCommandOf(req: GetMessageRequest, companyId: string): GetMessageCommand {
  return { companyId, id: req.id };
}

export function listMessagesCommandOf(req: ListMessagesRequest, companyId: string): ListMessagesCommand {
  return {
    companyId,
    limit: req.limit,
    cursor: req.cursor,
    // A number the contract does not declare goes on as its digits: the log refuses it naming the field.
    status: req.status === undefined || req.status === 0 ? undefined : (enumValueToJson(MessageStatusSchema, req.status) ?? String(req.status)),
    q: req.q,
    since: req.since ? timestampDate(req.since) : undefined,
    tag: req.tag,
    recipient: req.recipient,
  };
}

export function listMessagesResponseOf(page: Page<MessageRecord>): MessageInitShape<typeof ListMessagesResponseSchema> {
  return { items: page.items.map(toMessageProto), nextCursor: page.nextCursor ?? undefined };
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
