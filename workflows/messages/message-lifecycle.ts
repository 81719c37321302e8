import { condition, defineSignal, proxyActivities, setHandler, sleep, upsertSearchAttributes } from "@temporalio/workflow";
import type { MessageActivities } from "../../src/adapters/temporal/messages/activities.ts";
import { MAIL_STATUS } from "../search-attributes.ts";

/**
 * One workflow per message (id `message-<messageId>`): it owns the sending
 * lifecycle: suppression check, the sending pace (deferred, on a durable
 * timer, while it does not allow), the handoff with retries, then the wait
 * for the delivery outcome reported by the email service. Deterministic: every I/O is an
 * activity (src/adapters/temporal/messages/activities.ts).
 */
export interface MessageWorkflowInput {
  readonly messageId: string;
  readonly companyId: string;
  /** Name of the email service, the key of its sending pace. */
  readonly provider: string;
  /** How long one handoff attempt may take before Temporal retries it elsewhere. */
  readonly handoffTimeoutSeconds: number;
  /** How long to keep listening for delivery, bounce and complaint reports. */
  readonly outcomeWindowHours: number;
}

/** Status names as in the API (`sent`, `delivered`, ...). */
export type MessageWorkflowStatus = Awaited<ReturnType<MessageActivities["markDeferred"]>>;

/** Sent by the provider-events entry point after it recorded an outcome. */
export const messageStatusChanged = defineSignal<[MessageWorkflowStatus]>("messageStatusChanged");

const TERMINAL_AFTER_SEND = new Set<MessageWorkflowStatus>(["bounced", "complained"]);

export async function messageLifecycle(input: MessageWorkflowInput): Promise<MessageWorkflowStatus> {
  const { messageId, companyId } = input;
  const quick = proxyActivities<MessageActivities>({
    startToCloseTimeout: "30s",
    retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
  });
  const handoff = proxyActivities<MessageActivities>({
    startToCloseTimeout: `${input.handoffTimeoutSeconds}s`,
    // The email service may be down for a while: keep trying, slower and
    // slower; a stuck message shows in the Temporal UI with its last error.
    retry: { initialInterval: "2s", backoffCoefficient: 2, maximumInterval: "10m" },
  });

  // Widened on purpose: `show` changes it from a closure.
  let status = "queued" as MessageWorkflowStatus;
  const reported: MessageWorkflowStatus[] = [];
  setHandler(messageStatusChanged, (next) => {
    reported.push(next);
  });
  const show = (next: MessageWorkflowStatus) => {
    if (next !== status) upsertSearchAttributes([{ key: MAIL_STATUS, value: next }]);
    status = next;
  };

  for (;;) {
    const attempt = await handoff.attemptHandOff(companyId, messageId, input.provider);
    if (attempt.waitMs === 0) {
      show(attempt.status);
      break;
    }
    // The sending pace does not allow it yet: visibly deferred, then a durable timer.
    if (status !== "deferred") show(await quick.markDeferred(companyId, messageId));
    await sleep(attempt.waitMs);
  }

  if (status !== "sent" && status !== "delivered") return status;
  const deadline = Date.now() + input.outcomeWindowHours * 3_600_000;
  while (!TERMINAL_AFTER_SEND.has(status)) {
    const remaining = deadline - Date.now();
    if (remaining <= 0 || !(await condition(() => reported.length > 0, remaining))) break;
    show(reported.shift() as MessageWorkflowStatus);
  }
  return status;
}
