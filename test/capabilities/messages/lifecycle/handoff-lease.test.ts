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
import type { CreditsPort, SigningKeysPort } from "../../../../src/capabilities/messages/lifecycle/ports.ts";
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

/** Something a stalled attempt waits on: `reached` once it got there, on until `resume()`. */
function stall(): { reached: Promise<void>; arrive(): void; resumed: Promise<void>; resume(): void } {
  let arrive = (): void => {};
  let resume = (): void => {};
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  return { reached, arrive, resumed, resume };
}

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
const SIGNING_KEYS: SigningKeysPort = {
  resolveSender: async () => ({ dkim: { domainName: "shop.example", keySelector: "mail", privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString() } }),
};

describe("the handoff lease: one attempt at a time talks to the relay", () => {
  let h: LifecycleHarness;
  let sink: SmtpSink;
  const providers: EmailProvider[] = [];

  /** A worker process: its own SMTP pool (unless given another provider), the shared database. */
  function worker(options: { store?: MessageStore; handoffLeaseMs?: number; provider?: EmailProvider; credits?: CreditsPort } = {}): MessageLifecycle {
    const provider =
      options.provider ?? createSmtpProvider({ host: "127.0.0.1", port: sink.port, secure: false, ignoreTLS: true, messageIdDomain: MESSAGE_ID_DOMAIN });
    providers.push(provider);
    return new MessageLifecycle({
      store: options.store ?? h.store,
      provider,
      credits: options.credits ?? new TestCredits(),
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
    expect(await h.store.claimHandoff(companyId, messageId, 300)).toMatchObject({ claimed: true });
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
  describe("a stalled attempt past its lease, and the attempt that took over", () => {
    /**
     * The store of a worker whose database calls of the lease hang (a paused
     * process, a stuck connection) until `stalled.resume()`; `renewals`
     * counts the renewals that went through since.
     */
    function stalledLeaseStore(stalled: ReturnType<typeof stall>): MessageStore & { renewals: number } {
      return new (class extends PostgresMessageStore {
        renewals = 0;
        override async renewHandoff(...args: Parameters<MessageStore["renewHandoff"]>): ReturnType<MessageStore["renewHandoff"]> {
          await stalled.resumed;
          try {
            return await super.renewHandoff(...args);
          } finally {
            this.renewals++;
          }
        }
        override async releaseHandoff(...args: Parameters<MessageStore["releaseHandoff"]>): ReturnType<MessageStore["releaseHandoff"]> {
          await stalled.resumed;
          return super.releaseHandoff(...args);
        }
      })(h.pool);
    }
    /** An email service that holds the attempt until `stalled.resume()`, then answers `outcome`. */
    function stalledProvider(stalled: ReturnType<typeof stall>, outcome: "failed_transient" | "rejected"): EmailProvider {
      return {
        name: "smtp",
        async send() {
          stalled.arrive();
          await stalled.resumed;
          return outcome === "rejected"
            ? { outcome, permanent: true, reason: "550 5.7.1 refused" }
            : { outcome, reason: "421 4.4.2 connection timed out" };
        },
        close: async () => {},
      };
    }
    const leaseEnds = () => new Promise((resolve) => setTimeout(resolve, 400));
    const atRelay = (messageId: string) =>
      expect.poll(() => sink.unanswered().some((t) => t.messageId.startsWith(messageId)), { timeout: 20_000, interval: 10 }).toBe(true);

    it("the store renews and releases a lease only for the token its claim stored", async () => {
      const { companyId, messageId } = await h.queue("radia@customer.example");
      const a = await h.store.claimHandoff(companyId, messageId, 200);
      if (!a.claimed) throw new Error("not claimed");
      await leaseEnds();
      const b = await h.store.claimHandoff(companyId, messageId, 60_000);
      if (!b.claimed) throw new Error("not claimed");
      expect(b.token).not.toBe(a.token);
      expect(await h.store.renewHandoff(companyId, messageId, a.token, 60_000)).toBe(false);
      await h.store.releaseHandoff(companyId, messageId, a.token);
      expect(await h.store.claimHandoff(companyId, messageId, 60_000)).toMatchObject({ claimed: false, status: "processing" });
      expect(await h.store.renewHandoff(companyId, messageId, b.token, 60_000)).toBe(true);
      await h.store.releaseHandoff(companyId, messageId, b.token);
      expect(await h.store.claimHandoff(companyId, messageId, 60_000)).toMatchObject({ claimed: true });
    });

    it("renews and releases after the other took over: the other's lease stands and a third attempt waits; one copy", async () => {
      const { companyId, messageId } = await h.queue("barbara@customer.example");
      const [database, relay] = [stall(), stall()];
      // Worker A: at the relay, and neither its renewals nor its relay's answer get through, past its 300 ms lease.
      const store = stalledLeaseStore(database);
      const a = worker({ store, provider: stalledProvider(relay, "failed_transient"), handoffLeaseMs: 300 });
      const first = a.attemptHandOff({ companyId, messageId, provider: "smtp" }).catch((error: unknown) => error);
      await relay.reached;
      await leaseEnds();
      // Temporal gave the message to worker B, which claims the lease and is at the relay.
      const second = worker().attemptHandOff({ companyId, messageId, provider: "smtp" });
      await atRelay(messageId);

      // A comes back: its renewals run, then the relay turns it away and it lets go of "its" lease.
      database.resume();
      await expect.poll(() => store.renewals, { timeout: 5_000, interval: 10 }).toBeGreaterThan(0);
      relay.resume();
      expect(await first).toBeInstanceOf(TransientHandoffError);
      // B's lease is intact: a third attempt waits for it instead of sending a second copy.
      const third = await worker().attemptHandOff({ companyId, messageId, provider: "smtp" }).catch((error: unknown) => error);
      expect(third).toBeInstanceOf(HandoffInProgressError);

      expect(await second).toEqual({ status: "sent", waitMs: 0 });
      expect(await worker().attemptHandOff({ companyId, messageId, provider: "smtp" })).toEqual({ status: "sent", waitMs: 0 });
      expect(copiesOf(messageId)).toBe(1);
    });

    it("an attempt that stalled before the relay and lost its lease does not send", async () => {
      const { companyId, messageId } = await h.queue("frances@customer.example");
      const stalled = stall();
      // Worker A claims, then hangs charging the credit (its lease's renewals with it), past its 300 ms lease.
      class StalledCredits extends TestCredits {
        override async chargeForMessage(command: { readonly messageId: string }): Promise<"charged" | "already_charged"> {
          stalled.arrive();
          await stalled.resumed;
          return super.chargeForMessage(command);
        }
      }
      const first = worker({ store: stalledLeaseStore(stalled), credits: new StalledCredits(), handoffLeaseMs: 300 })
        .attemptHandOff({ companyId, messageId, provider: "smtp" })
        .catch((error: unknown) => error);
      await stalled.reached;
      await leaseEnds();
      const second = worker().attemptHandOff({ companyId, messageId, provider: "smtp" });
      await atRelay(messageId);

      // A comes back while B is at the relay: it finds the lease B's and stays away from the relay.
      stalled.resume();
      expect(await first).toBeInstanceOf(HandoffInProgressError);
      expect(await second).toEqual({ status: "sent", waitMs: 0 });
      expect(copiesOf(messageId)).toBe(1);
    });

    it("a rejection that comes back after the lease was lost is not recorded: the holder's answer stands", async () => {
      const { companyId, messageId } = await h.queue("kathleen@customer.example");
      const [database, relay] = [stall(), stall()];
      const credits = new TestCredits();
      const store = stalledLeaseStore(database);
      const a = worker({ store, provider: stalledProvider(relay, "rejected"), credits, handoffLeaseMs: 300 });
      const first = a.attemptHandOff({ companyId, messageId, provider: "smtp" }).catch((error: unknown) => error);
      await relay.reached;
      await leaseEnds();
      const second = worker({ credits }).attemptHandOff({ companyId, messageId, provider: "smtp" });
      await atRelay(messageId);

      // A comes back: its renewals run, then its relay's 550 arrives.
      database.resume();
      await expect.poll(() => store.renewals, { timeout: 5_000, interval: 10 }).toBeGreaterThan(0);
      relay.resume();
      expect(await first).toBeInstanceOf(HandoffInProgressError);
      // The relay took B's copy: the message is sent, and its credit stays charged.
      expect(await second).toEqual({ status: "sent", waitMs: 0 });
      expect((await h.store.load(companyId, messageId))?.status).toBe("sent");
      expect(credits.refunded.has(messageId)).toBe(false);
      expect(copiesOf(messageId)).toBe(1);
    });
  });
});
