import type { FormSignupCount, SignupFormRecord, ValidSignupForm } from "./types.ts";
import type { AuditNote } from "../audit/types.ts";

/**
 * What the forms capability needs from storage (src/adapters/postgres/forms
 * implements it). Every call but the hosted page's lookup is scoped by
 * company id.
 */
export interface SignupFormStore {
  /** `taken`: another form has that public id (the caller draws another). */
  create(companyId: string, publicId: string, form: ValidSignupForm, audit?: AuditNote): Promise<SignupFormRecord | "taken">;
  /** The form after the change; undefined when the company has no form of that public id. */
  /** With `audit`, its audit row by the same statement, when the form changed (so for create). */
  deactivate(companyId: string, publicId: string, audit?: AuditNote): Promise<SignupFormRecord | undefined>;
  /** The company's active forms, oldest first. */
  listActive(companyId: string): Promise<SignupFormRecord[]>;
  /** Any company's form by its public id (the hosted page knows no company). */
  findByPublicId(publicId: string): Promise<SignupFormRecord | undefined>;
  /**
   * Per form of the company (active or not), its contacts whose consent
   * source is the form's (SIGNUP_CONSENT_PREFIX + public id) with a consent
   * time in [since, until) (an absent end is open); forms with none are
   * left out; by public id.
   */
  countSignups(companyId: string, since: Date | undefined, until: Date | undefined): Promise<FormSignupCount[]>;
}
