export { postgresSignupFormStore } from "./postgres-signup-form-store.ts";
