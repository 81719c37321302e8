export { SignupForms, type SignupFormsDependencies } from "./signup-forms.ts";
export type { SignupFormStore } from "./ports.ts";
export { FORM_LIMITS, validateSignupForm } from "./validate-form.ts";
export { isPublicIdShape, newPublicId } from "./public-id.ts";
export {
  FIELD_TYPES,
  SIGNUP_CONSENT_PREFIX,
  signupConsentSource,
  type CountSignupsCommand,
  type CreateFormCommand,
  type DeactivateFormCommand,
  type FieldType,
  type FindFormCommand,
  type FormField,
  type FormFieldDraft,
  type FormSignupCount,
  type ListActiveFormsCommand,
  type PublishedForm,
  type SignupFormDraft,
  type SignupFormRecord,
  type ValidSignupForm,
} from "./types.ts";
