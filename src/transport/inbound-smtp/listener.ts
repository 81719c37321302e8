/**
 * The inbound SMTP listener for delivery reports (its own port): DSN
 * bounces and success notifications, and feedback-loop (ARF) reports, sent
 * to our VERP return paths (`b-<token>@bounces.<domain>`, whose MX points
 * here). It is not a mail server:
 *   - RCPT TO must be a return path whose token is valid on its domain (the
 *     return-path domain its message left with; checked without the
 *     database, see DeliveryReports.isOurReturnPath); anything else is
 *     refused with 550, so it never relays;
 *   - no AUTH; STARTTLS with the configured certificate;
 *   - a size limit, a limit of simultaneous connections, a per-address limit
 *     of messages per minute, at most 5 recipients per message;
 *   - a report that cannot be applied yet (its message's handoff is not
 *     recorded) is answered 451, so the sender retries.
 * It also takes the mail a mailbox provider sends to a campaign copy's
 * List-Unsubscribe mailto address (`unsubscribe+<token>@<this host>`,
 * checked like a return path: a MAC, then the registered copy): such a
 * message unsubscribes the copy's contact; its content is not read.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import type { DeliveryReports, ReportOutcome } from "../../capabilities/delivery-reports/receive-reports.ts";
import type { InboundReport, ReportSummary } from "../../capabilities/delivery-reports/ports.ts";
import type { Tracking } from "../../capabilities/tracking/index.ts";

export interface InboundSmtpOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Announced in the greeting and EHLO. */
  readonly hostname: string;
  /** PEM key and certificate for STARTTLS; without them STARTTLS is not offered. */
  readonly tls?: { readonly key: string | Buffer; readonly cert: string | Buffer };
  readonly maxMessageBytes: number;
  readonly maxConnections: number;
  /** Messages accepted per remote address per minute. */
  readonly messagesPerMinute: number;
  /** Idle client timeout. Default 60 s. */
  readonly socketTimeoutMs?: number;
}

export interface InboundSmtpDependencies {
  readonly reports: DeliveryReports;
  /** The MIME reader (src/adapters/email/report-parser.ts). */
  readonly parse: (raw: Buffer) => Promise<{ report: InboundReport; summary: ReportSummary }>;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  readonly clock?: () => Date;
  /** The List-Unsubscribe mailto addresses of campaign copies; unset: only return paths are taken. */
  readonly unsubscribes?: Pick<Tracking, "isUnsubscribeAddress" | "unsubscribeByMail">;
}

export interface InboundSmtpListener {
  /** Resolves the bound port. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

const MAX_RECIPIENTS = 5;

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** A fixed one-minute window of accepted messages per remote address. */
class PerAddressLimit {
  readonly #limit: number;
  #window = 0;
  #counts = new Map<string, number>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  take(address: string, now: number): boolean {
    const window = Math.floor(now / 60_000);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts = new Map();
    }
    const used = this.#counts.get(address) ?? 0;
    if (used >= this.#limit) return false;
    this.#counts.set(address, used + 1);
    return true;
  }
}

export function createInboundSmtpListener(options: InboundSmtpOptions, deps: InboundSmtpDependencies): InboundSmtpListener {
  const now = deps.clock ?? (() => new Date());
  const limit = new PerAddressLimit(options.messagesPerMinute);
  const serverOptions: SMTPServerOptions = {
    name: options.hostname,
    banner: "delivery reports only",
    logger: false,
    secure: false,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { hideSTARTTLS: true }),
    disabledCommands: options.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    authOptional: true,
    size: options.maxMessageBytes,
    maxClients: options.maxConnections,
    socketTimeout: options.socketTimeoutMs ?? 60_000,
    closeTimeout: 5_000,
    // DSNs of the reports themselves make no sense; never ask us for one.
    hideDSN: true,
    onMailFrom(_address, session, callback) {
      if (!limit.take(session.remoteAddress, now().getTime())) {
        return callback(smtpError(421, "4.7.0 Too many reports from your address, try again later"));
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(smtpError(452, "4.5.3 Too many recipients"));
      void isOurs(address.address).then(
        (ours) => callback(ours ? undefined : smtpError(550, "5.1.1 No such return path; this server does not relay")),
        (error: unknown) => {
          deps.log.warn({ err: error }, "inbound SMTP: a return path could not be checked");
          callback(smtpError(451, "4.3.0 The return path cannot be checked now, try again later"));
        },
      );
    },
    onData(stream, session, callback) {
      // What is kept never passes the limit: past it, the rest is read and
      // dropped as it arrives, and the client hears 552 at the end of DATA
      // (a dropped connection would have its MTA send it all again later).
      let chunks: Buffer[] = [];
      let received = 0;
      let oversized = false;
      stream.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (oversized) return;
        if (received > options.maxMessageBytes) {
          oversized = true;
          chunks = [];
          return;
        }
        chunks.push(chunk);
      });
      stream.on("error", (error: Error) => callback(error));
      stream.on("end", () => {
        if (oversized || stream.sizeExceeded) return callback(smtpError(552, "5.3.4 Message too big for a delivery report"));
        const raw = Buffer.concat(chunks);
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        void receive(raw, recipients).then(
          (outcomes) => {
            if (outcomes.includes("retry_later")) return callback(smtpError(451, "4.3.0 The message this report is about is not ready; try again later"));
            callback(null, "2.0.0 Report received");
          },
          (error: unknown) => {
            deps.log.warn({ err: error }, "inbound SMTP: a report could not be processed");
            callback(smtpError(451, "4.3.0 Temporary failure, try again later"));
          },
        );
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on("error", (error) => deps.log.warn({ err: error }, "inbound SMTP listener error"));

  async function isOurs(address: string): Promise<boolean> {
    if (deps.unsubscribes && (await deps.unsubscribes.isUnsubscribeAddress({ address }))) return true;
    return deps.reports.isOurReturnPath({ address });
  }

  async function receive(raw: Buffer, all: string[]): Promise<ReportOutcome[]> {
    // Unsubscribe addresses were checked at RCPT TO; what is left are return paths.
    const recipients: string[] = [];
    for (const address of all) {
      if (!(deps.unsubscribes && (await deps.unsubscribes.unsubscribeByMail({ address })))) recipients.push(address);
    }
    if (recipients.length === 0) return [];
    const { report, summary } = await deps.parse(raw);
    return deps.reports.receiveInbound({ recipients, report, summary, receivedAt: now() });
  }

  return {
    listen() {
      return new Promise<number>((resolve, reject) => {
        server.server.once("error", reject);
        server.listen(options.port, options.host, () => {
          server.server.off("error", reject);
          resolve((server.server.address() as AddressInfo).port);
        });
      });
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
