import { randomUUID } from "node:crypto";
import { ApiError, type FieldProblem } from "../../contract/api-error.ts";
import type { KeysetCursorKind } from "../shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page, type PageRequest, pageSize, refuseProblems } from "../shared/paging.ts";
import { attributionWindow } from "./attribution.ts";
import { type CampaignClick, validateClick } from "./clicks.ts";
import { firstWrite, laterWrite } from "./decide-write.ts";
import type { ClickLedger, ContactDirectory, ConversionFilter, ConversionStore } from "./ports.ts";
import type { CampaignRevenue, ConversionRecord, KnownContact, RecordConversionResult } from "./types.ts";
import { type ConversionInput, isContactId, type ValidConversion, validateConversion } from "./validate-conversion.ts";
import { conversionEvent } from "./view.ts";

export interface ConversionsDependencies {
  readonly store: ConversionStore;
  readonly contacts: ContactDirectory;
  readonly clicks: ClickLedger;
  /** HMAC key of the list cursors. Changing it invalidates cursors in flight. */
  readonly cursorSecret: string;
  /** The time of the writes; the system clock when absent. */
  readonly clock?: (() => Date) | undefined;
}

/**
 * Cursors of a contact's conversions: the one keyset codec with a MAC
 * context of their own. Bound to the contact (its id is the fingerprint's
 * input): a cursor of one contact's page never pages another's.
 */
export const CONTACT_CONVERSIONS_CURSOR: KeysetCursorKind = {
  context: "mail.v1.contact-conversions.cursor.v1",
  label: "contact conversions",
  filters: "contactId",
};

/** ReportsService ListContactConversions: a page of one contact's conversions. */
export interface ListContactConversionsCommand extends PageRequest {
  readonly companyId: string;
  readonly contactId: string;
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
  readonly #pager: KeysetPager;

  constructor(deps: ConversionsDependencies) {
    this.#deps = deps;
    this.#clock = deps.clock ?? (() => new Date());
    this.#pager = new KeysetPager(deps.cursorSecret, CONTACT_CONVERSIONS_CURSOR);
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

  /**
   * The conversions of one contact of the company, newest recorded first:
   * those that name it (contactId) or its address (email; a conversion of
   * a known contact always carries the contact's address). 404 NOT_FOUND
   * for an unknown or another company's contact; 400 VALIDATION_ERROR for
   * a bad limit or cursor.
   */
  async listForContact(command: ListContactConversionsCommand): Promise<Page<ConversionRecord>> {
    const { companyId } = command;
    const problems: FieldProblem[] = [];
    const size = pageSize(command.limit, problems);
    refuseProblems(problems);
    const id = command.contactId.trim().toLowerCase();
    const contact = isContactId(id) ? await this.#deps.contacts.findContact(companyId, { kind: "contactId", contactId: id }) : undefined;
    if (!contact) throw new ApiError("NOT_FOUND", "contact not found");
    const fingerprint = filterFingerprint([contact.id]);
    // An empty cursor is what a REST client sends for "?cursor=": the first page.
    const after = this.#pager.after(companyId, fingerprint, command.cursor);
    const rows = await this.#deps.store.pageForContact(companyId, contact, after, size + 1);
    return this.#pager.page(companyId, fingerprint, rows, size);
  }
}


/** Who converted, as far as we know: the contact's id and address, else the address sent. */
function whoConverted(write: ValidConversion, contact: KnownContact | undefined): { contactId: string | null; email: string | null } {
  if (contact) return { contactId: contact.id, email: contact.email };
  return { contactId: null, email: write.contact.kind === "email" ? write.contact.email : null };
}
