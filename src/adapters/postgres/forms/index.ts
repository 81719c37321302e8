export { postgresSignupFormStore } from "./postgres-signup-form-store.ts";
export { postgresConfirmationBudget, postgresUsedFormTokens } from "./signup-door-stores.ts";
