import { ApiError, type ErrorCodeName } from "../../../contract/api-error.ts";
import type { ContactRecord, Contacts } from "../../contacts/index.ts";
import { isKeptStatus } from "../../contacts/status-rules.ts";
import type { SignupForms } from "../signup-forms.ts";
import { type PublishedForm, signupConsentSource } from "../types.ts";
import { renderConfirmationEmail } from "./confirmation-email.ts";
import { CONFIRMATION_MAX_AGE_MS, type ConfirmationClaim, type ConfirmationTokens } from "./confirmation-token.ts";
import type { ConfirmationBudget, ConfirmationLog, ConfirmationMailer } from "./ports.ts";

/**
 * The double opt-in of the hosted sign-up forms: the confirmation email of
 * a pending sign-up, and the confirmation link's page
 * (`/mail/v1/forms/{publicId}/confirm?token=…`).
 *
 * Sending: one email per sign-up and resend window (RESEND_WINDOW_MS). The
 * send's idempotency key is derived from the form, the contact, the consent
 * text version and the window, and the link in it is issued at the
 * window's start, so every request of one window asks for the very same
 * message: a resubmitted or retried sign-up finds it and nothing more is
 * sent. A later window sends a new email (the visitor lost the first).
 *
 * Confirming: the link shows a page with one button (GET) that posts the
 * token back (POST); only the POST subscribes, so a mail scanner that
 * follows links subscribes nobody.
 */

/** A pending sign-up gets at most one confirmation email per window. */
export const RESEND_WINDOW_MS = 10 * 60 * 1000;

/** The tag the confirmation emails carry in the message log. */
export const CONFIRMATION_TAG = { key: "mail_kind", value: "signup-confirmation" } as const;

/** What became of a confirmation request. */
export type ConfirmationRequestOutcome =
  | { readonly kind: "sent"; readonly messageId: string }
  /** This window's email was sent already (a resubmission or a retry). */
  | { readonly kind: "already-sent" }
  /** The company cannot send it now (no default sender, no credits): the sign-up stays pending. */
  | { readonly kind: "not-sent"; readonly reason: ErrorCodeName }
  /** The company's confirmation emails of this hour reached the cap: nothing sent, nothing charged, the sign-up stays pending. */
  | { readonly kind: "capped" };

/** A pending sign-up of `form`: its confirmation email is asked for. */
export interface RequestConfirmationCommand {
  readonly companyId: string;
  readonly form: PublishedForm;
  readonly contact: ContactRecord;
}

/** Sends the confirmation email of a pending sign-up (the hosted form calls it; see submit-signup.ts). */
export interface SignupConfirmations {
  request(command: RequestConfirmationCommand): Promise<ConfirmationRequestOutcome>;
}

/** What the confirmation page shows. */
export type ConfirmationPageOutcome =
  | { readonly kind: "not-found" }
  /** Malformed, forged, for another form, contact or address. */
  | { readonly kind: "invalid"; readonly form: PublishedForm }
  | { readonly kind: "expired"; readonly form: PublishedForm }
  /** GET: the page with the button that posts `token`. */
  | { readonly kind: "ready"; readonly form: PublishedForm; readonly token: string }
  | { readonly kind: "confirmed"; readonly form: PublishedForm }
  | { readonly kind: "already-confirmed"; readonly form: PublishedForm }
  /** The contact unsubscribed, or its address bounced, complained or was suppressed, meanwhile: it stays so. */
  | { readonly kind: "not-possible"; readonly form: PublishedForm };

/** GET of the confirmation link: checks the token and the contact, changes nothing. */
export interface OpenConfirmationCommand {
  readonly publicId: string;
  readonly token: string;
}

/** POST of the confirmation page: the visitor's address is part of the consent evidence. */
export interface ConfirmSignupCommand {
  readonly publicId: string;
  readonly token: string;
  readonly clientIp: string;
}

export interface DoubleOptInDependencies {
  readonly forms: Pick<SignupForms, "find">;
  readonly contacts: Pick<Contacts, "get" | "confirmPending">;
  readonly tokens: ConfirmationTokens;
  readonly mailer: ConfirmationMailer;
  readonly log: ConfirmationLog;
  /** The per-company hourly cap of confirmation emails; unset: no cap. */
  readonly budget?: { readonly store: ConfirmationBudget; readonly perCompanyPerHour: number } | undefined;
  /** The time of the links and the confirmations; the system clock when absent. */
  readonly clock?: (() => Date) | undefined;
}

const HOUR_MS = 60 * 60 * 1000;

/** Refusals of the send that leave the sign-up pending instead of failing the visitor's page. */
const NOT_SENT: ReadonlySet<ErrorCodeName> = new Set(["SENDER_NOT_VERIFIED", "NOT_FOUND", "INSUFFICIENT_CREDITS", "VALIDATION_ERROR"]);

const VALID_DAYS = Math.round(CONFIRMATION_MAX_AGE_MS / (24 * 60 * 60 * 1000));

/** The confirmation page's address of a form and token. */
export function confirmationLink(form: PublishedForm, token: string): string {
  return `${form.url}/confirm?token=${encodeURIComponent(token)}`;
}

/** The send's idempotency key: one per form, contact, consent text version and resend window. */
export function confirmationIdempotencyKey(form: PublishedForm, contactId: string, at: Date): string {
  return `signup-confirmation:${form.publicId}:${contactId}:v${form.consentVersion}:w${Math.floor(at.getTime() / RESEND_WINDOW_MS)}`;
}

type Checked =
  | { readonly kind: "page"; readonly outcome: ConfirmationPageOutcome }
  | { readonly kind: "valid"; readonly form: PublishedForm; readonly contact: ContactRecord; readonly claim: ConfirmationClaim };

function pageFor(form: PublishedForm, contact: ContactRecord, token: string): ConfirmationPageOutcome {
  if (contact.status === "pending") return { kind: "ready", form, token };
  if (isKeptStatus(contact.status)) return { kind: "not-possible", form };
  return { kind: "already-confirmed", form };
}

/** The double opt-in of the hosted sign-up forms: the confirmation emails and the confirmation page. */
export class DoubleOptIn implements SignupConfirmations {
  readonly #deps: DoubleOptInDependencies;
  readonly #clock: () => Date;

  constructor(deps: DoubleOptInDependencies) {
    this.#deps = deps;
    this.#clock = deps.clock ?? (() => new Date());
  }

  /** Sends the confirmation email of a pending sign-up, once per resend window. */
  async request(command: RequestConfirmationCommand): Promise<ConfirmationRequestOutcome> {
    const deps = this.#deps;
    const { companyId, form, contact } = command;
    const at = this.#clock();
    const windowStart = new Date(Math.floor(at.getTime() / RESEND_WINDOW_MS) * RESEND_WINDOW_MS);
    const token = deps.tokens.issue(
      { companyId, formId: form.id, contactId: contact.id, email: contact.email, consentVersion: form.consentVersion },
      windowStart,
    );
    if (deps.budget) {
      const hourStart = new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
      if (!(await deps.budget.store.take(companyId, hourStart, deps.budget.perCompanyPerHour))) {
        // A burst the company did not ask for is neither sent nor charged: the contact stays pending, the visitor sees the same page.
        deps.log.warn(
          { companyId, formPublicId: form.publicId, contactId: contact.id, cap: deps.budget.perCompanyPerHour },
          "double opt-in confirmation email not sent: the company's hourly cap is reached; the sign-up stays pending",
        );
        return { kind: "capped" };
      }
    }
    const email = renderConfirmationEmail({
      language: form.language,
      formName: form.name,
      consentText: form.consentText,
      link: confirmationLink(form, token),
      validDays: VALID_DAYS,
    });
    try {
      const sent = await deps.mailer.send({
        companyId,
        to: contact.email,
        ...email,
        idempotencyKey: confirmationIdempotencyKey(form, contact.id, at),
        tags: { [CONFIRMATION_TAG.key]: CONFIRMATION_TAG.value, form: form.publicId },
      });
      return sent.replayed ? { kind: "already-sent" } : { kind: "sent", messageId: sent.messageId };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The same window's email asked with other words (the visitor corrected a name, the form was renamed): it went already.
      if (error.code === "IDEMPOTENCY_CONFLICT") return { kind: "already-sent" };
      if (!NOT_SENT.has(error.code)) throw error;
      // The visitor is thanked all the same and the contact stays pending; the operator learns why from the log (no address in it).
      deps.log.warn(
        { companyId, formPublicId: form.publicId, contactId: contact.id, code: error.code },
        "double opt-in confirmation email not sent; the sign-up stays pending",
      );
      return { kind: "not-sent", reason: error.code };
    }
  }

  /** GET of the link: checks the token and the contact, changes nothing. */
  async open(command: OpenConfirmationCommand): Promise<ConfirmationPageOutcome> {
    const checked = await this.#check(command.publicId, command.token);
    if (checked.kind === "page") return checked.outcome;
    return pageFor(checked.form, checked.contact, command.token);
  }

  /** POST of the page: subscribes a pending contact, recording the confirmation as its consent. */
  async confirm(command: ConfirmSignupCommand): Promise<ConfirmationPageOutcome> {
    const checked = await this.#check(command.publicId, command.token);
    if (checked.kind === "page") return checked.outcome;
    const { form, contact, claim } = checked;
    const outcome = await this.#deps.contacts.confirmPending({
      companyId: form.companyId,
      contactId: contact.id,
      consent: {
        source: signupConsentSource(form.publicId),
        at: this.#clock(),
        reference: `form ${form.publicId}; consent text v${claim.consentVersion}; ip ${command.clientIp}; double opt-in confirmed`.slice(0, 200),
      },
      eventSource: "form",
    });
    switch (outcome.kind) {
      case "subscribed":
        return { kind: "confirmed", form };
      case "already-subscribed":
        return { kind: "already-confirmed", form };
      case "kept":
        return { kind: "not-possible", form };
      case "not-found":
        return { kind: "invalid", form };
    }
  }

  async #contactOf(companyId: string, contactId: string): Promise<ContactRecord | undefined> {
    try {
      return await this.#deps.contacts.get({ companyId, idOrEmail: contactId });
    } catch (error) {
      if (error instanceof ApiError && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }

  /** The form, the contact and the token's verdict; a page to show when it cannot be confirmed. */
  async #check(publicId: string, token: string): Promise<Checked> {
    const form = await this.#deps.forms.find({ publicId });
    if (!form) return { kind: "page", outcome: { kind: "not-found" } };
    const invalid: Checked = { kind: "page", outcome: { kind: "invalid", form } };
    const claim = this.#deps.tokens.read(token);
    if (!claim) return invalid;
    const contact = await this.#contactOf(form.companyId, claim.contactId);
    if (!contact) return invalid;
    const binding = { companyId: form.companyId, formId: form.id, contactId: contact.id, email: contact.email, consentVersion: claim.consentVersion };
    const verdict = this.#deps.tokens.verify(token, binding, this.#clock());
    if (verdict === "invalid") return invalid;
    // An old but genuine link of a sign-up that is confirmed already says so, rather than "expired".
    if (verdict === "expired") return { kind: "page", outcome: { kind: contact.status === "subscribed" ? "already-confirmed" : "expired", form } };
    return { kind: "valid", form, contact, claim };
  }
}
