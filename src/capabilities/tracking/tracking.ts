import { randomUUID } from "node:crypto";
import { clientBudgetKey } from "../forms/hosted/submit-signup.ts";
import { addFooterAndPixel, rewriteLinks } from "./decorate.ts";
import type {
  CampaignEngagement,
  ClickRecorder,
  ContactUnsubscriber,
  EngagementPublisher,
  LinkEngagement,
  TrackedRecipient,
  TrackingRateLimiter,
  TrackingStore,
} from "./ports.ts";
import { HONEYPOT_WINDOW_SECONDS, judgeClick, judgeOpen, type TrackingRequest } from "./suspect-rules.ts";
import type { CampaignMessageInput, DecoratedCampaignMessage } from "../campaigns/ports.ts";
import { HONEYPOT_LINK_ID, type TokenBinding, type TokenKind, TrackingTokens } from "./tokens.ts";

// The copy the campaigns capability hands over and what comes back: its port's types, declared once there.
export type { CampaignMessageInput, DecoratedCampaignMessage } from "../campaigns/ports.ts";

export interface TrackingDependencies {
  readonly store: TrackingStore;
  readonly publisher: EngagementPublisher;
  readonly clicks: ClickRecorder;
  readonly contacts: ContactUnsubscriber;
  readonly rateLimiter: TrackingRateLimiter;
  /** The key the tokens are derived from (CONFIRMATION_SECRET). */
  readonly secret: string;
  /** Base of the tracked addresses (TRACKING_BASE_URL, default PUBLIC_BASE_URL), no trailing slash. */
  readonly baseUrl: string;
  /** Domain of the List-Unsubscribe mailto (RETURN_PATH_MX_HOST: the inbound SMTP listener's). */
  readonly mailtoDomain: string;
  /** Requests per client address and minute on the tracking door; TRACKING_REQUESTS_PER_CLIENT_PER_MINUTE when absent. */
  readonly perClientPerMinute?: number | undefined;
  /** Token age limit; TRACKING_TOKEN_MAX_AGE_MS when absent. */
  readonly maxTokenAgeMs?: number | undefined;
  readonly clock?: (() => Date) | undefined;
}

/** A corporate gateway clicks for many people from one address: the budget is generous, it only stops floods. */
export const TRACKING_REQUESTS_PER_CLIENT_PER_MINUTE = 600;

export interface ClickCommand {
  readonly token: string;
  readonly request: TrackingRequest;
}

export type ClickOutcome =
  /** Go to the campaign's own URL (the only place a click ever redirects to). */
  | { readonly kind: "redirect"; readonly url: string }
  /** The hidden link: nothing to go to. */
  | { readonly kind: "honeypot" }
  | { readonly kind: "not-found" }
  | { readonly kind: "rate-limited"; readonly retryAfterSeconds: number };

export interface OpenCommand {
  readonly token: string;
  readonly request: TrackingRequest;
}

export interface UnsubscribePageCommand {
  readonly token: string;
}

export type UnsubscribePageOutcome = { readonly kind: "ready"; readonly language: string | null } | { readonly kind: "not-found" };

export interface UnsubscribeCommand {
  readonly token: string;
  /** `one-click`: the List-Unsubscribe-Post a mailbox provider sends; `page`: the hosted page's button. */
  readonly method: "one-click" | "page";
  readonly clientIp: string;
}

export type UnsubscribeOutcome =
  | { readonly kind: "unsubscribed" | "already-unsubscribed" | "kept"; readonly language: string | null }
  | { readonly kind: "not-found" }
  | { readonly kind: "rate-limited"; readonly retryAfterSeconds: number };

export interface MailUnsubscribeCommand {
  /** The envelope recipient (`unsubscribe+<token>@…`). */
  readonly address: string;
}

export interface CampaignCountsQuery {
  readonly companyId: string;
  readonly campaignId: string;
}

/**
 * Campaign tracking and unsubscribe (docs/tracking.md): the decorator of
 * every campaign copy (tracked links, pixel, footer, List-Unsubscribe
 * headers), the click, open and unsubscribe use cases behind the tracking
 * addresses, and the engagement counts the campaigns capability reads.
 * Each click publishes `campaign.click`; the first verified click per
 * recipient and link `clicked`; the first human open `opened`; an
 * unsubscribe `unsubscribed` (and the contacts capability
 * `contact.updated`). Nothing here waits on a workflow.
 */
export class Tracking {
  readonly #deps: TrackingDependencies;
  readonly #tokens: TrackingTokens;
  readonly #clock: () => Date;
  readonly #perClient: number;
  readonly #decorator: CopyDecorator;

  constructor(deps: TrackingDependencies) {
    this.#deps = deps;
    this.#tokens = new TrackingTokens(deps.secret, deps.maxTokenAgeMs);
    this.#clock = deps.clock ?? (() => new Date());
    this.#perClient = deps.perClientPerMinute ?? TRACKING_REQUESTS_PER_CLIENT_PER_MINUTE;
    this.#decorator = new CopyDecorator(deps);
  }

  /** The copy as it is sent (CopyDecorator.decorate). */
  decorate(input: CampaignMessageInput): Promise<DecoratedCampaignMessage> {
    return this.#decorator.decorate(input);
  }

  /** A click on a tracked link: where to go, and the events it publishes (suspect-rules.ts decides `suspect`). */
  async click(command: ClickCommand): Promise<ClickOutcome> {
    const { request } = command;
    const budget = await this.#budget(request.clientIp);
    if (budget) return budget;
    const found = await this.#copyOf(command.token, "click");
    const linkId = found?.claim.linkId;
    if (!found || linkId === undefined) return { kind: "not-found" };
    const { copy, claim, check } = found;
    const isHoneypot = linkId === HONEYPOT_LINK_ID;
    const target = isHoneypot ? undefined : await this.#deps.store.linkUrl(copy.companyId, copy.campaignId, linkId);
    if (!isHoneypot && target === undefined) return { kind: "not-found" };
    // An old message's link still opens the campaign's page; its click is not counted any more.
    if (check === "expired") return target === undefined ? { kind: "honeypot" } : { kind: "redirect", url: target };

    const recent = await this.#deps.store.recentClicks(copy.companyId, copy.recipientId, new Date(request.at.getTime() - HONEYPOT_WINDOW_SECONDS * 1000));
    const reasons = judgeClick(request, claim.issuedAt, linkId, isHoneypot, recent);
    const suspect = reasons.length > 0;
    const hitId = randomUUID();
    await this.#deps.store.recordHit({ id: hitId, companyId: copy.companyId, campaignId: copy.campaignId, recipientId: copy.recipientId, kind: "click", linkId, suspect, reasons, at: request.at });
    // The hidden link is no link of the campaign: it only marks the recipient's scanner.
    if (isHoneypot || target === undefined) return { kind: "honeypot" };

    const fields = { campaignId: copy.campaignId, recipientId: copy.recipientId, contactId: copy.contactId, email: copy.email };
    await this.#deps.publisher.publish({ companyId: copy.companyId, eventId: hitId, event: "campaign.click", occurredAt: request.at, campaign: { ...fields, linkId, suspect } });
    await this.#deps.clicks.recordClick({ companyId: copy.companyId, clickId: hitId, ...fields, linkId, suspect, occurredAt: request.at });
    if (!suspect) {
      const first = await this.#deps.store.recordFirst({ companyId: copy.companyId, campaignId: copy.campaignId, recipientId: copy.recipientId, kind: "click", linkId, at: request.at });
      if (first) {
        await this.#deps.publisher.publish({
          companyId: copy.companyId,
          eventId: `clicked:${copy.recipientId}:${linkId}`,
          event: "clicked",
          occurredAt: request.at,
          campaign: { ...fields, linkId },
        });
      }
    }
    return { kind: "redirect", url: target };
  }

  /** A load of the open pixel: recorded, and the first human open publishes `opened`. Never fails on a bad token. */
  async open(command: OpenCommand): Promise<void> {
    const { request } = command;
    if (await this.#budget(request.clientIp)) return;
    const found = await this.#copyOf(command.token, "open");
    if (!found || found.check !== "valid") return;
    const { copy, claim } = found;
    const reasons = judgeOpen(request, claim.issuedAt);
    const machine = reasons.length > 0;
    await this.#deps.store.recordHit({ id: randomUUID(), companyId: copy.companyId, campaignId: copy.campaignId, recipientId: copy.recipientId, kind: "open", linkId: null, suspect: machine, reasons, at: request.at });
    if (machine) return;
    if (await this.#deps.store.recordFirst({ companyId: copy.companyId, campaignId: copy.campaignId, recipientId: copy.recipientId, kind: "open", linkId: null, at: request.at })) {
      await this.#deps.publisher.publish({
        companyId: copy.companyId,
        eventId: `opened:${copy.recipientId}`,
        event: "opened",
        occurredAt: request.at,
        campaign: { campaignId: copy.campaignId, recipientId: copy.recipientId, contactId: copy.contactId, email: copy.email },
      });
    }
  }

  /** The footer link's page (GET): which language to ask in. A GET changes nothing. */
  async openUnsubscribePage(command: UnsubscribePageCommand): Promise<UnsubscribePageOutcome> {
    const found = await this.#copyOf(command.token, "unsubscribe");
    return found ? { kind: "ready", language: found.copy.language } : { kind: "not-found" };
  }

  /**
   * The one-click POST or the page's button: the contact becomes
   * `unsubscribed` at once. A genuine unsubscribe link works whatever its
   * age (a recipient must always be able to leave).
   */
  async unsubscribe(command: UnsubscribeCommand): Promise<UnsubscribeOutcome> {
    const budget = await this.#budget(command.clientIp);
    if (budget) return budget;
    const found = await this.#copyOf(command.token, "unsubscribe");
    if (!found) return { kind: "not-found" };
    const kind = await this.#unsubscribeCopy(found.copy, command.method);
    return kind === "not-found" ? { kind } : { kind, language: found.copy.language };
  }

  /** True when `address` is a List-Unsubscribe mailto address of a registered copy (the inbound listener's RCPT TO check). */
  async isUnsubscribeAddress(command: MailUnsubscribeCommand): Promise<boolean> {
    return (await this.#mailtoCopy(command.address)) !== undefined;
  }

  /** Mail to the List-Unsubscribe mailto address: unsubscribes like the one-click POST. False when the address is not ours. */
  async unsubscribeByMail(command: MailUnsubscribeCommand): Promise<boolean> {
    const copy = await this.#mailtoCopy(command.address);
    if (!copy) return false;
    await this.#unsubscribeCopy(copy, "mailto");
    return true;
  }

  /** The engagement counts of a campaign of the company (the campaigns capability's results). */
  countsFor(query: CampaignCountsQuery): Promise<CampaignEngagement> {
    return this.#deps.store.countsFor(query.companyId, query.campaignId);
  }

  /** The clicks per link of a campaign of the company, most clicked first. */
  clicksPerLink(query: CampaignCountsQuery): Promise<LinkEngagement[]> {
    return this.#deps.store.clicksPerLink(query.companyId, query.campaignId);
  }

  async #unsubscribeCopy(copy: TrackedRecipient, method: "one-click" | "page" | "mailto"): Promise<"unsubscribed" | "already-unsubscribed" | "kept" | "not-found"> {
    const at = this.#clock();
    const result = await this.#deps.contacts.unsubscribe({ companyId: copy.companyId, contactId: copy.contactId, method, reference: `campaign:${copy.campaignId}` });
    if (result.kind === "unsubscribed") {
      // Counted for the campaign whose copy was used; published once per recipient.
      await this.#deps.store.recordFirst({ companyId: copy.companyId, campaignId: copy.campaignId, recipientId: copy.recipientId, kind: "unsubscribe", linkId: null, at });
      await this.#deps.publisher.publish({
        companyId: copy.companyId,
        eventId: `unsubscribed:${copy.recipientId}`,
        event: "unsubscribed",
        occurredAt: at,
        campaign: { campaignId: copy.campaignId, recipientId: copy.recipientId, contactId: copy.contactId, email: copy.email },
      });
    }
    return result.kind;
  }

  async #copyOf(token: string, kind: TokenKind) {
    const claim = this.#tokens.read(token);
    if (claim?.kind !== kind) return undefined;
    const copy = await this.#deps.store.findRecipient(claim.recipientId);
    if (!copy) return undefined;
    const check = this.#tokens.verify(token, copy, this.#clock());
    // Unsubscribe links work whatever their age; clicks and opens of an expired token count nothing.
    if (check === "invalid") return undefined;
    return { copy, claim, check };
  }

  async #mailtoCopy(address: string): Promise<TrackedRecipient | undefined> {
    const recipientId = this.#tokens.readMailto(address);
    if (!recipientId) return undefined;
    const copy = await this.#deps.store.findRecipient(recipientId);
    return copy && this.#tokens.verifyMailto(address, copy) ? copy : undefined;
  }

  async #budget(clientIp: string): Promise<{ readonly kind: "rate-limited"; readonly retryAfterSeconds: number } | undefined> {
    const decision = await this.#deps.rateLimiter.consume({ bucket: `tracking:${clientBudgetKey(clientIp)}`, limitPerMinute: this.#perClient });
    return decision.allowed ? undefined : { kind: "rate-limited", retryAfterSeconds: decision.retryAfterSeconds };
  }
}

export interface CopyDecoratorDependencies {
  readonly store: Pick<TrackingStore, "registerCopy">;
  /** The key the tokens are derived from (CONFIRMATION_SECRET). */
  readonly secret: string;
  /** Base of the tracked addresses (TRACKING_BASE_URL, default PUBLIC_BASE_URL), no trailing slash. */
  readonly baseUrl: string;
  /** Domain of the List-Unsubscribe mailto (RETURN_PATH_MX_HOST: the inbound SMTP listener's). */
  readonly mailtoDomain: string;
  readonly clock?: (() => Date) | undefined;
}

/**
 * The decorator of campaign copies alone (the campaigns' CampaignMessageDecorator):
 * what a worker's campaign activities need, without the tracking doors'
 * other parts. Tracking.decorate is this.
 */
export class CopyDecorator {
  readonly #deps: CopyDecoratorDependencies;
  readonly #tokens: TrackingTokens;
  readonly #clock: () => Date;

  constructor(deps: CopyDecoratorDependencies) {
    this.#deps = deps;
    this.#tokens = new TrackingTokens(deps.secret);
    this.#clock = deps.clock ?? (() => new Date());
  }

  /**
   * The copy as it is sent: links rewritten when clicks are tracked (with
   * the hidden honeypot link), the pixel when opens are, the unsubscribe
   * footer and the RFC 8058 headers always. Registers the copy and the
   * campaign's links, so a click can only ever redirect to them.
   */
  async decorate(input: CampaignMessageInput): Promise<DecoratedCampaignMessage> {
    const binding: TokenBinding = input;
    const at = this.#clock();
    const url = (kind: TokenKind, linkId?: string) => `${this.#deps.baseUrl}/${kind === "unsubscribe" ? "u" : kind === "click" ? "t/c" : "t/o"}/${this.#tokens.issue(kind, binding, at, linkId)}`;
    const rewritten = input.trackClicks ? rewriteLinks(input.html, input.text, (link) => url("click", link.linkId)) : { html: input.html, text: input.text, links: [] };
    const unsubscribeUrl = url("unsubscribe");
    const parts = addFooterAndPixel(rewritten.html, rewritten.text, {
      unsubscribeUrl,
      pixelUrl: input.trackOpens ? url("open") : undefined,
      honeypotUrl: input.trackClicks ? url("click", HONEYPOT_LINK_ID) : undefined,
      language: input.language,
    });
    await this.#deps.store.registerCopy(
      {
        companyId: input.companyId,
        campaignId: input.campaignId,
        recipientId: input.recipientId.toLowerCase(),
        contactId: input.contactId.toLowerCase(),
        email: input.email,
        language: input.language ?? null,
      },
      rewritten.links,
    );
    const mailto = `${this.#tokens.mailtoLocalPart(binding)}@${this.#deps.mailtoDomain}`;
    return {
      html: parts.html,
      text: parts.text,
      headers: {
        "List-Unsubscribe": `<${unsubscribeUrl}>, <mailto:${mailto}?subject=unsubscribe>`,
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
      },
    };
  }
}
