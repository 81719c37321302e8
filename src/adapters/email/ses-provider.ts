/**
 * Email provider that sends through Amazon SES (the v2 API, SendEmail with a
 * raw message: the MIME, headers and DKIM signature stay ours), in a named
 * configuration set whose event destination publishes Bounce, Complaint,
 * Delivery, Reject and DeliveryDelay to an SNS topic; those come back on
 * POST /mail/v1/providers/ses/notifications (src/transport/http/ses-notifications.ts).
 *
 * `providerMessageId` is SES's MessageId: every notification carries it as
 * `mail.messageId`. SES cannot deduplicate a handoff, so, like SMTP, every
 * attempt carries the same Message-ID header, and concurrent sends of one
 * message in this process share one call.
 *
 * The AWS SDK and nodemailer (which builds the raw message) are loaded at
 * the first handoff, not with this module: the processes that never hand a
 * message to SES (the API processes, every process with another
 * EMAIL_PROVIDER) do not carry them.
 */
import type { SESv2Client } from "@aws-sdk/client-sesv2";
import type { EmailProvider, HandoffResult, OutgoingEmail } from "../../capabilities/messages/email-provider.ts";
import { DKIM_SIGNED_HEADERS, extraHeaders, mimeAttachments, smtpMessageId } from "./smtp-provider.ts";

export interface SesProviderOptions {
  readonly region: string;
  /** The configuration set whose event destination feeds our SNS topic. */
  readonly configurationSetName?: string;
  /** Right-hand side of our Message-ID headers. */
  readonly messageIdDomain: string;
  /** A local SES endpoint (tests: aws-ses-v2-local). Unset: AWS. */
  readonly endpoint?: string;
  /** Static credentials; unset: the SDK's default chain (instance role, environment, ...). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** The whole call, retries of the SDK included. Default 20 s. */
  readonly handoffMs?: number;
}

/** SES errors that say the message itself can never be sent. */
const PERMANENT = new Set(["MessageRejected", "BadRequestException", "NotFoundException"]);

type SesSdk = typeof import("@aws-sdk/client-sesv2");

function streamComposer(nodemailer: (typeof import("nodemailer"))["default"]) {
  return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows", disableFileAccess: true, disableUrlAccess: true });
}

export function createSesProvider(options: SesProviderOptions): EmailProvider {
  let loaded: Promise<{ readonly sdk: SesSdk; readonly client: SESv2Client }> | undefined;
  const ses = () =>
    (loaded ??= import("@aws-sdk/client-sesv2").then((sdk) => ({
      sdk,
      client: new sdk.SESv2Client({
        region: options.region,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
        maxAttempts: 2,
      }),
    })));
  // Builds (and DKIM-signs) the raw message; nothing is sent by it.
  let composing: Promise<ReturnType<typeof streamComposer>> | undefined;
  const composer = () => (composing ??= import("nodemailer").then(({ default: nodemailer }) => streamComposer(nodemailer)));
  const inFlight = new Map<string, Promise<HandoffResult>>();
  let closed = false;

  async function handOff(email: OutgoingEmail, messageIdHeader: string): Promise<HandoffResult> {
    const headers = extraHeaders(email.headers);
    if (typeof headers === "string") return { outcome: "rejected", permanent: true, reason: headers };
    // Outside the try below: a failed load is this process's trouble (the attempt is retried), not the message's.
    const compose = await composer();
    let raw: Buffer;
    try {
      const built = await compose.sendMail({
        messageId: `<${messageIdHeader}>`,
        from: { name: email.from.name ?? "", address: email.from.email },
        to: { name: email.to.name ?? "", address: email.to.email },
        replyTo: email.replyTo,
        subject: email.subject,
        html: email.html,
        text: email.text,
        headers,
        attachments: mimeAttachments(email),
        dkim: email.dkim ? { ...email.dkim, headerFieldNames: DKIM_SIGNED_HEADERS } : undefined,
      });
      raw = built.message as Buffer;
    } catch (error) {
      return { outcome: "rejected", permanent: true, reason: `the message could not be built: ${String(error).slice(0, 200)}` };
    }
    const { sdk, client } = await ses();
    try {
      const answer = await client.send(
        new sdk.SendEmailCommand({
          FromEmailAddress: email.from.email,
          Destination: { ToAddresses: [email.to.email] },
          Content: { Raw: { Data: raw } },
          ...(options.configurationSetName ? { ConfigurationSetName: options.configurationSetName } : {}),
        }),
        { abortSignal: AbortSignal.timeout(options.handoffMs ?? 20_000) },
      );
      if (!answer.MessageId) return { outcome: "failed_transient", reason: "SES answered without a MessageId" };
      return { outcome: "accepted", providerMessageId: answer.MessageId };
    } catch (error) {
      if (error instanceof sdk.SESv2ServiceException && PERMANENT.has(error.name)) {
        return { outcome: "rejected", permanent: true, reason: `SES ${error.name}: ${error.message}`.slice(0, 300) };
      }
      // Throttling, our account paused or unverified, network: not this message's fault.
      const name = error instanceof Error ? error.name : "Error";
      const message = error instanceof Error ? error.message : String(error);
      return { outcome: "failed_transient", reason: `SES ${name}: ${message}`.slice(0, 300) };
    }
  }

  return {
    name: "ses",
    send(email) {
      if (closed) return Promise.resolve({ outcome: "failed_transient", reason: "provider is closed" });
      let header: string;
      try {
        header = smtpMessageId(email.messageId, options.messageIdDomain);
      } catch (error) {
        return Promise.reject(error);
      }
      const running = inFlight.get(email.messageId);
      if (running) return running;
      const handoff = handOff(email, header).finally(() => inFlight.delete(email.messageId));
      inFlight.set(email.messageId, handoff);
      return handoff;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...inFlight.values()]);
      // A failed load left no client to close.
      await loaded?.then(({ client }) => client.destroy(), () => undefined);
      await composing?.then((transport) => transport.close(), () => undefined);
    },
  };
}
