export { createFormTokens, TOKEN_MAX_AGE_MS, type FormTokens } from "./csrf.ts";
export {
  createHostedSignup,
  HONEYPOT_FIELD,
  SIGNUPS_PER_ADDRESS_PER_MINUTE,
  TOKEN_FIELD,
  type FieldProblemKind,
  type HostedSignup,
  type HostedSignupDependencies,
  type SignupConfirmations,
  type SignupOutcome,
  type SignupSubmission,
} from "./submit-signup.ts";
