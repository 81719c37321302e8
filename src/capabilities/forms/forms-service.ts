import { ApiError } from "../../contract/api-error.ts";
import type { SignupFormStore } from "./ports.ts";
import { isPublicIdShape, newPublicId } from "./public-id.ts";
import type { PublishedForm, SignupFormDraft, SignupFormRecord } from "./types.ts";
import { validateSignupForm } from "./validate-form.ts";
import type { AuditContext } from "../audit/types.ts";

/** The sign-up forms of a company (spec: Sign-up form; GET /mail/v1/forms). */
export interface SignupForms {
  /** The company's active forms, oldest first, each with its hosted page address. */
  listActiveForms(companyId: string): Promise<PublishedForm[]>;
  /** An operator creates a form (active). 400 VALIDATION_ERROR naming every bad field. */
  /** `audit` (who acts): the change's audit row, written with it (so for deactivateForm). */
  createForm(companyId: string, draft: SignupFormDraft, audit?: AuditContext): Promise<PublishedForm>;
  /**
   * An operator deactivates a form: it leaves the list and its hosted page
   * stops accepting sign-ups. Deactivating an inactive form changes
   * nothing. 404 NOT_FOUND when the company has no such form.
   */
  deactivateForm(companyId: string, publicId: string, audit?: AuditContext): Promise<PublishedForm>;
  /** An active form by public id, whatever its company (the hosted page); undefined otherwise. */
  findActiveForm(publicId: string): Promise<PublishedForm | undefined>;
  /**
   * A form by public id, active or not, whatever its company: the double
   * opt-in confirmation of a sign-up the form accepted while it was active
   * still works after it was deactivated.
   */
  findForm(publicId: string): Promise<PublishedForm | undefined>;
}

export interface SignupFormsOptions {
  /**
   * Base of the hosted page addresses (PUBLIC_BASE_URL, or the API's own
   * base), e.g. `https://mail.example.com`; a trailing slash is ignored.
   */
  readonly publicBaseUrl: string;
  /** Tests pass a predictable one. */
  readonly newPublicId?: () => string;
}

/** Public id collisions are 1 in 2^96: a few attempts are plenty, a loop forever would hide a broken generator. */
const PUBLIC_ID_ATTEMPTS = 5;

function formNotFound(): ApiError {
  return new ApiError("NOT_FOUND", "form not found");
}

export function createSignupForms(store: SignupFormStore, options: SignupFormsOptions): SignupForms {
  const base = options.publicBaseUrl.replace(/\/+$/, "");
  const draw = options.newPublicId ?? newPublicId;
  const publish = (form: SignupFormRecord): PublishedForm => ({
    ...form,
    url: `${base}/mail/v1/forms/${encodeURIComponent(form.publicId)}`,
  });

  return {
    async listActiveForms(companyId) {
      return (await store.listActive(companyId)).map(publish);
    },

    async createForm(companyId, draft, audit) {
      const valid = validateSignupForm(draft);
      const note = audit && { context: audit, action: "signup_form.created" as const, details: { name: valid.name } };
      for (let attempt = 0; attempt < PUBLIC_ID_ATTEMPTS; attempt++) {
        const created = await store.create(companyId, draw(), valid, note);
        if (created !== "taken") return publish(created);
      }
      throw new Error("could not draw a free form public id");
    },

    async deactivateForm(companyId, publicId, audit) {
      if (!isPublicIdShape(publicId)) throw formNotFound();
      const form = await store.deactivate(companyId, publicId, audit && { context: audit, action: "signup_form.deactivated", details: { publicId } });
      if (!form) throw formNotFound();
      return publish(form);
    },

    async findActiveForm(publicId) {
      if (!isPublicIdShape(publicId)) return undefined;
      const form = await store.findByPublicId(publicId);
      return form?.active ? publish(form) : undefined;
    },

    async findForm(publicId) {
      if (!isPublicIdShape(publicId)) return undefined;
      const form = await store.findByPublicId(publicId);
      return form ? publish(form) : undefined;
    },
  };
}
