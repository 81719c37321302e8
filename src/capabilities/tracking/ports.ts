import type { CampaignLink } from "./decorate.ts";

/**
 * What the tracking capability needs from outside. The PostgreSQL store is
 * in src/adapters/postgres/tracking; the others are other capabilities
 * (contacts, webhooks, conversions), passed by src/wiring/tracking.ts.
 */

/** A campaign copy as the decorator registered it: what its tokens are bound to. */
export interface TrackedRecipient {
  readonly companyId: string;
  readonly campaignId: string;
  /** The campaign recipient row's id (UUID): unique over every company. */
  readonly recipientId: string;
  readonly contactId: string;
  readonly email: string;
  /** The language of the hosted unsubscribe page (the contact's or form's), when known. */
  readonly language: string | null;
}

/** One request to a tracked address, kept for the counts and for the rules that read a recipient's recent clicks. */
export interface TrackingHit {
  readonly id: string;
  readonly companyId: string;
  readonly campaignId: string;
  readonly recipientId: string;
  readonly kind: "click" | "open";
  /** The link of a click; null for an open. */
  readonly linkId: string | null;
  /** Click: looks automated; open: a machine's. */
  readonly suspect: boolean;
  readonly reasons: readonly string[];
  readonly at: Date;
}

/** The first engagement of a recipient of one kind (per link for clicks), which publishes `opened`, `clicked` or `unsubscribed`. */
export interface FirstEngagement {
  readonly companyId: string;
  readonly campaignId: string;
  readonly recipientId: string;
  readonly kind: "open" | "click" | "unsubscribe";
  /** The link of a click; null otherwise. */
  readonly linkId: string | null;
  readonly at: Date;
}

/** The engagement counts of one campaign (the campaigns capability reads them: TrackingCounts). */
export interface CampaignEngagement {
  /** Recipients with a first human open (the `opened` events). */
  readonly uniqueOpens: number;
  /** Every open request, human or machine. */
  readonly opens: number;
  /** Open requests told apart as a machine's (Apple Mail Privacy Protection, scanners, prefetch). */
  readonly machineOpens: number;
  /** Every click on a campaign link (the `campaign.click` events), suspect ones included. */
  readonly clicks: number;
  readonly suspectClicks: number;
  /** Recipients with at least one verified click. */
  readonly uniqueClicks: number;
  /** Recipients who unsubscribed through this campaign (the `unsubscribed` events). */
  readonly unsubscribes: number;
}

/** The clicks of one campaign link. */
export interface LinkEngagement extends CampaignLink {
  readonly clicks: number;
  readonly suspectClicks: number;
  /** Recipients with a verified click on it (the `clicked` events). */
  readonly uniqueClicks: number;
}

export interface TrackingStore {
  /** Registers a copy and its campaign's links (idempotent: a copy decorated again changes nothing). */
  registerCopy(recipient: TrackedRecipient, links: readonly CampaignLink[]): Promise<void>;
  /** The copy of a recipient id, whoever's company: the id comes from a token whose MAC is checked against it next. */
  findRecipient(recipientId: string): Promise<TrackedRecipient | undefined>;
  /** The URL of one of the campaign's links; undefined when the campaign has no such link. */
  linkUrl(companyId: string, campaignId: string, linkId: string): Promise<string | undefined>;
  /** The recipient's clicks at or after `since`. */
  recentClicks(companyId: string, recipientId: string, since: Date): Promise<{ readonly linkId: string; readonly at: Date }[]>;
  recordHit(hit: TrackingHit): Promise<void>;
  /** Records a first engagement; true when it is the first of its kind (and link), false when one was recorded before. */
  recordFirst(first: FirstEngagement): Promise<boolean>;
  countsFor(companyId: string, campaignId: string): Promise<CampaignEngagement>;
  clicksPerLink(companyId: string, campaignId: string): Promise<LinkEngagement[]>;
}

/** Campaign fields of the published events (spec: Event kinds, "Campaign fields"). */
export interface CampaignEventFields {
  readonly campaignId: string;
  readonly recipientId: string;
  readonly contactId: string;
  readonly email: string;
  readonly linkId?: string | undefined;
  readonly suspect?: boolean | undefined;
}

/** The webhooks capability's publisher (WebhookEventPublisher fits): idempotent on (company, eventId). */
export interface EngagementPublisher {
  publish(command: {
    readonly companyId: string;
    readonly eventId: string;
    readonly event: string;
    readonly occurredAt: Date | undefined;
    readonly campaign?: CampaignEventFields | undefined;
  }): Promise<{ readonly id: string; readonly replayed: boolean }>;
}

/** The conversions' click ledger (Conversions fits): every click, attribution reading the verified ones. */
export interface ClickRecorder {
  recordClick(command: {
    readonly companyId: string;
    readonly clickId: string;
    readonly campaignId: string;
    readonly linkId: string;
    readonly recipientId?: string | null | undefined;
    readonly contactId?: string | null | undefined;
    readonly email?: string | null | undefined;
    readonly suspect: boolean;
    readonly occurredAt: Date;
  }): Promise<{ readonly recorded: boolean }>;
}

/** The contacts capability's unsubscribe (Contacts fits). */
export interface ContactUnsubscriber {
  unsubscribe(command: {
    readonly companyId: string;
    readonly contactId: string;
    readonly method: "one-click" | "page" | "mailto";
    readonly reference: string | null;
  }): Promise<{ readonly kind: "unsubscribed" | "already-unsubscribed" | "kept" | "not-found" }>;
}

/** A budget per client address of the anonymous tracking door (the rate-limit capability's RateLimiter fits). */
export interface TrackingRateLimiter {
  consume(command: { readonly bucket: string; readonly limitPerMinute: number }): Promise<{ readonly allowed: boolean; readonly retryAfterSeconds: number }>;
}
