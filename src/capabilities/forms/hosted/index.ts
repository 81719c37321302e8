export { createFormTokens, TOKEN_MAX_AGE_MS, type FormTokens } from "./csrf.ts";
export {
  createHostedSignup,
  DEFAULT_SIGNUP_LIMITS,
  nullPrototypeMap,
  submittedValues,
  type SignupLimits,
  HONEYPOT_FIELD,
  SIGNUPS_PER_ADDRESS_PER_MINUTE,
  TOKEN_FIELD,
  type FieldProblemKind,
  type HostedSignup,
  type HostedSignupDependencies,
  type SignupOutcome,
  type SignupSubmission,
} from "./submit-signup.ts";
export {
  CONFIRMATION_TAG,
  confirmationIdempotencyKey,
  confirmationLink,
  createDoubleOptIn,
  RESEND_WINDOW_MS,
  type ConfirmationPageOutcome,
  type ConfirmationRequestOutcome,
  type DoubleOptIn,
  type DoubleOptInDependencies,
  type SignupConfirmations,
} from "./double-opt-in.ts";
export {
  CONFIRMATION_MAX_AGE_MS,
  confirmationKey,
  createConfirmationTokens,
  type ConfirmationBinding,
  type ConfirmationCheck,
  type ConfirmationClaim,
  type ConfirmationTokens,
} from "./confirmation-token.ts";
export { CONFIRMATION_EMAIL_LANGUAGES, renderConfirmationEmail, type ConfirmationEmail, type ConfirmationEmailInput } from "./confirmation-email.ts";
export type { ConfirmationBudget, ConfirmationLog, ConfirmationMail, ConfirmationMailer, UsedFormTokens } from "./ports.ts";
