import { proxyActivities, proxyLocalActivities, sleep, upsertSearchAttributes } from "@temporalio/workflow";
import { MAIL_STATUS } from "../search-attributes.ts";
import type { MessageActivities, MessageWorkflowStatus } from "./activities.ts";

/**
 * One workflow per message (id `message-<messageId>`): it owns the sending
 * lifecycle, from acceptance to the handoff: suppression check, the sending
 * pace (deferred, on a durable timer, while it does not allow), the handoff
 * with retries. It ends when the message is handed off (`sent`) or ends
 * without being sent (`rejected`, `failed`, `suppressed`).
 *
 * What the email service reports later (delivered, bounced, complained) is
 * recorded in PostgreSQL by the provider-events intake, idempotently, and
 * shows in the message log and the webhooks; no workflow waits for it, so
 * a message costs Temporal three billable actions when nothing waits: the
 * start (with its search attributes), the handoff activity, and one upsert
 * of `MailStatus` at the end. A deferral adds a local activity (the
 * `deferred` mark), an upsert and a timer per wait.
 *
 * Deterministic: every I/O is an activity (./activities.ts; implemented in
 * src/adapters/temporal/messages/activities.ts).
 */
export interface MessageWorkflowInput {
  readonly messageId: string;
  readonly companyId: string;
  /** Name of the email service, the key of its sending pace. */
  readonly provider: string;
  /** How long one handoff attempt may take before Temporal retries it elsewhere. */
  readonly handoffTimeoutSeconds: number;
}

/**
 * A handoff attempt heartbeats every second while it talks to the email
 * service; without a heartbeat for this long its worker is taken for dead
 * and the attempt runs again elsewhere (the handoff is idempotent: the same
 * Message-ID, the handoff journal), in seconds rather than at the
 * start-to-close timeout.
 */
export const HANDOFF_HEARTBEAT_TIMEOUT = "10s";

export async function messageLifecycle(input: MessageWorkflowInput): Promise<MessageWorkflowStatus> {
  const { messageId, companyId } = input;
  const { attemptHandOff } = proxyActivities<Pick<MessageActivities, "attemptHandOff">>({
    startToCloseTimeout: `${input.handoffTimeoutSeconds}s`,
    heartbeatTimeout: HANDOFF_HEARTBEAT_TIMEOUT,
    // The email service may be down for a while: keep trying, slower and
    // slower; a stuck message shows in the Temporal UI with its last error.
    retry: { initialInterval: "2s", backoffCoefficient: 2, maximumInterval: "10m" },
  });
  // A database-only step: a local activity, recorded as one marker.
  const { markDeferred } = proxyLocalActivities<Pick<MessageActivities, "markDeferred">>({
    startToCloseTimeout: "30s",
    retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
  });

  // `queued` was set with the start.
  let shown: MessageWorkflowStatus = "queued";
  for (;;) {
    const attempt = await attemptHandOff(companyId, messageId, input.provider);
    if (attempt.waitMs === 0) {
      if (attempt.status !== shown) upsertSearchAttributes([{ key: MAIL_STATUS, value: attempt.status }]);
      return attempt.status;
    }
    // The sending pace does not allow it yet: visibly deferred, then a durable timer.
    if (shown !== "deferred") {
      shown = await markDeferred(companyId, messageId);
      upsertSearchAttributes([{ key: MAIL_STATUS, value: shown }]);
    }
    await sleep(attempt.waitMs);
  }
}
