import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageContentReader } from "../../../capabilities/messages/read/index.ts";
import type { MessageContentService } from "../../../gen/mail/v1/message_content_pb.js";
import { callerOf } from "../context.ts";

/**
 * MessageContentService (proto/mail/v1/message_content.proto): the content
 * of a message as sent, for member sessions and operators (API keys are
 * refused by the contract's refuse_api_keys, before this runs).
 */
export function messageContentServiceImpl(content: MessageContentReader): ServiceImpl<typeof MessageContentService> {
  return {
    async getMessageContent(req, ctx) {
      const message = await content.getMessageContent(callerOf(ctx).companyId, req.id);
      return {
        id: message.id,
        html: message.html ?? undefined,
        text: message.text ?? undefined,
        fromEmail: message.fromEmail,
        fromName: message.fromName ?? undefined,
        replyTo: message.replyTo ?? undefined,
        withheld: message.withheld,
      };
    },
  };
}
