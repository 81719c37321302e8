import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { webhookBody } from "./delivery-attempt.ts";
import { checkEvents } from "./endpoints.ts";
import { isWebhookEventName, WEBHOOK_EVENT_NAMES, type WebhookEventName } from "./events.ts";
import type { FeedEnd, LiveEventFeed, LiveEventListener, OutboxEvent, TestEventRecorder } from "./ports.ts";
import { exampleData } from "./test-events.ts";

/**
 * A company's events, live (what `mailctl listen` forwards to a receiver on
 * a developer's machine, as `stripe listen` does): the events of the
 * webhook outbox, from the same rows real deliveries are made from, as
 * they are committed, each with the exact body a delivery of it carries.
 * The client pulls; the service never connects to it, and signs nothing:
 * the client signs each body with a secret of its own, so no secret of a
 * stream ever reaches the service.
 *
 * Bounds: a few streams per company at once (over every process: the feed
 * counts them), each for at most an hour, with a keep-alive after every
 * quiet interval (so that proxies and the client both know it is alive),
 * and a backlog per stream beyond which a client that does not read is cut
 * off rather than buffered for.
 *
 * `trigger` records a test event (the example data of "Send test event")
 * in the outbox: the streams see it like any event; the company's
 * endpoints only when asked.
 */

export interface LiveStreamLimits {
  /** Streams of one company open at once, over every process. */
  readonly perCompany: number;
  /** A stream ends (`max_duration`) this long after it opened. */
  readonly maxDurationMs: number;
  /** The longest quiet time on a stream: a keep-alive follows it. */
  readonly keepAliveMs: number;
  /** Events waiting for a slow client; one more ends its stream (`interrupted`). */
  readonly backlog: number;
}

export const DEFAULT_LIVE_STREAM_LIMITS: LiveStreamLimits = {
  perCompany: 5,
  maxDurationMs: 60 * 60 * 1000,
  // Under the listeners' idle timeouts (75 s) and the usual load balancer's (60 s).
  keepAliveMs: 25_000,
  backlog: 1_000,
};

export type LiveStreamEnd = "max_duration" | FeedEnd;

/** One message of a stream. */
export type LiveStreamItem =
  | { readonly kind: "ready"; readonly expiresAt: Date; readonly keepAliveSeconds: number; readonly events: readonly WebhookEventName[] }
  | {
      readonly kind: "event";
      /** The outbox id of the event: the body's `id`. */
      readonly id: string;
      readonly event: WebhookEventName;
      readonly occurredAt: Date;
      /** `{ id, event, occurredAt, data }`, the exact bytes to sign. */
      readonly body: string;
    }
  | { readonly kind: "keep_alive"; readonly at: Date }
  | { readonly kind: "end"; readonly reason: LiveStreamEnd };

export interface StreamEventsCommand {
  readonly companyId: string;
  /** Only these kinds; empty: every kind. */
  readonly events: readonly string[];
  /** Aborted when the client goes away: the stream ends at once. */
  readonly signal?: AbortSignal;
}

export interface TriggerTestEventCommand {
  readonly companyId: string;
  readonly event: string;
  /** Also to the company's subscribed endpoints (a recorded delivery each). */
  readonly endpoints: boolean;
}

export interface TriggeredTestEvent {
  readonly id: string;
  readonly event: WebhookEventName;
  readonly occurredAt: Date;
  readonly endpoints: boolean;
}

export interface LiveEventsDependencies {
  readonly feed: LiveEventFeed;
  readonly recorder: TestEventRecorder;
  readonly limits?: Partial<LiveStreamLimits>;
  readonly clock?: () => Date;
}

export class LiveEvents {
  readonly #feed: LiveEventFeed;
  readonly #recorder: TestEventRecorder;
  readonly #limits: LiveStreamLimits;
  readonly #clock: () => Date;

  constructor(deps: LiveEventsDependencies) {
    this.#feed = deps.feed;
    this.#recorder = deps.recorder;
    this.#limits = { ...DEFAULT_LIVE_STREAM_LIMITS, ...deps.limits };
    this.#clock = deps.clock ?? (() => new Date());
  }

  /**
   * The company's events from now on: `ready` first, then its events of the
   * kinds asked for, keep-alives in the quiet, and `end` last. Refusals
   * (bad kinds, every place taken, shutting down) are thrown at the first
   * step, before `ready`.
   */
  async *stream(command: StreamEventsCommand): AsyncGenerator<LiveStreamItem, void, undefined> {
    const problems: FieldProblem[] = [];
    const kinds = checkEvents(command.events, problems, false) ?? [...WEBHOOK_EVENT_NAMES];
    if (problems.length > 0) throw new ValidationError(problems);
    const limits = this.#limits;
    const inbox = new StreamInbox(new Set(kinds), limits.backlog);
    const subscription = await this.#feed.subscribe(command.companyId, limits.perCompany, inbox);
    if (subscription === "full") {
      throw new ApiError(
        "RATE_LIMITED",
        `The company has ${limits.perCompany} event streams open already (mailctl listen), the most at once: stop one and retry.`,
      );
    }
    if (subscription === "closed") throw new ApiError("SERVICE_UNAVAILABLE", "The service is shutting down; open the stream again shortly.");
    try {
      const expiresAt = new Date(this.#clock().getTime() + limits.maxDurationMs);
      yield { kind: "ready", expiresAt, keepAliveSeconds: Math.round(limits.keepAliveMs / 1000), events: kinds };
      for (;;) {
        const remainingMs = expiresAt.getTime() - this.#clock().getTime();
        if (remainingMs <= 0) {
          yield { kind: "end", reason: "max_duration" };
          return;
        }
        const woken = await inbox.wait(Math.min(limits.keepAliveMs, remainingMs), command.signal);
        if (command.signal?.aborted) return;
        for (const event of inbox.take()) yield eventItem(event);
        const ended = inbox.endReason;
        if (ended) {
          yield { kind: "end", reason: ended };
          return;
        }
        if (!woken && remainingMs > limits.keepAliveMs) yield { kind: "keep_alive", at: this.#clock() };
      }
    } finally {
      await subscription.close();
    }
  }

  /** Records a test event of one kind for the company; the streams see it, the endpoints only with `endpoints`. */
  async trigger(command: TriggerTestEventCommand): Promise<TriggeredTestEvent> {
    const { event } = command;
    if (!isWebhookEventName(event)) throw new ValidationError([{ field: "event", problem: "is not an event name" }]);
    const occurredAt = this.#clock();
    const recorded = await this.#recorder.record(command.companyId, { event, occurredAt, data: exampleData(event, occurredAt) }, command.endpoints);
    if (!recorded) throw new ApiError("NOT_FOUND", "No such company.");
    return { id: recorded.id, event, occurredAt, endpoints: command.endpoints };
  }
}

function eventItem(event: OutboxEvent): LiveStreamItem {
  return {
    kind: "event",
    id: event.id,
    event: event.event,
    occurredAt: event.occurredAt,
    body: webhookBody({ id: event.id, event: event.event, occurredAt: event.occurredAt, data: event.data }),
  };
}

/** What the feed hands one stream, until the stream takes it. */
class StreamInbox implements LiveEventListener {
  readonly #kinds: ReadonlySet<string>;
  readonly #backlog: number;
  #events: OutboxEvent[] = [];
  #ended: FeedEnd | undefined;
  #wake: (() => void) | undefined;

  constructor(kinds: ReadonlySet<string>, backlog: number) {
    this.#kinds = kinds;
    this.#backlog = backlog;
  }

  events(events: readonly OutboxEvent[]): void {
    if (this.#ended) return;
    const wanted = events.filter((event) => this.#kinds.has(event.event));
    if (wanted.length === 0) return;
    this.#events.push(...wanted);
    // A client that does not read is cut off, never buffered for without end.
    if (this.#events.length > this.#backlog) {
      this.#events = [];
      this.#ended = "interrupted";
    }
    this.#wake?.();
  }

  ended(reason: FeedEnd): void {
    this.#ended ??= reason;
    this.#wake?.();
  }

  /** Why the feed ended the subscription, once it has. */
  get endReason(): FeedEnd | undefined {
    return this.#ended;
  }

  take(): OutboxEvent[] {
    const taken = this.#events;
    this.#events = [];
    return taken;
  }

  /** Waits until there is something to take, the end, the signal or `ms`; true unless `ms` passed first. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.#events.length > 0 || this.#ended || signal?.aborted) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#wake = undefined;
        resolve(woken);
      };
      const onAbort = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.#wake = () => done(true);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
