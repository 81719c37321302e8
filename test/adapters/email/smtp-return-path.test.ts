import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSmtpProvider } from "../../../src/adapters/email/smtp-provider.ts";
import type { EmailProvider } from "../../../src/capabilities/messages/email-provider.ts";

interface Envelope {
  readonly mailFrom: string;
  readonly mailArgs: Record<string, unknown>;
  readonly rcptArgs: Record<string, unknown>;
}

/** The VERP envelope sender and the DSN request, as a DSN-capable SMTP server receives them. */
describe("createSmtpProvider with a return path", () => {
  let server: SMTPServer;
  let provider: EmailProvider;
  const seen: Envelope[] = [];

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      // smtp-server offers DSN only when asked to (like Postfix does by default).
      hideDSN: false,
      logger: false,
      onData(stream, session, callback) {
        stream.resume();
        stream.on("end", () => {
          const { mailFrom, rcptTo } = session.envelope;
          seen.push({
            mailFrom: mailFrom === false ? "" : mailFrom.address,
            // smtp-server keeps the DSN parameters apart from the other ones.
            mailArgs: (session.envelope as { dsn?: Record<string, unknown> }).dsn ?? {},
            rcptArgs: (rcptTo[0] as { dsn?: Record<string, unknown> } | undefined)?.dsn ?? {},
          });
          callback(null, "2.0.0 Ok");
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    provider = createSmtpProvider({
      host: "127.0.0.1",
      port: (server.server.address() as AddressInfo).port,
      secure: false,
      messageIdDomain: "mail.service.test",
      returnPath: (email) => (email.to.email.startsWith("plain") ? undefined : `b-${email.messageId.replaceAll("-", "")}@bounces.shop.example`),
    });
  });
  afterAll(async () => {
    await provider.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const send = (to: string) =>
    provider.send({ messageId: randomUUID(), companyId: "c", from: { email: "orders@shop.example" }, to: { email: to }, subject: "Hi", text: "x" });

  it("sends with the message's return path as MAIL FROM and asks for success and failure DSNs, headers only", async () => {
    expect((await send("alice@recipient.example")).outcome).toBe("accepted");
    const envelope = seen.at(-1);
    expect(envelope?.mailFrom).toMatch(/^b-[0-9a-f]{32}@bounces\.shop\.example$/);
    expect(envelope?.mailArgs).toMatchObject({ ret: "HDRS" });
    expect(envelope?.rcptArgs).toMatchObject({ notify: ["SUCCESS", "FAILURE"] });
  });

  it("without a return path: the From address, and no DSN request", async () => {
    expect((await send("plain@recipient.example")).outcome).toBe("accepted");
    const envelope = seen.at(-1);
    expect(envelope?.mailFrom).toBe("orders@shop.example");
    expect(envelope?.rcptArgs).not.toHaveProperty("notify");
  });
});
