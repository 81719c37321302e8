import { setTimeout as sleep } from "node:timers/promises";

/**
 * The client side of the chaos suite: a steady stream of POST
 * /mail/v1/send, each with its own Idempotency-Key, retried with the same
 * key and the same body as the spec's retry guidance says (429 and 5xx,
 * and here also network errors and timeouts) until the service answers.
 * Some requests are cut short on purpose (a client timeout of a few
 * milliseconds: the service may well have accepted the message, the
 * client never learns it), and some keys are sent once more after their
 * 202, as a client that lost the answer would. The choices come from a
 * seeded generator, so runs differ only by timing.
 */

/** What the simulator does with the recipient (its magic local parts), and so the message's expected end. */
export type Behaviour = "deliver" | "bounce" | "reject" | "transient";

export interface SendRecord {
  readonly key: string;
  readonly behaviour: Behaviour;
  readonly body: string;
  /** Every message id the service answered for this key: one, or a second message was made. */
  readonly ids: Set<string>;
  /** HTTP requests made with this key. */
  requests: number;
  /** Requests repeated after an error, a timeout or a 409 "still in progress". */
  retries: number;
  /** Requests repeated on purpose after a 202. */
  repeats: number;
  /** Answers with `replayed: true`. */
  replayed: number;
  accepted: boolean;
  /** An answer that is neither a 202 nor worth retrying, or no answer before giving up. */
  failure?: string;
}

export interface SendStreamOptions {
  readonly baseUrl: string;
  readonly secret: string;
  /** Senders working at once. */
  readonly lanes: number;
  /** Pause of each lane between two keys. */
  readonly pauseMs: number;
  readonly seed: number;
  /** How long one key may take, retries included, before the stream gives up on it (a failure). */
  readonly giveUpMs: number;
  /**
   * Asked before each new key: false holds the lanes back (polled every
   * 200 ms). Keeps the work under way bounded, so the stream adapts to how
   * fast the machine finishes messages instead of piling up a backlog on a
   * slow or busy one.
   */
  readonly mayStartNext?: () => boolean;
}

/** mulberry32: a small seeded generator, enough to make the mix repeatable. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const REQUEST_TIMEOUT_MS = 10_000;
/** Share of keys whose first request is cut short by the client. */
const CUT_SHORT = 0.1;
/** Share of accepted keys sent once more. */
const REPEATED = 0.15;

type Attempt =
  | { readonly kind: "answer"; readonly id: string; readonly replayed: boolean }
  | { readonly kind: "retry"; readonly reason: string; readonly waitMs?: number }
  | { readonly kind: "final"; readonly reason: string };

export class SendStream {
  readonly records: SendRecord[] = [];
  /** Why requests were retried, e.g. "503", "network", "client timeout". */
  readonly retryReasons = new Map<string, number>();
  /** Requests sent and not answered yet. */
  inFlight = 0;
  readonly #options: SendStreamOptions;
  readonly #random: () => number;
  #running = false;
  #lanes: Promise<void>[] = [];
  #next = 0;

  constructor(options: SendStreamOptions) {
    this.#options = options;
    this.#random = seeded(options.seed);
  }

  start(): void {
    this.#running = true;
    this.#lanes = Array.from({ length: this.#options.lanes }, (_, lane) => this.#lane(lane));
  }

  /** No new keys; the ones under way are finished (answered or given up). */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#lanes);
  }

  get accepted(): number {
    return this.records.filter((r) => r.accepted).length;
  }

  #behaviour(): Behaviour {
    const roll = this.#random();
    if (roll < 0.1) return "bounce";
    if (roll < 0.2) return "reject";
    if (roll < 0.25) return "transient";
    return "deliver";
  }

  async #lane(lane: number): Promise<void> {
    while (this.#running) {
      if (this.#options.mayStartNext && !this.#options.mayStartNext()) {
        await sleep(200);
        continue;
      }
      const n = this.#next++;
      const behaviour = this.#behaviour();
      const local = behaviour === "deliver" ? "delivered" : behaviour;
      const record: SendRecord = {
        key: `chaos-${this.#options.seed}-${n}`,
        behaviour,
        // A distinct address per message: a bounce suppresses its address, which must not touch the next message.
        body: JSON.stringify({
          to: `${local}+${n}@chaos.example`,
          subject: `Chaos ${n}`,
          html: `<p>Message ${n} of lane ${lane}</p>`,
          tags: { lane: String(lane) },
        }),
        ids: new Set(),
        requests: 0,
        retries: 0,
        repeats: 0,
        replayed: 0,
        accepted: false,
      };
      this.records.push(record);
      await this.#untilAnswered(record, this.#random() < CUT_SHORT);
      if (record.accepted && this.#random() < REPEATED) {
        record.repeats++;
        await this.#untilAnswered(record, false);
      }
      await sleep(this.#options.pauseMs);
    }
  }

  async #untilAnswered(record: SendRecord, cutShortFirst: boolean): Promise<void> {
    const deadline = Date.now() + this.#options.giveUpMs;
    let backoffMs = 100;
    for (let first = true; ; first = false) {
      // A few milliseconds: long enough for the request to leave, too short for the answer to come back.
      const timeoutMs = first && cutShortFirst ? 2 + Math.floor(this.#random() * 40) : REQUEST_TIMEOUT_MS;
      if (!first) record.retries++;
      const attempt = await this.#once(record, timeoutMs);
      if (attempt.kind === "answer") {
        record.ids.add(attempt.id);
        record.accepted = true;
        if (attempt.replayed) record.replayed++;
        return;
      }
      if (attempt.kind === "final") {
        record.failure = attempt.reason;
        return;
      }
      this.retryReasons.set(attempt.reason, (this.retryReasons.get(attempt.reason) ?? 0) + 1);
      if (Date.now() > deadline) {
        record.failure = `no answer within ${this.#options.giveUpMs} ms (last: ${attempt.reason})`;
        return;
      }
      await sleep(attempt.waitMs ?? backoffMs);
      backoffMs = Math.min(2_000, backoffMs * 2);
    }
  }

  async #once(record: SendRecord, timeoutMs: number): Promise<Attempt> {
    record.requests++;
    let response: Response;
    let text: string;
    this.inFlight++;
    try {
      response = await fetch(new URL("/mail/v1/send", this.#options.baseUrl), {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.#options.secret}`,
          "content-type": "application/json",
          "idempotency-key": record.key,
        },
        body: record.body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      return { kind: "retry", reason: name === "TimeoutError" ? "client timeout" : "network error" };
    } finally {
      this.inFlight--;
    }
    if (response.status === 202) {
      const answer = JSON.parse(text) as { id: string; replayed?: boolean };
      return { kind: "answer", id: answer.id, replayed: answer.replayed === true };
    }
    const retryAfter = Number(response.headers.get("retry-after"));
    const waitMs = retryAfter > 0 ? Math.min(retryAfter, 3) * 1_000 : undefined;
    if (response.status === 429 || response.status >= 500) {
      return { kind: "retry", reason: String(response.status), ...(waitMs !== undefined ? { waitMs } : {}) };
    }
    // The same key still held by a request the service has not answered (e.g. one cut off by an API crash).
    if (response.status === 409 && text.includes("still in progress")) {
      return { kind: "retry", reason: "409 in progress", ...(waitMs !== undefined ? { waitMs } : {}) };
    }
    return { kind: "final", reason: `${response.status} ${text.slice(0, 300)}` };
  }
}
