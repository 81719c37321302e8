import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/**
 * A recording SMTP relay (the relay chaos run, test/chaos/smtp-relay.test.ts;
 * the handoff lease tests): a
 * real SMTP server (npm `smtp-server`) that keeps every message it
 * received, with its Message-ID and the times that matter:
 *
 * - `dataAt`: the final "." arrived. From then on the message counts as
 *   received, answered or not: a real relay (Postfix, a vendor) commits the
 *   message to its queue before it answers 250, and delivers it even when
 *   the client disconnects before reading the answer (RFC 1047's duplicate
 *   problem). That is what makes an SMTP handoff at-least-once.
 * - `answeredAt`: the 250 was written to the socket (undefined: the
 *   connection ended before the sink answered).
 *
 * Every `slowEvery`-th message is answered `slowMs` after its "." instead
 * of at once, so the suite can kill a worker while a transaction is surely
 * in flight.
 */
export interface SinkTransaction {
  readonly messageId: string;
  /** The client's EHLO name, i.e. which worker process sent it. */
  readonly client: string;
  readonly dataAt: number;
  answeredAt?: number;
  readonly slow: boolean;
}

export interface SmtpSink {
  readonly port: number;
  readonly transactions: readonly SinkTransaction[];
  /** Transactions whose "." arrived and whose 250 has not been written yet, now. */
  unanswered(): SinkTransaction[];
  close(): Promise<void>;
}

/** `Message-ID: <id>` of the header block (folded headers are not used by our sender for it). */
function messageIdOf(raw: string): string {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? "";
  return /^message-id:\s*<([^>\r\n]+)>/im.exec(head)?.[1] ?? "(none)";
}

export async function startSmtpSink(options: { slowEvery: number; slowMs: number }): Promise<SmtpSink> {
  const transactions: SinkTransaction[] = [];
  let received = 0;
  /** Sessions whose client went away (smtp-server's session ids). */
  const closed = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    // Enough for two workers' pools (5 connections each) and their reconnects.
    maxClients: 50,
    // The chaos run's only limit is time: never refuse for size or rate.
    size: 10 * 1024 * 1024,
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("error", () => {});
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        // A stream cut off by a dying client never reaches "end" complete:
        // smtp-server reports it as an error instead, and nothing is kept.
        if (stream.sizeExceeded) return callback(new Error("too big"));
        received++;
        const slow = received % options.slowEvery === 0;
        const transaction: SinkTransaction = {
          messageId: messageIdOf(Buffer.concat(chunks).toString("latin1")),
          client: session.hostNameAppearsAs,
          dataAt: Date.now(),
          slow,
        };
        transactions.push(transaction);
        const answer = (): void => {
          // The client may have died meanwhile: the answer then goes nowhere, and the message was still received.
          if (closed.has(session.id)) return;
          transaction.answeredAt = Date.now();
          callback(null, "2.0.0 Ok: queued");
        };
        if (slow) setTimeout(answer, options.slowMs);
        else answer();
      });
    },
  });
  server.on("error", () => {
    // A client killed mid-session shows up as a socket error; the transaction log already says what matters.
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    transactions,
    unanswered: () => transactions.filter((t) => t.answeredAt === undefined),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A message a recorder received: its envelope recipients and its raw text. */
export interface RecordedMail {
  readonly rcptTo: readonly string[];
  readonly raw: string;
}

export interface SmtpRecorder {
  readonly port: number;
  /** Every message received so far, in order. */
  readonly received: readonly RecordedMail[];
  /** The messages whose envelope names `address`: where an email to it landed. */
  landedAt(address: string): RecordedMail[];
  close(): Promise<void>;
}

/** A plain SMTP server that accepts and keeps every message (the email service of the SMTP adapter's end-to-end tests). */
export async function startSmtpRecorder(): Promise<SmtpRecorder> {
  const received: RecordedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") });
        callback(null, "2.0.0 Ok: queued");
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    landedAt: (address) => received.filter((mail) => mail.rcptTo.includes(address)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
