import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSmtpProvider } from "../../../src/adapters/email/smtp-provider.ts";
import type { EmailProvider, OutgoingEmail } from "../../../src/capabilities/messages/email-provider.ts";

function email(overrides: Partial<OutgoingEmail> = {}): OutgoingEmail {
  return {
    messageId: randomUUID(),
    companyId: "company-1",
    from: { email: "orders@shop.example" },
    to: { email: "alice@recipient.example" },
    subject: "Your receipt",
    text: "Thanks for your order",
    ...overrides,
  };
}

/**
 * A relay that, when told to, takes a message's DATA and then never answers
 * it, the way an overloaded or broken relay can. A message counts as
 * delivered only once the relay said 250 to it; a transaction the client
 * walks away from before that is dropped, as an MTA does.
 */
describe("the SMTP adapter against a relay that stalls", () => {
  let server: SMTPServer;
  let provider: EmailProvider;
  /** Message-IDs the relay said 250 to. */
  let delivered: string[];
  /** Message-IDs whose DATA the relay received, answered or not. */
  let received: string[];
  /** Message-IDs whose transaction was still open when its connection closed. */
  let abandoned: string[];
  let stallNext: number;
  /** Transactions under way, for the connection that carries them. */
  const open = new Map<string, string>();

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          const messageId = /^Message-ID: <([^>]+)>/im.exec(Buffer.concat(chunks).toString("utf8"))?.[1] ?? "";
          received.push(messageId);
          if (stallNext > 0) {
            stallNext--;
            open.set(session.id, messageId);
            return; // never answers
          }
          delivered.push(messageId);
          callback(null, "2.0.0 Ok: queued");
        });
      },
      onClose(session) {
        const messageId = open.get(session.id);
        if (messageId !== undefined) abandoned.push(messageId);
        open.delete(session.id);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.server.address() as AddressInfo).port;
    provider = createSmtpProvider({
      host: "127.0.0.1",
      port,
      secure: false,
      ignoreTLS: true,
      messageIdDomain: "mail.service.test",
      pool: { maxConnections: 1 },
      timeouts: { handoffMs: 1_500 },
    });
  });

  beforeEach(() => {
    delivered = [];
    received = [];
    abandoned = [];
    stallNext = 0;
  });

  afterAll(async () => {
    await provider.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("gives up on a transaction the relay never answers, closes it, and the retry delivers the message once", async () => {
    const message = email();
    const providerMessageId = `${message.messageId}@mail.service.test`;
    stallNext = 1;

    const first = await provider.send(message);
    expect(first).toMatchObject({ outcome: "failed_transient", reason: expect.stringContaining("within 1500 ms") });
    // The relay sees the transaction end without a 250: it never delivers that copy.
    await expect.poll(() => abandoned).toEqual([providerMessageId]);

    expect(await provider.send(message)).toEqual({ outcome: "accepted", providerMessageId });
    expect(received).toEqual([providerMessageId, providerMessageId]);
    expect(delivered).toEqual([providerMessageId]);
  });

  it("bounds the wait for a pooled connection: a message queued behind a stalled one fails transiently without reaching the relay", async () => {
    const stalled = email();
    const queued = email();
    stallNext = 1;

    const [first, second] = await Promise.all([provider.send(stalled), provider.send(queued)]);
    expect(first.outcome).toBe("failed_transient");
    expect(second.outcome).toBe("failed_transient");
    expect(received).toEqual([`${stalled.messageId}@mail.service.test`]);

    // The pool recovers: both go through on their retries, once each.
    expect((await provider.send(stalled)).outcome).toBe("accepted");
    expect((await provider.send(queued)).outcome).toBe("accepted");
    expect(delivered.sort()).toEqual([`${stalled.messageId}@mail.service.test`, `${queued.messageId}@mail.service.test`].sort());
  });
});
