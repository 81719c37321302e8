import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * Campaign tracking (src/capabilities/tracking; docs/tracking.md). Written
 * and read through MikroORM (src/adapters/postgres/tracking). No foreign key
 * to campaigns or contacts: the rows keep what the copy was sent with, and a
 * click must answer without them.
 */

/**
 * One campaign copy as the decorator registered it: what its tokens are
 * bound to (the MAC covers company, campaign, recipient and contact). Keyed
 * by the recipient id alone, which comes from a token and is checked
 * against the row's company next.
 */
export const TrackingRecipientSchema = defineEntity({
  name: "TrackingRecipient",
  tableName: "tracking_recipient",
  properties: {
    recipientId: p.uuid().primary().fieldName("recipient_id"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("tracking_recipient_company_id_fkey"),
    campaignId: p.text(),
    contactId: p.uuid(),
    email: p.text(),
    language: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [{ properties: ["company", "campaignId"], name: "tracking_recipient_campaign_index" }],
});

/** A link of a campaign: a click redirects only to these URLs. */
export const TrackingLinkSchema = defineEntity({
  name: "TrackingLink",
  tableName: "tracking_link",
  properties: {
    company: () =>
      p
        .manyToOne(CompanySchema)
        .primary()
        .fieldName("company_id")
        .deleteRule("cascade")
        .updateRule("no action")
        .foreignKeyName("tracking_link_company_id_fkey"),
    campaignId: p.text().primary(),
    /** 16 hex digits of SHA-256 of the URL. */
    linkId: p.text().primary(),
    url: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
});

/** Every request to a click or open address, with the rules' verdict. */
export const TrackingHitSchema = defineEntity({
  name: "TrackingHit",
  tableName: "tracking_hit",
  properties: {
    id: p.uuid().primary(),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("tracking_hit_company_id_fkey"),
    campaignId: p.text(),
    recipientId: p.uuid(),
    /** `click` or `open`. */
    kind: p.text(),
    linkId: p.text().nullable(),
    /** A click that looks automated; an open that is a machine's. */
    suspect: p.boolean(),
    /** The rules that said so, comma-separated (empty: none). */
    reasons: p.text(),
    occurredAt: p.datetime(),
  },
  checks: [{ name: "tracking_hit_kind", expression: "kind in ('click', 'open')" }],
  indexes: [
    { properties: ["company", "recipientId", "occurredAt"], name: "tracking_hit_recipient_index" },
    { properties: ["company", "campaignId", "kind"], name: "tracking_hit_campaign_index" },
  ],
});

/** The first open, first verified click per link, and unsubscribe of a recipient: each publishes its event once. */
export const TrackingFirstSchema = defineEntity({
  name: "TrackingFirst",
  tableName: "tracking_first",
  properties: {
    company: () =>
      p
        .manyToOne(CompanySchema)
        .primary()
        .fieldName("company_id")
        .deleteRule("cascade")
        .updateRule("no action")
        .foreignKeyName("tracking_first_company_id_fkey"),
    recipientId: p.uuid().primary(),
    /** `open`, `click` or `unsubscribe`. */
    kind: p.text().primary(),
    /** The link of a click; empty otherwise. */
    linkId: p.text().primary(),
    campaignId: p.text(),
    occurredAt: p.datetime(),
  },
  checks: [{ name: "tracking_first_kind", expression: "kind in ('open', 'click', 'unsubscribe')" }],
  indexes: [{ properties: ["company", "campaignId", "kind"], name: "tracking_first_campaign_index" }],
});

export type TrackingRecipient = InferEntity<typeof TrackingRecipientSchema>;
export type TrackingLink = InferEntity<typeof TrackingLinkSchema>;
export type TrackingHit = InferEntity<typeof TrackingHitSchema>;
export type TrackingFirst = InferEntity<typeof TrackingFirstSchema>;
