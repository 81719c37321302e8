/**
 * The message workflow's activities, declared here and implemented by
 * src/adapters/temporal/messages/activities.ts (types only: the workflow
 * imports nothing else). Each activity's arguments are what workflows
 * under way have scheduled it with: they stay as they are.
 */

/** A message status as the API names it (`queued`, `deferred`, `sent`, `rejected`, ...). */
export type MessageWorkflowStatus = string;

export interface HandOffAttempt {
  /** The message's status after the attempt. */
  readonly status: MessageWorkflowStatus;
  /** Milliseconds to wait for the sending pace; 0 when the attempt is over. */
  readonly waitMs: number;
}

export interface MessageActivities {
  /**
   * One step of sending, in a single activity to keep a message's workflow
   * short (one activity per message in the common case): end the message as
   * `suppressed` if its address is; else take a slot of the sending pace of
   * `provider` or answer how long to wait for one (`waitMs` > 0, nothing
   * else done); else hand it off. Answers the status afterwards.
   */
  attemptHandOff(companyId: string, messageId: string, provider: string): Promise<HandOffAttempt>;
  /** The message waits for the sending pace: visibly `deferred`. Answers the status afterwards. */
  markDeferred(companyId: string, messageId: string): Promise<MessageWorkflowStatus>;
}
