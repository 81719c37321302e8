import type { ServiceImpl } from "@connectrpc/connect";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import { toListFormsResponse } from "./forms-to-proto.ts";

export type ListFormsRpc = Pick<ServiceImpl<typeof MailService>, "listForms">;

/** GET /mail/v1/forms (scope mail.events.read, checked by the auth interceptor): the caller's company's active forms. */
export function listFormsRpc(forms: Pick<SignupForms, "listActive">): ListFormsRpc {
  return {
    async listForms(_req, ctx) {
      return toListFormsResponse(await forms.listActive({ companyId: callerOf(ctx).companyId }));
    },
  };
}
