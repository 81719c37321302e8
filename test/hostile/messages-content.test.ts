import type { AddressInfo } from "node:net";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSmtpProvider } from "../../src/adapters/email/smtp-provider.ts";
import type { EmailProvider } from "../../src/capabilities/messages/email-provider.ts";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { fieldNamesOf, grpcProblems, outcomeOf, restProblems } from "./support/answers.ts";
import { type HostileApi, startHostileApi } from "./support/hostile-api.ts";
import { decodeEntities, executionVectors, tagSoup } from "./support/html-vectors.ts";
import { type SeededTenant, seedTenant } from "./support/seed.ts";

/**
 * What a send turns into, under hostile content: header injection through
 * recipient names, subjects and template variables (refused, or neutralised
 * so that the composed MIME has exactly the headers the service wrote),
 * template injection (a variable holding `{{ ... }}` is text, never
 * evaluated), the HTML sanitiser on the way in, and text PostgreSQL cannot
 * store. The MIME is composed by the SMTP adapter, from the stored message,
 * and read as a real SMTP server received it.
 */
let api: HostileApi;
let tenant: SeededTenant;
let injectionTemplateId: string;
let smtp: SMTPServer;
let provider: EmailProvider;
let received: string[];

beforeAll(async () => {
  received = [];
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push(Buffer.concat(chunks).toString("utf8"));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  provider = createSmtpProvider({ host: "127.0.0.1", port: (smtp.server.address() as AddressInfo).port, secure: false, ignoreTLS: true, messageIdDomain: "mail.hostile.example" });
  api = await startHostileApi();
  tenant = await seedTenant(api, "Content", 1);
  const { template } = await api.h.forCompany(TemplatesService, tenant.companyId).putTemplate({
    name: "injection",
    subject: "S {{ a }}",
    html: "<p>{{ a }}|{{ b }}|{{ constructor }}|{{ __proto__ }}|{{ missing | default:{{ b }} }}</p>",
    text: "{{ a }}/{{ b }}",
  });
  injectionTemplateId = template?.id ?? "";
});
afterAll(async () => {
  await provider?.close();
  await api?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

interface StoredMessage {
  recipient: string;
  recipient_name: string | null;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  subject: string;
  html: string | null;
  text_body: string | null;
}

async function stored(id: string): Promise<StoredMessage> {
  const { rows } = await api.h.db.query<StoredMessage>(
    "select recipient, recipient_name, from_email, from_name, reply_to, subject, html, text_body from message where id = $1 and company_id = $2",
    [id, tenant.companyId],
  );
  const row = rows[0];
  if (!row) throw new Error(`message ${id} is not stored`);
  return row;
}

async function accepted(body: unknown): Promise<string> {
  const answer = await api.rest(tenant, "POST", "/mail/v1/send", body);
  expect(answer.status, answer.text).toBe(202);
  return (answer.json as { id: string }).id;
}

/** The MIME the SMTP adapter composes for a stored message, as the SMTP server received it. */
async function composedMime(id: string): Promise<{ headers: [string, string][]; raw: string }> {
  const message = await stored(id);
  const before = received.length;
  const result = await provider.send({
    messageId: id,
    companyId: tenant.companyId,
    from: { email: message.from_email, ...(message.from_name ? { name: message.from_name } : {}) },
    to: { email: message.recipient, ...(message.recipient_name ? { name: message.recipient_name } : {}) },
    ...(message.reply_to ? { replyTo: message.reply_to } : {}),
    subject: message.subject,
    ...(message.html !== null ? { html: message.html } : {}),
    ...(message.text_body !== null ? { text: message.text_body } : {}),
  });
  expect(result.outcome).toBe("accepted");
  const raw = received[before] ?? "";
  const head = raw.slice(0, raw.indexOf("\r\n\r\n"));
  // Unfold continuation lines, then split into name/value pairs.
  const headers = head
    .replace(/\r\n[ \t]+/g, " ")
    .split("\r\n")
    .map((line): [string, string] => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]);
  return { headers, raw };
}

/** RFC 2047 encoded-words, decoded (what a mail client shows). */
function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([bq])\?([^?]*)\?=\s*/gi, (_all, encoding: string, text: string) =>
    encoding.toLowerCase() === "b"
      ? Buffer.from(text, "base64").toString("utf8")
      : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))), "latin1").toString("utf8"),
  );
}

const HEADERS_WE_WRITE = new Set(["from", "to", "reply-to", "subject", "message-id", "date", "mime-version", "content-type", "content-transfer-encoding"]);

function expectOnlyOurHeaders(headers: [string, string][], context: string): void {
  for (const [name] of headers) expect(HEADERS_WE_WRITE.has(name), `${context}: a header ${JSON.stringify(name)} in the composed MIME`).toBe(true);
  for (const name of ["from", "to", "subject", "message-id"]) expect(headers.filter(([n]) => n === name).length, `${context}: ${name} headers`).toBe(1);
}

const LINE_BREAKS = ["\r\n", "\n", "\r", "\r\n\t", "\r\n "];

describe("CRLF in recipient names, subjects and reply-to addresses", () => {
  it.each(LINE_BREAKS.map((lb) => [JSON.stringify(lb), lb] as const))("REST and gRPC refuse %s with a 400 naming each field", async (_shown, lb) => {
    const body = {
      to: { email: "victim@customers.example", name: `Eve${lb}Bcc: list@evil.example` },
      subject: `Invoice${lb}X-Injected: yes`,
      html: "<p>x</p>",
      replyTo: `eve@customers.example${lb}Cc: list@evil.example`,
    };
    const answer = await api.rest(tenant, "POST", "/mail/v1/send", body);
    expect(answer.status).toBe(400);
    expect(restProblems(answer, fieldNamesOf(MailService.method.sendMessage.input, { door: "rest" }))).toEqual([]);
    const message = (answer.json as { error: { message: string } }).error.message;
    for (const field of ["to.name", "subject", "replyTo"]) expect(message).toContain(`${field}: `);

    const mail = api.grpc(MailService, tenant);
    const outcome = await outcomeOf(() =>
      mail.sendMessage({
        to: { kind: { case: "structValue", value: { fields: { email: { kind: { case: "stringValue", value: "victim@customers.example" } }, name: { kind: { case: "stringValue", value: `Eve${lb}Bcc: list@evil.example` } } } } } },
        subject: `Invoice${lb}X-Injected: yes`,
        html: "<p>x</p>",
      }),
    );
    expect(outcome).toBeInstanceOf(ConnectError);
    expect((outcome as ConnectError).code).toBe(Code.InvalidArgument);
    expect(grpcProblems(outcome, fieldNamesOf(MailService.method.sendMessage.input, { door: "grpc" }))).toEqual([]);
    expect((outcome as ConnectError).rawMessage).toContain("to.name: ");
    expect((outcome as ConnectError).rawMessage).toContain("subject: ");
  });

  it("an address with a line break in the string form of `to` is refused too", async () => {
    const answer = await api.rest(tenant, "POST", "/mail/v1/send", { to: "victim@customers.example\r\nBcc: list@evil.example", subject: "s", html: "h" });
    expect(answer.status).toBe(400);
    expect((answer.json as { error: { message: string } }).error.message).toMatch(/^to: /);
  });

  it("names and subjects that only look like headers are sent as text, inside their own header", async () => {
    const id = await accepted({
      to: { email: "victim@customers.example", name: "Eve Bcc: list@evil.example \u2028 \u0085 ünïcode" },
      subject: "Invoice X-Injected: yes =?utf-8?q?=0D=0ABcc:_x@evil.example?=",
      html: "<p>x</p>",
    });
    const { headers } = await composedMime(id);
    expectOnlyOurHeaders(headers, "look-alike headers");
    const subject = headers.find(([n]) => n === "subject")?.[1] ?? "";
    expect(decodeWords(subject)).toContain("Invoice X-Injected: yes");
  });
});

describe("template variables: neutralised in headers, never evaluated", () => {
  const HEADER_VALUES = ["x\r\nBcc: list@evil.example", "x\nX-Injected: 1", "x\r\n\r\n<h1>body takeover</h1>", "\r\n.\r\nMAIL FROM:<x@evil.example>", "a\u0001b\u007fc\u001bd", "tab\tkept"];

  it.each(HEADER_VALUES.map((v) => [JSON.stringify(v), v] as const))("a variable %s becomes one subject line, and the MIME has only our headers", async (_shown, value) => {
    const id = await accepted({ to: "reader@customers.example", templateId: injectionTemplateId, variables: { a: value, b: "B" } });
    const message = await stored(id);
    // eslint-disable-next-line no-control-regex
    expect(message.subject).not.toMatch(/[\x00-\x08\x0a-\x1f\x7f]/);
    expect(message.subject.startsWith("S ")).toBe(true);
    const before = received.length;
    const { headers, raw } = await composedMime(id);
    expectOnlyOurHeaders(headers, JSON.stringify(value));
    // One message reached the server (no SMTP smuggling through "\r\n.\r\n"), its header block ours alone.
    expect(received.length).toBe(before + 1);
    expect(raw.slice(0, raw.indexOf("\r\n\r\n"))).not.toMatch(/^(?:Bcc|Cc|X-Injected|MAIL FROM):/im);
  });

  it("values holding template syntax, markup or anything else are inserted as text, exactly once", async () => {
    const value = fc.oneof(
      fc.constantFrom("{{ b }}", "{{b}}", "{{ b | default:x }}", "{{{ b }}}", "{{ a }}", "{{ constructor }}", "{{", "}}", "<script>alert(1)</script>", "&amp; &lt;", '"quoted" \'single\'', "$& $1 $$", "\\"),
      fc.string({ maxLength: 30 }).filter((s) => !s.includes("\0")),
    );
    await fc.assert(
      fc.asyncProperty(value, async (a) => {
        const id = await accepted({ to: "reader@customers.example", templateId: injectionTemplateId, variables: { a, b: "B" } });
        const message = await stored(id);
        // Text: as it is. The b placeholder rendered once, the value's own `{{ b }}` left alone.
        expect(message.text_body).toBe(`${a}/B`);
        // HTML: escaped, then sanitised; what a reader sees is the value, verbatim. Inherited
        // names render as missing, and a fallback is text too (`{{ b` there is not a placeholder).
        const paragraph = /^<p>([\s\S]*)<\/p>$/.exec(message.html ?? "")?.[1];
        expect(paragraph, message.html ?? "").toBeDefined();
        expect(decodeEntities(paragraph ?? "")).toBe(`${a}|B|||{{ b }}`);
        expect(executionVectors(message.html ?? "")).toEqual([]);
        // eslint-disable-next-line no-control-regex
        expect(message.subject).toBe(`S ${a.replace(/[\x00-\x08\x0a-\x1f\x7f]+/g, " ")}`);
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) },
    );
  });
});

describe("the HTML sanitiser on the way in", () => {
  it("random tag soup sent as html is stored without any execution vector", async () => {
    await fc.assert(
      fc.asyncProperty(tagSoup, async (html) => {
        const answer = await api.rest(tenant, "POST", "/mail/v1/send", { to: "reader@customers.example", subject: "soup", html });
        if (answer.status === 400) {
          // Only a body the validation refuses as a whole (NUL, blank) may be refused.
          expect((answer.json as { error: { message: string } }).error.message).toMatch(/^html: /);
          return;
        }
        expect(answer.status, answer.text).toBe(202);
        const message = await stored((answer.json as { id: string }).id);
        expect(executionVectors(message.html ?? "")).toEqual([]);
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) },
    );
  });
});

describe("text PostgreSQL cannot store (NUL)", () => {
  it("every send field that is stored or rendered refuses NUL with a 400 naming it", async () => {
    const cases: [string, unknown][] = [
      ["html", { to: "a@customers.example", subject: "s", html: "<p>\u0000</p>" }],
      ["text", { to: "a@customers.example", subject: "s", html: "<p>x</p>", text: "a\u0000" }],
      ["tags.k", { to: "a@customers.example", subject: "s", html: "<p>x</p>", tags: { k: "v\u0000" } }],
      ["tags.k\u0000", { to: "a@customers.example", subject: "s", html: "<p>x</p>", tags: { "k\u0000": "v" } }],
      ["variables.a", { to: "a@customers.example", templateId: injectionTemplateId, variables: { a: "\u0000", b: "B" } }],
      ["idempotencyKey", { to: "a@customers.example", subject: "s", html: "<p>x</p>", idempotencyKey: "k\u0000" }],
      ["templateId", { to: "a@customers.example", templateId: "\u0000" }],
      ["senderId", { to: "a@customers.example", subject: "s", html: "<p>x</p>", senderId: "\u0000x" }],
      ["subject", { to: "a@customers.example", subject: "s\u0000", html: "<p>x</p>" }],
      ["to.name", { to: { email: "a@customers.example", name: "n\u0000" }, subject: "s", html: "<p>x</p>" }],
    ];
    for (const [field, body] of cases) {
      const answer = await api.rest(tenant, "POST", "/mail/v1/send", body);
      expect(answer.status, `${field}: ${answer.text}`).toBe(400);
      expect((answer.json as { error: { message: string } }).error.message.startsWith(`${field}: `), `${field}: ${answer.text}`).toBe(true);
    }
  });

  it("the operator's templates refuse NUL in html and text (INVALID_ARGUMENT naming the field)", async () => {
    for (const [field, input] of [
      ["html", { html: "<p>\u0000</p>" }],
      ["text", { html: "<p>x</p>", text: "\u0000" }],
    ] as const) {
      const outcome = await outcomeOf(() => api.h.forCompany(TemplatesService, tenant.companyId).putTemplate({ name: `nul-${field}`, subject: "s", ...input }));
      expect(outcome, field).toBeInstanceOf(ConnectError);
      expect((outcome as ConnectError).code, (outcome as ConnectError).rawMessage).toBe(Code.InvalidArgument);
      expect((outcome as ConnectError).rawMessage.startsWith(`${field}: `)).toBe(true);
    }
  });
});
