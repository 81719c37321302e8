/**
 * Reads an inbound report (a DSN, an ARF feedback report, or anything else)
 * with mailparser: RFC 3464 `multipart/report; report-type=delivery-status`
 * and RFC 5965 `report-type=feedback-report`. The machine-readable parts
 * (message/delivery-status, message/feedback-report) are blocks of header
 * fields, read by mailparser too; the quoted original (message/rfc822 or
 * text/rfc822-headers) gives the original Message-ID.
 */
import { type Attachment, type HeaderValue, simpleParser } from "mailparser";
import type { DsnRecipient, InboundReport, ReportSummary } from "../../capabilities/delivery-reports/ports.ts";

const EXCERPT_CHARS = 2000;
const PARSE_OPTIONS = {
  keepDeliveryStatus: true,
  ignoreEmbedded: true,
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipImageLinks: true,
  maxChildNodes: 50,
  checksumAlgo: false,
} as const;

export interface ParsedInboundReport {
  readonly report: InboundReport;
  readonly summary: ReportSummary;
}

export async function parseInboundReport(raw: Buffer): Promise<ParsedInboundReport> {
  let mail;
  try {
    mail = await simpleParser(raw, PARSE_OPTIONS);
  } catch (error) {
    return { report: { kind: "other", reason: `unparseable message: ${String(error).slice(0, 200)}` }, summary: { excerpt: "" } };
  }
  const summary: ReportSummary = {
    ...(mail.from?.text ? { from: mail.from.text.slice(0, 300) } : {}),
    ...(mail.subject ? { subject: mail.subject.slice(0, 300) } : {}),
    excerpt: (mail.text ?? "").slice(0, EXCERPT_CHARS),
  };
  const contentType = mail.headers.get("content-type");
  const reportType = isStructured(contentType) && contentType.value.toLowerCase() === "multipart/report"
    ? (contentType.params["report-type"] ?? "").toLowerCase()
    : "";
  const originalMessageId = await originalMessageIdOf(mail.attachments);

  if (reportType === "delivery-status") {
    const part = mail.attachments.find((a) => /^message\/(global-)?delivery-status$/i.test(a.contentType));
    if (!part) return { report: { kind: "other", reason: "delivery-status report without its status part" }, summary };
    const blocks = await fieldBlocks(part.content);
    const recipients: DsnRecipient[] = blocks.slice(1).flatMap((fields) => {
      const action = fields.get("action");
      const status = fields.get("status");
      if (action === undefined || status === undefined) return [];
      const finalRecipient = fields.get("final-recipient");
      const diagnostic = fields.get("diagnostic-code");
      return [{ action, status, ...(finalRecipient ? { finalRecipient } : {}), ...(diagnostic ? { diagnostic } : {}) }];
    });
    return { report: { kind: "dsn", recipients, ...(originalMessageId ? { originalMessageId } : {}) }, summary };
  }
  if (reportType === "feedback-report") {
    const part = mail.attachments.find((a) => a.contentType.toLowerCase() === "message/feedback-report");
    const fields = part ? (await fieldBlocks(part.content))[0] : undefined;
    const feedbackType = fields?.get("feedback-type");
    if (!feedbackType) return { report: { kind: "other", reason: "feedback report without a Feedback-Type" }, summary };
    return { report: { kind: "feedback", feedbackType, ...(originalMessageId ? { originalMessageId } : {}) }, summary };
  }
  return { report: { kind: "other", reason: reportType ? `report type ${reportType.slice(0, 40)}` : "not a delivery or feedback report" }, summary };
}

function isStructured(value: HeaderValue | undefined): value is { value: string; params: Record<string, string> } {
  return typeof value === "object" && value !== null && "value" in value && "params" in value;
}

/**
 * The blocks of `Name: value` fields of a status part (per-message, then one
 * per recipient), separated by empty lines. Each block is read as a header
 * section by mailparser (folded lines, encoded words); names in lower case.
 */
async function fieldBlocks(content: Buffer): Promise<Map<string, string>[]> {
  const blocks = content
    .toString("utf8")
    .split(/\r?\n(?:[ \t]*\r?\n)+/)
    .filter((block) => block.trim() !== "");
  const result: Map<string, string>[] = [];
  for (const block of blocks.slice(0, 20)) {
    const parsed = await simpleParser(`${block.trim()}\r\n\r\n`, PARSE_OPTIONS);
    const fields = new Map<string, string>();
    for (const line of parsed.headerLines) {
      const colon = line.line.indexOf(":");
      if (colon > 0) fields.set(line.key, line.line.slice(colon + 1).replace(/\r?\n[ \t]+/g, " ").trim());
    }
    result.push(fields);
  }
  return result;
}

/** The Message-ID of the quoted original (message/rfc822 or text/rfc822-headers), if any. */
async function originalMessageIdOf(attachments: readonly Attachment[]): Promise<string | undefined> {
  const quoted = attachments.find((a) => /^(message\/(global|rfc822)|text\/rfc822-headers|message\/global-headers)$/i.test(a.contentType));
  if (!quoted) return undefined;
  const parsed = await simpleParser(quoted.content, PARSE_OPTIONS);
  return parsed.messageId;
}
