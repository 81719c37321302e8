import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageContentRecord, MessageLog } from "../../../capabilities/messages/read/index.ts";
import type { GetMessageContentResponseSchema, MessageContentService } from "../../../gen/mail/v1/message_content_pb.js";
import { callerOf } from "../context.ts";

/**
 * MessageContentService (proto/mail/v1/message_content.proto): the content
 * of a message as sent, for member sessions and operators (API keys are
 * refused by the contract's refuse_api_keys, before this runs). Its one
 * request maps to the message log's `content` command; the answer's null
 * fields stay unset.
 */
export function messageContentServiceImpl(log: Pick<MessageLog, "content">): ServiceImpl<typeof MessageContentService> {
  return {
    async getMessageContent(req, ctx) {
      return messageContentResponseOf(await log.content({ companyId: callerOf(ctx).companyId, id: req.id }));
    },
  };
}

function messageContentResponseOf(message: MessageContentRecord): MessageInitShape<typeof GetMessageContentResponseSchema> {
  return {
    id: message.id,
    html: message.html ?? undefined,
    text: message.text ?? undefined,
    fromEmail: message.fromEmail,
    fromName: message.fromName ?? undefined,
    replyTo: message.replyTo ?? undefined,
    withheld: message.withheld,
  };
}
