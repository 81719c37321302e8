export { createSignupForms, type SignupForms, type SignupFormsOptions } from "./forms-service.ts";
export type { SignupFormStore } from "./ports.ts";
export { FORM_LIMITS, validateSignupForm } from "./validate-form.ts";
export { isPublicIdShape, newPublicId } from "./public-id.ts";
export {
  FIELD_TYPES,
  type FieldType,
  type FormField,
  type FormFieldDraft,
  type PublishedForm,
  type SignupFormDraft,
  type SignupFormRecord,
  type ValidSignupForm,
} from "./types.ts";
