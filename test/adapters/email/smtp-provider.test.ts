import { generateKeyPairSync, randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findFreePort } from "../../../src/runtime/ports.ts";
import { classifySmtpFailure, createSmtpProvider } from "../../../src/adapters/email/smtp-provider.ts";
import type { EmailProvider, OutgoingEmail } from "../../../src/capabilities/messages/email-provider.ts";
import { checkDkim, splitMessage, unfold } from "./dkim-verify.ts";

interface Received {
  readonly mailFrom: string;
  readonly rcptTo: string[];
  readonly raw: string;
}

/** A reply code error the way smtp-server expects it from a handler. */
function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

function email(overrides: Partial<OutgoingEmail> = {}): OutgoingEmail {
  return {
    messageId: randomUUID(),
    companyId: "company-1",
    from: { email: "orders@shop.example", name: "Shop" },
    to: { email: "alice@recipient.example", name: "Alice" },
    subject: "Your receipt",
    html: "<p>Thanks for your order</p>",
    text: "Thanks for your order",
    ...overrides,
  };
}

/** Header values by lower-case name, unfolded; repeated headers keep every value. */
function headersOf(raw: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const field of splitMessage(raw).headers) {
    const name = field.name.toLowerCase();
    map.set(name, [...(map.get(name) ?? []), unfold(field.value)]);
  }
  return map;
}

describe("createSmtpProvider against a real SMTP server", () => {
  let server: SMTPServer;
  let port: number;
  let received: Received[];
  let provider: EmailProvider;

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onRcptTo(address, _session, callback) {
        // The recipient's local part scripts the server's answer.
        const local = address.address.split("@")[0];
        if (local === "nosuchuser") return callback(smtpError(550, "5.1.1 No such user"));
        if (local === "greylisted") return callback(smtpError(451, "4.7.1 Greylisted, try again later"));
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          const { mailFrom, rcptTo } = session.envelope;
          received.push({
            mailFrom: mailFrom === false ? "" : mailFrom.address,
            rcptTo: rcptTo.map((rcpt) => rcpt.address),
            raw: Buffer.concat(chunks).toString("utf8"),
          });
          callback(null, "2.0.0 Ok: queued as TESTQ1");
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.server.address() as AddressInfo).port;
    provider = createSmtpProvider({
      host: "127.0.0.1",
      port,
      secure: false,
      ignoreTLS: true,
      messageIdDomain: "mail.service.test",
    });
  });

  beforeEach(() => {
    received = [];
  });

  afterAll(async () => {
    await provider.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("hands over From, To, Subject, both parts and the deterministic Message-ID", async () => {
    const message = email({
      replyTo: "support@shop.example",
      headers: {
        "List-Unsubscribe": "<https://shop.example/u/1>",
        // Reserved headers must not override what the adapter sets.
        "Message-ID": "<spoofed@evil.example>",
        Bcc: "hidden@evil.example",
      },
    });

    const result = await provider.send(message);

    expect(result).toEqual({ outcome: "accepted", providerMessageId: `${message.messageId}@mail.service.test` });
    expect(received).toHaveLength(1);
    const [mail] = received;
    expect(mail?.mailFrom).toBe("orders@shop.example");
    expect(mail?.rcptTo).toEqual(["alice@recipient.example"]);

    const headers = headersOf(mail?.raw ?? "");
    expect(headers.get("message-id")).toEqual([`<${message.messageId}@mail.service.test>`]);
    expect(headers.get("from")).toEqual(["Shop <orders@shop.example>"]);
    expect(headers.get("to")).toEqual(["Alice <alice@recipient.example>"]);
    expect(headers.get("reply-to")).toEqual(["support@shop.example"]);
    expect(headers.get("subject")).toEqual(["Your receipt"]);
    expect(headers.get("list-unsubscribe")).toEqual(["<https://shop.example/u/1>"]);
    expect(headers.has("bcc")).toBe(false);
    expect(headers.get("content-type")?.[0]).toMatch(/^multipart\/alternative;/);

    const body = splitMessage(mail?.raw ?? "").body;
    expect(body).toMatch(/Content-Type: text\/plain; charset=utf-8\r\n[\s\S]*Thanks for your order/);
    expect(body).toMatch(/Content-Type: text\/html; charset=utf-8\r\n[\s\S]*<p>Thanks for your order<\/p>/);
  });

  it("signs with DKIM when a key is given, and the signature verifies", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const message = email({
      dkim: {
        domainName: "shop.example",
        keySelector: "mail2025",
        privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      },
    });

    expect(await provider.send(message)).toMatchObject({ outcome: "accepted" });

    const raw = received[0]?.raw ?? "";
    const signatures = headersOf(raw).get("dkim-signature") ?? [];
    expect(signatures).toHaveLength(1);
    expect(signatures[0]).toMatch(/(^|; )d=shop\.example;/);
    expect(signatures[0]).toMatch(/(^|; )s=mail2025;/);

    const check = checkDkim(raw, publicKey);
    expect(check.tags.h?.toLowerCase().split(":")).toEqual(
      expect.arrayContaining(["from", "to", "subject", "message-id"]),
    );
    expect(check.bodyHashMatches).toBe(true);
    expect(check.signatureValid).toBe(true);
    // The verifier is not vacuous: changing a signed header or the body breaks it.
    expect(checkDkim(raw.replace("Subject: Your receipt", "Subject: Your refund"), publicKey).signatureValid).toBe(false);
    expect(checkDkim(raw.replace("<p>Thanks", "<p>No thanks"), publicKey).bodyHashMatches).toBe(false);
  });

  it("does not sign and does not send when the DKIM key is unusable", async () => {
    const message = email({
      dkim: { domainName: "shop.example", keySelector: "s1", privateKey: "-----BEGIN PRIVATE KEY-----\nnope\n" },
    });

    const result = await provider.send(message);

    expect(result).toEqual({ outcome: "rejected", permanent: true, reason: "DKIM private key cannot be read" });
    expect(received).toHaveLength(0);
  });

  it("sends a plain message without a DKIM-Signature when no key is given", async () => {
    await provider.send(email());
    expect(headersOf(received[0]?.raw ?? "").has("dkim-signature")).toBe(false);
  });

  it("maps a 550 on RCPT TO to a permanent rejection", async () => {
    const result = await provider.send(email({ to: { email: "nosuchuser@recipient.example" } }));

    expect(result).toMatchObject({ outcome: "rejected", permanent: true });
    expect(result.outcome === "rejected" && result.reason).toMatch(/^RCPT TO: 550 /);
    expect(received).toHaveLength(0);
  });

  it("maps a 451 on RCPT TO to a transient failure", async () => {
    const result = await provider.send(email({ to: { email: "greylisted@recipient.example" } }));

    expect(result).toMatchObject({ outcome: "failed_transient" });
    expect(result.outcome === "failed_transient" && result.reason).toMatch(/451/);
  });

  it("keeps the same Message-ID and providerMessageId when a message is handed over again", async () => {
    const message = email();

    const first = await provider.send(message);
    const second = await provider.send(message);

    expect(second).toEqual(first);
    // SMTP cannot deduplicate: both attempts arrive, recognisable as one message.
    const ids = received.map((mail) => headersOf(mail.raw).get("message-id"));
    expect(ids).toEqual([[`<${message.messageId}@mail.service.test>`], [`<${message.messageId}@mail.service.test>`]]);
  });

  it("collapses concurrent sends of one messageId into one handoff", async () => {
    const message = email();

    const results = await Promise.all([provider.send(message), provider.send(message), provider.send(message)]);

    expect(new Set(results.map((result) => JSON.stringify(result))).size).toBe(1);
    expect(received).toHaveLength(1);
  });

  it("rejects a header name that could smuggle header lines", async () => {
    const result = await provider.send(email({ headers: { "X-Tag\r\nBcc": "evil@example.com" } }));

    expect(result).toMatchObject({ outcome: "rejected", permanent: true });
    expect(received).toHaveLength(0);
  });

  it("fails transiently when no server listens", async () => {
    const closedPort = await findFreePort();
    const down = createSmtpProvider({
      host: "127.0.0.1",
      port: closedPort,
      secure: false,
      ignoreTLS: true,
      messageIdDomain: "mail.service.test",
    });
    try {
      const result = await down.send(email());
      expect(result).toMatchObject({ outcome: "failed_transient" });
      expect(result.outcome === "failed_transient" && result.reason).toMatch(/ECONNREFUSED/);
    } finally {
      await down.close();
    }
  });

  it("fails transiently after close", async () => {
    const closing = createSmtpProvider({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, messageIdDomain: "m.test" });
    await closing.close();

    expect(await closing.send(email())).toEqual({ outcome: "failed_transient", reason: "provider is closed" });
  });
});

describe("classifySmtpFailure", () => {
  function failure(props: Record<string, unknown>): Error {
    return Object.assign(new Error("failed"), props);
  }

  it("rejects permanent replies to the message itself", () => {
    for (const command of ["MAIL FROM", "RCPT TO", "DATA"]) {
      const error = failure({ code: "EENVELOPE", responseCode: 554, command, response: "554 5.7.1 Rejected" });
      expect(classifySmtpFailure(error)).toEqual({
        outcome: "rejected",
        permanent: true,
        reason: `${command}: 554 5.7.1 Rejected`,
      });
    }
    expect(classifySmtpFailure(failure({ code: "EMESSAGE", responseCode: 552, command: "DATA", response: "552 too big" })))
      .toMatchObject({ outcome: "rejected" });
  });

  it("rejects what nodemailer refuses locally before talking to the server", () => {
    expect(classifySmtpFailure(failure({ code: "EENVELOPE", command: "API" }))).toMatchObject({ outcome: "rejected" });
  });

  it("treats 4xx, 503, connection, timeout and our own credential problems as transient", () => {
    const cases = [
      failure({ code: "EENVELOPE", responseCode: 452, command: "RCPT TO", response: "452 mailbox full" }),
      failure({ code: "EENVELOPE", responseCode: 503, command: "RCPT TO", response: "503 bad sequence" }),
      failure({ code: "EAUTH", responseCode: 535, command: "AUTH PLAIN", response: "535 auth failed" }),
      failure({ code: "EPROTOCOL", responseCode: 554, command: "CONN", response: "554 no service" }),
      failure({ code: "ETIMEDOUT", command: "CONN" }),
      failure({ code: "ESOCKET", command: "CONN" }),
      new Error("something unexpected"),
      "not even an error",
    ];
    for (const error of cases) expect(classifySmtpFailure(error)).toMatchObject({ outcome: "failed_transient" });
  });
});
