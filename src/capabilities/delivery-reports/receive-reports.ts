import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { ProviderEventType } from "../messages/email-provider.ts";
import { returnPathDomainFor } from "../sending-setup/dns-records.ts";
import { meaningOfDsn, meaningOfFeedback, meaningOfSesNotification, type ReportMeaning } from "./mapping.ts";
import type {
  DeliveryReportStore,
  InboundReport,
  KeptReport,
  KeptReportKind,
  ProviderEventsPort,
  ReportedMessage,
  ReportSummary,
  StoredReport,
} from "./ports.ts";
import type { VerpAddresses } from "./verp.ts";
import { isUuid } from "../shared/uuid.ts";

/**
 * What became of one report:
 * - `applied`: the message moved (delivered, bounced, complained);
 * - `duplicate`: the same report was applied before, nothing changed;
 * - `noted`: kept with its message for operators, no status change;
 * - `unmatched`: kept 7 days for operators, no message changed;
 * - `retry_later`: the message is not ready for it (its handoff is not
 *   recorded yet): the sender must try again (SMTP 451).
 */
export type ReportOutcome = "applied" | "duplicate" | "noted" | "unmatched" | "retry_later";

const KEPT_KINDS: readonly KeptReportKind[] = ["unmatched", "delayed", "soft_bounce"];
/** Operators' list of the kept reports: of one company and one kind when given (empty: any). */
export interface ListReportsCommand {
  readonly companyId?: string | undefined;
  readonly kind?: string | undefined;
  /** 1 to 500; 0 or unset: 50. */
  readonly limit?: number | undefined;
}

/** An address an inbound report is sent to (SMTP RCPT TO). */
export interface ReturnPathQuery {
  readonly address: string;
}

/** A report that came in by SMTP to VERP return paths. */
export interface InboundReportCommand {
  /** The RCPT TO addresses (each already accepted by `isOurReturnPath`, and checked again). */
  readonly recipients: readonly string[];
  readonly report: InboundReport;
  readonly summary: ReportSummary;
  readonly receivedAt: Date;
}

/** An SES event notification whose SNS signature was checked. */
export interface SesNotificationCommand {
  /** SNS MessageId: SNS retries a delivery with the same one. */
  readonly notificationId: string;
  /** notificationType (or eventType). */
  readonly type: string;
  readonly bounceType?: string;
  /** SES's id of the message (mail.messageId), our providerMessageId. */
  readonly sesMessageId: string;
  readonly occurredAt: Date;
  readonly detail?: string;
  readonly summary: ReportSummary;
}

export interface DeliveryReportsDependencies {
  readonly verp: VerpAddresses;
  readonly store: DeliveryReportStore;
  readonly providerEvents: ProviderEventsPort;
  /** The name of the SES provider's messages (`ses`). */
  readonly sesProviderName?: string;
}

/**
 * Delivery reports from real mail systems (DSNs and feedback-loop reports
 * by SMTP, SES notifications over SNS) turned into provider events. Every
 * status change goes through the provider events intake, idempotent on the
 * event id, so a report delivered twice changes nothing twice.
 */
export class DeliveryReports {
  readonly #deps: DeliveryReportsDependencies;

  constructor(deps: DeliveryReportsDependencies) {
    this.#deps = deps;
  }

  /**
   * RCPT TO check of the inbound listener: only addresses whose token is
   * valid on their domain, the return-path domain their message left with
   * (no database read, except for an address of the older id-only form).
   */
  async isOurReturnPath(query: ReturnPathQuery): Promise<boolean> {
    return (await this.#messageIdFor(query.address)) !== undefined;
  }

  /** Operators: the reports kept (7 days), newest first. */
  async list(query: ListReportsCommand): Promise<StoredReport[]> {
    const problems: FieldProblem[] = [];
    if (query.companyId && !isUuid(query.companyId)) problems.push({ field: "companyId", problem: "must be a company id" });
    if (query.kind && !KEPT_KINDS.includes(query.kind as KeptReportKind)) problems.push({ field: "kind", problem: `must be one of ${KEPT_KINDS.join(", ")}` });
    if (query.limit !== undefined && (query.limit < 0 || query.limit > 500)) problems.push({ field: "limit", problem: "must be from 1 to 500" });
    if (problems.length > 0) throw new ValidationError(problems);
    return this.#deps.store.list({
      limit: query.limit || 50,
      ...(query.companyId ? { companyId: query.companyId } : {}),
      ...(query.kind ? { kind: query.kind as KeptReportKind } : {}),
    });
  }

  async receiveInbound(command: InboundReportCommand): Promise<ReportOutcome[]> {
    const named = await Promise.all(command.recipients.map((address) => this.#messageIdFor(address)));
    const ids = [...new Set(named)].filter((id): id is string => id !== undefined);
    if (ids.length === 0) {
      await this.#keepUnmatched("smtp", command, "no valid return-path token among the recipients");
      return ["unmatched"];
    }
    const outcomes: ReportOutcome[] = [];
    for (const messageId of ids) outcomes.push(await this.#receiveFor(messageId, command));
    return outcomes;
  }

  async receiveSes(command: SesNotificationCommand): Promise<ReportOutcome | "ignored"> {
    const meaning = meaningOfSesNotification(command.type, command.bounceType);
    if (meaning === "ignored") return "ignored";
    const provider = this.#deps.sesProviderName ?? "ses";
    const message = await this.#deps.store.messageByProviderId(provider, command.sesMessageId);
    const base = { source: "ses" as const, summary: command.summary, receivedAt: command.occurredAt };
    if (!message) {
      await this.#deps.store.keep({ ...base, kind: "unmatched", reason: `SES ${command.type} for an unknown message` });
      return "unmatched";
    }
    return this.#apply(message, meaning, `ses:${command.notificationId}`, command.occurredAt, command.detail, base);
  }

  /** The message a return path names, when its token is ours and so is its domain for that message. */
  async #messageIdFor(address: string): Promise<string | undefined> {
    const token = this.#deps.verp.read(address);
    if (!token) return undefined;
    if (token.domainSigned) return token.messageId;
    // The older id-only form: the domain must be the return-path domain of the message's sending domain.
    const message = await this.#deps.store.messageById(token.messageId);
    return message && returnPathDomainFor(message.sendingDomain) === token.domain ? token.messageId : undefined;
  }

  async #receiveFor(messageId: string, command: InboundReportCommand): Promise<ReportOutcome> {
    const message = await this.#deps.store.messageById(messageId);
    if (!message) return this.#keepUnmatched("smtp", command, "the return path names no message");
    const { report } = command;
    if (report.kind === "other") return this.#keepUnmatched("smtp", command, report.reason, message);
    // A report that quotes another message than the one its return path names
    // (another company's, say) is not trusted for either.
    if (report.originalMessageId && message.providerMessageId && bare(report.originalMessageId) !== bare(message.providerMessageId)) {
      return this.#keepUnmatched("smtp", command, "the report quotes another message than its return path names", message);
    }
    const { meaning, detail } = meaningOf(report);
    const base = { source: "smtp" as const, summary: command.summary, receivedAt: command.receivedAt };
    const eventId = meaning.kind === "event" ? `verp:${message.messageId}:${meaning.type}` : "";
    return this.#apply(message, meaning, eventId, command.receivedAt, detail, base);
  }

  async #apply(
    message: ReportedMessage,
    meaning: ReportMeaning,
    providerEventId: string,
    occurredAt: Date,
    detail: string | undefined,
    base: Pick<KeptReport, "source" | "summary" | "receivedAt">,
  ): Promise<ReportOutcome> {
    const about = { companyId: message.companyId, messageId: message.messageId };
    if (meaning.kind === "unmatched") {
      await this.#deps.store.keep({ ...base, ...about, kind: "unmatched", reason: meaning.reason });
      return "unmatched";
    }
    if (meaning.kind === "noted") {
      await this.#deps.store.keep({ ...base, ...about, kind: meaning.what, reason: detail ?? meaning.what });
      // A delay or a temporary failure is also an event on the message (no status change, no webhook).
      if (message.providerMessageId) {
        await this.#deps.providerEvents
          .report({
            providerEventId: `${providerEventId || `${base.source}:${message.messageId}`}:delayed`,
            providerMessageId: message.providerMessageId,
            type: "delayed",
            occurredAt,
            ...(detail ? { detail: detail.slice(0, 300) } : {}),
          })
          .catch((error: unknown) => {
            // Kept for operators above; the event is a convenience of the message log.
            if (!(error instanceof ApiError && error.code === "NOT_FOUND")) throw error;
          });
      }
      return "noted";
    }
    if (!message.providerMessageId) return "retry_later";
    try {
      const result = await this.#deps.providerEvents.report({
        providerEventId,
        providerMessageId: message.providerMessageId,
        type: meaning.type satisfies ProviderEventType,
        occurredAt,
        ...(detail ? { detail: detail.slice(0, 300) } : {}),
      });
      return result.applied ? "applied" : "duplicate";
    } catch (error) {
      // The handoff is not recorded under this provider yet (or the message
      // went through another provider): the sender retries.
      if (error instanceof ApiError && error.code === "NOT_FOUND") return "retry_later";
      throw error;
    }
  }

  async #keepUnmatched(source: "smtp", command: InboundReportCommand, reason: string, message?: ReportedMessage): Promise<"unmatched"> {
    await this.#deps.store.keep({
      source,
      kind: "unmatched",
      reason,
      ...(message ? { companyId: message.companyId, messageId: message.messageId } : {}),
      summary: command.summary,
      receivedAt: command.receivedAt,
    });
    return "unmatched";
  }
}

function meaningOf(report: Exclude<InboundReport, { kind: "other" }>): { meaning: ReportMeaning; detail?: string } {
  if (report.kind === "feedback") return { meaning: meaningOfFeedback(report.feedbackType) };
  // One message, one recipient: the first recipient block with an action decides.
  const recipient = report.recipients.find((r) => r.action.trim() !== "");
  if (!recipient) return { meaning: { kind: "unmatched", reason: "DSN without a recipient action" } };
  const detail = [recipient.status, recipient.diagnostic].filter(Boolean).join(" ").replace(/\s+/g, " ").trim();
  return { meaning: meaningOfDsn(recipient.action, recipient.status), ...(detail ? { detail } : {}) };
}

/** A Message-ID without angle brackets, lower case. */
function bare(messageId: string): string {
  return messageId.trim().replace(/^<|>$/g, "").toLowerCase();
}
