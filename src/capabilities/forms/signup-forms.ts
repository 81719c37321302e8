import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { SignupFormStore } from "./ports.ts";
import { isPublicIdShape, newPublicId } from "./public-id.ts";
import type {
  CountSignupsCommand,
  CreateFormCommand,
  DeactivateFormCommand,
  FindFormCommand,
  FormSignupCount,
  ListActiveFormsCommand,
  PublishedForm,
  SignupFormRecord,
} from "./types.ts";
import { validateSignupForm } from "./validate-form.ts";

export interface SignupFormsDependencies {
  readonly store: SignupFormStore;
  /**
   * Base of the hosted page addresses (PUBLIC_BASE_URL, or the API's own
   * base), e.g. `https://mail.example.com`; a trailing slash is ignored.
   */
  readonly publicBaseUrl: string;
  /**
   * Draws the public id of a new form; newPublicId (96 random bits) when
   * absent. Another generator must be as hard to guess: a form's address
   * is its only secret.
   */
  readonly newPublicId?: (() => string) | undefined;
}

/** Public id collisions are 1 in 2^96: a few attempts are plenty, a loop forever would hide a broken generator. */
const PUBLIC_ID_ATTEMPTS = 5;

function formNotFound(): ApiError {
  return new ApiError("NOT_FOUND", "form not found");
}

/** The sign-up forms of a company (spec: Sign-up form; GET /mail/v1/forms, the SignupFormsService, the hosted page). */
export class SignupForms {
  readonly #store: SignupFormStore;
  readonly #base: string;
  readonly #draw: () => string;

  constructor(deps: SignupFormsDependencies) {
    this.#store = deps.store;
    this.#base = deps.publicBaseUrl.replace(/\/+$/, "");
    this.#draw = deps.newPublicId ?? newPublicId;
  }

  /** The company's active forms, oldest first, each with its hosted page address. */
  async listActive(command: ListActiveFormsCommand): Promise<PublishedForm[]> {
    return (await this.#store.listActive(command.companyId)).map((form) => this.#publish(form));
  }

  /** An operator creates a form (active). 400 VALIDATION_ERROR naming every bad field. */
  async create(command: CreateFormCommand): Promise<PublishedForm> {
    const valid = validateSignupForm(command);
    const note = { context: command.audit, action: "signup_form.created" as const, details: { name: valid.name } };
    for (let attempt = 0; attempt < PUBLIC_ID_ATTEMPTS; attempt++) {
      const created = await this.#store.create(command.companyId, this.#draw(), valid, note);
      if (created !== "taken") return this.#publish(created);
    }
    throw new Error("could not draw a free form public id");
  }

  /**
   * An operator deactivates a form: it leaves the list and its hosted page
   * stops accepting sign-ups. Deactivating an inactive form changes
   * nothing. 404 NOT_FOUND when the company has no such form.
   */
  async deactivate(command: DeactivateFormCommand): Promise<PublishedForm> {
    const { publicId } = command;
    if (!isPublicIdShape(publicId)) throw formNotFound();
    const form = await this.#store.deactivate(command.companyId, publicId, { context: command.audit, action: "signup_form.deactivated", details: { publicId } });
    if (!form) throw formNotFound();
    return this.#publish(form);
  }

  /** An active form by public id, whatever its company (the hosted page); undefined otherwise. */
  async findActive(command: FindFormCommand): Promise<PublishedForm | undefined> {
    const form = await this.find(command);
    return form?.active ? form : undefined;
  }

  /**
   * A form by public id, active or not, whatever its company: the double
   * opt-in confirmation of a sign-up the form accepted while it was active
   * still works after it was deactivated.
   */
  async find(command: FindFormCommand): Promise<PublishedForm | undefined> {
    if (!isPublicIdShape(command.publicId)) return undefined;
    const form = await this.#store.findByPublicId(command.publicId);
    return form ? this.#publish(form) : undefined;
  }

  /**
   * Sign-ups per form of the company in [since, until) (SignupFormStore.countSignups
   * says what counts). 400 VALIDATION_ERROR naming `until` when it is not
   * after `since`.
   */
  async countSignups(command: CountSignupsCommand): Promise<FormSignupCount[]> {
    const { since, until } = command;
    if (since && until && until.getTime() <= since.getTime()) {
      throw new ValidationError([{ field: "until", problem: "must be after since" }]);
    }
    return this.#store.countSignups(command.companyId, since, until);
  }

  #publish(form: SignupFormRecord): PublishedForm {
    return { ...form, url: `${this.#base}/mail/v1/forms/${encodeURIComponent(form.publicId)}` };
  }
}
