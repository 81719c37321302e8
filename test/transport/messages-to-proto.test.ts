import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { MESSAGE_STATUSES, type MessageRecord } from "../../src/capabilities/messages/read/index.ts";
import { messageStatusToProto, toMessageProto } from "../../src/transport/connect/mail/mapping.ts";
import { MessageSchema, MessageStatus } from "../../src/gen/mail/v1/mail_pb.js";

const record: MessageRecord = {
  id: "3b8e6f4e-2f7c-4a0e-9d1b-0c4f6a7e8d9c",
  recipient: "alice@example.com",
  subject: "Your receipt",
  templateId: "7f8d9a66-0c1e-4c4b-9a56-8f0d6c1a2b3c",
  status: "delivered",
  providerMessageId: "prov-1",
  errorCode: null,
  createdAt: new Date("2025-03-01T10:00:00.123Z"),
  sentAt: new Date("2025-03-01T10:00:01.5Z"),
  lastEventAt: null,
  events: [
    { type: "sent", at: new Date("2025-03-01T10:00:01.5Z") },
    { type: "delivery", at: new Date("2025-03-01T10:00:05Z") },
  ],
  tags: { order: "1234" },
};

describe("toMessageProto", () => {
  it("maps every field; nulls stay unset", () => {
    const message = toMessageProto(record);
    expect(message.id).toBe(record.id);
    expect(message.status).toBe(MessageStatus.DELIVERED);
    expect(message.templateId).toBe(record.templateId);
    expect(message.errorCode).toBeUndefined();
    expect(message.lastEventAt).toBeUndefined();
    expect(message.createdAt && timestampDate(message.createdAt)).toEqual(record.createdAt);
    expect(message.events.map((e) => [e.type, e.at && timestampDate(e.at).toISOString()])).toEqual([
      ["sent", "2025-03-01T10:00:01.500Z"],
      ["delivery", "2025-03-01T10:00:05.000Z"],
    ]);
    expect(toJson(MessageSchema, message)).toEqual({
      id: record.id,
      recipient: "alice@example.com",
      subject: "Your receipt",
      templateId: record.templateId,
      status: "MESSAGE_STATUS_DELIVERED",
      providerMessageId: "prov-1",
      createdAt: "2025-03-01T10:00:00.123Z",
      sentAt: "2025-03-01T10:00:01.500Z",
      events: [
        { type: "sent", at: "2025-03-01T10:00:01.500Z" },
        { type: "delivery", at: "2025-03-01T10:00:05Z" },
      ],
      tags: { order: "1234" },
    });
  });

  it("maps every status to its own enum value; an unknown one to UNSPECIFIED", () => {
    const values = MESSAGE_STATUSES.map(messageStatusToProto);
    expect(new Set(values).size).toBe(MESSAGE_STATUSES.length);
    expect(values).not.toContain(MessageStatus.UNSPECIFIED);
    expect(messageStatusToProto("queued")).toBe(MessageStatus.QUEUED);
    expect(messageStatusToProto("suppressed")).toBe(MessageStatus.SUPPRESSED);
    expect(messageStatusToProto("toString")).toBe(MessageStatus.UNSPECIFIED);
    expect(messageStatusToProto("lost")).toBe(MessageStatus.UNSPECIFIED);
  });
});
