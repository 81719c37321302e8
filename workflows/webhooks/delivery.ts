import {
  ActivityFailure,
  condition,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TemporalFailure,
  upsertSearchAttributes,
} from "@temporalio/workflow";
import type { AttemptDeliveryInput, AttemptDeliveryResult, AttemptedDeliveryState, WebhookDeliveryActivities } from "./activities.ts";
import { WEBHOOK_DELIVERY_STATUS } from "../search-attributes.ts";

/**
 * One workflow per webhook delivery (id `webhook-delivery-<deliveryId>`):
 * up to `maxAttempts` attempts, each a local activity with its number, with
 * the waits of `waitsSeconds` between them on durable timers (spec: 5
 * attempts, about 1 min, 5 min, 15 min and 1 h apart; the schedule comes in
 * the input so it is fixed for the delivery's life and tests can shorten
 * it). After the last failure the delivery is a dead letter: no automatic
 * retry; the workflow waits up to `deadLetterWaitSeconds` for a `retry`
 * signal, which starts a new round, numbered on. Deterministic: every I/O
 * is the activity.
 *
 * The `retry` signal while a wait between attempts is running makes the
 * next attempt now (operators, from the Temporal UI).
 *
 * Search attribute WebhookDeliveryStatus follows the state: pending,
 * attempting, succeeded, dead_letter.
 */
export interface WebhookDeliveryInput {
  readonly companyId: string;
  readonly deliveryId: string;
  /** Number of this run's first attempt: 1, or on from a dead letter whose workflow had closed. */
  readonly firstAttempt: number;
  readonly maxAttempts: number;
  /** maxAttempts - 1 waits, in seconds. */
  readonly waitsSeconds: readonly number[];
  readonly deadLetterWaitSeconds: number;
  /**
   * Read only so that runs started without LOCAL_ATTEMPTS_PATCH replay: the
   * relay set it on those runs to make their attempts local activities. The
   * relay no longer sets it.
   */
  readonly localAttempts?: boolean;
}

export type WebhookDeliveryResult = AttemptedDeliveryState;

export const retryDelivery = defineSignal("retry");

/**
 * Attempts run as local activities: in the workflow task of the worker that
 * holds the workflow, rather than back through the server and the task
 * queue to an activity poller (that trip was about 40 ms of the 90 ms from
 * event to first attempt). A run whose history has this patch's marker
 * makes every attempt, and the record of an attempt that could not run,
 * through the one local proxy. A run without the marker goes on as it
 * began: with `localAttempts` its attempts are local and that record
 * remote; without it, both remote. Once no such run is open (a dead
 * letter's workflow waits at most deadLetterWaitSeconds),
 * deprecatePatch(LOCAL_ATTEMPTS_PATCH) replaces the check and the remote
 * proxy goes. The patch bills no Temporal Cloud action of its own: its
 * marker lands in the workflow task of the first attempt's marker (the
 * markers of one task are one action), and the TemporalChangeVersion
 * upsert is exempt (test/bench/temporal-cost.test.ts).
 */
export const LOCAL_ATTEMPTS_PATCH = "webhook-attempts-are-local-activities";

/**
 * Tries of one attempt's activity (about 15 s of backoff). The maximum
 * matters for an attempt that can never run, such as an endpoint secret that
 * no configured data encryption key opens: without it the activity would be
 * retried for ever and the delivery never become a dead letter. The attempt
 * is then recorded as failed without a request, and the round goes on as
 * after any failure.
 */
export const ATTEMPT_ACTIVITY_MAX_TRIES = 5;

/** One attempt's timeout and tries. */
const ATTEMPT_OPTIONS = {
  // The receiver has 10 s; DNS, signing and recording fit in the rest.
  startToCloseTimeout: "30s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m", maximumAttempts: ATTEMPT_ACTIVITY_MAX_TRIES },
} as const;

/** Recording an attempt that could not run needs only the database: retried until it answers. */
const UNTIL_RECORDED = { retry: { maximumAttempts: Number.POSITIVE_INFINITY } };

// A retry whose backoff is under a minute (all of an attempt's) waits in the worker, without a timer in the history.
const { attemptDelivery } = proxyLocalActivities<WebhookDeliveryActivities>(ATTEMPT_OPTIONS);
/** Runs started without LOCAL_ATTEMPTS_PATCH only (see there). */
const { attemptDelivery: attemptDeliveryRemotely } = proxyActivities<WebhookDeliveryActivities>(ATTEMPT_OPTIONS);

export async function webhookDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const withPatch = patched(LOCAL_ATTEMPTS_PATCH);
  const local = withPatch || input.localAttempts === true;
  const attemptOnce = local ? attemptDelivery : attemptDeliveryRemotely;
  const recordCouldNotRun = withPatch ? attemptDelivery : attemptDeliveryRemotely;

  let retryAsked = false;
  setHandler(retryDelivery, () => {
    retryAsked = true;
  });

  let state: WebhookDeliveryResult = "pending";
  const show = (next: WebhookDeliveryResult): void => {
    if (next !== state && next !== "gone") upsertSearchAttributes([{ key: WEBHOOK_DELIVERY_STATUS, value: next }]);
    state = next;
  };

  let number = input.firstAttempt;
  for (;;) {
    for (let i = 0; i < input.maxAttempts; i++) {
      if (i > 0) await condition(() => retryAsked, (input.waitsSeconds[i - 1] ?? 0) * 1000);
      retryAsked = false;
      const final = i === input.maxAttempts - 1;
      const wait = input.waitsSeconds[i];
      const attempt: AttemptDeliveryInput = {
        companyId: input.companyId,
        deliveryId: input.deliveryId,
        attempt: number++,
        final,
        retryInMs: final || wait === undefined ? null : wait * 1000,
      };
      let answer: AttemptDeliveryResult;
      try {
        answer = await attemptOnce(attempt);
      } catch (error) {
        // A remote activity that ran out of tries throws an ActivityFailure; a local one throws its
        // last failure as it is (an ApplicationFailure, a TimeoutFailure...). Anything else (a bug
        // in this code) or a cancellation fails the workflow task.
        if (!(error instanceof ActivityFailure || (local && error instanceof TemporalFailure)) || isCancellation(error)) {
          throw error;
        }
        answer = await recordCouldNotRun.executeWithOptions(UNTIL_RECORDED, [{ ...attempt, couldNotRun: true }]);
      }
      show(answer.state);
      if (answer.state === "succeeded" || answer.state === "gone") return answer.state;
    }
    // The last attempt of the round failed: a dead letter until someone retries it.
    if (!(await condition(() => retryAsked, input.deadLetterWaitSeconds * 1000))) return state;
    show("attempting");
  }
}
