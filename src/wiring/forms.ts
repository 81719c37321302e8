import { create } from "@bufbuild/protobuf";
import type { MikroORM } from "@mikro-orm/postgresql";
import { postgresConfirmationBudget, postgresSignupFormStore, postgresUsedFormTokens } from "../adapters/postgres/forms/index.ts";
import { PostgresMessageStore } from "../adapters/postgres/messages/message-store.ts";
import { type Pool, poolOf } from "../adapters/postgres/sql.ts";
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
import { readSendKey } from "../capabilities/idempotency/index.ts";
import { acceptSend, type AcceptSendDependencies } from "../capabilities/messages/accept/accept-send.ts";
import type { SenderDirectoryPort, TemplatesPort, WalletPort } from "../capabilities/messages/accept/ports.ts";
import type { NewMessage, StoredMessage } from "../capabilities/messages/ports.ts";
import type { RateLimiter } from "../capabilities/rate-limit/index.ts";
import type { SecretSealer } from "../capabilities/sending-setup/key-sealing.ts";
import { SendMessageRequestSchema } from "../gen/mail/v1/mail_pb.js";

export interface FormsWiringOptions {
  /** Base of the hosted form addresses: PUBLIC_BASE_URL, or the API's own base URL. */
  readonly publicBaseUrl: string;
}

/** The sign-up forms capability on an open ORM (GET /mail/v1/forms, the SignupFormsService, the hosted page). */
export function createFormsCapability(orm: MikroORM, options: FormsWiringOptions): SignupForms {
  return new SignupForms({ store: postgresSignupFormStore(poolOf(orm)), publicBaseUrl: options.publicBaseUrl });
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
  readonly db?: () => Promise<Pool>;
  /** SIGNUP_PER_CLIENT_PER_MINUTE, SIGNUP_PER_FORM_PER_MINUTE, SIGNUP_PER_COMPANY_PER_MINUTE; unset: the defaults. */
  readonly limits?: SignupLimits;
  /** The time of the page tokens and the consent; the system clock when absent. */
  readonly clock?: () => Date;
}

/** The hosted form page's use cases; hand them to registerHostedForms (src/transport/connect/forms/hosted). */
export function createHostedSignupCapability(wiring: HostedSignupWiring): HostedSignup {
  return new HostedSignup({
    forms: wiring.forms,
    contacts: wiring.contacts,
    rateLimiter: wiring.rateLimiter,
    tokens: createFormTokens(wiring.tokenSecret),
    usedTokens: wiring.db && postgresUsedFormTokens(wiring.db),
    limits: wiring.limits,
    confirmations: wiring.confirmations,
    clock: wiring.clock,
  });
}

/** Starts a message's workflow (the messages capability's dispatcher; its outbox relay starts what this could not). */
export interface MessageStarter {
  dispatch(message: StoredMessage): Promise<unknown>;
}

export interface ConfirmationMailerWiring {
  readonly db: () => Promise<Pool>;
  /** Seals the bodies of the service's own mail (the process's one sealer). */
  readonly sealer: SecretSealer;
  readonly senders: SenderDirectoryPort;
  readonly templates: TemplatesPort;
  readonly wallet: WalletPort;
  readonly dispatcher: MessageStarter;
  readonly log: ConfirmationLog;
}

/**
 * The message store of the service's own mail (confirmations, sign-in
 * links): no API key made it (`api_key_id` stays null), and it is system
 * mail (sealed at rest, its content withheld from every read). The accept
 * use case takes a caller with a key id (POST /mail/v1/send always has
 * one); this keeps its signature as it is.
 */
class SystemMailStore extends PostgresMessageStore {
  override insertQueued(message: NewMessage): ReturnType<PostgresMessageStore["insertQueued"]> {
    return super.insertQueued({ ...message, apiKeyId: null, system: true });
  }
}

/**
 * The confirmation emails go through the messages accept use case, as a
 * POST /mail/v1/send does: the company's default sender, the credit check,
 * the idempotency key, then the message's Temporal workflow and the email
 * service (the simulator in development and tests). Only the caller
 * differs: no API key.
 */
export function createConfirmationMailer(wiring: ConfirmationMailerWiring): ConfirmationMailer {
  const deps: AcceptSendDependencies = {
    store: new SystemMailStore(wiring.db, { sealer: wiring.sealer }),
    senders: wiring.senders,
    templates: wiring.templates,
    wallet: wiring.wallet,
    onAccepted: (message) => {
      // Best effort now; the relay picks up whatever this could not start.
      void wiring.dispatcher.dispatch(message).catch((error: unknown) => wiring.log.warn({ err: error }, "dispatch failed"));
    },
  };
  return {
    async send(mail) {
      const request = create(SendMessageRequestSchema, {
        to: { kind: { case: "stringValue", value: mail.to } },
        subject: mail.subject,
        html: mail.html,
        text: mail.text,
        tags: { ...mail.tags },
        idempotencyKey: mail.idempotencyKey,
      });
      // The email's own key (one per sign-up and resend window): a resubmitted or retried sign-up finds the first message.
      const answer = await acceptSend(deps, { companyId: mail.companyId, keyId: "" }, request, readSendKey(undefined, mail.idempotencyKey));
      return { messageId: answer.id, replayed: answer.replayed };
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
        : { store: postgresConfirmationBudget(poolOf(wiring.orm)), perCompanyPerHour: wiring.confirmationsPerCompanyPerHour },
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
  readonly sending: Omit<ConfirmationMailerWiring, "db" | "log">;
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
    mailer: createConfirmationMailer({ ...wiring.sending, db: poolOf(wiring.orm), log: wiring.log }),
    log: wiring.log,
    confirmationsPerCompanyPerHour: wiring.confirmationsPerCompanyPerHour ?? DEFAULT_CONFIRMATIONS_PER_COMPANY_PER_HOUR,
  });
  const signup = createHostedSignupCapability({
    forms: wiring.forms,
    contacts: wiring.contacts,
    rateLimiter: wiring.rateLimiter,
    tokenSecret: wiring.tokenSecret,
    confirmations: confirmation,
    db: poolOf(wiring.orm),
    ...(wiring.limits ? { limits: wiring.limits } : {}),
  });
  return { signup, confirmation };
}
