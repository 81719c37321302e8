import type { ServiceImpl } from "@connectrpc/connect";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { fieldDraftOf, toFormProto } from "./forms-to-proto.ts";

export type FormsAdmin = Pick<ServiceImpl<typeof AdminService>, "createSignupForm" | "deactivateSignupForm">;

/** AdminService handlers of the sign-up forms (operator token checked by the auth interceptor; the company is a field). */
export function formsAdmin(forms: SignupForms): FormsAdmin {
  return {
    async createSignupForm(req) {
      const form = await forms.createForm(req.companyId, {
        name: req.name,
        fields: req.fields.map(fieldDraftOf),
        consentText: req.consentText,
        doubleOptIn: req.doubleOptIn,
        language: req.language,
      });
      return { form: toFormProto(form) };
    },
    async deactivateSignupForm(req) {
      return { form: toFormProto(await forms.deactivateForm(req.companyId, req.publicId)) };
    },
  };
}
