import { ValidationError } from "../../../contract/api-error.ts";
import type { ContactRecord, Contacts, ContactWrite } from "../../contacts/index.ts";
import type { RateLimiter } from "../../rate-limit/index.ts";
import type { SignupForms } from "../forms-service.ts";
import type { PublishedForm } from "../types.ts";
import type { FormTokens } from "./csrf.ts";
import type { SignupConfirmations } from "./double-opt-in.ts";

/** Names of the service's own inputs on the hosted page: operator field names cannot start with `_`, so these never clash. */
export const TOKEN_FIELD = "_token";
export const HONEYPOT_FIELD = "_website";

/** Sign-ups per address and minute, per company: enough for a typo and a retry, too few to flood one inbox with confirmations. */
export const SIGNUPS_PER_ADDRESS_PER_MINUTE = 3;

/** Why a field was refused; the page says it in the form's language. */
export type FieldProblemKind = "required" | "invalid-email" | "invalid-choice" | "invalid";

export type SignupOutcome =
  | { readonly kind: "not-found" }
  /** The token is missing, forged, for another form or too old: the page is served again with a fresh one. */
  | { readonly kind: "expired"; readonly form: PublishedForm }
  | { readonly kind: "invalid"; readonly form: PublishedForm; readonly problems: Readonly<Record<string, FieldProblemKind>> }
  | { readonly kind: "rate-limited"; readonly form: PublishedForm; readonly retryAfterSeconds: number }
  /**
   * Thanked. `confirmationRequired`: a double opt-in form's sign-up waits for
   * the address's confirmation. Also what a bot that filled the honeypot is
   * told (nothing was written): it must not learn it was caught.
   */
  | { readonly kind: "accepted"; readonly form: PublishedForm; readonly confirmationRequired: boolean };

export interface SignupSubmission {
  /** The posted fields (first value of each name). */
  readonly values: Readonly<Record<string, string>>;
  /** The visitor's address as the HTTP layer resolved it: part of the consent evidence. */
  readonly clientIp: string;
}

export interface HostedSignupDependencies {
  readonly forms: SignupForms;
  readonly contacts: Contacts;
  readonly tokens: FormTokens;
  readonly rateLimiter: RateLimiter;
  readonly confirmations?: SignupConfirmations | undefined;
  readonly now?: () => Date;
}

/** The hosted form page (GET/POST /mail/v1/forms/{publicId}), reached without an API key. */
export interface HostedSignup {
  /** The active form and a fresh token for its page; undefined when there is none. */
  open(publicId: string): Promise<{ form: PublishedForm; token: string } | undefined>;
  submit(publicId: string, submission: SignupSubmission): Promise<SignupOutcome>;
  /** A fresh token for a page served again (after a refused submission). */
  token(form: PublishedForm): string;
}

/** Contact fields a form field of the same name fills; every other field becomes an attribute. */
const CONTACT_FIELDS = new Set(["firstName", "lastName", "company", "phone"]);

export function createHostedSignup(deps: HostedSignupDependencies): HostedSignup {
  const now = deps.now ?? (() => new Date());
  const token = (form: PublishedForm): string => deps.tokens.issue(form.id, now());

  return {
    async open(publicId) {
      const form = await deps.forms.findActiveForm(publicId);
      return form ? { form, token: token(form) } : undefined;
    },

    token,

    async submit(publicId, { values, clientIp }) {
      const form = await deps.forms.findActiveForm(publicId);
      if (!form) return { kind: "not-found" };
      if (!deps.tokens.verify(form.id, values[TOKEN_FIELD] ?? "", now())) return { kind: "expired", form };
      if ((values[HONEYPOT_FIELD] ?? "") !== "") return { kind: "accepted", form, confirmationRequired: form.doubleOptIn };

      const problems: Record<string, FieldProblemKind> = {};
      const write: { email: string; attributes: Record<string, string | boolean>; named: Record<string, string> } = {
        email: "",
        attributes: {},
        named: {},
      };
      for (const field of form.fields) {
        const raw = (values[field.name] ?? "").trim();
        if (field.type === "checkbox") {
          const checked = raw !== "";
          if (field.required && !checked) problems[field.name] = "required";
          else write.attributes[field.name] = checked;
          continue;
        }
        if (raw === "") {
          if (field.required) problems[field.name] = "required";
          continue;
        }
        if (field.type === "select" && !field.options.includes(raw)) problems[field.name] = "invalid-choice";
        else if (field.name === "email") write.email = raw;
        else if (CONTACT_FIELDS.has(field.name)) write.named[field.name] = raw;
        else write.attributes[field.name] = raw;
      }
      if (Object.keys(problems).length > 0) return { kind: "invalid", form, problems };

      const limit = await deps.rateLimiter.consume(`signup:${form.companyId}:${write.email.toLowerCase()}`, SIGNUPS_PER_ADDRESS_PER_MINUTE);
      if (!limit.allowed) return { kind: "rate-limited", form, retryAfterSeconds: limit.retryAfterSeconds };

      const at = now();
      // A subscribed contact signing up again stays subscribed (asking for `pending` would move it back); the others wait for the confirmation.
      const current = await deps.contacts.getContact(form.companyId, write.email).catch(() => undefined);
      const status = form.doubleOptIn ? (current?.status === "subscribed" ? undefined : "pending") : "subscribed";
      const contactWrite: ContactWrite = {
        email: write.email,
        ...write.named,
        ...(Object.keys(write.attributes).length > 0 ? { attributes: write.attributes } : {}),
        ...(status ? { status } : {}),
        consent: { source: `form:${form.publicId}`, at, reference: `consent text v${form.consentVersion}; ip ${clientIp}`.slice(0, 200) },
      };
      let contact: ContactRecord;
      try {
        contact = (await deps.contacts.upsertContact(form.companyId, contactWrite, { source: "form" })).contact;
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        // The contacts' own checks (address syntax, phone format): name the form's field.
        const refused: Record<string, FieldProblemKind> = {};
        for (const { field } of error.fields) {
          const name = field.startsWith("attributes.") ? field.slice("attributes.".length) : field;
          refused[form.fields.some((f) => f.name === name) ? name : "email"] = name === "email" ? "invalid-email" : "invalid";
        }
        return { kind: "invalid", form, problems: refused };
      }
      const confirmationRequired = contact.status === "pending";
      // The outcome is not the visitor's business: a company that cannot send leaves the sign-up pending (double-opt-in.ts logs why).
      if (confirmationRequired) await deps.confirmations?.request({ companyId: form.companyId, form, contact });
      return { kind: "accepted", form, confirmationRequired };
    },
  };
}
