import type { MikroORM } from "@mikro-orm/postgresql";
import { postgresConfirmationBudget, postgresSignupFormStore, postgresUsedFormTokens } from "../adapters/postgres/forms/index.ts";
import type { Contacts } from "../capabilities/contacts/index.ts";
import { SignupForms } from "../capabilities/forms/index.ts";
import {
  type ConfirmationLog,
  type ConfirmationMailer,
  createConfirmationTokens,
  createFormTokens,
  DoubleOptIn,
  HostedSignup,
  type SignupConfirmations,
  type SignupLimits,
} from "../capabilities/forms/hosted/index.ts";
import type { MessageAcceptance } from "../capabilities/messages/accept/message-acceptance.ts";
import type { RateLimiter } from "../capabilities/rate-limit/index.ts";

export interface FormsWiringOptions {
  /** Base of the hosted form addresses: PUBLIC_BASE_URL, or the API's own base URL. */
  readonly publicBaseUrl: string;
}

/** The sign-up forms capability on an open ORM (GET /mail/v1/forms, the SignupFormsService, the hosted page). */
export function createFormsCapability(orm: MikroORM, options: FormsWiringOptions): SignupForms {
  return new SignupForms({ store: postgresSignupFormStore(orm), publicBaseUrl: options.publicBaseUrl });
}

export interface HostedSignupWiring {
  readonly forms: SignupForms;
  readonly contacts: Contacts;
  /** The API's shared rate limiter (src/wiring/rate-limit.ts): the per-address sign-up budget. */
  readonly rateLimiter: RateLimiter;
  /** HMAC key of the hosted page's CSRF tokens; changing it expires the pages in visitors' browsers. */
  readonly tokenSecret: string;
  /** Sends the double opt-in confirmations (createDoubleOptInCapability); without it double opt-in sign-ups stay pending. */
  readonly confirmations?: SignupConfirmations;
  /** The database of the used-token store (single-use form tokens); unset: tokens are checked by signature and age only. */
  readonly orm?: MikroORM;
  /** SIGNUP_PER_CLIENT_PER_MINUTE, SIGNUP_PER_FORM_PER_MINUTE, SIGNUP_PER_COMPANY_PER_MINUTE; unset: the defaults. */
  readonly limits?: SignupLimits;
  /** The time of the page tokens and the consent; the system clock when absent. */
  readonly clock?: () => Date;
}

/** The hosted form page's use cases; hand them to registerHostedForms (src/transport/http/hosted-forms). */
export function createHostedSignupCapability(wiring: HostedSignupWiring): HostedSignup {
  return new HostedSignup({
    forms: wiring.forms,
    contacts: wiring.contacts,
    rateLimiter: wiring.rateLimiter,
    tokens: createFormTokens(wiring.tokenSecret),
    usedTokens: wiring.orm && postgresUsedFormTokens(wiring.orm),
    limits: wiring.limits,
    confirmations: wiring.confirmations,
    clock: wiring.clock,
  });
}

/**
 * The service's own mail (double opt-in confirmations, sign-in links) goes
 * through the messages capability's send use case as a POST /mail/v1/send
 * does (the company's default sender, the credit check, the idempotency
 * key, then the message's workflow and the email service), with the
 * `system` origin: no API key makes it, and its body is sealed at rest and
 * withheld from every read.
 */
export function createConfirmationMailer(messages: Pick<MessageAcceptance, "send">): ConfirmationMailer {
  return {
    async send(mail) {
      // The email's own key (one per sign-up and resend window): a resubmitted or retried sign-up finds the first message.
      const sent = await messages.send({
        companyId: mail.companyId,
        origin: { kind: "system" },
        to: mail.to,
        subject: mail.subject,
        html: mail.html,
        text: mail.text,
        tags: mail.tags,
        idempotencyKey: mail.idempotencyKey,
      });
      return { messageId: sent.id, replayed: sent.replayed };
    },
  };
}

export interface DoubleOptInWiring {
  readonly orm: MikroORM;
  readonly forms: SignupForms;
  readonly contacts: Contacts;
  /** The hosted form's token secret: the confirmation links' key is derived from it (own label). */
  readonly tokenSecret: string;
  readonly mailer: ConfirmationMailer;
  readonly log: ConfirmationLog;
  /** CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR; unset: no cap. */
  readonly confirmationsPerCompanyPerHour?: number;
  /** The time of the links and the confirmations; the system clock when absent. */
  readonly clock?: () => Date;
}

/** The double opt-in: the confirmation emails and the confirmation pages' use cases. */
export function createDoubleOptInCapability(wiring: DoubleOptInWiring): DoubleOptIn {
  return new DoubleOptIn({
    forms: wiring.forms,
    contacts: wiring.contacts,
    tokens: createConfirmationTokens(wiring.tokenSecret),
    mailer: wiring.mailer,
    log: wiring.log,
    budget:
      wiring.confirmationsPerCompanyPerHour === undefined
        ? undefined
        : { store: postgresConfirmationBudget(wiring.orm), perCompanyPerHour: wiring.confirmationsPerCompanyPerHour },
    clock: wiring.clock,
  });
}

/** What the API process hands the hosted pages (src/wiring/api.ts). */
export interface HostedFormsWiring {
  readonly orm: MikroORM;
  readonly forms: SignupForms;
  readonly contacts: Contacts;
  readonly rateLimiter: RateLimiter;
  /** Key of the sign-up pages' form tokens (FORM_TOKEN_SECRET). */
  readonly tokenSecret: string;
  /** Key of the confirmation links (CONFIRMATION_SECRET), its own secret; unset: `tokenSecret`. */
  readonly confirmationSecret?: string;
  /** The send use case the confirmation emails go through (the messages capability's). */
  readonly messages: Pick<MessageAcceptance, "send">;
  readonly log: ConfirmationLog;
  /** The anonymous door's budgets per minute (SIGNUP_*); unset: the defaults. */
  readonly limits?: SignupLimits;
  /** CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR; unset: the default. */
  readonly confirmationsPerCompanyPerHour?: number;
}

/** Confirmation emails per company and hour when the configuration says nothing. */
export const DEFAULT_CONFIRMATIONS_PER_COMPANY_PER_HOUR = 100;

/** The hosted sign-up pages with their double opt-in, ready for registerHostedForms. */
export function createHostedForms(wiring: HostedFormsWiring): { signup: HostedSignup; confirmation: DoubleOptIn } {
  const confirmation = createDoubleOptInCapability({
    orm: wiring.orm,
    forms: wiring.forms,
    contacts: wiring.contacts,
    tokenSecret: wiring.confirmationSecret ?? wiring.tokenSecret,
    mailer: createConfirmationMailer(wiring.messages),
    log: wiring.log,
    confirmationsPerCompanyPerHour: wiring.confirmationsPerCompanyPerHour ?? DEFAULT_CONFIRMATIONS_PER_COMPANY_PER_HOUR,
  });
  const signup = createHostedSignupCapability({
    forms: wiring.forms,
    contacts: wiring.contacts,
    rateLimiter: wiring.rateLimiter,
    tokenSecret: wiring.tokenSecret,
    confirmations: confirmation,
    orm: wiring.orm,
    ...(wiring.limits ? { limits: wiring.limits } : {}),
  });
  return { signup, confirmation };
}
