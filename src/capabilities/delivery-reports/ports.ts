import type { ProviderEvent } from "../messages/email-provider.ts";
import type { NotedReportKind } from "./mapping.ts";

/** One recipient block of an RFC 3464 delivery status notification. */
export interface DsnRecipient {
  readonly action: string;
  readonly status: string;
  readonly finalRecipient?: string;
  readonly diagnostic?: string;
}

/**
 * An inbound report as the MIME parser (src/adapters/email) read it. The
 * parser says what the report is; this capability decides what it means.
 */
export type InboundReport =
  | { readonly kind: "dsn"; readonly recipients: readonly DsnRecipient[]; readonly originalMessageId?: string }
  | { readonly kind: "feedback"; readonly feedbackType: string; readonly originalMessageId?: string }
  | { readonly kind: "other"; readonly reason: string };

/** What an operator sees of a report that changed no status. */
export interface ReportSummary {
  readonly from?: string;
  readonly subject?: string;
  /** The first characters of the readable text (never the whole report). */
  readonly excerpt: string;
}

/** The message a report is about, as far as the report store knows it. */
export interface ReportedMessage {
  readonly companyId: string;
  readonly messageId: string;
  readonly provider: string | null;
  readonly providerMessageId: string | null;
  /** The domain of its From address (lower case): the sending domain it goes out from. */
  readonly sendingDomain: string;
}

export type KeptReportKind = NotedReportKind | "unmatched";

/** A report kept for operators for `REPORT_RETENTION_DAYS` (no status change came of it). */
export interface KeptReport {
  readonly source: "smtp" | "ses";
  readonly kind: KeptReportKind;
  readonly reason: string;
  /** Set when the report names one of our messages (the company of that message). */
  readonly companyId?: string;
  readonly messageId?: string;
  readonly summary: ReportSummary;
  readonly receivedAt: Date;
}

export interface StoredReport extends KeptReport {
  readonly id: string;
  readonly expiresAt: Date;
}

export const REPORT_RETENTION_DAYS = 7;

export interface DeliveryReportStore {
  /**
   * The message with this id, whatever its company. Called only with an id
   * taken from a VERP address whose MAC was checked: the address is our
   * own statement of which message (and so which company) it belongs to.
   */
  messageById(messageId: string): Promise<ReportedMessage | undefined>;
  messageByProviderId(provider: string, providerMessageId: string): Promise<ReportedMessage | undefined>;
  /** Keeps a report until receivedAt + REPORT_RETENTION_DAYS; drops expired ones on the way. */
  keep(report: KeptReport): Promise<void>;
  /** Reports still kept, newest first; of one company when `companyId` is given. */
  list(query: { readonly limit: number; readonly companyId?: string; readonly kind?: KeptReportKind }): Promise<StoredReport[]>;
}

/** The one entry point of provider events (messages/lifecycle/provider-events.ts). */
export interface ProviderEventsPort {
  report(event: ProviderEvent): Promise<{ applied: boolean; messageId: string }>;
}
