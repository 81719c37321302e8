import type { ServiceImpl } from "@connectrpc/connect";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { SignupFormsService } from "../../../gen/mail/v1/forms_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { formDraftOf, toFormProto } from "./forms-to-proto.ts";

/**
 * The SignupFormsService (scope mail.admin, checked by the auth interceptor
 * from the contract): the company's administrators, and operators acting
 * for the company (x-mail-company-id), create and deactivate its forms, for
 * the company of the principal.
 */
export function signupFormsServiceImpl(forms: Pick<SignupForms, "createForm" | "deactivateForm">): ServiceImpl<typeof SignupFormsService> {
  return {
    async createForm(req, ctx) {
      const form = await forms.createForm(callerOf(ctx).companyId, formDraftOf(req), auditContextOf(ctx));
      return { form: toFormProto(form) };
    },
    async deactivateForm(req, ctx) {
      return { form: toFormProto(await forms.deactivateForm(callerOf(ctx).companyId, req.publicId, auditContextOf(ctx))) };
    },
  };
}
