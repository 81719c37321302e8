/**
 * POST /mail/v1/providers/ses/notifications: SES event notifications (Bounce,
 * Complaint, Delivery, Reject, DeliveryDelay) delivered by Amazon SNS over
 * HTTPS. No API key: what authenticates a call is its SNS signature,
 * checked with sns-payload-validator against the certificate at
 * SigningCertURL, which must be on `sns.<SES_REGION>.amazonaws.com`
 * (the library also insists on an amazonaws.com host). Anything that fails
 * a check answers 403 FORBIDDEN and changes nothing.
 *
 * Each refusal counts against the client's address in the budget of failed
 * authentications that API keys and sessions count against too
 * (failed-authentications.ts): an address over it is answered 429
 * RATE_LIMITED, with Retry-After, before its body is read, so a flood of
 * forged notifications (each naming a new certificate URL on the SNS host,
 * which the validator would fetch) costs one lookup in memory each. SNS
 * itself never fails a check, so it is never limited.
 *
 * A SubscriptionConfirmation is confirmed by fetching its SubscribeURL
 * (same host rule). Certificates and subscription URLs are fetched through
 * `agent` when one is given (an egress proxy, a trust store of its own),
 * else Node's global agent.
 */
import { get } from "node:https";
import type { Agent } from "node:https";
import type { FastifyInstance } from "fastify";
import Validator from "sns-payload-validator";
import { ApiError } from "../../contract/api-error.ts";
import type { DeliveryReports } from "../../capabilities/delivery-reports/receive-reports.ts";
import type { FailedAuthentications } from "./failed-authentications.ts";
import { sendApiError } from "./error-reply.ts";

export const SES_NOTIFICATIONS_PATH = "/mail/v1/providers/ses/notifications";

/** SNS messages are small (SES notifications are a few KB); anything larger is refused. */
const MAX_BODY_BYTES = 256 * 1024;

export interface SesNotificationsDependencies {
  readonly reports: DeliveryReports;
  /** The SES / SNS region: certificate and subscription URLs must be on sns.<region>.amazonaws.com. */
  readonly region: string;
  /** When set, only notifications of this topic are taken. */
  readonly topicArn?: string;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** The HTTPS agent certificates and subscription URLs are fetched through; unset: Node's global agent. */
  readonly agent?: Agent | undefined;
}

interface SnsEnvelope {
  readonly Type?: unknown;
  readonly MessageId?: unknown;
  readonly TopicArn?: unknown;
  readonly Message?: unknown;
  readonly SigningCertURL?: unknown;
  readonly SubscribeURL?: unknown;
  readonly Timestamp?: unknown;
}

interface SesNotification {
  readonly notificationType?: string;
  readonly eventType?: string;
  readonly mail?: { readonly messageId?: string; readonly timestamp?: string; readonly source?: string; readonly commonHeaders?: { readonly subject?: string } };
  readonly bounce?: { readonly bounceType?: string; readonly bounceSubType?: string; readonly timestamp?: string; readonly bouncedRecipients?: readonly { readonly diagnosticCode?: string; readonly status?: string }[] };
  readonly complaint?: { readonly timestamp?: string; readonly complaintFeedbackType?: string };
  readonly delivery?: { readonly timestamp?: string; readonly smtpResponse?: string };
  readonly reject?: { readonly reason?: string };
  readonly deliveryDelay?: { readonly timestamp?: string; readonly delayType?: string };
}

const forbidden = (why: string) => new ApiError("FORBIDDEN", `Not a valid SNS notification: ${why}.`);

/** Only https://sns.<region>.amazonaws.com (or .amazonaws.com.cn) URLs. */
export function isSnsUrl(raw: unknown, region: string): boolean {
  if (typeof raw !== "string") return false;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase();
  return url.protocol === "https:" && url.port === "" && (host === `sns.${region}.amazonaws.com` || host === `sns.${region}.amazonaws.com.cn`);
}

/** `failures`: the budget of failed authentications per address that every door of the process shares. */
export async function registerSesNotifications(app: FastifyInstance, deps: SesNotificationsDependencies, failures: FailedAuthentications): Promise<void> {
  const validator = new Validator({ useCache: true, maxCerts: 20, ...(deps.agent ? { requestAgent: deps.agent } : {}) });
  await app.register(async (scope) => {
    // SNS posts JSON as text/plain; read every body as text here, within the limit.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
    // Before the body is read: an address over its budget of failures costs nothing more.
    scope.addHook("onRequest", async (request, reply) => {
      const refused = failures.refusal(request.ip);
      return refused ? sendApiError(reply, refused) : undefined;
    });
    // Every refusal counts against the address.
    scope.addHook("onSend", async (request, reply) => {
      if (reply.statusCode === 403) failures.recordFailure(request.ip);
    });
    scope.post(SES_NOTIFICATIONS_PATH, { bodyLimit: MAX_BODY_BYTES }, async (request, reply) => {
      let envelope: SnsEnvelope;
      try {
        envelope = JSON.parse(typeof request.body === "string" ? request.body : "") as SnsEnvelope;
      } catch {
        return sendApiError(reply, forbidden("the body is not JSON"));
      }
      if (typeof envelope !== "object" || envelope === null) return sendApiError(reply, forbidden("the body is not an object"));
      if (!isSnsUrl(envelope.SigningCertURL, deps.region)) return sendApiError(reply, forbidden(`the certificate is not on sns.${deps.region}.amazonaws.com`));
      if (deps.topicArn !== undefined && envelope.TopicArn !== deps.topicArn) return sendApiError(reply, forbidden("another topic"));
      try {
        await validator.validate(request.body as string);
      } catch {
        return sendApiError(reply, forbidden("the signature does not verify"));
      }

      if (envelope.Type === "SubscriptionConfirmation") {
        if (!isSnsUrl(envelope.SubscribeURL, deps.region)) return sendApiError(reply, forbidden("the subscribe URL is not on the SNS host"));
        await confirm(envelope.SubscribeURL as string, deps.agent);
        return reply.code(200).send({ confirmed: true });
      }
      if (envelope.Type !== "Notification") return reply.code(200).send({ outcome: "ignored" });

      let notification: SesNotification;
      try {
        notification = JSON.parse(String(envelope.Message)) as SesNotification;
      } catch {
        return reply.code(200).send({ outcome: "ignored" });
      }
      const type = notification.notificationType ?? notification.eventType ?? "";
      const sesMessageId = notification.mail?.messageId;
      if (!sesMessageId || typeof envelope.MessageId !== "string") return reply.code(200).send({ outcome: "ignored" });
      const at =
        notification.bounce?.timestamp ?? notification.complaint?.timestamp ?? notification.delivery?.timestamp ??
        notification.deliveryDelay?.timestamp ?? (typeof envelope.Timestamp === "string" ? envelope.Timestamp : undefined);
      const occurredAt = at && !Number.isNaN(Date.parse(at)) ? new Date(at) : new Date();
      const detail =
        notification.bounce?.bouncedRecipients?.[0]?.diagnosticCode ?? notification.delivery?.smtpResponse ?? notification.reject?.reason ??
        notification.complaint?.complaintFeedbackType ?? notification.deliveryDelay?.delayType;
      const outcome = await deps.reports.receiveSes({
        notificationId: envelope.MessageId,
        type,
        ...(notification.bounce?.bounceType ? { bounceType: notification.bounce.bounceType } : {}),
        sesMessageId,
        occurredAt,
        ...(detail ? { detail } : {}),
        summary: {
          ...(notification.mail?.source ? { from: notification.mail.source } : {}),
          ...(notification.mail?.commonHeaders?.subject ? { subject: notification.mail.commonHeaders.subject } : {}),
          excerpt: `SES ${type}${detail ? `: ${detail}` : ""}`.slice(0, 2000),
        },
      });
      if (outcome === "retry_later") {
        return sendApiError(reply, new ApiError("SERVICE_UNAVAILABLE", "The message is not ready for this notification; SNS retries."));
      }
      return reply.code(200).send({ outcome });
    });
  });
}

function confirm(url: string, agent: Agent | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = get(url, { ...(agent ? { agent } : {}), timeout: 10_000 }, (response) => {
      response.resume();
      response.on("end", () => ((response.statusCode ?? 500) < 300 ? resolve() : reject(new Error(`SNS answered ${response.statusCode}`))));
    });
    request.on("timeout", () => request.destroy(new Error("SNS did not answer")));
    request.on("error", reject);
  });
}
