import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { readSendKey, type SendKey } from "../../../capabilities/idempotency/index.ts";
import type { SendAnswer, SendCaller } from "../../../capabilities/messages/accept/accept-send.ts";
import type { MessageReader } from "../../../capabilities/messages/read/index.ts";
import { enumValueToJson } from "../../../contract/json-codec.ts";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../../../contract/names.ts";
import { type MailService, MessageStatusSchema, type SendMessageRequest } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import { messageStatusToProto, toMessageProto } from "./messages-to-proto.ts";

export interface MessagesDependencies {
  /** Accepts one send (src/capabilities/messages/accept). */
  readonly acceptSend: (caller: SendCaller, request: SendMessageRequest, key: SendKey) => Promise<SendAnswer>;
  readonly messages: MessageReader;
}

export type MessagesRpcs = Pick<ServiceImpl<typeof MailService>, "sendMessage" | "getMessage" | "listMessages">;

/** SendMessage, GetMessage and ListMessages: the contract's messages to and from the messages capability. */
export function messagesRpcs(deps: MessagesDependencies): MessagesRpcs {
  return {
    async sendMessage(req, ctx) {
      const caller = callerOf(ctx);
      // The send's key, read once (header or body): it names the message for the whole company,
      // the only idempotency of a send (the idempotency wrapper steps aside for SendMessage).
      const key = readSendKey(ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER), req.idempotencyKey);
      const answer = await deps.acceptSend({ companyId: caller.companyId, keyId: caller.keyId }, req, key);
      // Spec, Idempotency rules 2 and 4: the original message again, flagged both ways.
      if (answer.replayed) ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, "true");
      return { id: answer.id, status: messageStatusToProto(answer.status), replayed: answer.replayed };
    },
    async getMessage(req, ctx) {
      return { message: toMessageProto(await deps.messages.getMessage(callerOf(ctx).companyId, req.id)) };
    },
    async listMessages(req, ctx) {
      const page = await deps.messages.listMessages(callerOf(ctx).companyId, {
        limit: req.limit,
        cursor: req.cursor,
        // A number the contract does not declare goes on as its digits: the reader refuses it naming the field.
        status: req.status === undefined || req.status === 0 ? undefined : (enumValueToJson(MessageStatusSchema, req.status) ?? String(req.status)),
        q: req.q,
        since: req.since ? timestampDate(req.since) : undefined,
        tag: req.tag,
        recipient: req.recipient,
      });
      return { items: page.items.map(toMessageProto), nextCursor: page.nextCursor ?? undefined };
    },
  };
}
