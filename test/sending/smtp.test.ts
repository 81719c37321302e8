import { DnsRecordPurpose } from "../../src/gen/mail/v1/domains_pb.js";
import { createPublicKey } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDkim, splitMessage, unfold } from "../adapters/email/dkim-verify.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";
import { CreditsService } from "../../src/gen/mail/v1/credits_pb.js";

interface Received {
  readonly rcptTo: string[];
  readonly raw: string;
}

describe("sending through the SMTP adapter to a real SMTP server", () => {
  let smtp: SMTPServer;
  let received: Received[];
  /** Recipients whose first DATA the relay takes and never answers. */
  const stallOnce = new Set<string>();
  let h: SendingHarness;

  beforeAll(async () => {
    received = [];
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith("nosuchuser@")) {
          return callback(Object.assign(new Error("5.1.1 No such user"), { responseCode: 550 }));
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          const rcptTo = session.envelope.rcptTo.map((r) => r.address);
          // A stalled transaction is never answered, so the relay never delivers that copy.
          if (rcptTo.some((address) => stallOnce.delete(address))) return;
          received.push({ rcptTo, raw: Buffer.concat(chunks).toString("utf8") });
          callback(null, "2.0.0 Ok: queued");
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    h = await startSendingHarness({
      emailProvider: "smtp",
      smtp: { host: "127.0.0.1", port, secure: false, user: undefined, password: undefined },
      messageIdDomain: "mail.service.test",
    });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("delivers a DKIM-signed message with the sender, recipient and content of the send call", async () => {
    const s = await h.readySender({ credits: 2 });
    const response = await h.send(s.secret, {
      to: { email: "ada@customer.example", name: "Ada Lovelace" },
      subject: "Your receipt",
      html: "<p>Thanks <b>Ada</b></p>",
      text: "Thanks Ada",
      replyTo: "support@shop.example",
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
    expect(message.providerMessageId).toBe(`${id}@mail.service.test`);

    const mail = received.find((r) => r.raw.includes(id));
    expect(mail?.rcptTo).toEqual(["ada@customer.example"]);
    const headers = new Map(splitMessage(mail?.raw ?? "").headers.map((f) => [f.name.toLowerCase(), unfold(f.value)]));
    expect(headers.get("from")).toContain(s.fromEmail);
    expect(headers.get("to")).toContain("ada@customer.example");
    expect(headers.get("subject")).toBe("Your receipt");
    expect(headers.get("reply-to")).toContain("support@shop.example");
    expect(headers.get("message-id")).toBe(`<${id}@mail.service.test>`);

    const { domains } = await h.admin.listSendingDomains({ companyId: s.companyId });
    const domain = domains[0];
    const dkimRecord = domain?.records.find((r) => r.purpose === DnsRecordPurpose.DKIM);
    const publicKeyBase64 = /p=([A-Za-z0-9+/=]+)/.exec(dkimRecord?.value.replace(/\s+/g, "") ?? "")?.[1] ?? "";
    const publicKey = createPublicKey({ key: Buffer.from(publicKeyBase64, "base64"), format: "der", type: "spki" });
    const dkim = checkDkim(mail?.raw ?? "", publicKey);
    expect(dkim.tags.d).toBe(domain?.domain);
    expect(dkim.tags.s).toBe(domain?.dkimSelector);
    expect(dkim.bodyHashMatches).toBe(true);
    expect(dkim.signatureValid).toBe(true);
  });

  it("a relay that never answers DATA: the attempt gives up before Temporal's timeout, the retry sends it, one copy delivered", async () => {
    const s = await h.readySender({ credits: 2 });
    stallOnce.add("stalled@customer.example");
    const { id } = (await (await h.send(s.secret, { to: "stalled@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
    expect(stallOnce.has("stalled@customer.example")).toBe(false);
    expect(message.events.map((e) => e.type)).toEqual(["sent"]);
    expect(received.filter((r) => r.raw.includes(`<${id}@mail.service.test>`))).toHaveLength(1);
    const wallet = await h.forCompany(CreditsService, s.companyId).getCredits({});
    expect(wallet.balance).toBe(1n);
  });

  it("a permanent SMTP refusal ends the message `rejected` and returns the credit", async () => {
    const s = await h.readySender({ credits: 1 });
    const { id } = (await (await h.send(s.secret, { to: "nosuchuser@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "rejected");
    expect(message.events.map((e) => e.type)).toEqual(["reject"]);
    const wallet = await h.forCompany(CreditsService, s.companyId).getCredits({});
    expect(wallet.balance).toBe(1n);
  });

  it("bounce reports reach the message through AdminService.ReportProviderEvent, idempotently", async () => {
    const s = await h.readySender({ credits: 2 });
    const { id } = (await (await h.send(s.secret, { to: "gone@customer.example", subject: "Hi", html: "<p>x</p>" })).json()) as { id: string };
    const sent = await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
    const report = {
      providerEventId: `bounce-${id}`,
      providerMessageId: sent.providerMessageId ?? "",
      type: "bounced",
      detail: "550 5.1.1 mailbox unavailable",
    };
    expect(await h.admin.reportProviderEvent(report)).toMatchObject({ applied: true, messageId: id });
    expect(await h.admin.reportProviderEvent(report)).toMatchObject({ applied: false, messageId: id });

    const bounced = await h.waitForMessage(s.secret, id, (m) => m.status === "bounced");
    expect(bounced.events.map((e) => e.type)).toEqual(["sent", "bounce"]);
    const { items: suppressions } = await h.forCompany(SuppressionsService, s.companyId).listSuppressions({});
    expect(suppressions.map((x) => x.email)).toEqual(["gone@customer.example"]);

    const unknown = await h.admin
      .reportProviderEvent({ providerEventId: "x", providerMessageId: "nope@mail.service.test", type: "delivered" })
      .catch((e: unknown) => e);
    expect((unknown as ConnectError).code).toBe(Code.NotFound);
    const invalid = await h.admin.reportProviderEvent({ providerEventId: "y", providerMessageId: "z", type: "opened" }).catch((e: unknown) => e);
    expect((invalid as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
