/**
 * Email provider that hands messages to an SMTP relay (Postfix, a vendor's
 * SMTP endpoint, ...) through nodemailer's pooled transport.
 *
 * SMTP only gives us the handoff result; delivered / bounced / complained
 * come back out of band: with `returnPath` set, every message leaves with
 * its own VERP envelope sender and asks for DSNs (NOTIFY=SUCCESS,FAILURE),
 * which the relay sends to that address, i.e. to our inbound SMTP listener
 * (src/transport/inbound-smtp, docs/delivery-loop.md).
 *
 * nodemailer is loaded at the first handoff, not with this module: the API
 * processes build the provider but never hand a message over, and do not
 * carry it.
 */
import { createPrivateKey } from "node:crypto";
import type Mail from "nodemailer/lib/mailer";
import type SMTPConnection from "nodemailer/lib/smtp-connection";
import type {
  EmailProvider,
  HandoffFailedTransient,
  HandoffRejected,
  HandoffResult,
  OutgoingEmail,
} from "../../capabilities/messages/email-provider.ts";

export interface SmtpProviderOptions {
  readonly host: string;
  readonly port: number;
  /** true: TLS from the first byte (port 465). false: plain, upgraded with STARTTLS when offered. */
  readonly secure: boolean;
  readonly auth?: { readonly user: string; readonly pass: string };
  /** Never upgrade with STARTTLS (local test servers only). */
  readonly ignoreTLS?: boolean;
  /** Fail instead of sending in clear text when STARTTLS is not offered. */
  readonly requireTLS?: boolean;
  /**
   * Right-hand side of our Message-IDs (`<messageId@messageIdDomain>`),
   * normally the service's own sending domain.
   */
  readonly messageIdDomain: string;
  /** Hostname announced in EHLO; nodemailer's default is the machine's hostname. */
  readonly ehloName?: string;
  /**
   * The envelope sender (MAIL FROM) of a message: its VERP return path
   * (`b-<token>@bounces.<domain>`). Undefined: the From address, and no DSN
   * is asked for.
   */
  readonly returnPath?: (email: OutgoingEmail) => string | undefined;
  readonly pool?: {
    /** Simultaneous connections (nodemailer default 5). */
    readonly maxConnections?: number;
    /** Messages per connection before it is recycled (nodemailer default 100). */
    readonly maxMessages?: number;
    /** At most `rateLimit` messages per `rateDeltaMs` (default 1000 ms), shared by all connections. */
    readonly rateLimit?: number;
    readonly rateDeltaMs?: number;
  };
  /**
   * nodemailer's defaults (2 min to connect, 10 min of socket silence) are
   * meant for interactive scripts; a handoff that hangs that long holds a
   * worker slot, so ours are much shorter. A timeout is a transient failure.
   */
  readonly timeouts?: {
    readonly connectionMs?: number;
    readonly greetingMs?: number;
    readonly socketMs?: number;
    /**
     * The whole handoff of one message, the wait for a pooled connection
     * included: past it the send is aborted, its connection closed, and the
     * handoff fails transiently. Keep it well below the time the caller
     * gives a handoff attempt (HANDOFF_TIMEOUT_SECONDS): an attempt still
     * talking to the relay when the next one starts could deliver the
     * message twice. The other timeouts are capped at it.
     */
    readonly handoffMs?: number;
  };
}

type DSNOptions = SMTPConnection.DSNOptions;

const DEFAULT_TIMEOUTS = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 20_000, handoffMs: 30_000 } as const;

/**
 * Headers the adapter owns. A caller-supplied value for any of them would
 * either break idempotency (Message-ID), the MIME structure, or let the
 * content spoof what DKIM signs and what the recipient sees (From, Sender,
 * DKIM-Signature...), so they are dropped from `OutgoingEmail.headers`.
 */
const RESERVED_HEADERS = new Set([
  "message-id",
  "from",
  "sender",
  "to",
  "cc",
  "bcc",
  "reply-to",
  "subject",
  "date",
  "return-path",
  "dkim-signature",
  "mime-version",
  "content-type",
  "content-transfer-encoding",
]);

/** RFC 5322 field name: printable US-ASCII except the colon. */
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
/**
 * The header fields the DKIM signature covers (h=): nodemailer's default
 * list (RFC 4871 5.5, the List-* fields of RFC 2369 among them) plus
 * List-Unsubscribe-Post (RFC 8058 requires it signed for one-click
 * unsubscribe). A field a message lacks is left out of h=.
 */
export const DKIM_SIGNED_HEADERS =
  "From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:" +
  "Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:In-Reply-To:References:" +
  "List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:List-Owner:List-Archive:OTP-Token";

/** Our message ids are UUIDs; anything outside this set would corrupt the Message-ID. */
const MESSAGE_ID_LOCAL = /^[A-Za-z0-9._-]+$/;
const MESSAGE_ID_DOMAIN = /^[A-Za-z0-9.-]+$/;

/** Error codes nodemailer uses for failures of this message (as opposed to the connection or the session). */
const MESSAGE_LEVEL_CODES = new Set(["EENVELOPE", "EMESSAGE", "EMAXRECIPIENTS"]);

/** Server replies can be long (multi-line); keep stored reasons short. */
const MAX_REASON_LENGTH = 300;

/**
 * `providerMessageId` for a message: the Message-ID we stamp on it, without
 * the angle brackets.
 *
 * Why not the relay's queue id ("250 2.0.0 Ok: queued as 4BZ1xK")? Its format
 * differs per server and is not always present, it changes on every attempt
 * (so a retried handoff would get a second id), and it is unknown after an
 * ambiguous failure. The Message-ID is known before the handoff, identical
 * across attempts, and echoed back in DSN bounces and ARF complaint reports,
 * which are how SMTP-side events find their message again.
 */
export function smtpMessageId(messageId: string, messageIdDomain: string): string {
  if (!MESSAGE_ID_LOCAL.test(messageId)) throw new TypeError("messageId is not usable in a Message-ID header");
  return `${messageId}@${messageIdDomain}`;
}

type Nodemailer = (typeof import("nodemailer"))["default"];

/** The pooled SMTP transport of `options`. */
function pooledTransport(nodemailer: Nodemailer, options: SmtpProviderOptions, timeouts: HandoffTimeouts) {
  return nodemailer.createTransport({
    pool: true,
    host: options.host,
    port: options.port,
    secure: options.secure,
    auth: options.auth ? { user: options.auth.user, pass: options.auth.pass } : undefined,
    ignoreTLS: options.ignoreTLS,
    requireTLS: options.requireTLS,
    name: options.ehloName,
    maxConnections: options.pool?.maxConnections,
    maxMessages: options.pool?.maxMessages,
    rateLimit: options.pool?.rateLimit,
    rateDelta: options.pool?.rateDeltaMs,
    connectionTimeout: timeouts.connectionMs,
    greetingTimeout: timeouts.greetingMs,
    socketTimeout: timeouts.socketMs,
    // A connection given up on (deadline) is torn down at once rather than
    // left to finish politely: the relay must see the transaction end.
    socketCloseTimeout: 0,
    // Content is always strings we rendered; never let a message make
    // nodemailer read local files or fetch URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  });
}

export function createSmtpProvider(options: SmtpProviderOptions): EmailProvider {
  if (!MESSAGE_ID_DOMAIN.test(options.messageIdDomain)) {
    throw new TypeError("messageIdDomain must be a plain domain name");
  }
  const timeouts = handoffTimeouts(options.timeouts);
  let loaded: Promise<ReturnType<typeof pooledTransport>> | undefined;
  const smtp = () => (loaded ??= import("nodemailer").then(({ default: nodemailer }) => pooledTransport(nodemailer, options, timeouts)));

  /** Handoffs under way, by messageId: concurrent sends of one message share one handoff. */
  const inFlight = new Map<string, Promise<HandoffResult>>();
  let closed = false;

  async function handOff(email: OutgoingEmail, providerMessageId: string): Promise<HandoffResult> {
    const headers = extraHeaders(email.headers);
    if (typeof headers === "string") return rejected(headers);
    const dkimProblem = email.dkim ? checkDkimKey(email.dkim.privateKey) : undefined;
    if (dkimProblem) return rejected(dkimProblem);

    // Covers the wait for a pooled connection and the SMTP transaction: on
    // abort, nodemailer drops the message from the pool's queue or closes
    // the connection that carries it.
    const deadline = AbortSignal.timeout(timeouts.handoffMs);
    const returnPath = options.returnPath?.(email);
    try {
      // nodemailer reads `dsn` from the message options (its types omit it).
      const message: Mail.Options & { dsn?: DSNOptions } = {
        signal: deadline,
        ...(returnPath
          ? {
              envelope: { from: returnPath, to: email.to.email },
              // Success and failure reports, with the headers only (never the body back).
              dsn: { ret: "HDRS", envid: email.messageId, notify: "SUCCESS,FAILURE" as DSNOptions["notify"] },
            }
          : {}),
        messageId: `<${providerMessageId}>`,
        from: toAddress(email.from),
        to: toAddress(email.to),
        replyTo: email.replyTo,
        subject: email.subject,
        html: email.html,
        text: email.text,
        headers,
        attachments: mimeAttachments(email),
        dkim: email.dkim
          ? {
              domainName: email.dkim.domainName,
              keySelector: email.dkim.keySelector,
              privateKey: email.dkim.privateKey,
              headerFieldNames: DKIM_SIGNED_HEADERS,
            }
          : undefined,
      };
      await (await smtp()).sendMail(message);
      return { outcome: "accepted", providerMessageId };
    } catch (error) {
      if (deadline.aborted) {
        // Ambiguous only if the relay had the whole message: it never said
        // so, and a retry carries the same Message-ID.
        return transient(`no answer from the SMTP relay within ${timeouts.handoffMs} ms; the transaction was abandoned`);
      }
      return classifySmtpFailure(error);
    }
  }

  return {
    name: "smtp",

    send(email: OutgoingEmail): Promise<HandoffResult> {
      if (closed) return Promise.resolve(transient("provider is closed"));
      let providerMessageId: string;
      try {
        providerMessageId = smtpMessageId(email.messageId, options.messageIdDomain);
      } catch (error) {
        // A malformed messageId is a bug in the caller, not a service outcome: reject the promise.
        return Promise.reject(error);
      }
      const running = inFlight.get(email.messageId);
      if (running) return running;
      const handoff = handOff(email, providerMessageId).finally(() => inFlight.delete(email.messageId));
      inFlight.set(email.messageId, handoff);
      return handoff;
    },

    async close(): Promise<void> {
      closed = true;
      // Let handoffs that already started finish: their outcome is about to
      // be recorded, and cutting them off would turn them into ambiguous
      // failures. Each ends by its deadline (timeouts.handoffMs) at the latest.
      await Promise.allSettled([...inFlight.values()]);
      (await loaded?.catch(() => undefined))?.close();
    },
  };
}

interface HandoffTimeouts {
  readonly connectionMs: number;
  readonly greetingMs: number;
  readonly socketMs: number;
  readonly handoffMs: number;
}

function handoffTimeouts(configured: SmtpProviderOptions["timeouts"]): HandoffTimeouts {
  const merged = { ...DEFAULT_TIMEOUTS, ...configured };
  for (const [name, value] of Object.entries(merged)) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`SMTP timeout ${name} must be a positive number of milliseconds`);
  }
  const cap = (ms: number) => Math.min(ms, merged.handoffMs);
  return {
    connectionMs: cap(merged.connectionMs),
    greetingMs: cap(merged.greetingMs),
    socketMs: cap(merged.socketMs),
    handoffMs: merged.handoffMs,
  };
}

/**
 * Maps a nodemailer failure to a handoff result.
 *
 * Only a permanent SMTP reply to the message itself (MAIL FROM, RCPT TO,
 * DATA) is a rejection, or a local check the message can never pass (e.g. an
 * invalid address). A 5xx at connect, EHLO or AUTH says something about our
 * relay account or the server (wrong credentials, relay down for
 * maintenance), not about the message: rejecting would refund and drop a
 * perfectly good message, so those are transient and show up as retries.
 *
 * 503 ("bad sequence of commands") is a 5xx that says the session was in the
 * wrong state, not that the message was refused (nodemailer's view too), so
 * it is transient.
 */
export function classifySmtpFailure(error: unknown): HandoffRejected | HandoffFailedTransient {
  const failure = readFailure(error);
  if (failure.code !== undefined && MESSAGE_LEVEL_CODES.has(failure.code)) {
    if (failure.responseCode === undefined) return rejected(describe(failure));
    if (isPermanentReply(failure.responseCode)) return rejected(describe(failure));
  }
  return transient(describe(failure));
}

/** RFC 5321: 5yz is a permanent negative completion, except 503 (see classifySmtpFailure). */
function isPermanentReply(responseCode: number): boolean {
  return responseCode >= 500 && responseCode < 600 && responseCode !== 503;
}

interface SmtpFailure {
  readonly code?: string;
  readonly responseCode?: number;
  readonly command?: string;
  readonly response?: string;
  readonly message: string;
}

/** nodemailer attaches its details as loose properties on the Error; read them without trusting their types. */
function readFailure(error: unknown): SmtpFailure {
  if (!(error instanceof Error)) return { message: String(error) };
  const props = error as Error & Record<string, unknown>;
  return {
    code: typeof props.code === "string" ? props.code : undefined,
    responseCode: typeof props.responseCode === "number" ? props.responseCode : undefined,
    command: typeof props.command === "string" ? props.command : undefined,
    response: typeof props.response === "string" ? props.response : undefined,
    message: error.message,
  };
}

/**
 * A loggable reason: the SMTP command and the server's reply when there is
 * one, else the error code and message. Neither ever contains the body.
 */
function describe(failure: SmtpFailure): string {
  const reason =
    failure.response !== undefined
      ? `${failure.command ?? "SMTP"}: ${failure.response}`
      : `${failure.code ?? "ERROR"}: ${failure.message}`;
  return reason.replace(/\s+/g, " ").trim().slice(0, MAX_REASON_LENGTH);
}

function rejected(reason: string): HandoffRejected {
  return { outcome: "rejected", permanent: true, reason };
}

function transient(reason: string): HandoffFailedTransient {
  return { outcome: "failed_transient", reason };
}

/**
 * The message's files as nodemailer's MIME parts, for the SMTP and SES
 * adapters alike: each with its name (nodemailer writes a non-ASCII one
 * RFC 2231-encoded, `filename*=utf-8''...`, with an RFC 2047 `name` for
 * older readers), its type and base64 content; an inline image (`cid`)
 * goes beside the HTML in multipart/related with `Content-Disposition:
 * inline`, the others as `attachment`. Part of the one message built and
 * DKIM-signed, so the signature covers them.
 */
export function mimeAttachments(email: OutgoingEmail): Mail.Attachment[] | undefined {
  if (!email.attachments || email.attachments.length === 0) return undefined;
  return email.attachments.map((attachment) => ({
    filename: attachment.filename,
    contentType: attachment.contentType,
    content: Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.length),
    contentTransferEncoding: "base64",
    ...(attachment.contentId !== undefined
      ? { cid: attachment.contentId, contentDisposition: "inline" as const }
      : { contentDisposition: "attachment" as const }),
  }));
}

function toAddress(address: OutgoingEmail["from"]): { name: string; address: string } {
  return { name: address.name ?? "", address: address.email };
}

/**
 * Caller headers minus the reserved ones, or a rejection reason when a name
 * is not a valid header field name (it could otherwise smuggle extra header
 * lines; nodemailer already flattens CR/LF in values).
 */
export function extraHeaders(headers: OutgoingEmail["headers"]): Record<string, string> | string {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!HEADER_NAME.test(name)) return `invalid header name ${JSON.stringify(name.slice(0, 80))}`;
    if (RESERVED_HEADERS.has(name.toLowerCase())) continue;
    result[name] = value;
  }
  return result;
}

/**
 * nodemailer sends the message UNSIGNED when signing fails (bad PEM, non-RSA
 * key), which would fail DMARC at the recipient. Check the key first and
 * refuse the message instead: no retry can fix the key it was given.
 */
function checkDkimKey(privateKeyPem: string): string | undefined {
  try {
    const key = createPrivateKey(privateKeyPem);
    if (key.asymmetricKeyType !== "rsa") return "DKIM private key is not an RSA key";
    return undefined;
  } catch {
    return "DKIM private key cannot be read";
  }
}
