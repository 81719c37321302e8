import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { ApiError } from "../../contract/api-error.ts";
import type { Config } from "../../config.ts";
import { GetAccountResponseSchema, MailService } from "../../gen/mail/v1/mail_pb.js";
import { callerOf } from "./context.ts";

/** The API version indicator returned by GET /mail/v1/me. */
export const API_VERSION = "v1";

export interface MailServiceDeps {
  readonly config: Config;
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
          expiresAt: caller.expiresAt ? timestampFromDate(caller.expiresAt) : undefined,
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
    sendMessage: notImplemented("SendMessage"),
    getMessage: notImplemented("GetMessage"),
    listMessages: notImplemented("ListMessages"),
    listContacts: notImplemented("ListContacts"),
    getContact: notImplemented("GetContact"),
    upsertContact: notImplemented("UpsertContact"),
    listForms: notImplemented("ListForms"),
    recordConversion: notImplemented("RecordConversion"),
  };
}
