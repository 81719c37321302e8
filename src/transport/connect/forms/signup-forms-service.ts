import type { ServiceImpl } from "@connectrpc/connect";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { SignupFormsService } from "../../../gen/mail/v1/forms_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { createFormCommand, deactivateFormCommand, toFormProto } from "./forms-to-proto.ts";

/**
 * The SignupFormsService (scope mail.admin, checked by the auth interceptor
 * from the contract): the company's administrators, and operators acting
 * for the company (x-mail-company-id), create and deactivate its forms, for
 * the company of the principal.
 */
export function signupFormsServiceImpl(forms: Pick<SignupForms, "create" | "deactivate">): ServiceImpl<typeof SignupFormsService> {
  return {
    async createForm(req, ctx) {
      return { form: toFormProto(await forms.create(createFormCommand(callerOf(ctx).companyId, auditContextOf(ctx), req))) };
    },
    async deactivateForm(req, ctx) {
      return { form: toFormProto(await forms.deactivate(deactivateFormCommand(callerOf(ctx).companyId, auditContextOf(ctx), req))) };
    },
  };
}
