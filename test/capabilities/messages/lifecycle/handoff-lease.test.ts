import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresMessageStore } from "../../../../src/adapters/postgres/messages/message-store.ts";
import { createSmtpProvider } from "../../../../src/adapters/email/smtp-provider.ts";
import type { EmailProvider } from "../../../../src/capabilities/messages/email-provider.ts";
import {
  HandoffInProgressError,
  MessageLifecycle,
  TransientHandoffError,
} from "../../../../src/capabilities/messages/lifecycle/message-lifecycle.ts";
import type { SigningKeysPort } from "../../../../src/capabilities/messages/lifecycle/ports.ts";
import type { MessageStore } from "../../../../src/capabilities/messages/ports.ts";
import { type SmtpSink, startSmtpSink } from "../../../support/smtp-sink.ts";
import { type LifecycleHarness, OPEN_PACE, startLifecycleHarness, TestCredits, TestSuppressions } from "./harness.ts";

/**
 * The handoff lease, counted at a real SMTP server: two
 * worker processes (two lifecycles, each with its own SMTP connection pool)
 * on one database, and a relay that answers each message 2 s after its
 * final ".". Without the lease, the second attempt of a message whose first
 * attempt is still talking to the relay sends a second copy.
 */
const MESSAGE_ID_DOMAIN = "lease.test";

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
const SIGNING_KEYS: SigningKeysPort = {
  resolveSender: async () => ({ dkim: { domainName: "shop.example", keySelector: "mail", privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString() } }),
};

describe("the handoff lease: one attempt at a time talks to the relay", () => {
  let h: LifecycleHarness;
  let sink: SmtpSink;
  const providers: EmailProvider[] = [];

  /** A worker process: its own SMTP pool, the shared database. */
  function worker(options: { store?: MessageStore; handoffLeaseMs?: number } = {}): MessageLifecycle {
    const provider = createSmtpProvider({ host: "127.0.0.1", port: sink.port, secure: false, ignoreTLS: true, messageIdDomain: MESSAGE_ID_DOMAIN });
    providers.push(provider);
    return new MessageLifecycle({
      store: options.store ?? h.store,
      provider,
      credits: new TestCredits(),
      suppressions: new TestSuppressions(),
      signingKeys: SIGNING_KEYS,
      pace: OPEN_PACE,
      ...(options.handoffLeaseMs !== undefined ? { handoffLeaseMs: options.handoffLeaseMs } : {}),
    });
  }
  const copiesOf = (messageId: string): number => sink.transactions.filter((t) => t.messageId === `${messageId}@${MESSAGE_ID_DOMAIN}`).length;

  beforeAll(async () => {
    [h, sink] = await Promise.all([startLifecycleHarness(), startSmtpSink({ slowEvery: 1, slowMs: 2_000 })]);
  });
  afterAll(async () => {
    await Promise.all(providers.map((p) => p.close()));
    await sink?.close();
    await h?.close();
  });

  it("a second attempt while the first is at the relay waits for it, then finds the message sent: one copy", async () => {
    const { companyId, messageId } = await h.queue("ada@customer.example");
    const [a, b] = [worker(), worker()];
    const first = a.attemptHandOff({ companyId, messageId, provider: "smtp" });
    await expect.poll(() => sink.unanswered().some((t) => t.messageId.startsWith(messageId)), { timeout: 20_000, interval: 10 }).toBe(true);

    // Temporal took worker A for dead (or its attempt timed out) and gave the message to worker B.
    const second = await b.attemptHandOff({ companyId, messageId, provider: "smtp" }).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(HandoffInProgressError);
    expect((second as HandoffInProgressError).retryInMs).toBeGreaterThan(0);

    expect(await first).toEqual({ status: "sent", waitMs: 0 });
    // B's retry, after the lease: the message is sent, nothing is handed over again.
    expect(await b.attemptHandOff({ companyId, messageId, provider: "smtp" })).toEqual({ status: "sent", waitMs: 0 });
    expect(copiesOf(messageId)).toBe(1);
  });

  it("the lease of a worker that died ends on its own: the next attempt sends without waiting for an operator", async () => {
    const { companyId, messageId } = await h.queue("grace@customer.example");
    // A worker claimed the message and died before it reached the relay.
    expect(await h.store.claimHandoff(companyId, messageId, 300)).toEqual({ claimed: true });
    const b = worker();
    expect(await b.attemptHandOff({ companyId, messageId, provider: "smtp" }).catch((error: unknown) => error)).toBeInstanceOf(HandoffInProgressError);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await b.attemptHandOff({ companyId, messageId, provider: "smtp" })).toEqual({ status: "sent", waitMs: 0 });
    expect(copiesOf(messageId)).toBe(1);
  });

  it("the database fails as the relay's 250 is recorded: the attempt keeps trying instead of failing into a retry that sends again", async () => {
    const { companyId, messageId } = await h.queue("alan@customer.example");
    let failures = 1;
    // The store of a worker whose database connection breaks once, right when `sent` is recorded.
    class FlakyStore extends PostgresMessageStore {
      override async move(...args: Parameters<MessageStore["move"]>): ReturnType<MessageStore["move"]> {
        if (args[2].to === "sent" && failures > 0) {
          failures--;
          throw new Error("Connection terminated unexpectedly");
        }
        return super.move(...args);
      }
    }
    const flaky = new FlakyStore(h.pool);
    expect(await worker({ store: flaky }).attemptHandOff({ companyId, messageId, provider: "smtp" })).toEqual({ status: "sent", waitMs: 0 });
    expect(failures).toBe(0);
    expect(copiesOf(messageId)).toBe(1);
  });

  it("an attempt the relay turned away lets its lease go: the retry goes at once", async () => {
    const { companyId, messageId } = await h.queue("edsger@customer.example");
    let calls = 0;
    const busy: EmailProvider = {
      name: "smtp",
      send: async () => (++calls === 1 ? { outcome: "failed_transient", reason: "451 4.3.0 try again later" } : { outcome: "accepted", providerMessageId: `${messageId}@${MESSAGE_ID_DOMAIN}` }),
      close: async () => {},
    };
    const lifecycle = new MessageLifecycle({ store: h.store, provider: busy, credits: new TestCredits(), suppressions: new TestSuppressions(), signingKeys: SIGNING_KEYS, pace: OPEN_PACE });
    const failed = await lifecycle.attemptHandOff({ companyId, messageId, provider: "smtp" }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TransientHandoffError);
    expect(failed).not.toBeInstanceOf(HandoffInProgressError);
    expect(await lifecycle.attemptHandOff({ companyId, messageId, provider: "smtp" })).toEqual({ status: "sent", waitMs: 0 });
    expect(calls).toBe(2);
  });
});
