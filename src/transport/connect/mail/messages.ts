import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageAcceptance } from "../../../capabilities/messages/accept/message-acceptance.ts";
import type { MessageLog } from "../../../capabilities/messages/read/index.ts";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../../../contract/names.ts";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import {
  getMessageCommandOf,
  listMessagesCommandOf,
  listMessagesResponseOf,
  sendCommandOf,
  sendMessageResponseOf,
  toMessageProto,
} from "./mapping.ts";

export interface MessagesDependencies {
  /** Accepts sends (src/capabilities/messages/accept). */
  readonly acceptance: Pick<MessageAcceptance, "send">;
  readonly messages: Pick<MessageLog, "get" | "list">;
}

export type MessagesRpcs = Pick<ServiceImpl<typeof MailService>, "sendMessage" | "getMessage" | "listMessages">;

/** SendMessage, GetMessage and ListMessages: the contract's messages to and from the messages capability. */
export function messagesRpcs(deps: MessagesDependencies): MessagesRpcs {
  return {
    async sendMessage(req, ctx) {
      // The send's key (header or body) names the message for the whole company: the only
      // idempotency of a send (the idempotency wrapper steps aside for SendMessage).
      const result = await deps.acceptance.send(sendCommandOf(req, callerOf(ctx), ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER)));
      // Spec, Idempotency rules 2 and 4: the original message again, flagged both ways.
      if (result.replayed) ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, "true");
      return sendMessageResponseOf(result);
    },
    async getMessage(req, ctx) {
      return { message: toMessageProto(await deps.messages.get(getMessageCommandOf(req, callerOf(ctx).companyId))) };
    },
    async listMessages(req, ctx) {
      return listMessagesResponseOf(await deps.messages.list(listMessagesCommandOf(req, callerOf(ctx).companyId)));
    },
  };
}
