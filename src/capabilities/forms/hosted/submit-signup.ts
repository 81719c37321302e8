import ipaddr from "ipaddr.js";
import { ValidationError } from "../../../contract/api-error.ts";
import type { ContactRecord, Contacts, UpsertContactCommand } from "../../contacts/index.ts";
import type { RateLimiter } from "../../rate-limit/index.ts";
import type { SignupForms } from "../signup-forms.ts";
import { type PublishedForm, signupConsentSource } from "../types.ts";
import { TOKEN_MAX_AGE_MS, type FormTokens } from "./csrf.ts";
import type { SignupConfirmations } from "./double-opt-in.ts";
import type { UsedFormTokens } from "./ports.ts";

/** Names of the service's own inputs on the hosted page: operator field names cannot start with `_`, so these never clash. */
export const TOKEN_FIELD = "_token";
export const HONEYPOT_FIELD = "_website";

/** Sign-ups per address and minute, per company: enough for a typo and a retry, too few to flood one inbox with confirmations. */
export const SIGNUPS_PER_ADDRESS_PER_MINUTE = 3;

/**
 * The anonymous door's budgets per minute (SIGNUP_* settings): per client
 * address (every POST counts, good or bad), per form and per company
 * (sign-ups that passed the checks). Over any of them the page answers 429
 * with retry-after: the storm is slowed to the budget, the rest refused.
 */
export interface SignupLimits {
  readonly perClientPerMinute: number;
  readonly perFormPerMinute: number;
  readonly perCompanyPerMinute: number;
}

export const DEFAULT_SIGNUP_LIMITS: SignupLimits = { perClientPerMinute: 10, perFormPerMinute: 60, perCompanyPerMinute: 120 };

/** Why a field was refused; the page says it in the form's language. */
export type FieldProblemKind = "required" | "invalid-email" | "invalid-choice" | "invalid";

export type SignupOutcome =
  | { readonly kind: "not-found" }
  /** The token is missing, forged, for another form or too old: the page is served again with `token`, a fresh one. */
  | { readonly kind: "expired"; readonly form: PublishedForm; readonly token: string }
  | { readonly kind: "invalid"; readonly form: PublishedForm; readonly token: string; readonly problems: Readonly<Record<string, FieldProblemKind>> }
  | { readonly kind: "rate-limited"; readonly form: PublishedForm; readonly token: string; readonly retryAfterSeconds: number }
  /**
   * Thanked. `confirmationRequired`: a double opt-in form's sign-up waits for
   * the address's confirmation. Also what a bot that filled the honeypot is
   * told (nothing was written): it must not learn it was caught.
   */
  | { readonly kind: "accepted"; readonly form: PublishedForm; readonly confirmationRequired: boolean };

/** GET of the hosted page: the active form of `publicId`. */
export interface OpenSignupCommand {
  readonly publicId: string;
}

/** The active form and a fresh token for its page. */
export interface OpenedSignupPage {
  readonly form: PublishedForm;
  readonly token: string;
}

/** POST of the hosted page. */
export interface SubmitSignupCommand {
  readonly publicId: string;
  /** The posted fields (first value of each name), in a null-prototype map (see `submittedValues`). */
  readonly values: Readonly<Record<string, string>>;
  /** The visitor's address as the HTTP layer resolved it: part of the consent evidence. */
  readonly clientIp: string;
}

export interface HostedSignupDependencies {
  readonly forms: Pick<SignupForms, "findActive">;
  readonly contacts: Pick<Contacts, "upsert">;
  readonly tokens: FormTokens;
  readonly rateLimiter: RateLimiter;
  /** Where used tokens are claimed (single use); unset: tokens are checked by signature and age only. */
  readonly usedTokens?: UsedFormTokens | undefined;
  /** The anonymous door's budgets; DEFAULT_SIGNUP_LIMITS when absent. */
  readonly limits?: SignupLimits | undefined;
  /** Sends the confirmation of a double opt-in sign-up; unset: such sign-ups stay pending. */
  readonly confirmations?: SignupConfirmations | undefined;
  /** The time of the tokens and the consent; the system clock when absent. */
  readonly clock?: (() => Date) | undefined;
}

/** Contact fields a form field of the same name fills; every other field becomes an attribute. */
const CONTACT_FIELDS = new Set(["firstName", "lastName", "company", "phone"]);

/**
 * The client budget's key of an address: an IPv4 address (also written as
 * IPv4-mapped IPv6) as it is, an IPv6 address by its /64 (one subscriber's
 * network: rotating addresses inside it is free for the client).
 */
export function clientBudgetKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(":")}::/64`;
}

/**
 * A map keyed by names a visitor or an operator chose: no prototype, so a
 * name like `valueOf`, `constructor` or `__proto__` is only ever a key.
 */
export function nullPrototypeMap<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

/** The posted fields as a null-prototype map: the first value of each name, strings only. */
export function submittedValues(entries: Iterable<readonly [string, unknown]>): Record<string, string> {
  const values = nullPrototypeMap<string>();
  for (const [name, value] of entries) if (typeof value === "string" && !Object.hasOwn(values, name)) values[name] = value;
  return values;
}

/** The hosted form page (GET/POST /mail/v1/forms/{publicId}), reached without an API key. */
export class HostedSignup {
  readonly #deps: HostedSignupDependencies;
  readonly #clock: () => Date;
  readonly #limits: SignupLimits;

  constructor(deps: HostedSignupDependencies) {
    this.#deps = deps;
    this.#clock = deps.clock ?? (() => new Date());
    this.#limits = deps.limits ?? DEFAULT_SIGNUP_LIMITS;
  }

  /** The active form and a fresh token for its page; undefined when there is none. */
  async open(command: OpenSignupCommand): Promise<OpenedSignupPage | undefined> {
    const form = await this.#deps.forms.findActive({ publicId: command.publicId });
    return form ? { form, token: this.#token(form) } : undefined;
  }

  async submit(command: SubmitSignupCommand): Promise<SignupOutcome> {
    const deps = this.#deps;
    const limits = this.#limits;
    const { clientIp } = command;
    // Whatever map the caller built, names are looked up without a prototype.
    const values = submittedValues(Object.entries(command.values));
    const form = await deps.forms.findActive({ publicId: command.publicId });
    if (!form) return { kind: "not-found" };
    // The page never tells whether the address was known: its answer depends on the form only.
    const thanks: SignupOutcome = { kind: "accepted", form, confirmationRequired: form.doubleOptIn };
    // Every POST of a client address counts, good or bad: a storm from one client is slowed before any other work.
    const clientWait = await this.#overBudget([[`signup-client:${clientBudgetKey(clientIp)}`, limits.perClientPerMinute]]);
    if (clientWait !== undefined) return { kind: "rate-limited", form, token: this.#token(form), retryAfterSeconds: clientWait };
    const posted = values[TOKEN_FIELD] ?? "";
    if (!deps.tokens.verify(form.id, posted, this.#clock())) return { kind: "expired", form, token: this.#token(form) };
    if ((values[HONEYPOT_FIELD] ?? "") !== "") return thanks;

    const problems = nullPrototypeMap<FieldProblemKind>();
    const write: { email: string; attributes: Record<string, string | boolean>; named: Record<string, string> } = {
      email: "",
      attributes: nullPrototypeMap<string | boolean>(),
      named: nullPrototypeMap<string>(),
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
    if (Object.keys(problems).length > 0) return { kind: "invalid", form, token: this.#token(form), problems };

    // Single use: a token that signed one sign-up signs no other (a replay gets the page again with a fresh token).
    const at = this.#clock();
    if (deps.usedTokens && !(await deps.usedTokens.claim(form.id, deps.tokens.fingerprint(posted), at, new Date(at.getTime() - TOKEN_MAX_AGE_MS - 60_000)))) {
      return { kind: "expired", form, token: this.#token(form) };
    }
    const wait = await this.#overBudget([
      [`signup:${form.companyId}:${write.email.toLowerCase()}`, SIGNUPS_PER_ADDRESS_PER_MINUTE],
      [`signup-form:${form.id}`, limits.perFormPerMinute],
      [`signup-company:${form.companyId}`, limits.perCompanyPerMinute],
    ]);
    if (wait !== undefined) return { kind: "rate-limited", form, token: this.#token(form), retryAfterSeconds: wait };

    // A new address becomes a contact (pending on a double opt-in form); an existing contact is left exactly as it is
    // (decide-write.ts: an anonymous write never changes one) and, while pending, its owner is asked to confirm.
    const upsert: UpsertContactCommand = {
      companyId: form.companyId,
      source: "form",
      email: write.email,
      ...write.named,
      ...(Object.keys(write.attributes).length > 0 ? { attributes: { ...write.attributes } } : {}),
      status: form.doubleOptIn ? "pending" : "subscribed",
      consent: { source: signupConsentSource(form.publicId), at, reference: `consent text v${form.consentVersion}; ip ${clientIp}`.slice(0, 200) },
    };
    let contact: ContactRecord;
    try {
      contact = (await deps.contacts.upsert(upsert)).contact;
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      // The contacts' own checks (address syntax, phone format): name the form's field.
      const refused = nullPrototypeMap<FieldProblemKind>();
      for (const { field } of error.fields) {
        const name = field.startsWith("attributes.") ? field.slice("attributes.".length) : field;
        refused[form.fields.some((f) => f.name === name) ? name : "email"] = name === "email" ? "invalid-email" : "invalid";
      }
      return { kind: "invalid", form, token: this.#token(form), problems: refused };
    }
    // The outcome is not the visitor's business: a company that cannot send leaves the sign-up pending (double-opt-in.ts logs why).
    if (contact.status === "pending") await deps.confirmations?.request({ companyId: form.companyId, form, contact });
    return thanks;
  }

  /** A fresh token for the form's page. */
  #token(form: PublishedForm): string {
    return this.#deps.tokens.issue(form.id, this.#clock());
  }

  /** The first budget that refuses, or undefined when all allow (each allowed one counts the sign-up). */
  async #overBudget(buckets: ReadonlyArray<readonly [string, number]>): Promise<number | undefined> {
    for (const [bucket, limit] of buckets) {
      const decision = await this.#deps.rateLimiter.consume({ bucket, limitPerMinute: limit });
      if (!decision.allowed) return decision.retryAfterSeconds;
    }
    return undefined;
  }
}
