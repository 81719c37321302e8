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
  /**
   * Calls of `onEvent` per event before it is dropped. Default 30: with the
   * default waits about 20 minutes, as a real service keeps retrying its
   * webhooks. An outcome can come before our side recorded the handoff it
   * belongs to (the intake then answers NOT_FOUND): when the worker died
   * after the handoff, or the database was away, the handoff is recorded
   * only when its activity is retried, HANDOFF_TIMEOUT_SECONDS and a backoff
   * later; an outcome given up on before that is lost for good.
   */
  readonly eventAttempts?: number;
  /** First wait between `onEvent` attempts; doubles each time. Default 100 ms. */
  readonly eventRetryBaseMs?: number;
  /** Longest wait between two `onEvent` attempts. Default 60 000 ms. */
  readonly eventRetryMaxMs?: number;
  /** Told about an event dropped after its last attempt. Default: a one-line warning without message content. */
  readonly onEventDropped?: (event: ProviderEvent, error: unknown) => void;
  /**
   * Durable memory of final handoff answers and of the outcomes still to
   * report, shared by every process (the service runs it on PostgreSQL).
   * With it, outcomes are reported from the journal by whichever process
   * polls first, so they survive the process that accepted the message.
   * Without it the simulator remembers in memory only: a handoff repeated by
   * another process after a crash would count as a new one, and pending
   * outcomes die with the process.
   */
  readonly journal?: HandoffJournal;
  /** With a journal: how often to look for due outcomes besides the wake-ups planned at each handoff. Default 1000 ms. */
  readonly pollIntervalMs?: number;
  /** With a journal: how long a process may take to report an outcome it claimed before another may. Default 30 s. */
  readonly claimLeaseMs?: number;
  /** Message ids remembered in memory (answers, counters); the oldest are forgotten beyond it. Default 10 000. */
  readonly memoryLimit?: number;
  /**
   * Time between taking a message and answering (the journal records it
   * first). Models a slow service; tests use it to kill a worker mid-handoff.
   */
  readonly handoffDelayMs?: number;
}

/** An outcome to report later, recorded with the accepted handoff. */
export interface JournalEvent {
  readonly providerEventId: string;
  readonly type: ProviderEventType;
  readonly detail?: string;
  /** Due this long after the handoff. */
  readonly dueInMs: number;
}

/** An outcome claimed for reporting. */
export interface DueEvent {
  readonly providerEventId: string;
  readonly providerMessageId: string;
  readonly type: ProviderEventType;
  readonly detail?: string;
  /** Reports of it that failed so far. */
  readonly attempts: number;
}

/**
 * Durable record of the first final answer per messageId and of the
 * outcomes still to report, shared by every process.
 */
export interface HandoffJournal {
  recall(messageId: string): Promise<HandoffAccepted | HandoffRejected | undefined>;
  /**
   * Records `result` unless an answer is recorded already; returns the
   * recorded one. `events` (in order) are recorded with an accepted answer
   * this call records, atomically with it, never with another's.
   */
  remember(
    messageId: string,
    result: HandoffAccepted | HandoffRejected,
    events: readonly JournalEvent[],
  ): Promise<HandoffAccepted | HandoffRejected>;
  /**
   * Up to `limit` due outcomes, oldest due first, none behind an unreported
   * outcome of its message, each now leased to the caller for `leaseMs`
   * (no other caller gets it meanwhile).
   */
  claimDue(limit: number, leaseMs: number): Promise<DueEvent[]>;
  /** The outcome was reported: never again. */
  reported(providerEventId: string): Promise<void>;
  /** Its report failed: due again in `retryInMs`, or given up on (`"drop"`). */
  failed(providerEventId: string, retryInMs: number | "drop"): Promise<void>;
  /** How many outcomes of these provider messages are still to report. */
  pending(providerMessageIds: readonly string[]): Promise<number>;
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

const DEFAULTS = {
  delayMs: 50,
  slowDelayMs: 5_000,
  eventAttempts: 30,
  eventRetryBaseMs: 100,
  eventRetryMaxMs: 60_000,
  pollIntervalMs: 1_000,
  claimLeaseMs: 30_000,
  memoryLimit: 10_000,
} as const;

/** Outcomes claimed per statement. */
const CLAIM_BATCH = 50;
/** Timers waiting for a due outcome, at most; beyond, the regular poll finds it. */
const MAX_WAKE_TIMERS = 1_000;

/** A Map that forgets its oldest entries beyond `limit`, so a long-running process keeps a bounded memory. */
class BoundedMap<K, V> extends Map<K, V> {
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override set(key: K, value: V): this {
    // Re-inserted, so a busy key counts as new.
    this.delete(key);
    super.set(key, value);
    while (this.size > this.#limit) {
      const oldest = this.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
    return this;
  }
}

export function createSimulatorProvider(options: SimulatorProviderOptions): SimulatorProvider {
  const delayMs = nonNegative(options.delayMs ?? DEFAULTS.delayMs, "delayMs");
  const slowDelayMs = nonNegative(options.slowDelayMs ?? DEFAULTS.slowDelayMs, "slowDelayMs");
  const eventAttempts = Math.max(1, Math.floor(options.eventAttempts ?? DEFAULTS.eventAttempts));
  const retryBaseMs = nonNegative(options.eventRetryBaseMs ?? DEFAULTS.eventRetryBaseMs, "eventRetryBaseMs");
  const retryMaxMs = nonNegative(options.eventRetryMaxMs ?? DEFAULTS.eventRetryMaxMs, "eventRetryMaxMs");
  /** The wait after the `failures`-th failed call: doubling from retryBaseMs, at most retryMaxMs. */
  const retryWaitMs = (failures: number): number => Math.min(retryMaxMs, retryBaseMs * 2 ** (failures - 1));
  const onEventDropped = options.onEventDropped ?? warnDropped;

  const pollIntervalMs = positive(options.pollIntervalMs ?? DEFAULTS.pollIntervalMs, "pollIntervalMs");
  const claimLeaseMs = positive(options.claimLeaseMs ?? DEFAULTS.claimLeaseMs, "claimLeaseMs");
  const memoryLimit = Math.max(1, Math.floor(options.memoryLimit ?? DEFAULTS.memoryLimit));

  /** Final handoff answer per messageId: repeats get exactly this back (the journal's copy wins when there is one). */
  const outcomes = new BoundedMap<string, HandoffAccepted | HandoffRejected>(memoryLimit);
  const sent = new BoundedMap<string, number>(memoryLimit);
  const attempts = new BoundedMap<string, number>(memoryLimit);
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
      await sleep(retryWaitMs(attempt), undefined, { signal: shutdown.signal });
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

  /** Planned events as recorded in the journal: each delay counts from the previous event, as in memory. */
  function journalEvents(events: readonly PlannedEvent[]): JournalEvent[] {
    let dueInMs = 0;
    return events.map((event) => {
      dueInMs += event.afterMs;
      return {
        providerEventId: `simevt_${randomUUID()}`,
        type: event.type,
        dueInMs,
        ...(event.detail === undefined ? {} : { detail: event.detail }),
      };
    });
  }

  const reporter = options.journal
    ? startJournalReporter(options.journal, {
        onEvent: options.onEvent,
        onEventDropped,
        eventAttempts,
        retryWaitMs,
        pollIntervalMs,
        claimLeaseMs,
        memoryLimit,
      })
    : undefined;

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
      const planned = result.outcome === "accepted" ? journalEvents(plan(simulatorBehaviourFor(email.to.email))) : [];
      const kept = await journal.remember(email.messageId, result, planned);
      outcomes.set(email.messageId, kept);
      if (kept === result && result.outcome === "accepted") {
        reporter?.expect(result.providerMessageId, planned);
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
      await reporter?.settled();
    },

    async close(): Promise<void> {
      closed = true;
      // In memory, events not yet emitted are dropped, as when a real
      // service's webhooks stop being received; journaled ones stay in the
      // journal for another process (or this one, restarted) to report.
      shutdown.abort();
      await reporter?.stop();
      while (running.size > 0) await Promise.all(running);
    },
  };
}

interface ReporterOptions {
  readonly onEvent: ProviderEventSink;
  readonly onEventDropped: (event: ProviderEvent, error: unknown) => void;
  readonly eventAttempts: number;
  readonly retryWaitMs: (failures: number) => number;
  readonly pollIntervalMs: number;
  readonly claimLeaseMs: number;
  readonly memoryLimit: number;
}

interface JournalReporter {
  /** Outcomes this process just recorded: look for them when they are due. */
  expect(providerMessageId: string, events: readonly JournalEvent[]): void;
  /** Resolves once the outcomes this process recorded are all reported (or dropped). */
  settled(): Promise<void>;
  /** No more polls; waits for the one under way. */
  stop(): Promise<void>;
}

/**
 * Reports the journal's due outcomes through `onEvent`: on a regular poll
 * (which is what finds the outcomes of a process that died) and on a timer
 * at each outcome's due time (which keeps outcomes prompt). Any process
 * may report any outcome; the journal's lease keeps two from reporting one
 * at once, and the intake is idempotent on the event id anyway.
 */
function startJournalReporter(journal: HandoffJournal, options: ReporterOptions): JournalReporter {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  const wakeTimers = new Set<NodeJS.Timeout>();
  /** Provider message ids this process recorded outcomes for, for settled(). */
  const recorded = new BoundedMap<string, true>(options.memoryLimit);

  async function report(due: DueEvent): Promise<void> {
    const event: ProviderEvent = {
      providerEventId: due.providerEventId,
      providerMessageId: due.providerMessageId,
      type: due.type,
      occurredAt: new Date(),
      ...(due.detail === undefined ? {} : { detail: due.detail }),
    };
    try {
      await options.onEvent(event);
    } catch (error) {
      const failures = due.attempts + 1;
      if (failures >= options.eventAttempts) {
        await journal.failed(due.providerEventId, "drop");
        options.onEventDropped(event, error);
        return;
      }
      const retryInMs = options.retryWaitMs(failures);
      await journal.failed(due.providerEventId, retryInMs);
      wake(retryInMs);
      return;
    }
    await journal.reported(due.providerEventId);
  }

  async function drain(): Promise<void> {
    for (;;) {
      const due = await journal.claimDue(CLAIM_BATCH, options.claimLeaseMs);
      // One at a time: a message's next outcome is only claimable once this one is reported.
      for (const event of due) {
        if (stopped) return; // its lease runs out and another process takes it
        await report(event);
      }
      if (due.length < CLAIM_BATCH || stopped) return;
    }
  }

  function poll(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await drain();
      } while (again && !stopped);
    })()
      .catch((error: unknown) => {
        // The database may be away for a moment; the next poll tries again.
        if (!stopped) console.warn(`simulator: polling the journal failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        running = undefined;
      });
  }

  function wake(afterMs: number): void {
    if (stopped || wakeTimers.size >= MAX_WAKE_TIMERS) return;
    // A little late rather than early: the journal's clock decides what is due.
    const timer = setTimeout(() => {
      wakeTimers.delete(timer);
      poll();
    }, afterMs + 5);
    timer.unref();
    wakeTimers.add(timer);
  }

  const ticker = setInterval(poll, options.pollIntervalMs);
  ticker.unref();
  // Outcomes left by a process that stopped are due already.
  poll();

  return {
    expect(providerMessageId, events) {
      recorded.set(providerMessageId, true);
      for (const event of events) wake(event.dueInMs);
    },
    async settled() {
      while (!stopped && (await journal.pending([...recorded.keys()])) > 0) {
        poll();
        await sleep(Math.min(options.pollIntervalMs, 20));
      }
    },
    async stop() {
      stopped = true;
      clearInterval(ticker);
      for (const timer of wakeTimers) clearTimeout(timer);
      wakeTimers.clear();
      await running;
    },
  };
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
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
