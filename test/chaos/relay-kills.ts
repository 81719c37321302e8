import { setTimeout as sleep } from "node:timers/promises";
import type { SinkTransaction, SmtpSink } from "../support/smtp-sink.ts";
import type { ServiceChild } from "./service-child.ts";

/**
 * What the relay chaos runs share: killing a worker while the SMTP sink
 * holds one of its transactions open, and reading the sink's books (each
 * Message-ID with its copies, and whether a second copy goes back to a
 * transaction in flight at a kill).
 */

/** A 250 answered this long before a SIGKILL was recorded by the worker that read it (it takes one statement). */
export const RECORD_GRACE_MS = 250;

export interface Kill {
  readonly worker: string;
  readonly at: number;
  /** The killed worker's transactions the sink had not answered at the kill. */
  readonly open: readonly SinkTransaction[];
}

export interface RelayWorkers {
  readonly sink: SmtpSink;
  /** The worker processes by name. */
  readonly workers: ReadonlyMap<string, ServiceChild>;
  /** The EHLO name each worker announces, so the sink knows who sent what. */
  readonly ehloOf: (worker: string) => string;
  /** How long the sink holds a slow transaction. */
  readonly slowMs: number;
  /** Throws when a child process exited on its own. */
  readonly assertAlive: () => void;
}

/**
 * Waits until the sink holds a slow transaction open, then SIGKILLs the
 * worker that sent it (the one named `prefer` when both have one).
 */
export async function killInTransaction(relay: RelayWorkers, prefer: string, earlier: readonly Kill[]): Promise<Kill> {
  const { sink, workers, ehloOf } = relay;
  const deadline = Date.now() + 60_000;
  for (;;) {
    relay.assertAlive();
    const held = sink.unanswered().filter((t) => t.slow && Date.now() - t.dataAt < relay.slowMs - 300);
    const target = held.find((t) => t.client === ehloOf(prefer)) ?? held[0];
    if (target) {
      const worker = [...workers.keys()].find((w) => ehloOf(w) === target.client) ?? prefer;
      const child = workers.get(worker);
      if (!child) throw new Error(`no worker ${worker}`);
      // Those cut off by an earlier kill stay unanswered for good: not this kill's.
      const open = sink.unanswered().filter((t) => t.client === target.client && !earlier.some((k) => k.open.includes(t)));
      const at = Date.now();
      await child.kill();
      return { worker, at, open };
    }
    if (Date.now() > deadline) throw new Error("no slow SMTP transaction was open within 60 s");
    await sleep(5);
  }
}

/** Every Message-ID received, with each copy's transaction, in arrival order. */
export function copiesByMessageId(sink: SmtpSink): Map<string, SinkTransaction[]> {
  const copies = new Map<string, SinkTransaction[]>();
  for (const t of sink.transactions) copies.set(t.messageId, [...(copies.get(t.messageId) ?? []), t]);
  return copies;
}

/** The kill a first copy was in flight at: not yet answered, or answered less than RECORD_GRACE_MS before it. */
export function inFlightAt(kills: readonly Kill[], ehloOf: (worker: string) => string, first: SinkTransaction): Kill | undefined {
  return kills.find((k) => first.client === ehloOf(k.worker) && first.dataAt <= k.at && (first.answeredAt === undefined || first.answeredAt > k.at - RECORD_GRACE_MS));
}

/** From each kill to the second copy of each transaction that was open at it, in ms. */
export function takeovers(kills: readonly Kill[], copies: ReadonlyMap<string, readonly SinkTransaction[]>): number[] {
  return kills.flatMap((k) =>
    k.open.flatMap((t) => {
      const again = copies.get(t.messageId)?.find((c) => c !== t && c.dataAt > k.at);
      return again ? [again.dataAt - k.at] : [];
    }),
  );
}
