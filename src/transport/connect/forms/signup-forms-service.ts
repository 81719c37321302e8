import type { ServiceImpl } from "@connectrpc/connect";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { SignupFormsService } from "../../../gen/mail/v1/forms_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { countSignupsCommand, createFormCommand, deactivateFormCommand, toCountSignupsResponse, toFormProto } from "./forms-to-proto.ts";

/**
 * The SignupFormsService (scopes from the contract, checked by the auth
 * interceptor): the company's administrators, and operators acting for the
 * company (x-mail-company-id), create and deactivate its forms; whoever
 * reads its events counts their sign-ups; always for the company of the
 * principal.
 */
export function signupFormsServiceImpl(forms: Pick<SignupForms, "create" | "deactivate" | "countSignups">): ServiceImpl<typeof SignupFormsService> {
  return {
    async createForm(req, ctx) {
      return { form: toFormProto(await forms.create(createFormCommand(callerOf(ctx).companyId, auditContextOf(ctx), req))) };
    },
    async deactivateForm(req, ctx) {
      return { form: toFormProto(await forms.deactivate(deactivateFormCommand(callerOf(ctx).companyId, auditContextOf(ctx), req))) };
    },
    async countSignups(req, ctx) {
      return toCountSignupsResponse(await forms.countSignups(countSignupsCommand(callerOf(ctx).companyId, req)));
    },
  };
}
