import type { Adjustment, AttributedClick, CampaignRevenue, ContactRef, ConversionOutcome, ConversionRecord, KnownContact } from "./types.ts";
import type { FirstWrite, LaterWrite } from "./decide-write.ts";
import type { ValidClick } from "./clicks.ts";
import type { ConversionEventDraft } from "./view.ts";
import type { ConversionEventType } from "./types.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";

/**
 * What the conversions capability needs from outside. The PostgreSQL
 * adapters in src/adapters/postgres/conversions implement all three; every
 * call is scoped by company id.
 */

/**
 * The contacts of a company, read-only (the contacts capability owns them).
 * Answers the contact a conversion write names, or undefined when none is
 * known: a contactId that is not a contact of the company, an address no
 * contact has, a customerRef no contact carries.
 */
export interface ContactDirectory {
  findContact(companyId: string, ref: ContactRef): Promise<KnownContact | undefined>;
}

/** The clicks on tracked campaign links (campaign.click events). */
export interface ClickLedger {
  /** Keeps a click; false when its clickId was recorded already (nothing changes). */
  record(companyId: string, click: ValidClick): Promise<boolean>;
  /**
   * The latest click that is not suspect, by the contact's id or address
   * (either may be null), with occurredAt in (from, to]; undefined when none.
   */
  lastVerifiedClick(
    companyId: string,
    who: { readonly contactId: string | null; readonly email: string | null },
    from: Date,
    to: Date,
  ): Promise<AttributedClick | undefined>;
}

/** A conversion as its first write records it. */
export interface NewConversion extends Omit<FirstWrite, "adjustment"> {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: ConversionEventType;
  readonly contactId: string | null;
  readonly email: string | null;
  readonly customerRef: string | null;
  readonly campaignId: string | null;
  readonly linkId: string | null;
  readonly clickedAt: Date | null;
}

export interface ConversionWrite {
  readonly companyId: string;
  readonly eventId: string;
  /**
   * The conversion to record when the company has none with the eventId
   * yet, and the refund it already carries (for its event; null: none).
   * Pure; throws an ApiError when the write cannot be a first write (a
   * refund larger than the defaulted revenue): the write then changes nothing.
   */
  readonly first: () => { readonly conversion: NewConversion; readonly adjustment: Adjustment | null };
  /**
   * Decides a later write against the stored conversion, locked until the
   * write commits; pure. May throw an ApiError (the write then changes nothing).
   */
  readonly decide: (current: ConversionRecord) => LaterWrite;
  /** The outbox row of a change, from the conversion as stored by it. */
  readonly event: (conversion: ConversionRecord, adjustment: Adjustment | null) => ConversionEventDraft;
}

export interface ConversionFilter {
  /** Conversions that occurred at or after. */
  readonly since?: Date | undefined;
  /** Conversions that occurred before. */
  readonly until?: Date | undefined;
  /** Only the conversions attributed to this campaign. */
  readonly campaignId?: string | undefined;
}

export interface ConversionStore {
  /**
   * Records the first write of (company, eventId), or applies a later one
   * as `decide` says, with the change's `conversion.recorded` outbox row,
   * in one transaction. Concurrent writes of one eventId record one
   * conversion: the others see it as a later write.
   */
  write(request: ConversionWrite): Promise<{ conversion: ConversionRecord; outcome: ConversionOutcome }>;
  findByEventId(companyId: string, eventId: string): Promise<ConversionRecord | undefined>;
  /** Revenue of the attributed conversions per campaign and currency, campaigns in id order. */
  revenueByCampaign(companyId: string, filter: ConversionFilter): Promise<CampaignRevenue[]>;
  /**
   * Up to `rows` conversions of the contact (its id, or its address),
   * newest recorded first (created_at desc, id desc), strictly after
   * `after`, each with its position.
   */
  pageForContact(companyId: string, contact: KnownContact, after: KeysetPosition | null, rows: number): Promise<Positioned<ConversionRecord>[]>;
}
