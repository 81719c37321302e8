import { create } from "@bufbuild/protobuf";
import type { FormFieldDraft, PublishedForm, SignupFormDraft } from "../../../capabilities/forms/index.ts";
import type { CreateFormRequest } from "../../../gen/mail/v1/forms_pb.js";
import { type Form, FormFieldSchema, FormSchema, type FormField } from "../../../gen/mail/v1/mail_pb.js";

/** A published form as the contract's Form message (GET /mail/v1/forms, the SignupFormsService). */
export function toFormProto(form: PublishedForm): Form {
  return create(FormSchema, {
    publicId: form.publicId,
    name: form.name,
    fields: form.fields.map((field) =>
      create(FormFieldSchema, { name: field.name, label: field.label, type: field.type, required: field.required, options: [...field.options] }),
    ),
    consentText: form.consentText,
    doubleOptIn: form.doubleOptIn,
    language: form.language,
    url: form.url,
  });
}

/** An operator's field design, unvalidated (the capability checks it). */
export function fieldDraftOf(field: FormField): FormFieldDraft {
  return { name: field.name, label: field.label, type: field.type, required: field.required, options: field.options };
}

/** A CreateForm request as the capability's draft, unvalidated. */
export function formDraftOf(req: CreateFormRequest): SignupFormDraft {
  return { name: req.name, fields: req.fields.map(fieldDraftOf), consentText: req.consentText, doubleOptIn: req.doubleOptIn, language: req.language };
}
