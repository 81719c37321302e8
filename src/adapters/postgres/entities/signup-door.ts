import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * Tables of the hosted sign-up door and the fair sending pace
 * (Migration20251127000000_signup_door). The door's are written through
 * MikroORM (../forms/signup-door-stores.ts: a conditional upsert, an
 * insert that loses to the first); the pace's by plain SQL under a row
 * lock on the send path (../messages/sending-pace-store.ts).
 */

/** A form token that was used (single use): its MAC, never the whole token. */
export const SignupFormTokenUseSchema = defineEntity({
  name: "SignupFormTokenUse",
  tableName: "signup_form_token_use",
  properties: {
    tokenMac: p.text().primary(),
    formId: p.uuid(),
    usedAt: p.datetime(),
  },
  indexes: [{ properties: "usedAt", name: "signup_form_token_use_used_at_index" }],
});

export type SignupFormTokenUse = InferEntity<typeof SignupFormTokenUseSchema>;

/** Confirmation emails of one company in one hour (the per-company cap). */
export const SignupConfirmationHourSchema = defineEntity({
  name: "SignupConfirmationHour",
  tableName: "signup_confirmation_hour",
  properties: {
    companyId: p.uuid().primary(),
    hourStart: p.datetime().primary(),
    sent: p.integer(),
  },
});

export type SignupConfirmationHour = InferEntity<typeof SignupConfirmationHourSchema>;

/** One company's turn in a provider's sending pace. */
export const SendingPaceCompanySchema = defineEntity({
  name: "SendingPaceCompany",
  tableName: "sending_pace_company",
  properties: {
    provider: p.text().primary(),
    companyId: p.uuid().primary(),
    lastServedAt: p.datetime().nullable(),
    waitingSince: p.datetime().nullable(),
    askedAt: p.datetime(),
  },
});

export type SendingPaceCompany = InferEntity<typeof SendingPaceCompanySchema>;
