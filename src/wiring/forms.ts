import type { MikroORM } from "@mikro-orm/postgresql";
import { postgresSignupFormStore } from "../adapters/postgres/forms/index.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import type { Contacts } from "../capabilities/contacts/index.ts";
import { createSignupForms, type SignupForms } from "../capabilities/forms/index.ts";
import { createFormTokens, createHostedSignup, type HostedSignup, type SignupConfirmations } from "../capabilities/forms/hosted/index.ts";
import type { RateLimiter } from "../capabilities/rate-limit/index.ts";

export interface FormsWiringOptions {
  /** Base of the hosted form addresses: PUBLIC_BASE_URL, or the API's own base URL. */
  readonly publicBaseUrl: string;
  /** Tests pass a predictable public id generator. */
  readonly newPublicId?: () => string;
}

/** The sign-up forms capability on an open ORM (GET /mail/v1/forms, AdminService form RPCs, the hosted page). */
export function createFormsCapability(orm: MikroORM, options: FormsWiringOptions): SignupForms {
  return createSignupForms(postgresSignupFormStore(poolOf(orm)), {
    publicBaseUrl: options.publicBaseUrl,
    ...(options.newPublicId ? { newPublicId: options.newPublicId } : {}),
  });
}

export interface HostedSignupWiring {
  readonly forms: SignupForms;
  readonly contacts: Contacts;
  /** The API's shared rate limiter (src/wiring/rate-limit.ts): the per-address sign-up budget. */
  readonly rateLimiter: RateLimiter;
  /** HMAC key of the hosted page's CSRF tokens; changing it expires the pages in visitors' browsers. */
  readonly tokenSecret: string;
  readonly confirmations?: SignupConfirmations;
  readonly now?: () => Date;
}

/** The hosted form page's use cases; hand them to registerHostedForms (src/transport/connect/forms/hosted). */
export function createHostedSignupCapability(wiring: HostedSignupWiring): HostedSignup {
  return createHostedSignup({
    forms: wiring.forms,
    contacts: wiring.contacts,
    rateLimiter: wiring.rateLimiter,
    tokens: createFormTokens(wiring.tokenSecret),
    ...(wiring.confirmations ? { confirmations: wiring.confirmations } : {}),
    ...(wiring.now ? { now: wiring.now } : {}),
  });
}
