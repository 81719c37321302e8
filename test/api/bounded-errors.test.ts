import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { type Listener, requestOn } from "./doors.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

/** A send whose tags have `count` keys over the 40-character limit: one problem each. */
function sendWithBadTags(count: number) {
  const tags: Record<string, string> = {};
  for (let i = 0; i < count; i += 1) tags[`tag-${String(i).padStart(5, "0")}-${"k".repeat(40)}`] = "v";
  return { to: "someone@example.com", subject: "Hello", html: "<p>Hello</p>", tags };
}

/**
 * Validation answers stay small: the first ten problems are named, the
 * rest counted. Whatever the size of the request, the 400 is a few
 * kilobytes at most, on every door.
 */
describe.each<Listener>(["http1", "h2c"])("bounded validation answers on the %s listener", (listener) => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret } = await h.newCompanyWithKey());
  });
  afterAll(async () => h?.close());

  const post = (body: string) =>
    requestOn(listener, { httpUrl: h.app.httpUrl, grpcUrl: h.app.grpcUrl }, {
      method: "POST",
      path: "/mail/v1/send",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body,
    });

  it("a body with 5,000 unknown fields names the first 10 and counts the rest", async () => {
    const body: Record<string, number> = {};
    for (let i = 0; i < 5_000; i += 1) body[`unknown_field_${i}`] = i;
    const answer = await post(JSON.stringify(body));
    expect(answer.status).toBe(400);
    expect(answer.body.length).toBeLessThan(5_000);
    const { error } = JSON.parse(answer.body) as ErrorBody;
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toContain("unknown_field_0: is not a known field");
    expect(error.message).toContain("unknown_field_9:");
    expect(error.message).not.toContain("unknown_field_10:");
    expect(error.message).toMatch(/and 4990 more problems$/);
  });

  it("a field name a megabyte long is cut short in the answer", async () => {
    const answer = await post(JSON.stringify({ ["x".repeat(1_000_000)]: 1 }));
    expect(answer.status).toBe(400);
    expect(answer.body.length).toBeLessThan(5_000);
  });

  it("5,000 problems found by the send rules are bounded the same way", async () => {
    const answer = await post(JSON.stringify(sendWithBadTags(5_000)));
    expect(answer.status).toBe(400);
    expect(answer.body.length).toBeLessThan(5_000);
    expect((JSON.parse(answer.body) as ErrorBody).error.message).toMatch(/and 4990 more problems$/);
  });

  if (listener === "h2c") {
    it("gRPC callers get the same bounded message", async () => {
      const client = createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
      const failure = await client
        .sendMessage(
          { ...sendWithBadTags(5_000), to: { kind: { case: "stringValue", value: "someone@example.com" } } },
          { headers: { authorization: `Bearer ${secret}` } },
        )
        .then(() => undefined, (e: unknown) => ConnectError.from(e));
      expect(failure?.code).toBe(Code.InvalidArgument);
      expect(failure?.rawMessage.length).toBeLessThan(5_000);
      expect(failure?.rawMessage).toMatch(/and 4990 more problems$/);
    });
  }
});
