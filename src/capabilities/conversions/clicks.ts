import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { checkEmailAddress } from "../messages/compose/email-address.ts";
import { exceedsCodePoints, hasControlCharacter } from "../messages/compose/text-rules.ts";

/**
 * One click on a tracked campaign link, as a `campaign.click` event reports
 * it (spec: Event kinds; the EventsService hands it to recordClick). The
 * click ledger keeps every click; attribution reads only the verified ones
 * (`suspect: false`).
 */
export interface CampaignClick {
  /**
   * The caller's stable id of this click (the published event's eventId):
   * recording it again adds nothing. At most 200 characters.
   */
  readonly clickId: string;
  readonly campaignId: string;
  readonly linkId: string;
  readonly recipientId?: string | null | undefined;
  /** The contact's id; empty, absent or not a UUID when unknown (then the click is matched by its address only). */
  readonly contactId?: string | null | undefined;
  /** The recipient's address; empty or absent when unknown. At least one of contactId and email. */
  readonly email?: string | null | undefined;
  /** True when the click looks automated: kept, never credited. */
  readonly suspect: boolean;
  readonly occurredAt: Date;
}

/** A click checked and normalised for the ledger. */
export interface ValidClick {
  readonly clickId: string;
  readonly campaignId: string;
  readonly linkId: string;
  readonly recipientId: string | null;
  /** Lower case. */
  readonly contactId: string | null;
  /** The contacts' matching key: lower-cased address. */
  readonly email: string | null;
  readonly suspect: boolean;
  readonly occurredAt: Date;
}

export const CLICK_ID_MAX = 200;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks a click; throws one ValidationError naming every bad field. A
 * contactId that is not a contact id (a UUID) is left out, and an address
 * our check refuses is kept lower-cased as written: the click is still
 * recorded, matched by what can match.
 */
export function validateClick(click: CampaignClick): ValidClick {
  const problems: FieldProblem[] = [];
  const text = (field: string, value: string | null | undefined, required: boolean): string | null => {
    if (value === undefined || value === null || value === "") {
      if (required) problems.push({ field, problem: "is required" });
      return null;
    }
    if (exceedsCodePoints(value, CLICK_ID_MAX)) problems.push({ field, problem: `must be at most ${CLICK_ID_MAX} characters` });
    else if (hasControlCharacter(value)) problems.push({ field, problem: "must not contain control characters" });
    else return value;
    return null;
  };
  const clickId = text("clickId", click.clickId, true);
  const campaignId = text("campaignId", click.campaignId, true);
  const linkId = text("linkId", click.linkId, true);
  const recipientId = text("recipientId", click.recipientId, false);

  // A click is evidence, not a request: an id or address we cannot use
  // only means the click cannot be matched by it, never that it is refused.
  const contactId = click.contactId && UUID.test(click.contactId) ? click.contactId.toLowerCase() : null;
  const email = click.email?.trim() ? clickEmailKey(click.email) : null;
  if (!contactId && !email) {
    problems.push({ field: "contactId, email", problem: "at least one identifies who clicked (contactId as a contact id, a UUID)" });
  }
  if (Number.isNaN(click.occurredAt.getTime())) problems.push({ field: "occurredAt", problem: "must be a date-time" });

  if (problems.length > 0 || clickId === null || campaignId === null || linkId === null) throw new ValidationError(problems);
  return { clickId, campaignId, linkId, recipientId, contactId, email, suspect: click.suspect, occurredAt: click.occurredAt };
}

/** The contacts' matching key of a clicked address: checked and lower-cased, or as written (lower-cased) when the check refuses it. */
function clickEmailKey(input: string): string {
  const check = checkEmailAddress(input.trim());
  return (check.ok ? check.address : input.trim()).toLowerCase();
}
