import { randomUUID } from "node:crypto";
import { ApiError } from "../../contract/api-error.ts";
import { attributionWindow } from "./attribution.ts";
import { type CampaignClick, validateClick } from "./clicks.ts";
import { firstWrite, laterWrite } from "./decide-write.ts";
import type { ClickLedger, ContactDirectory, ConversionFilter, ConversionStore } from "./ports.ts";
import type { CampaignRevenue, KnownContact, RecordedConversion } from "./types.ts";
import { type ConversionInput, type ValidConversion, validateConversion } from "./validate-conversion.ts";
import { conversionEvent } from "./view.ts";

export interface ConversionsDependencies {
  readonly store: ConversionStore;
  readonly contacts: ContactDirectory;
  readonly clicks: ClickLedger;
  /** The clock (tests pass their own). */
  readonly now?: () => Date;
}

/**
 * Conversions (POST /mail/v1/conversions) and the click ledger they are
 * attributed from. The rules are in decide-write.ts (what a write does),
 * attribution.ts (which click earns a conversion) and
 * validate-conversion.ts (what a write may say); docs/conversions.md tells
 * callers.
 */
export class ConversionsService {
  readonly #deps: ConversionsDependencies;
  readonly #now: () => Date;

  constructor(deps: ConversionsDependencies) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  /**
   * Records a conversion, or applies a later write of its eventId (refund,
   * cancellation, replay). Throws 400 VALIDATION_ERROR naming every bad
   * field, 404 NOT_FOUND for a contactId that is not a contact of the
   * company, 409 IDEMPOTENCY_CONFLICT for a later write that contradicts
   * the first.
   */
  async record(companyId: string, input: ConversionInput): Promise<RecordedConversion> {
    const now = this.#now();
    const write = validateConversion(input, now);
    const contact = await this.#deps.contacts.findContact(companyId, write.contact);
    if (write.contact.kind === "contactId" && !contact) {
      throw new ApiError("NOT_FOUND", "contactId: no contact of the company has this id.");
    }
    const who = whoConverted(write, contact);
    // Attribution is looked up before the write (a read); a later write of
    // the eventId keeps the attribution of the first.
    const window = attributionWindow(write.occurredAt ?? now);
    const click = who.contactId || who.email ? await this.#deps.clicks.lastVerifiedClick(companyId, who, window.from, window.to) : undefined;
    return this.#deps.store.write({
      companyId,
      eventId: write.eventId,
      first: () => {
        const first = firstWrite(write, now);
        return {
          conversion: {
            id: randomUUID(),
            eventId: write.eventId,
            eventType: write.eventType,
            contactId: who.contactId,
            email: who.email,
            customerRef: write.contact.kind === "customerRef" ? write.contact.customerRef : null,
            revenue: first.revenue,
            currency: first.currency,
            status: first.status,
            refundedAmount: first.refundedAmount,
            occurredAt: first.occurredAt,
            metadata: first.metadata,
            campaignId: click?.campaignId ?? null,
            linkId: click?.linkId ?? null,
            clickedAt: click?.occurredAt ?? null,
          },
          adjustment: first.adjustment,
        };
      },
      decide: (current) => laterWrite(current, write),
      event: conversionEvent,
    });
  }

  /**
   * Keeps one click on a tracked campaign link (the EventsService calls
   * this for each `campaign.click` event). Idempotent on clickId: true when
   * this call recorded it. Throws 400 VALIDATION_ERROR naming bad fields.
   */
  async recordClick(companyId: string, click: CampaignClick): Promise<{ readonly recorded: boolean }> {
    return { recorded: await this.#deps.clicks.record(companyId, validateClick(click)) };
  }

  /**
   * Revenue attributed to each campaign of the company (conversions that
   * occurred in [since, until) when given): gross, refunded and net, one
   * row per campaign and currency.
   */
  revenueByCampaign(companyId: string, filter: ConversionFilter = {}): Promise<CampaignRevenue[]> {
    return this.#deps.store.revenueByCampaign(companyId, filter);
  }
}

/** Who converted, as far as we know: the contact's id and address, else the address sent. */
function whoConverted(write: ValidConversion, contact: KnownContact | undefined): { contactId: string | null; email: string | null } {
  if (contact) return { contactId: contact.id, email: contact.email };
  return { contactId: null, email: write.contact.kind === "email" ? write.contact.email : null };
}
