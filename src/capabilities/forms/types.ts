import type { AuditContext } from "../audit/types.ts";

/**
 * The forms capability's vocabulary (spec: Sign-up form). Records are what
 * the use cases hand out: never a row or an entity.
 */

/** The input types a form field may have. */
export const FIELD_TYPES = ["email", "text", "checkbox", "select"] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

/** One field of a form's design. */
export interface FormField {
  /** Name the value is submitted under, e.g. `email`, `firstName`. */
  readonly name: string;
  /** Label shown to the visitor. */
  readonly label: string;
  readonly type: FieldType;
  readonly required: boolean;
  /** The choices of a `select` field; empty for the other types. */
  readonly options: readonly string[];
}

/** A stored sign-up form. */
export interface SignupFormRecord {
  readonly id: string;
  readonly companyId: string;
  /** Short, random, URL-safe: the hosted page is `/mail/v1/forms/{publicId}`. */
  readonly publicId: string;
  readonly name: string;
  readonly fields: readonly FormField[];
  readonly consentText: string;
  /** +1 per change of the consent text: sign-ups record the version they saw. */
  readonly consentVersion: number;
  readonly doubleOptIn: boolean;
  /** Canonical BCP 47. */
  readonly language: string;
  readonly active: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A form as GET /mail/v1/forms shows it: the record plus its hosted page address. */
export interface PublishedForm extends SignupFormRecord {
  readonly url: string;
}

/** A form as an operator wrote it (unvalidated). */
export interface SignupFormDraft {
  readonly name: string;
  readonly fields: readonly FormFieldDraft[];
  readonly consentText: string;
  readonly doubleOptIn: boolean;
  readonly language: string;
}

export interface FormFieldDraft {
  readonly name: string;
  readonly label: string;
  readonly type: string;
  readonly required: boolean;
  readonly options?: readonly string[] | undefined;
}

/** A validated draft: what the store writes. */
export interface ValidSignupForm {
  readonly name: string;
  readonly fields: readonly FormField[];
  readonly consentText: string;
  readonly doubleOptIn: boolean;
  readonly language: string;
}

/** GET /mail/v1/forms: the company's active forms. */
export interface ListActiveFormsCommand {
  readonly companyId: string;
}

/** SignupFormsService CreateForm: the operator's design; `audit` is who acts (the audit row is written with the form). */
export interface CreateFormCommand extends SignupFormDraft {
  readonly companyId: string;
  readonly audit: AuditContext;
}

export interface DeactivateFormCommand {
  readonly companyId: string;
  readonly publicId: string;
  readonly audit: AuditContext;
}

/** A form by its public id, whatever its company (the hosted pages know no company). */
export interface FindFormCommand {
  readonly publicId: string;
}

/**
 * The consent source a form records (the hosted page's sign-up, the
 * double opt-in's confirmation): `form:<publicId>`. Sign-ups are counted
 * by it.
 */
export const SIGNUP_CONSENT_PREFIX = "form:";

export function signupConsentSource(publicId: string): string {
  return `${SIGNUP_CONSENT_PREFIX}${publicId}`;
}

/** SignupFormsService CountSignups: sign-ups per form of the company in [since, until) (either end open when absent). */
export interface CountSignupsCommand {
  readonly companyId: string;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
}

/** The sign-ups of one form in a window. */
export interface FormSignupCount {
  readonly publicId: string;
  readonly signups: number;
}
