import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageContentService } from "../../src/gen/mail/v1/message_content_pb.js";
import { OPERATOR_TOKEN, bearer } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { reasonOf, signedIn } from "../api/members-support.ts";

/**
 * MessageContentService.GetMessageContent, the read behind the screen's
 * message preview: the content as sent, for member sessions (every role)
 * and operators acting for the company; API keys are refused; another
 * company's message is not found; the public REST answer of
 * GET /mail/v1/messages/{id} stays the spec's Message, with no content.
 */
const SERVICE = "mail.v1.MessageContentService";

function client(baseUrl: string, headers: Record<string, string>, protocol: "connect" | "grpc") {
  const add: Interceptor = (next) => (req) => {
    for (const [name, value] of Object.entries(headers)) req.header.set(name, value);
    return next(req);
  };
  const transport =
    protocol === "grpc" ? createGrpcTransport({ baseUrl, interceptors: [add] }) : createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [add] });
  return createClient(MessageContentService, transport);
}

async function codeOf(call: Promise<unknown>): Promise<Code | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

describe("GetMessageContent", () => {
  let h: SendingHarness;
  let shop: ReadySender;
  let other: ReadySender;
  let id: string;

  beforeAll(async () => {
    h = await startSendingHarness();
    shop = await h.readySender();
    other = await h.readySender();
    const response = await h.send(shop.secret, {
      to: "ada@customer.test",
      subject: "Receipt",
      html: `<p>Thanks <b>Ada</b></p><script>alert(1)</script>`,
      text: "Thanks Ada",
      replyTo: "help@shop.test",
    });
    expect(response.status).toBe(202);
    id = ((await response.json()) as { id: string }).id;
  });
  afterAll(async () => h?.close());

  it("answers a member's session with the content as sent (sanitised HTML, text, From, Reply-To)", async () => {
    const member = await signedIn(h, shop.companyId, "mia@shop.test", "member");
    const answer = await member.call(SERVICE, "GetMessageContent", { id });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({
      id,
      html: expect.stringContaining("<p>Thanks <b>Ada</b></p>"),
      text: "Thanks Ada",
      fromEmail: shop.fromEmail,
      fromName: "Shop Receipts",
      replyTo: "help@shop.test",
    });
    expect(answer.body.html).not.toContain("<script");

    // Another company's message, and a malformed id: not found, whoever asks.
    const outsider = await signedIn(h, other.companyId, "olaf@other.test", "owner");
    const foreign = await outsider.call(SERVICE, "GetMessageContent", { id });
    expect(foreign.status).toBe(404);
    expect(reasonOf(foreign)).toBe("NOT_FOUND");
    expect(JSON.stringify(foreign.body)).not.toContain("Thanks");
    expect((await member.call(SERVICE, "GetMessageContent", { id: "not-a-uuid" })).status).toBe(404);
  });

  it("answers an operator acting for the company, and for no other company", async () => {
    const operator = (companyId: string, protocol: "connect" | "grpc") =>
      client(h.app.operatorUrl, { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": companyId }, protocol);
    for (const protocol of ["connect", "grpc"] as const) {
      const content = await operator(shop.companyId, protocol).getMessageContent({ id });
      expect(content.text, protocol).toBe("Thanks Ada");
      expect(await codeOf(operator(other.companyId, protocol).getMessageContent({ id })), protocol).toBe(Code.NotFound);
    }
  });

  it("refuses API keys, even with mail.events.read, over Connect and gRPC", async () => {
    for (const [protocol, url] of [
      ["connect", h.app.httpUrl],
      ["grpc", h.app.grpcUrl],
    ] as const) {
      expect(await codeOf(client(url, { authorization: `Bearer ${shop.secret}` }, protocol).getMessageContent({ id })), protocol).toBe(Code.PermissionDenied);
    }
  });

  it("leaves the REST answer of GET /mail/v1/messages/{id} as the spec's Message, with no content route", async () => {
    const message = (await (await h.fetch(`/mail/v1/messages/${id}`, bearer(shop.secret))).json()) as Record<string, unknown>;
    expect(Object.keys(message).sort()).toEqual(
      ["createdAt", "errorCode", "events", "id", "lastEventAt", "providerMessageId", "recipient", "sentAt", "status", "subject", "tags", "templateId"].sort(),
    );
    expect((await h.fetch(`/mail/v1/messages/${id}/content`, bearer(shop.secret))).status).toBe(404);
  });
});
