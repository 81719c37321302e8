import { DnsRecordPurpose } from "../../src/gen/mail/v1/domains_pb.js";
import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { simpleParser } from "mailparser";
import pg from "pg";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { MessageContentService } from "../../src/gen/mail/v1/message_content_pb.js";
import { checkDkim, splitMessage } from "../adapters/email/dkim-verify.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { reasonOf, signedIn } from "../api/members-support.ts";

/**
 * Attachments on POST /mail/v1/send and gRPC SendMessage, as a caller
 * sends them and a recipient's server receives them: a real SMTP server
 * takes the message, a MIME parser (mailparser) reads it back, the DKIM
 * signature is checked over the whole message, files included.
 */

const PDF = Buffer.concat([Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1"), Buffer.alloc(2048, 7), Buffer.from("\n%%EOF\n")]);
/** A 1x1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
/** The start of a Windows program (a DOS header pointing at a PE header). */
const PE = Buffer.concat([Buffer.from("MZ"), Buffer.alloc(58), Buffer.from([0x40, 0, 0, 0]), Buffer.from("PE\0\0"), Buffer.alloc(200)]);
/** A real Linux program of this machine. */
const ELF = readFileSync("/bin/true");
const NON_ASCII_NAME = "Rechnung März №5 — 東京.pdf";

interface Received {
  readonly raw: string;
}

function b64(bytes: Buffer): string {
  return bytes.toString("base64");
}

// Megabytes through a real API, worker and SMTP server on a shared 2-core machine: generous limits, no timing assertion.
describe("attachments on sends", { timeout: 120_000 }, () => {
  let smtp: SMTPServer;
  const received: Received[] = [];
  let h: SendingHarness;
  let s: ReadySender;
  let sql: pg.Client;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      size: 64 * 1024 * 1024,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          received.push({ raw: Buffer.concat(chunks).toString("latin1") });
          callback(null, "2.0.0 Ok: queued");
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    h = await startSendingHarness({
      emailProvider: "smtp",
      smtp: { host: "127.0.0.1", port: (smtp.server.address() as AddressInfo).port, secure: false, user: undefined, password: undefined },
      messageIdDomain: "mail.service.test",
    });
    s = await h.readySender({ credits: 100 });
    sql = new pg.Client({ connectionString: h.db.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await h?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  function grpc() {
    const auth: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${s.secret}`);
      return next(req);
    };
    return createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [auth] }));
  }

  async function grpcRefusal(call: Promise<unknown>): Promise<ConnectError> {
    try {
      await call;
    } catch (error) {
      return ConnectError.from(error);
    }
    throw new Error("the call was accepted");
  }

  async function receivedFor(id: string) {
    await h.waitForMessage(s.secret, id, (m) => m.status === "sent", 90_000);
    const mail = received.find((r) => r.raw.includes(`<${id}@mail.service.test>`));
    if (!mail) throw new Error(`message ${id} did not reach the SMTP server`);
    // keepCidLinks: the HTML as sent, its cid: sources not replaced by the parser.
    return { raw: mail.raw, parsed: await simpleParser(Buffer.from(mail.raw, "latin1"), { keepCidLinks: true }) };
  }

  async function refusal(body: Record<string, unknown>): Promise<string> {
    const answer = await h.send(s.secret, { to: "ada@customer.example", subject: "Files", html: "<p>x</p>", ...body });
    const json = (await answer.json()) as { error: { code: string; message: string } };
    expect(answer.status, JSON.stringify(json)).toBe(400);
    expect(json.error.code).toBe("VALIDATION_ERROR");
    return json.error.message;
  }

  it("REST: a PDF with a non-ASCII name and an inline image arrive as sent, RFC 2231-encoded, DKIM-signed over them", async () => {
    const response = await h.send(s.secret, {
      to: "ada@customer.example",
      subject: "Your invoice",
      html: `<p>Invoice attached.</p><img src="cid:logo@shop" alt="Shop">`,
      text: "Invoice attached.",
      attachments: [
        { filename: NON_ASCII_NAME, contentType: "application/pdf", content: b64(PDF) },
        { filename: "logo.png", contentType: "image/png", content: b64(PNG), contentId: "logo@shop" },
      ],
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const { raw, parsed } = await receivedFor(id);

    // On the wire: the name in RFC 2231 form (parameter continuations with a charset), never raw UTF-8 in the header.
    expect(raw).toMatch(/filename\*0\*=utf-8''|filename\*=utf-8''/i);
    expect(raw).not.toContain("März");

    // In tree order: the inline image sits beside the HTML (multipart/related), the PDF after it.
    const pdf = parsed.attachments.find((a) => a.contentType === "application/pdf");
    const logo = parsed.attachments.find((a) => a.contentType === "image/png");
    expect(parsed.attachments).toHaveLength(2);
    expect(pdf?.filename).toBe(NON_ASCII_NAME);
    expect(pdf?.contentType).toBe("application/pdf");
    expect(pdf?.contentDisposition).toBe("attachment");
    expect(Buffer.compare(pdf?.content ?? Buffer.alloc(0), PDF)).toBe(0);
    expect(logo?.contentType).toBe("image/png");
    expect(logo?.cid).toBe("logo@shop");
    expect(logo?.contentDisposition).toBe("inline");
    expect(Buffer.compare(logo?.content ?? Buffer.alloc(0), PNG)).toBe(0);
    // The sanitiser kept the cid: source, so the HTML shows the inline image.
    expect(parsed.html).toContain(`src="cid:logo@shop"`);
    expect(parsed.text?.trim()).toBe("Invoice attached.");

    const { domains } = await h.admin.listSendingDomains({ companyId: s.companyId });
    const dkimRecord = domains[0]?.records.find((r) => r.purpose === DnsRecordPurpose.DKIM);
    const publicKeyBase64 = /p=([A-Za-z0-9+/=]+)/.exec(dkimRecord?.value.replace(/\s+/g, "") ?? "")?.[1] ?? "";
    const publicKey = createPublicKey({ key: Buffer.from(publicKeyBase64, "base64"), format: "der", type: "spki" });
    expect(splitMessage(raw).body).toContain(PDF.subarray(0, 300).toString("base64").slice(0, 60));
    const dkim = checkDkim(raw, publicKey);
    expect(dkim.bodyHashMatches).toBe(true);
    expect(dkim.signatureValid).toBe(true);

    // Stored apart from the message row, by message and company.
    const { rows } = await sql.query<{ company_id: string; filename: string; size: number }>(
      "select company_id, filename, size from message_attachment where message_id = $1 order by position",
      [id],
    );
    expect(rows).toEqual([
      { company_id: s.companyId, filename: NON_ASCII_NAME, size: PDF.length },
      { company_id: s.companyId, filename: "logo.png", size: PNG.length },
    ]);
  });

  it("gRPC: the same attachment as bytes arrives byte for byte", async () => {
    const answer = await grpc().sendMessage({
      to: { kind: { case: "stringValue", value: "bob@customer.example" } },
      subject: "Over gRPC",
      html: "<p>See the file</p>",
      attachments: [{ filename: "données.pdf", contentType: "application/pdf", content: PDF }],
    });
    const { parsed } = await receivedFor(answer.id);
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.equals(PDF)])).toEqual([["données.pdf", "application/pdf", true]]);
  });

  it("20 files are sent, the 21st is refused naming attachments", async () => {
    const files = Array.from({ length: 21 }, (_, i) => ({ filename: `part-${i}.txt`, contentType: "text/plain", content: b64(Buffer.from(`part ${i}\n`)) }));
    const twenty = await h.send(s.secret, { to: "ada@customer.example", subject: "Twenty", html: "<p>x</p>", attachments: files.slice(0, 20) });
    expect(twenty.status).toBe(202);
    const { parsed } = await receivedFor(((await twenty.json()) as { id: string }).id);
    expect(parsed.attachments.map((a) => a.filename)).toEqual(files.slice(0, 20).map((f) => f.filename));

    expect(await refusal({ attachments: files })).toMatch(/^attachments: must hold at most 20 files/);
    const error = await grpcRefusal(
      grpc().sendMessage({
        to: { kind: { case: "stringValue", value: "a@customer.example" } },
        subject: "x",
        html: "<p>x</p>",
        attachments: files.map((f) => ({ ...f, content: Buffer.from(f.content, "base64") })),
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain("attachments: must hold at most 20 files");
  });

  it("10 MiB of files together are sent; one byte more is refused naming attachments", async () => {
    const half = 5 * 1024 * 1024;
    const a = Buffer.alloc(half, 1);
    const exactly = await h.send(s.secret, {
      to: "ada@customer.example",
      subject: "Ten",
      html: "<p>x</p>",
      attachments: [
        { filename: "a.bin", contentType: "application/octet-stream", content: b64(a) },
        { filename: "b.bin", contentType: "application/octet-stream", content: b64(a) },
      ],
    });
    expect(exactly.status, await exactly.clone().text()).toBe(202);
    const { parsed } = await receivedFor(((await exactly.json()) as { id: string }).id);
    expect(parsed.attachments.map((x) => x.size)).toEqual([half, half]);

    const message = await refusal({
      attachments: [
        { filename: "a.bin", contentType: "application/octet-stream", content: b64(a) },
        { filename: "b.bin", contentType: "application/octet-stream", content: b64(Buffer.alloc(half + 1, 1)) },
      ],
    });
    expect(message).toMatch(/^attachments: must be at most 10485760 bytes/);
    const error = await grpcRefusal(
      grpc().sendMessage({
        to: { kind: { case: "stringValue", value: "a@customer.example" } },
        subject: "x",
        html: "<p>x</p>",
        attachments: [{ filename: "big.bin", contentType: "application/octet-stream", content: Buffer.alloc(10 * 1024 * 1024 + 1, 1) }],
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain("attachments");
  });

  it("a body past the send's own limit answers 413 PAYLOAD_TOO_LARGE; other routes keep MAX_BODY_BYTES", async () => {
    const content = "A".repeat(16 * 1024 * 1024);
    const answer = await h.send(s.secret, { to: "a@customer.example", subject: "x", html: "<p>x</p>", attachments: [{ filename: "a.bin", contentType: "application/octet-stream", content }] });
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("PAYLOAD_TOO_LARGE");

    const max = h.app.config.maxBodyBytes;
    const { secret } = await h.newKey(s.companyId, ["mail.conversions.write"]);
    const other = await h.fetch("/mail/v1/conversions", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ eventId: "x".repeat(max) }),
    });
    expect(other.status).toBe(413);
  });

  it("programs and scripts are refused by name, declared type and content, each naming its field (REST and gRPC)", async () => {
    const file = (filename: string, content: Buffer, contentType = "application/octet-stream") => ({ filename, contentType, content: b64(content) });
    const cases: [string, Record<string, unknown>, string][] = [
      ["an .exe", file("setup.exe", PDF), "attachments[0].filename: has the extension .exe"],
      ["an upper-case .BAT after a harmless one", file("report.pdf.BAT", PDF), "attachments[0].filename: has the extension .bat"],
      ["a Windows program renamed .pdf", file("invoice.pdf", PE, "application/pdf"), "attachments[0].content: is a Windows or DOS program"],
      ["a Linux program renamed .txt", file("notes.txt", ELF, "text/plain"), "attachments[0].content: is a Linux or Unix program"],
      ["a shebang script renamed .txt", file("readme.txt", Buffer.from("#!/bin/sh\nrm -rf ~\n"), "text/plain"), "attachments[0].content: is a script"],
      ["a program's declared type", file("tool.dat", PDF, "application/x-msdownload"), "attachments[0].contentType: is a program or script type"],
    ];
    for (const [name, attachment, expected] of cases) {
      expect(await refusal({ attachments: [attachment] }), name).toContain(expected);
      const proto = { ...(attachment as { filename: string; contentType: string; content: string }) };
      const error = await grpcRefusal(
        grpc().sendMessage({
          to: { kind: { case: "stringValue", value: "a@customer.example" } },
          subject: "x",
          html: "<p>x</p>",
          attachments: [{ filename: proto.filename, contentType: proto.contentType, content: Buffer.from(proto.content, "base64") }],
        }),
      );
      expect(error.code, name).toBe(Code.InvalidArgument);
      expect(error.rawMessage, name).toContain(expected);
    }
  });

  it("bad names, types, inline ids and content are refused, every one named in one answer", async () => {
    const ok = { contentType: "application/pdf", content: b64(PDF) };
    const message = await refusal({
      attachments: [
        { ...ok, filename: "../../etc/passwd" },
        { ...ok, filename: ".hidden.pdf" },
        { ...ok, filename: "tab\there.pdf" },
        { ...ok, filename: "invoice\u202Efdp.exe" },
        { ...ok, filename: "trailing.pdf." },
        { ...ok, filename: `${"n".repeat(151)}.pdf` },
        { ...ok, filename: "ok.pdf", contentType: "application/pdf; charset=x" },
        { ...ok, filename: "logo.pdf", contentId: "logo" },
        { filename: "a.png", contentType: "image/png", content: b64(PNG), contentId: "img" },
        { filename: "b.png", contentType: "image/png", content: b64(PNG), contentId: "img" },
        { filename: "c.png", contentType: "image/png", content: b64(PNG), contentId: "<bad id>" },
      ],
    });
    for (const expected of [
      "attachments[0].filename: must not contain path separators",
      "attachments[1].filename: must not start with a dot",
      "attachments[2].filename: must not contain path separators (/ \\), control characters",
      "attachments[3].filename: must not contain",
      "attachments[4].filename: must not start with a space nor end with a dot",
      "attachments[5].filename: must be at most 150 characters",
      "attachments[6].contentType: must be a media type",
      "attachments[7].contentId: is for inline images",
      "attachments[9].contentId: is used by another attachment",
      "attachments[10].contentId: must be letters, digits",
    ]) {
      expect(message).toContain(expected);
    }
    expect(message).not.toContain("attachments[8]");
    // Over Connect's JSON too, by the same path.
    const connect = await h.fetch("/mail.v1.MailService/SendMessage", {
      method: "POST",
      headers: { authorization: `Bearer ${s.secret}`, "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify({ to: "a@customer.example", subject: "x", html: "<p>x</p>", attachments: [{ filename: "a.pdf", contentType: "application/pdf", content: "%%% not base64 %%%" }] }),
    });
    expect(connect.status).toBe(400);
    expect(((await connect.json()) as { message: string }).message).toContain("attachments[0].content: must be base64 text");
    // Content that is not base64 is named while the body is read; an empty file is the contract's required field.
    expect(await refusal({ attachments: [{ filename: "a.pdf", contentType: "application/pdf", content: "%%% not base64 %%%" }] })).toBe(
      "attachments[0].content: must be base64 text",
    );
    expect(await refusal({ attachments: [{ filename: "empty.pdf", contentType: "application/pdf", content: "" }] })).toContain("attachments[0].content: is required");
  });

  it("an idempotent replay with the same files is `replayed: true`; another file under the same key is IDEMPOTENCY_CONFLICT", async () => {
    const body = {
      to: "ada@customer.example",
      subject: "Invoice 7",
      html: "<p>x</p>",
      attachments: [{ filename: "invoice-7.pdf", contentType: "application/pdf", content: b64(PDF) }],
    };
    const key = { "idempotency-key": `invoice-7-${s.companyId}` };
    const first = (await (await h.send(s.secret, body, key)).json()) as { id: string; replayed: boolean };
    expect(first.replayed).toBe(false);
    const again = await h.send(s.secret, body, key);
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ id: first.id, status: "queued", replayed: true });

    const changed = Buffer.from(PDF);
    changed[100] = (changed[100] ?? 0) ^ 1;
    const conflict = await h.send(s.secret, { ...body, attachments: [{ ...body.attachments[0], content: b64(changed) }] }, key);
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe("IDEMPOTENCY_CONFLICT");
    const withoutFiles = await h.send(s.secret, { ...body, attachments: undefined }, key);
    expect(withoutFiles.status).toBe(409);
  });

  describe("the message page's reads, and the content retention", () => {
    const SERVICE = "mail.v1.MessageContentService";
    let id: string;

    beforeAll(async () => {
      const response = await h.send(s.secret, {
        to: "ada@customer.example",
        subject: "Kept files",
        html: `<p>Logo</p><img src="cid:logo">`,
        attachments: [
          { filename: NON_ASCII_NAME, contentType: "application/pdf", content: b64(PDF) },
          { filename: "logo.png", contentType: "image/png", content: b64(PNG), contentId: "logo" },
        ],
      });
      id = ((await response.json()) as { id: string }).id;
      await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
    });

    it("a member lists the files with their sizes and downloads one, byte for byte; no one else does", async () => {
      const member = await signedIn(h, s.companyId, `mia-${id.slice(0, 8)}@shop.test`, "member");
      const content = await member.call(SERVICE, "GetMessageContent", { id });
      expect(content.status).toBe(200);
      expect(content.body.attachments).toEqual([
        // Connect's JSON leaves out zero values: position 0 is absent.
        { filename: NON_ASCII_NAME, contentType: "application/pdf", size: String(PDF.length) },
        { filename: "logo.png", contentType: "image/png", size: String(PNG.length), contentId: "logo", position: 1 },
      ]);
      expect(content.body.contentRemoved).toBeUndefined();

      const file = await member.call(SERVICE, "GetMessageAttachment", { messageId: id, position: 0 });
      expect(file.status).toBe(200);
      expect(file.body.filename).toBe(NON_ASCII_NAME);
      expect(file.body.contentType).toBe("application/pdf");
      expect(Buffer.from(String(file.body.content), "base64").equals(PDF)).toBe(true);

      const missing = await member.call(SERVICE, "GetMessageAttachment", { messageId: id, position: 2 });
      expect([missing.status, reasonOf(missing)]).toEqual([404, "NOT_FOUND"]);
      const outOfRange = await member.call(SERVICE, "GetMessageAttachment", { messageId: id, position: 20 });
      expect(outOfRange.status).toBe(400);
      expect(String(outOfRange.body.message)).toContain("position");

      const other = await h.readySender({ credits: 0 });
      const outsider = await signedIn(h, other.companyId, `olaf-${id.slice(0, 8)}@other.test`, "owner");
      const foreign = await outsider.call(SERVICE, "GetMessageAttachment", { messageId: id, position: 0 });
      expect([foreign.status, reasonOf(foreign)]).toEqual([404, "NOT_FOUND"]);
      expect(JSON.stringify(foreign.body)).not.toContain(PDF.toString("base64").slice(0, 40));

      // An operator acting for the company reads it over gRPC too, and for no other company.
      const asOperator = await h.forCompany(MessageContentService, s.companyId).getMessageAttachment({ messageId: id, position: 0 });
      expect(Buffer.from(asOperator.content).equals(PDF)).toBe(true);
      const operatorElsewhere = await grpcRefusal(h.forCompany(MessageContentService, other.companyId).getMessageAttachment({ messageId: id, position: 0 }));
      expect(operatorElsewhere.code).toBe(Code.NotFound);

      // An API key, even with mail.events.read, reads no file (refuse_api_keys).
      const keyCall = await h.fetch(`/${SERVICE}/GetMessageAttachment`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.secret}`, "content-type": "application/json", "connect-protocol-version": "1" },
        body: JSON.stringify({ messageId: id, position: 0 }),
      });
      expect(keyCall.status).toBe(403);
    });

    it("past MESSAGE_CONTENT_RETENTION_DAYS the html, text and files are deleted; the message stays, marked", async () => {
      const fresh = ((await (await h.send(s.secret, { to: "bob@customer.example", subject: "Fresh", html: "<p>new</p>", attachments: [{ filename: "new.pdf", contentType: "application/pdf", content: b64(PDF) }] })).json()) as { id: string }).id;
      await h.waitForMessage(s.secret, fresh, (m) => m.status === "sent");
      await sql.query("update message set created_at = now() - interval '31 days' where id = $1", [id]);

      const { removed } = await h.app.messaging.contentRetention.removeExpired();
      expect(removed).toBeGreaterThanOrEqual(1);

      expect((await sql.query("select 1 from message_attachment where message_id = $1", [id])).rowCount).toBe(0);
      const member = await signedIn(h, s.companyId, `max-${id.slice(0, 8)}@shop.test`, "member");
      const content = await member.call(SERVICE, "GetMessageContent", { id });
      expect(content.body).toMatchObject({ id, contentRemoved: true });
      expect(content.body.html).toBeUndefined();
      expect(content.body.attachments).toBeUndefined();
      const file = await member.call(SERVICE, "GetMessageAttachment", { messageId: id, position: 0 });
      expect(file.status).toBe(404);
      // The log keeps the message, its status and events.
      const message = await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
      expect(message.subject).toBe("Kept files");

      // A message within the retention keeps its content; a second run changes nothing.
      expect((await sql.query("select 1 from message_attachment where message_id = $1", [fresh])).rowCount).toBe(1);
      expect((await member.call(SERVICE, "GetMessageContent", { id: fresh })).body.html).toContain("new");
      await h.app.messaging.contentRetention.removeExpired();
      expect((await sql.query("select 1 from message_attachment where message_id = $1", [fresh])).rowCount).toBe(1);
    });
  });
});
