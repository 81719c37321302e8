import type { ServiceImpl } from "@connectrpc/connect";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { fieldDraftOf, toFormProto } from "./forms-to-proto.ts";
import { operatorAuditOf } from "../context.ts";

export type FormsAdmin = Pick<ServiceImpl<typeof AdminService>, "createSignupForm" | "deactivateSignupForm" | "listSignupForms">;

/**
 * AdminService handlers of the sign-up forms (operator token checked by the
 * auth interceptor; the company is a field). `company` resolves the
 * company named in a request, which must exist (404 NOT_FOUND otherwise);
 * without it the id is used as sent (an unknown company has no forms).
 */
export function formsAdmin(
  forms: SignupForms,
  company: (req: { companyId: string }) => Promise<string> = async (req) => req.companyId,
): FormsAdmin {
  return {
    async createSignupForm(req, ctx) {
      const draft = {
        name: req.name,
        fields: req.fields.map(fieldDraftOf),
        consentText: req.consentText,
        doubleOptIn: req.doubleOptIn,
        language: req.language,
      };
      const form = await forms.createForm(await company(req), draft, operatorAuditOf(ctx));
      return { form: toFormProto(form) };
    },
    async deactivateSignupForm(req, ctx) {
      return { form: toFormProto(await forms.deactivateForm(await company(req), req.publicId, operatorAuditOf(ctx))) };
    },
    async listSignupForms(req) {
      return { items: (await forms.listActiveForms(await company(req))).map(toFormProto) };
    },
  };
}
