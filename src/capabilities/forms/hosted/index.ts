export { createFormTokens, TOKEN_MAX_AGE_MS, type FormTokens } from "./csrf.ts";
export {
  DEFAULT_SIGNUP_LIMITS,
  HONEYPOT_FIELD,
  HostedSignup,
  nullPrototypeMap,
  SIGNUPS_PER_ADDRESS_PER_MINUTE,
  submittedValues,
  TOKEN_FIELD,
  type FieldProblemKind,
  type HostedSignupDependencies,
  type OpenedSignupPage,
  type OpenSignupCommand,
  type SignupLimits,
  type SignupOutcome,
  type SubmitSignupCommand,
} from "./submit-signup.ts";
export {
  CONFIRMATION_TAG,
  confirmationIdempotencyKey,
  confirmationLink,
  DoubleOptIn,
  RESEND_WINDOW_MS,
  type ConfirmationPageOutcome,
  type ConfirmationRequestOutcome,
  type ConfirmSignupCommand,
  type DoubleOptInDependencies,
  type OpenConfirmationCommand,
  type RequestConfirmationCommand,
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
