import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpBinding, operationsOf } from "../../src/contract/routes.ts";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { ATTACHMENTS_BODY_ALLOWANCE } from "../../src/transport/http/body-limits.ts";
import { rawHttp1Request } from "../api/doors.ts";
import { fieldNamesOf, leaks, outcomeOf, restProblems } from "./support/answers.ts";
import { type HostileApi, KEY_SERVICES, startHostileApi } from "./support/hostile-api.ts";
import { grpcFrame, rawGrpc } from "./support/raw-grpc.ts";
import { type SeededTenant, seedTenant } from "./support/seed.ts";

/**
 * Bodies no well-behaved client sends: too large, nested thousands deep,
 * not UTF-8, not JSON, not protobuf, framed wrongly. Each is refused in the
 * documented shape (413 PAYLOAD_TOO_LARGE, 400 VALIDATION_ERROR naming the
 * field or the body; INVALID_ARGUMENT or RESOURCE_EXHAUSTED over gRPC),
 * never with a 5xx, an INTERNAL or a stack trace, and never stored
 * altered (an invalid byte is not silently replaced by U+FFFD).
 */
let api: HostileApi;
let tenant: SeededTenant;
let maxBodyBytes: number;

beforeAll(async () => {
  api = await startHostileApi();
  tenant = await seedTenant(api, "Bodies", 1);
  maxBodyBytes = api.h.app.config.maxBodyBytes;
});
afterAll(async () => api?.close());

/** Every JSON route that takes a body, with its path filled with the tenant's ids. */
function bodyRoutes(): { name: string; verb: string; path: string; input: DescMessage }[] {
  const idFor = (service: string, method: string, param: string): string => {
    if (param === "integration_id") return tenant.integrationId;
    if (param === "public_id") return tenant.formPublicId;
    if (service === "ListsService") return tenant.listId;
    if (method === "RetryWebhookDelivery") return tenant.deliveryIds[0] ?? "";
    return tenant.endpointId;
  };
  return KEY_SERVICES.flatMap((service) =>
    operationsOf(service)
      .filter((op) => op.http?.body)
      .map((op) => {
        const binding = op.http as HttpBinding;
        let path = binding.pathTemplate;
        for (const param of binding.pathParams) path = path.replace(`{${param}}`, idFor(service.name, op.method.name, param));
        return { name: `${service.name}.${op.method.name}`, verb: binding.verb.toUpperCase(), path, input: op.method.input };
      }),
  );
}

function deep(depth: number, open: string, close: string, inner = "1"): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

describe("oversized bodies", () => {
  it("every route with a body answers 413 PAYLOAD_TOO_LARGE in the error shape, with or without Content-Length", async () => {
    const routes = bodyRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(12);
    for (const route of routes) {
      // Past the route's own limit: a send takes more, for its attachments (src/transport/http/body-limits.ts).
      const big = `{"name":"${"x".repeat(route.name === "MailService.SendMessage" ? maxBodyBytes + ATTACHMENTS_BODY_ALLOWANCE : maxBodyBytes)}"}`;
      const answer = await api.rest(tenant, route.verb, route.path, big);
      expect(answer.status, `${route.name}: ${answer.text.slice(0, 200)}`).toBe(413);
      expect((answer.json as { error: { code: string } }).error.code).toBe("PAYLOAD_TOO_LARGE");
      expect(restProblems(answer, fieldNamesOf(route.input, { door: "rest" }))).toEqual([]);
    }
    // Chunked: no length announced, the limit still holds while reading.
    const chunked = await rawHttp1Request(
      api.h.app.httpUrl,
      [
        "POST /mail/v1/lists HTTP/1.1",
        `host: ${new URL(api.h.app.httpUrl).host}`,
        `authorization: Bearer ${tenant.secret()}`,
        "content-type: application/json",
        "transfer-encoding: chunked",
        "connection: close",
        "",
        `${(maxBodyBytes + 10).toString(16)}\r\n${"{".padEnd(maxBodyBytes + 10, " ")}\r\n0\r\n\r\n`,
      ].join("\r\n"),
    );
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE" } });
  });

  it("fields over their documented limits inside an acceptable body are 400s naming each field", async () => {
    const answer = await api.rest(tenant, "POST", "/mail/v1/send", {
      to: { email: "big@customers.example", name: "n".repeat(121) },
      subject: "s".repeat(501),
      html: "h".repeat(400_001),
      text: "t".repeat(100_001),
      tags: { ["k".repeat(41)]: "v".repeat(121) },
      idempotencyKey: "i".repeat(161),
    });
    expect(answer.status).toBe(400);
    const message = (answer.json as { error: { message: string } }).error.message;
    for (const field of ["to.name", "subject", "html", "text", "tags.", "idempotencyKey"]) expect(message).toContain(field);
  });

  it("a gRPC message over the limit is RESOURCE_EXHAUSTED, not INTERNAL", async () => {
    const lists = api.grpc(ListsService, tenant);
    const outcome = await outcomeOf(() => lists.createContactList({ name: "x".repeat(maxBodyBytes + 1) }));
    expect(outcome).toBeInstanceOf(ConnectError);
    expect((outcome as ConnectError).code).toBe(Code.ResourceExhausted);
    expect(leaks((outcome as ConnectError).rawMessage)).toBeUndefined();
  });
});

describe("deeply nested bodies", () => {
  const cases: [string, string, string][] = [
    ["variables", "/mail/v1/send", `{"to":"a@customers.example","subject":"s","html":"h","variables":{"v":${deep(20_000, "[", "]")}}}`],
    ["to", "/mail/v1/send", `{"to":${deep(5_000, '{"email":', "}", '"a@customers.example"')},"subject":"s","html":"h"}`],
    ["attributes", "/mail/v1/contacts", `{"email":"deep@customers.example","attributes":{"a":${deep(2_000, '{"a":', "}")}}}`],
    ["tags", "/mail/v1/contacts", `{"email":"deep@customers.example","tags":${deep(1_000, "[", "]")}}`],
    ["metadata", "/mail/v1/conversions", `{"eventId":"deep-1","eventType":"purchase","customerRef":"c","metadata":${deep(200, '{"a":', "}")}}`],
    ["revenue", "/mail/v1/conversions", `{"eventId":"deep-2","eventType":"purchase","customerRef":"c","revenue":${deep(300, "[", "]")}}`],
    ["nestedUnknown", "/mail/v1/lists", `{"name":"deep","nestedUnknown":${deep(50_000, "[", "]")}}`],
  ];

  it.each(cases)("%s nested thousands deep: 400 naming the field", async (field, path, body) => {
    const answer = await api.rest(tenant, "POST", path, body);
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect(restProblems(answer, { fields: new Set([field]), sent: new Set([field]), wholeBody: false })).toEqual([]);
    expect((answer.json as { error: { message: string } }).error.message.startsWith(field)).toBe(true);
  });

  it("integrations: an order nested deep in its own objects is refused naming the path", async () => {
    const answer = await api.rest(tenant, "POST", `/mail/v1/integrations/${tenant.integrationId}/orders`, `{"id":1,"status":"processing","currency":"EUR","total":"1.00","billing":${deep(3_000, '{"email":', "}", '"a@customers.example"')}}`);
    expect(answer.status).toBe(400);
    expect((answer.json as { error: { message: string } }).error.message).toMatch(/^order\.billing/);
  });
});

describe("bytes that are not UTF-8, and bodies that are not JSON", () => {
  /** Invalid UTF-8 sequences: a lone continuation byte, an overlong NUL, a surrogate half, bytes past U+10FFFF, a truncated sequence. */
  const INVALID_UTF8: readonly Buffer[] = [
    Buffer.from([0x80]),
    Buffer.from([0xc0, 0x80]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from([0xf4, 0x90, 0x80, 0x80]),
    Buffer.from([0xff, 0xfe]),
    Buffer.from([0xe2, 0x82]),
  ];

  it.each(INVALID_UTF8.map((bytes) => [bytes.toString("hex"), bytes] as const))(
    "REST: a JSON body holding the bytes %s is refused (400 naming the body), never stored as U+FFFD",
    async (_hex, bytes) => {
      const name = `utf8-${bytes.toString("hex")}`;
      const body = Buffer.concat([Buffer.from(`{"name":"${name}-`), bytes, Buffer.from('"}')]);
      const answer = await api.rest(tenant, "POST", "/mail/v1/lists", body);
      expect(answer.status, answer.text).toBe(400);
      expect(restProblems(answer, { fields: new Set(["name"]), sent: new Set(), wholeBody: true })).toEqual([]);
      const lists = await api.rest(tenant, "GET", "/mail/v1/lists");
      expect(lists.text).not.toContain(name);
    },
  );

  it("Connect JSON and gRPC-JSON refuse invalid UTF-8 as INVALID_ARGUMENT, not a replacement character", async () => {
    const body = Buffer.concat([Buffer.from('{"name":"connect-'), Buffer.from([0xff]), Buffer.from('"}')]);
    const connect = await api.h.fetch("/mail.v1.ListsService/CreateContactList", {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.secret()}`, "content-type": "application/json" },
      body,
    });
    expect(connect.status).toBe(400);
    expect(((await connect.json()) as { code: string }).code).toBe("invalid_argument");

    const grpcJson = await rawGrpc(api.h.app.grpcUrl, "/mail.v1.ListsService/CreateContactList", grpcFrame(body), {
      "content-type": "application/grpc+json",
      authorization: `Bearer ${tenant.secret()}`,
    });
    expect(grpcJson.grpcStatus).toBe(Code.InvalidArgument);
  });

  it("gRPC: a string field holding invalid UTF-8 is INVALID_ARGUMENT (VALIDATION_ERROR), not INTERNAL", async () => {
    for (const bytes of INVALID_UTF8) {
      // Field 1 (name), wire type 2 (length-delimited).
      const payload = Buffer.concat([Buffer.from([0x0a, bytes.length]), bytes]);
      const answer = await rawGrpc(api.h.app.grpcUrl, "/mail.v1.ListsService/CreateContactList", grpcFrame(payload), { authorization: `Bearer ${tenant.secret()}` });
      expect(answer.grpcStatus, answer.grpcMessage).toBe(Code.InvalidArgument);
      expect(answer.reason).toBe("VALIDATION_ERROR");
      expect(leaks(answer.grpcMessage)).toBeUndefined();
    }
  });

  const NOT_JSON: readonly [string, string, string][] = [
    ["truncated", "application/json", '{"name":"x"'],
    ["trailing garbage", "application/json", '{"name":"x"} {"name":"y"}'],
    ["NaN", "application/json", '{"name":NaN}'],
    ["comment", "application/json", '{"name":"x" /* hi */}'],
    ["single quotes", "application/json", "{'name':'x'}"],
    ["empty", "application/json", ""],
    ["whitespace only", "application/json", "   "],
    ["__proto__ key", "application/json", '{"__proto__":{"polluted":true},"name":"x"}'],
    ["constructor.prototype", "application/json", '{"constructor":{"prototype":{"polluted":true}},"name":"x"}'],
    ["a JSON array", "application/json", '[{"name":"x"}]'],
    ["a JSON string", "application/json", '"x"'],
    ["text/plain", "text/plain", '{"name":"x"}'],
    ["form encoded", "application/x-www-form-urlencoded", "name=x"],
    ["xml", "application/xml", "<name>x</name>"],
  ];

  it.each(NOT_JSON)("REST: %s is a 400 naming the body", async (_what, contentType, text) => {
    const answer = await api.rest(tenant, "POST", "/mail/v1/lists", text, { "content-type": contentType });
    expect(answer.status, answer.text).toBe(400);
    expect(restProblems(answer, { fields: new Set(["name"]), sent: new Set(), wholeBody: true })).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("gRPC: random bytes as the message of every RPC never answer INTERNAL or UNKNOWN", async () => {
    const methods = KEY_SERVICES.flatMap((service) => service.methods.map((method) => `/${service.typeName}/${method.name}`));
    const streams = new Set(KEY_SERVICES.flatMap((service) => service.methods.filter((m) => m.methodKind === "server_streaming").map((m) => `/${service.typeName}/${m.name}`)));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...methods), fc.uint8Array({ minLength: 1, maxLength: 64 }), async (path, bytes) => {
        const answer = await rawGrpc(api.h.app.grpcUrl, path, grpcFrame(bytes), { authorization: `Bearer ${tenant.secret()}` }, streams.has(path));
        const what = `${path} ${Buffer.from(bytes).toString("hex")} -> ${answer.grpcStatus} ${answer.grpcMessage}`;
        expect([Code.Internal, Code.Unknown, Code.DataLoss, Code.Unimplemented], what).not.toContain(answer.grpcStatus);
        if (answer.grpcStatus === Code.InvalidArgument) expect(answer.reason, what).toBe("VALIDATION_ERROR");
        expect(leaks(answer.grpcMessage), what).toBeUndefined();
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) * 3 },
    );
  });

  it("gRPC: broken framing is INVALID_ARGUMENT, never INTERNAL or UNIMPLEMENTED", async () => {
    const path = "/mail.v1.MailService/GetAccount";
    const frames: [string, Buffer][] = [
      ["a length longer than the body", Buffer.from([0, 0, 0, 0, 99, 1])],
      ["a compressed flag without grpc-encoding", grpcFrame(new Uint8Array([0x0a, 0x00]), 1)],
      ["two messages for a unary call", Buffer.concat([grpcFrame(new Uint8Array()), grpcFrame(new Uint8Array())])],
      ["half an envelope", Buffer.from([0, 0])],
    ];
    for (const [what, body] of frames) {
      const answer = await rawGrpc(api.h.app.grpcUrl, path, body, { authorization: `Bearer ${tenant.secret()}` });
      expect(answer.grpcStatus, `${what}: ${answer.grpcMessage}`).toBe(Code.InvalidArgument);
      expect(leaks(answer.grpcMessage)).toBeUndefined();
    }
  });

  it("gRPC-Web: a protobuf body that does not decode ends with INVALID_ARGUMENT and the contract's ErrorInfo", async () => {
    const answer = await api.h.fetch("/mail.v1.ListsService/CreateContactList", {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.secret()}`, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: grpcFrame(new Uint8Array([0x0a, 0x40, 0x41])),
    });
    expect(answer.status).toBe(200);
    const bytes = Buffer.from(await answer.arrayBuffer());
    // The trailers are the frame flagged 0x80: `grpc-status: 3` with a status detail.
    let trailer = "";
    for (let at = 0; at + 5 <= bytes.length; at += 5 + bytes.readUInt32BE(at + 1)) {
      if (bytes[at] === 0x80) trailer = bytes.subarray(at + 5, at + 5 + bytes.readUInt32BE(at + 1)).toString("latin1");
    }
    expect(trailer).toMatch(/grpc-status: ?3\r\n/);
    expect(trailer).toContain("grpc-status-details-bin");
  });

  it("Connect: a protobuf body that does not decode is 400 invalid_argument, not 500", async () => {
    const answer = await api.h.fetch("/mail.v1.ListsService/CreateContactList", {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.secret()}`, "content-type": "application/proto" },
      body: Buffer.from([0x0a, 0x40, 0x41]),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { code: string }).code).toBe("invalid_argument");
  });
});

describe("the hosted sign-up pages (no key)", () => {
  it("random form ids and bodies never answer 5xx or leak internals", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(tenant.formPublicId), fc.string({ minLength: 1, maxLength: 60 }), fc.uuid()),
        fc.dictionary(fc.constantFrom("email", "token", "firstName", "consent", "x", "__proto__"), fc.string({ unit: "binary", maxLength: 300 }), { maxKeys: 5 }),
        fc.constantFrom("GET", "POST"),
        async (publicId, values, verb) => {
          const path = `/mail/v1/forms/${encodeURIComponent(publicId)}`;
          const init: RequestInit = { method: verb };
          if (verb === "POST") {
            init.body = new URLSearchParams(values).toString();
            init.headers = { "content-type": "application/x-www-form-urlencoded" };
          }
          const response = await api.h.fetch(path, init);
          const text = await response.text();
          expect(response.status, `${verb} ${path}: ${text.slice(0, 200)}`).toBeLessThan(500);
          expect(leaks(text)).toBeUndefined();
        },
      ),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) * 2 },
    );
  });
});
