/**
 * In-process email service for local runs and tests: nothing leaves the
 * machine. The recipient's local part picks the outcome (magic recipients,
 * the way Resend's `delivered@resend.dev` or Postmark's test addresses work),
 * and asynchronous outcomes are pushed to `onEvent` like a real service's
 * webhooks would be.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type {
  EmailProvider,
  HandoffAccepted,
  HandoffRejected,
  HandoffResult,
  OutgoingEmail,
  ProviderEvent,
  ProviderEventSink,
  ProviderEventType,
} from "../../capabilities/messages/email-provider.ts";

export type SimulatorBehaviour = "deliver" | "bounce" | "complain" | "reject" | "transient" | "slow";

export interface SimulatorMagicRecipient {
  /**
   * Local parts that trigger the behaviour, on ANY domain, case-insensitive;
   * a `+tag` suffix is ignored (`bounce+signup-test@example.com` bounces), so
   * tests can keep addresses distinct.
   */
  readonly localParts: readonly string[];
  readonly behaviour: SimulatorBehaviour;
  /** What `send` answers. */
  readonly handoff: string;
  /** Events sent to `onEvent` after an accepted handoff, in order. */
  readonly events: readonly ProviderEventType[];
  readonly description: string;
}

/**
 * The magic recipients (for the README). Any address not listed behaves like
 * `delivered@`.
 */
export const SIMULATOR_MAGIC_RECIPIENTS: readonly SimulatorMagicRecipient[] = [
  {
    localParts: ["delivered"],
    behaviour: "deliver",
    handoff: "accepted",
    events: ["delivered"],
    description: "Accepted, then delivered. Also what every non-magic address does.",
  },
  {
    localParts: ["bounce", "bounced"],
    behaviour: "bounce",
    handoff: "accepted",
    events: ["bounced"],
    description: "Accepted, then a permanent bounce (mailbox does not exist).",
  },
  {
    localParts: ["complaint", "complained"],
    behaviour: "complain",
    handoff: "accepted",
    events: ["delivered", "complained"],
    description: "Accepted, delivered, then the recipient reports it as spam.",
  },
  {
    localParts: ["reject", "rejected"],
    behaviour: "reject",
    handoff: "rejected (permanent)",
    events: [],
    description: "Refused at handoff; no events.",
  },
  {
    localParts: ["transient"],
    behaviour: "transient",
    handoff: "failed_transient on the first attempt per messageId, accepted on later attempts",
    events: ["delivered"],
    description: "Exercises handoff retries: retry with the same messageId and it goes through.",
  },
  {
    localParts: ["slow"],
    behaviour: "slow",
    handoff: "accepted",
    events: ["delivered"],
    description: "Accepted, delivered only after 5 seconds (slowDelayMs).",
  },
];

const BEHAVIOUR_BY_LOCAL_PART = new Map<string, SimulatorBehaviour>(
  SIMULATOR_MAGIC_RECIPIENTS.flatMap((row) => row.localParts.map((part) => [part, row.behaviour] as const)),
);

/** The behaviour the simulator applies to a recipient address. */
export function simulatorBehaviourFor(address: string): SimulatorBehaviour {
  const at = address.lastIndexOf("@");
  const localPart = (at === -1 ? address : address.slice(0, at)).toLowerCase();
  const plus = localPart.indexOf("+");
  const base = plus === -1 ? localPart : localPart.slice(0, plus);
  return BEHAVIOUR_BY_LOCAL_PART.get(base) ?? "deliver";
}

export interface SimulatorProviderOptions {
  /** Receives delivered / bounced / complained events. */
  readonly onEvent: ProviderEventSink;
  /** Wait before each event (the complaint comes `delayMs` after its delivery). Default 50 ms. */
  readonly delayMs?: number;
  /** Wait before the delivery of a `slow@` message. Default 5000 ms; tests lower it. */
  readonly slowDelayMs?: number;
  /** Calls of `onEvent` per event before it is dropped. Default 5. */
  readonly eventAttempts?: number;
  /** First wait between `onEvent` attempts; doubles each time. Default 100 ms. */
  readonly eventRetryBaseMs?: number;
  /** Told about an event dropped after its last attempt. Default: a one-line warning without message content. */
  readonly onEventDropped?: (event: ProviderEvent, error: unknown) => void;
  /**
   * Durable memory of final handoff answers, shared by every process (the
   * service runs it on PostgreSQL). Without it the simulator remembers in
   * memory only, and a handoff repeated by another process after a crash
   * would count as a new one.
   */
  readonly journal?: HandoffJournal;
  /**
   * Time between taking a message and answering (the journal records it
   * first). Models a slow service; tests use it to kill a worker mid-handoff.
   */
  readonly handoffDelayMs?: number;
}

/** Durable record of the first final answer per messageId. */
export interface HandoffJournal {
  recall(messageId: string): Promise<HandoffAccepted | HandoffRejected | undefined>;
  /** Records `result` unless an answer is recorded already; returns the recorded one. */
  remember(messageId: string, result: HandoffAccepted | HandoffRejected): Promise<HandoffAccepted | HandoffRejected>;
}

export interface SimulatorProvider extends EmailProvider {
  /**
   * How many times this message was really "sent" (accepted as new). The
   * simulator deduplicates on messageId, so this is 0 or 1: a caller that
   * retries correctly can never push it higher.
   */
  sentCount(messageId: string): number;
  /**
   * How many times `send` was called for this message, repeats and transient
   * failures included. Use this to assert that a caller did not even TRY to
   * send twice, which `sentCount` cannot show.
   */
  attemptCount(messageId: string): number;
  /** Resolves once every event scheduled so far has been handed to `onEvent` (or dropped). */
  settled(): Promise<void>;
}

interface PlannedEvent {
  readonly type: ProviderEventType;
  readonly afterMs: number;
  readonly detail?: string;
}

const DEFAULTS = { delayMs: 50, slowDelayMs: 5_000, eventAttempts: 5, eventRetryBaseMs: 100 } as const;

export function createSimulatorProvider(options: SimulatorProviderOptions): SimulatorProvider {
  const delayMs = nonNegative(options.delayMs ?? DEFAULTS.delayMs, "delayMs");
  const slowDelayMs = nonNegative(options.slowDelayMs ?? DEFAULTS.slowDelayMs, "slowDelayMs");
  const eventAttempts = Math.max(1, Math.floor(options.eventAttempts ?? DEFAULTS.eventAttempts));
  const retryBaseMs = nonNegative(options.eventRetryBaseMs ?? DEFAULTS.eventRetryBaseMs, "eventRetryBaseMs");
  const onEventDropped = options.onEventDropped ?? warnDropped;

  /** Final handoff answer per messageId: repeats get exactly this back. */
  const outcomes = new Map<string, HandoffAccepted | HandoffRejected>();
  const sent = new Map<string, number>();
  const attempts = new Map<string, number>();
  /** Event chains still running; close() cancels them, settled() waits for them. */
  const running = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let closed = false;

  function plan(behaviour: SimulatorBehaviour): PlannedEvent[] {
    switch (behaviour) {
      case "bounce":
        return [{ type: "bounced", afterMs: delayMs, detail: "550 5.1.1 simulated bounce: mailbox does not exist" }];
      case "complain":
        return [
          { type: "delivered", afterMs: delayMs },
          { type: "complained", afterMs: delayMs, detail: "simulated complaint: recipient reported spam" },
        ];
      case "slow":
        return [{ type: "delivered", afterMs: slowDelayMs }];
      case "reject":
        return [];
      case "deliver":
      case "transient":
        return [{ type: "delivered", afterMs: delayMs }];
    }
  }

  /** Hands one event to the sink, retrying with backoff; the event (and its id) stays the same across attempts. */
  async function deliver(event: ProviderEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await options.onEvent(event);
        return;
      } catch (error) {
        if (attempt >= eventAttempts || shutdown.signal.aborted) {
          onEventDropped(event, error);
          return;
        }
      }
      await sleep(retryBaseMs * 2 ** (attempt - 1), undefined, { signal: shutdown.signal });
    }
  }

  function emitLater(providerMessageId: string, events: readonly PlannedEvent[]): void {
    if (events.length === 0) return;
    // One chain per message keeps its events in order (delivered before complained).
    const chain = (async () => {
      for (const planned of events) {
        await sleep(planned.afterMs, undefined, { signal: shutdown.signal });
        await deliver({
          providerEventId: `simevt_${randomUUID()}`,
          providerMessageId,
          type: planned.type,
          occurredAt: new Date(),
          ...(planned.detail === undefined ? {} : { detail: planned.detail }),
        });
      }
    })().catch((error: unknown) => {
      // Aborted sleeps are how close() stops chains; anything else is a bug worth seeing.
      if (!shutdown.signal.aborted) console.error("simulator: event chain failed", error);
    });
    running.add(chain);
    void chain.finally(() => running.delete(chain));
  }

  // Decided synchronously, before any await, so concurrent sends of one
  // messageId cannot both pass the "seen before?" check.
  function decide(email: OutgoingEmail, { emit } = { emit: true }): HandoffResult {
    if (closed) return { outcome: "failed_transient", reason: "provider is closed" };
    attempts.set(email.messageId, (attempts.get(email.messageId) ?? 0) + 1);

    const remembered = outcomes.get(email.messageId);
    if (remembered) return remembered;

    if (!email.to.email.includes("@")) {
      return remember(email.messageId, { outcome: "rejected", permanent: true, reason: "501 5.1.3 invalid recipient address" });
    }
    const behaviour = simulatorBehaviourFor(email.to.email);
    if (behaviour === "reject") {
      return remember(email.messageId, {
        outcome: "rejected",
        permanent: true,
        reason: "550 5.7.1 simulated rejection",
      });
    }
    if (behaviour === "transient" && attempts.get(email.messageId) === 1) {
      // Not remembered: the next attempt must get a fresh decision.
      return { outcome: "failed_transient", reason: "451 4.3.0 simulated transient failure" };
    }

    const accepted = remember(email.messageId, {
      outcome: "accepted",
      // Random rather than derived from messageId, so code that mixes up the
      // two ids fails against the simulator just as it would against a real service.
      providerMessageId: `sim_${randomUUID()}`,
    });
    sent.set(email.messageId, (sent.get(email.messageId) ?? 0) + 1);
    if (emit) emitLater(accepted.providerMessageId, plan(behaviour));
    return accepted;
  }

  function remember<T extends HandoffAccepted | HandoffRejected>(messageId: string, result: T): T {
    outcomes.set(messageId, result);
    return result;
  }

  return {
    name: "simulator",

    async send(email: OutgoingEmail): Promise<HandoffResult> {
      const journal = options.journal;
      if (!journal) return decide(email);
      const recorded = await journal.recall(email.messageId);
      if (recorded) {
        attempts.set(email.messageId, (attempts.get(email.messageId) ?? 0) + 1);
        outcomes.set(email.messageId, recorded);
        return recorded;
      }
      const result = decide(email, { emit: false });
      if (result.outcome === "failed_transient") return result;
      const kept = await journal.remember(email.messageId, result);
      outcomes.set(email.messageId, kept);
      if (kept === result && result.outcome === "accepted") {
        emitLater(result.providerMessageId, plan(simulatorBehaviourFor(email.to.email)));
      } else if (kept !== result) {
        // Another process took this message first: ours never happened.
        sent.set(email.messageId, Math.max(0, (sent.get(email.messageId) ?? 1) - 1));
      }
      if (options.handoffDelayMs) await sleep(options.handoffDelayMs);
      return kept;
    },

    sentCount(messageId: string): number {
      return sent.get(messageId) ?? 0;
    },

    attemptCount(messageId: string): number {
      return attempts.get(messageId) ?? 0;
    },

    async settled(): Promise<void> {
      // A chain can be added while we wait (a send during the wait), hence the loop.
      while (running.size > 0) await Promise.all(running);
    },

    async close(): Promise<void> {
      closed = true;
      // Events not yet emitted are dropped, as when a real service's webhooks stop being received.
      shutdown.abort();
      while (running.size > 0) await Promise.all(running);
    },
  };
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number`);
  return value;
}

/** Only ids and the event type: events never carry message content, and neither does this line. */
function warnDropped(event: ProviderEvent, error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error);
  console.warn(
    `simulator: dropped ${event.type} event ${event.providerEventId} for ${event.providerMessageId}: ${reason}`,
  );
}
