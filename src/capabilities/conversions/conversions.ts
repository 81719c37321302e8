import { randomUUID } from "node:crypto";
import { ApiError } from "../../contract/api-error.ts";
import { attributionWindow } from "./attribution.ts";
import { type CampaignClick, validateClick } from "./clicks.ts";
import { firstWrite, laterWrite } from "./decide-write.ts";
import type { ClickLedger, ContactDirectory, ConversionFilter, ConversionStore } from "./ports.ts";
import type { CampaignRevenue, KnownContact, RecordConversionResult } from "./types.ts";
import { type ConversionInput, type ValidConversion, validateConversion } from "./validate-conversion.ts";
import { conversionEvent } from "./view.ts";

export interface ConversionsDependencies {
  readonly store: ConversionStore;
  readonly contacts: ContactDirectory;
  readonly clicks: ClickLedger;
  /** The time of the writes; the system clock when absent. */
  readonly clock?: (() => Date) | undefined;
}

/** POST /mail/v1/conversions: the write as the caller sent it, for the company. */
export interface RecordConversionCommand extends ConversionInput {
  readonly companyId: string;
}

/** A click on a tracked campaign link (a `campaign.click` event), for the company. */
export interface RecordClickCommand extends CampaignClick {
  readonly companyId: string;
}

export interface RecordClickResult {
  /** False when the clickId was recorded already (nothing changed). */
  readonly recorded: boolean;
}

/** The revenue report of the company, for conversions that occurred in [since, until) when given. */
export interface RevenueByCampaignCommand extends ConversionFilter {
  readonly companyId: string;
}

/**
 * Conversions (POST /mail/v1/conversions) and the click ledger they are
 * attributed from. The rules are in decide-write.ts (what a write does),
 * attribution.ts (which click earns a conversion) and
 * validate-conversion.ts (what a write may say); docs/conversions.md tells
 * callers.
 */
export class Conversions {
  readonly #deps: ConversionsDependencies;
  readonly #clock: () => Date;

  constructor(deps: ConversionsDependencies) {
    this.#deps = deps;
    this.#clock = deps.clock ?? (() => new Date());
  }

  /**
   * Records a conversion, or applies a later write of its eventId (refund,
   * cancellation, replay). Throws 400 VALIDATION_ERROR naming every bad
   * field, 404 NOT_FOUND for a contactId that is not a contact of the
   * company, 409 IDEMPOTENCY_CONFLICT for a later write that contradicts
   * the first.
   */
  async record(command: RecordConversionCommand): Promise<RecordConversionResult> {
    const { companyId } = command;
    const now = this.#clock();
    const write = validateConversion(command, now);
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
        const { adjustment, ...first } = firstWrite(write, now);
        return {
          conversion: {
            ...first,
            id: randomUUID(),
            eventId: write.eventId,
            eventType: write.eventType,
            contactId: who.contactId,
            email: who.email,
            customerRef: write.contact.kind === "customerRef" ? write.contact.customerRef : null,
            campaignId: click?.campaignId ?? null,
            linkId: click?.linkId ?? null,
            clickedAt: click?.occurredAt ?? null,
          },
          adjustment,
        };
      },
      decide: (current) => laterWrite(current, write),
      event: conversionEvent,
    });
  }

  /**
   * Keeps one click on a tracked campaign link (the EventsService calls
   * this for each `campaign.click` event). Idempotent on clickId. Throws
   * 400 VALIDATION_ERROR naming bad fields.
   */
  async recordClick(command: RecordClickCommand): Promise<RecordClickResult> {
    return { recorded: await this.#deps.clicks.record(command.companyId, validateClick(command)) };
  }

  /**
   * Revenue attributed to each campaign of the company: gross, refunded
   * and net, one row per campaign and currency.
   */
  revenueByCampaign(command: RevenueByCampaignCommand): Promise<CampaignRevenue[]> {
    return this.#deps.store.revenueByCampaign(command.companyId, { since: command.since, until: command.until });
  }
}

/** Who converted, as far as we know: the contact's id and address, else the address sent. */
function whoConverted(write: ValidConversion, contact: KnownContact | undefined): { contactId: string | null; email: string | null } {
  if (contact) return { contactId: contact.id, email: contact.email };
  return { contactId: null, email: write.contact.kind === "email" ? write.contact.email : null };
}
