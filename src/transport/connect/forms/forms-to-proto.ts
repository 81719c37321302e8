import { create } from "@bufbuild/protobuf";
import type { AuditContext } from "../../../capabilities/audit/types.ts";
import type {
  CountSignupsCommand,
  CreateFormCommand,
  DeactivateFormCommand,
  FormFieldDraft,
  FormSignupCount,
  PublishedForm,
  SignupFormDraft,
} from "../../../capabilities/forms/index.ts";
import {
  type CountSignupsRequest,
  type CountSignupsResponse,
  CountSignupsResponseSchema,
  type CreateFormRequest,
  type DeactivateFormRequest,
  FormSignupsSchema,
} from "../../../gen/mail/v1/forms_pb.js";
import { periodOf } from "../timestamps.ts";
import { type Form, FormFieldSchema, FormSchema, type FormField, type ListFormsResponse, ListFormsResponseSchema } from "../../../gen/mail/v1/mail_pb.js";

/**
 * The sign-up forms' RPCs both ways: the MailService's ListForms and the
 * SignupFormsService, which share the contract's Form message. Requests
 * become the forms capability's commands (unvalidated: the capability
 * checks them), forms become Form.
 */

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

export function toListFormsResponse(forms: readonly PublishedForm[]): ListFormsResponse {
  return create(ListFormsResponseSchema, { items: forms.map(toFormProto) });
}

/** An operator's field design, unvalidated (the capability checks it). */
export function fieldDraftOf(field: FormField): FormFieldDraft {
  return { name: field.name, label: field.label, type: field.type, required: field.required, options: field.options };
}

/** A CreateForm request as the capability's draft, unvalidated (also the contract validation's operation check). */
export function formDraftOf(req: CreateFormRequest): SignupFormDraft {
  return { name: req.name, fields: req.fields.map(fieldDraftOf), consentText: req.consentText, doubleOptIn: req.doubleOptIn, language: req.language };
}

export function createFormCommand(companyId: string, audit: AuditContext, req: CreateFormRequest): CreateFormCommand {
  return { companyId, audit, ...formDraftOf(req) };
}

export function deactivateFormCommand(companyId: string, audit: AuditContext, req: DeactivateFormRequest): DeactivateFormCommand {
  return { companyId, publicId: req.publicId, audit };
}

export function countSignupsCommand(companyId: string, req: CountSignupsRequest): CountSignupsCommand {
  return { companyId, ...periodOf(req) };
}

export function toCountSignupsResponse(counts: readonly FormSignupCount[]): CountSignupsResponse {
  return create(CountSignupsResponseSchema, { items: counts.map((row) => create(FormSignupsSchema, { publicId: row.publicId, signups: row.signups })) });
}
