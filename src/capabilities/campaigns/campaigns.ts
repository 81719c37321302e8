import { randomUUID } from "node:crypto";
import { ApiError, type FieldProblem } from "../../contract/api-error.ts";
import type { PrincipalActor } from "../accounts/principal.ts";
import type { AuditAction, AuditContext, AuditNote } from "../audit/types.ts";
import { isEmailAddress } from "../messages/compose/email-address.ts";
import { hasControlCharacter, hasLineBreak } from "../messages/compose/text-rules.ts";
import type { KeysetCursorKind } from "../shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page, type PageRequest, pageSize, refuseProblems } from "../shared/paging.ts";
import { isUuid } from "../shared/uuid.ts";
import { renderCampaignContent } from "./content.ts";
import type {
  AudiencePreview,
  CampaignDraft,
  CampaignInsightsPort,
  CampaignRecord,
  CampaignResults,
  CampaignSendersPort,
  CampaignState,
  CampaignStore,
  CampaignTemplatesPort,
  CampaignWorkflowsPort,
  EngagementInterval,
  StateChange,
  TestSendPort,
} from "./ports.ts";

/** A campaign's timeline is drawn by the hour for its first three days, by the day after. */
export const HOURLY_TIMELINE_MS = 72 * 3_600_000;

/** The timeline's bucket width for a campaign started at `startedAt` (null: not started), seen at `now`. */
export function timelineInterval(startedAt: Date | null, now: Date): EngagementInterval {
  return startedAt && now.getTime() - startedAt.getTime() > HOURLY_TIMELINE_MS ? "day" : "hour";
}

export const CAMPAIGN_STATES: readonly CampaignState[] = ["draft", "scheduled", "sending", "paused", "sent", "cancelled"];

export interface CampaignsDependencies {
  readonly store: CampaignStore;
  readonly senders: CampaignSendersPort;
  readonly templates: CampaignTemplatesPort;
  readonly testSend: TestSendPort;
  readonly workflows: CampaignWorkflowsPort;
  readonly insights: CampaignInsightsPort;
  /** Secret of the list's cursors. */
  readonly cursorSecret: string;
  readonly clock?: () => Date;
}

/** A draft's fields as a caller wrote them: absent stays absent (an edit keeps the stored value). */
export interface CampaignFields {
  readonly name?: string | undefined;
  readonly audience?: { readonly listIds: readonly string[]; readonly tag?: string | undefined } | undefined;
  readonly content?:
    | { readonly templateId?: string | undefined; readonly subject?: string | undefined; readonly html?: string | undefined; readonly text?: string | undefined }
    | undefined;
  /** Empty: the default sender. */
  readonly senderId?: string | undefined;
  /** Empty: none. */
  readonly replyTo?: string | undefined;
  readonly trackOpens?: boolean | undefined;
  readonly trackClicks?: boolean | undefined;
}

export interface CampaignQuery {
  readonly companyId: string;
  readonly campaignId: string;
}

export interface CreateCampaignCommand extends CampaignFields {
  readonly companyId: string;
  readonly audit: AuditContext;
}

export interface UpdateCampaignCommand extends CampaignFields, CampaignQuery {
  readonly audit: AuditContext;
}

export interface ListCampaignsCommand extends PageRequest {
  readonly companyId: string;
  readonly state?: CampaignState | undefined;
}

export interface ScheduleCampaignCommand extends CampaignQuery {
  /** Absent (or past): now. */
  readonly sendAt?: Date | undefined;
  readonly audit: AuditContext;
}

export interface CampaignChangeCommand extends CampaignQuery {
  readonly audit: AuditContext;
}

export interface SendCampaignTestCommand extends CampaignQuery {
  /** Who asks: the copy goes to a signed-in member's own address. */
  readonly actor: PrincipalActor;
  readonly audit: AuditContext;
}

export interface SendCampaignTestResult {
  readonly messageId: string;
  readonly email: string;
}

const MAX_NAME = 200;
const MAX_TAG = 100;
const MAX_LISTS = 20;
const MAX_SUBJECT = 998;

/** The list's cursors: positions are (created_at, id). */
export const CAMPAIGN_CURSOR: KeysetCursorKind = {
  context: "mail.v1.campaigns.cursor.v1",
  label: "campaign list",
  filters: "state",
  id: "uuid",
};

/**
 * Campaigns of a company (docs/campaigns.md): drafts written and edited,
 * previewed, tried on the signed-in member, scheduled, paused, resumed and
 * cancelled. Sending itself is CampaignSending's (one workflow per
 * campaign); this class moves the state, in the database first, then tells
 * the workflow (which reads the state back, so a lost wake-up only delays it).
 */
export class Campaigns {
  readonly #deps: CampaignsDependencies;
  readonly #pager: KeysetPager;
  readonly #now: () => Date;

  constructor(deps: CampaignsDependencies) {
    this.#deps = deps;
    this.#pager = new KeysetPager(deps.cursorSecret, CAMPAIGN_CURSOR);
    this.#now = deps.clock ?? (() => new Date());
  }

  async create(command: CreateCampaignCommand): Promise<CampaignRecord> {
    const draft = await this.#checkedDraft(command.companyId, mergeDraft(EMPTY_DRAFT, command, true));
    const id = randomUUID();
    return this.#deps.store.create(command.companyId, id, draft, note(command.audit, "campaign.created", { name: draft.name }));
  }

  async update(command: UpdateCampaignCommand): Promise<CampaignRecord> {
    const { companyId, campaignId } = command;
    const current = await this.get(command);
    requireState(current, ["draft"], "edited");
    const draft = await this.#checkedDraft(companyId, mergeDraft(current, command, false));
    const updated = await this.#deps.store.update(companyId, campaignId, (locked) => {
      requireState(locked, ["draft"], "edited");
      return { draft, audit: note(command.audit, "campaign.updated", { name: draft.name }) };
    });
    if (!updated) throw notFound();
    return updated;
  }

  async get(query: CampaignQuery): Promise<CampaignRecord> {
    if (!isUuid(query.campaignId)) throw notFound();
    const campaign = await this.#deps.store.find(query.companyId, query.campaignId);
    if (!campaign) throw notFound();
    return campaign;
  }

  async list(command: ListCampaignsCommand): Promise<Page<CampaignRecord>> {
    const problems: FieldProblem[] = [];
    const size = pageSize(command.limit, problems);
    if (command.state !== undefined && !CAMPAIGN_STATES.includes(command.state)) {
      problems.push({ field: "state", problem: `must be one of ${CAMPAIGN_STATES.join(", ")}` });
    }
    refuseProblems(problems);
    const fingerprint = filterFingerprint([command.state]);
    const after = this.#pager.after(command.companyId, fingerprint, command.cursor);
    return this.#pager.page(command.companyId, fingerprint, await this.#deps.store.list(command.companyId, command.state, after, size + 1), size);
  }

  /** How the audience splits now (the same rules as when sending starts). */
  async previewAudience(query: CampaignQuery): Promise<AudiencePreview> {
    const campaign = await this.get(query);
    return this.#deps.store.previewAudience(query.companyId, campaign.listIds, campaign.tag);
  }

  async results(query: CampaignQuery): Promise<CampaignResults> {
    if (!isUuid(query.campaignId)) throw notFound();
    const results = await this.#deps.store.results(query.companyId, query.campaignId);
    if (!results) throw notFound();
    const interval = timelineInterval(results.startedAt, this.#now());
    const [links, timeline, revenue] = await Promise.all([
      this.#deps.insights.links(query.companyId, query.campaignId),
      this.#deps.insights.timeline(query.companyId, query.campaignId, interval),
      this.#deps.insights.revenue(query.companyId, query.campaignId),
    ]);
    // The contract's order: most verified clicks first.
    const byClicks = [...links].sort((a, b) => b.clicks - a.clicks || a.linkId.localeCompare(b.linkId));
    return { ...results, links: byClicks, timeline, revenue, interval };
  }

  /**
   * One copy to the signed-in member's own address, rendered with the
   * member's address as its only value, through the send path (one credit,
   * the message log). Keys and operators have no address of their own.
   */
  async sendTest(command: SendCampaignTestCommand): Promise<SendCampaignTestResult> {
    const campaign = await this.get(command);
    if (command.actor.kind !== "member") {
      throw new ApiError("FORBIDDEN", "A test copy goes to the signed-in member's own address: send it from a member's session.");
    }
    const email = command.actor.email;
    const template = campaign.templateId ? await this.#deps.templates.getTemplate(command.companyId, campaign.templateId) : undefined;
    const content = renderCampaignContent(campaign, template, { email });
    const { messageId } = await this.#deps.testSend.send({
      companyId: command.companyId,
      to: email,
      senderId: campaign.senderId ?? undefined,
      replyTo: campaign.replyTo ?? undefined,
      subject: content.subject,
      html: content.html ?? undefined,
      text: content.text ?? undefined,
    });
    return { messageId, email };
  }

  /** Schedules a draft (or moves a scheduled campaign's time); its workflow waits on a durable timer. */
  async schedule(command: ScheduleCampaignCommand): Promise<CampaignRecord> {
    const now = this.#now();
    const sendAt = command.sendAt && command.sendAt > now ? command.sendAt : now;
    const before = await this.get(command);
    requireState(before, ["draft", "scheduled"], "scheduled");
    // What a send checks, now rather than at its time: the sender, the template, the lists.
    await this.#checkedDraft(command.companyId, before);
    const scheduled = await this.#change(command, (current) => {
      requireState(current, ["draft", "scheduled"], "scheduled");
      return { state: "scheduled", sendAt, audit: note(command.audit, "campaign.scheduled", { sendAt: sendAt.toISOString() }) };
    });
    // Starts the workflow, or wakes the one there (a new time); a start that failed before is made now.
    await this.#deps.workflows.start(command.companyId, command.campaignId);
    return scheduled;
  }

  async pause(command: CampaignChangeCommand): Promise<CampaignRecord> {
    return this.#wakeAfter(command, await this.#change(command, (current) => {
      requireState(current, ["sending"], "paused");
      return { state: "paused", audit: note(command.audit, "campaign.paused", {}) };
    }));
  }

  async resume(command: CampaignChangeCommand): Promise<CampaignRecord> {
    return this.#wakeAfter(command, await this.#change(command, (current) => {
      requireState(current, ["paused"], "resumed");
      return { state: "sending", audit: note(command.audit, "campaign.resumed", {}) };
    }));
  }

  /** Cancels; a campaign that never started ends at once, one under way ends after its batch (and publishes campaign.sent). */
  async cancel(command: CampaignChangeCommand): Promise<CampaignRecord> {
    return this.#wakeAfter(command, await this.#change(command, (current) => {
      requireState(current, ["scheduled", "sending", "paused"], "cancelled");
      return { state: "cancelled", finished: current.state === "scheduled", audit: note(command.audit, "campaign.cancelled", {}) };
    }));
  }

  async #change(query: CampaignQuery, decide: (current: CampaignRecord) => StateChange): Promise<CampaignRecord> {
    if (!isUuid(query.campaignId)) throw notFound();
    const changed = await this.#deps.store.changeState(query.companyId, query.campaignId, decide);
    if (!changed) throw notFound();
    return changed;
  }

  async #wakeAfter(query: CampaignQuery, campaign: CampaignRecord): Promise<CampaignRecord> {
    await this.#deps.workflows.wake(query.companyId, query.campaignId);
    return campaign;
  }

  /** The draft's rules (one VALIDATION_ERROR naming every bad field), then its references: lists (400), template and sender (404 / 409). */
  async #checkedDraft(companyId: string, draft: CampaignDraft): Promise<CampaignDraft> {
    const problems: FieldProblem[] = [];
    const name = draft.name.trim();
    if (name === "" || [...name].length > MAX_NAME) problems.push({ field: "name", problem: `must be 1 to ${MAX_NAME} characters` });
    if (draft.listIds.length === 0 || draft.listIds.length > MAX_LISTS) {
      problems.push({ field: "audience.listIds", problem: `must name 1 to ${MAX_LISTS} lists` });
    } else if (!draft.listIds.every(isUuid)) {
      problems.push({ field: "audience.listIds", problem: "must be list ids" });
    }
    if (draft.tag !== null && (draft.tag.trim() === "" || [...draft.tag].length > MAX_TAG || hasControlCharacter(draft.tag))) {
      problems.push({ field: "audience.tag", problem: `must be 1 to ${MAX_TAG} characters without control characters` });
    }
    if (draft.templateId !== null) {
      if (!isUuid(draft.templateId)) problems.push({ field: "content.templateId", problem: "must be a template id" });
      if (draft.subject !== null || draft.html !== null || draft.text !== null) {
        problems.push({ field: "content", problem: "a template or subject with html/text, not both" });
      }
    } else {
      if (draft.subject === null || draft.subject.trim() === "") problems.push({ field: "content.subject", problem: "is required without a template" });
      else if ([...draft.subject].length > MAX_SUBJECT || hasLineBreak(draft.subject)) {
        problems.push({ field: "content.subject", problem: `must be one line of at most ${MAX_SUBJECT} characters` });
      }
      // As for a send: an HTML part, and a text part when given.
      if ((draft.html ?? "").trim() === "") problems.push({ field: "content.html", problem: "is required without a template" });
    }
    if (draft.senderId !== null && !isUuid(draft.senderId)) problems.push({ field: "senderId", problem: "must be a sender id" });
    if (draft.replyTo !== null && !isEmailAddress(draft.replyTo)) problems.push({ field: "replyTo", problem: "must be an email address" });
    refuseProblems(problems);
    const missing = await this.#deps.store.missingLists(companyId, draft.listIds);
    if (missing.length > 0) refuseProblems([{ field: "audience.listIds", problem: `names no list of the company: ${missing.join(", ")}` }]);
    if (draft.templateId !== null) await this.#deps.templates.getTemplate(companyId, draft.templateId);
    await this.#deps.senders.checkSender(companyId, draft.senderId ?? undefined);
    return { ...draft, name };
  }
}

const EMPTY_DRAFT: CampaignDraft = {
  name: "",
  listIds: [],
  tag: null,
  templateId: null,
  subject: null,
  html: null,
  text: null,
  senderId: null,
  replyTo: null,
  trackOpens: false,
  trackClicks: false,
};

/** The stored draft with what the caller sent over it; content and audience are replaced whole. */
function mergeDraft(base: CampaignDraft, fields: CampaignFields, creating: boolean): CampaignDraft {
  const content = fields.content;
  const emptyToNull = (value: string | undefined, fallback: string | null): string | null => (value === undefined ? fallback : value === "" ? null : value);
  return {
    name: fields.name ?? base.name,
    listIds: fields.audience ? [...new Set(fields.audience.listIds)] : base.listIds,
    tag: fields.audience ? (fields.audience.tag ?? null) : base.tag,
    templateId: content ? emptyToNull(content.templateId, null) : base.templateId,
    subject: content ? emptyToNull(content.subject, null) : base.subject,
    html: content ? emptyToNull(content.html, null) : base.html,
    text: content ? emptyToNull(content.text, null) : base.text,
    senderId: emptyToNull(fields.senderId, creating ? null : base.senderId),
    replyTo: emptyToNull(fields.replyTo, creating ? null : base.replyTo),
    trackOpens: fields.trackOpens ?? base.trackOpens,
    trackClicks: fields.trackClicks ?? base.trackClicks,
  };
}

function requireState(campaign: CampaignRecord, allowed: readonly CampaignState[], verb: string): void {
  if (!allowed.includes(campaign.state)) {
    throw new ApiError("CAMPAIGN_STATE_CONFLICT", `A ${campaign.state} campaign cannot be ${verb} (only ${allowed.join(" or ")}).`);
  }
}

function note(context: AuditContext, action: AuditAction, details: AuditNote["details"]): AuditNote {
  return { context, action, details };
}

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "No such campaign.");
}
