import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { ApiError } from "../../contract/api-error.ts";
import type { Config } from "../../config.ts";
import { enumValueToJson } from "../../contract/json-codec.ts";
import type { SendAnswer, SendCaller } from "../../capabilities/messages/accept/accept-send.ts";
import { type MessageReader, messageStatusToProto, toMessageProto } from "../../capabilities/messages/read/index.ts";
import {
  GetAccountResponseSchema,
  MailService,
  MessageStatusSchema,
  type SendMessageRequest,
} from "../../gen/mail/v1/mail_pb.js";
import { callerOf } from "./context.ts";
import { optionalTimestamp } from "./timestamps.ts";

/** The API version indicator returned by GET /mail/v1/me. */
export const API_VERSION = "v1";

export interface MailServiceDeps {
  readonly config: Config;
  /** Accepts one send (src/domain/messages/accept). */
  readonly acceptSend: (caller: SendCaller, request: SendMessageRequest, idempotencyKey: string | undefined) => Promise<SendAnswer>;
  readonly messages: MessageReader;
}

function notImplemented(rpc: string): () => never {
  return () => {
    throw new ApiError("NOT_IMPLEMENTED", `${rpc} is part of the contract but not implemented yet.`);
  };
}

/**
 * MailService handlers. Each one maps between the contract's messages and
 * the domain; rules live in src/domain. Operations whose feature is not
 * built yet answer NOT_IMPLEMENTED (HTTP 501, gRPC UNIMPLEMENTED).
 */
export function mailServiceImpl(deps: MailServiceDeps): ServiceImpl<typeof MailService> {
  return {
    getAccount(_req, ctx: HandlerContext) {
      const caller = callerOf(ctx);
      return create(GetAccountResponseSchema, {
        organization: { id: caller.companyId, name: caller.companyName },
        key: {
          id: caller.keyId,
          name: caller.keyName,
          prefix: caller.keyPrefix,
          scopes: [...caller.scopes],
          expiresAt: optionalTimestamp(caller.expiresAt),
        },
        entitlements: { api: caller.entitlements.api, smtp: caller.entitlements.smtp },
        limits: {
          requestsPerMinute: deps.config.requestsPerMinute,
          idempotencyWindowHours: deps.config.idempotencyWindowHours,
          keyRotationGraceHours: deps.config.keyRotationGraceHours,
        },
        apiVersion: API_VERSION,
      });
    },
    async sendMessage(req, ctx) {
      const caller = callerOf(ctx);
      const header = ctx.requestHeader.get("idempotency-key") ?? undefined;
      const answer = await deps.acceptSend({ companyId: caller.companyId, keyId: caller.keyId }, req, header);
      return { id: answer.id, status: messageStatusToProto(answer.status), replayed: answer.replayed };
    },
    async getMessage(req, ctx) {
      return { message: toMessageProto(await deps.messages.getMessage(callerOf(ctx).companyId, req.id)) };
    },
    async listMessages(req, ctx) {
      const page = await deps.messages.listMessages(callerOf(ctx).companyId, {
        limit: req.limit,
        cursor: req.cursor,
        status: req.status === undefined ? undefined : enumValueToJson(MessageStatusSchema, req.status),
        q: req.q,
        since: req.since ? timestampDate(req.since) : undefined,
        tag: req.tag,
      });
      return { items: page.items.map(toMessageProto), nextCursor: page.nextCursor ?? undefined };
    },
    listContacts: notImplemented("ListContacts"),
    getContact: notImplemented("GetContact"),
    upsertContact: notImplemented("UpsertContact"),
    listForms: notImplemented("ListForms"),
    recordConversion: notImplemented("RecordConversion"),
  };
}
