import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ValidationError, type FieldProblem } from "../../../../src/contract/api-error.ts";
import { SendMessageRequestSchema, type SendMessageRequest } from "../../../../src/gen/mail/v1/mail_pb.js";
import { validateSend } from "../../../../src/capabilities/messages/compose/validate-send.ts";
import { sendCommandOf } from "../../../../src/transport/connect/mail/mapping.ts";

/** Builds the request the way the REST bridge does: from the JSON body. */
function request(json: JsonObject): SendMessageRequest {
  return fromJson(SendMessageRequestSchema, json);
}

/** As the door does it: the request mapped to the send command (with the Idempotency-Key header, if any), then validated. */
function validate(req: SendMessageRequest, header: string | undefined) {
  return validateSend(sendCommandOf(req, { companyId: "c", keyId: "k", actor: { kind: "key" } }, header ?? null));
}

const MINIMAL = { to: "ana@example.com", subject: "Your receipt", html: "<p>Thanks</p>" } as const;

/** Runs the validation expecting a ValidationError; returns its field problems. */
function problems(json: JsonObject, header?: string): readonly FieldProblem[] {
  try {
    validate(request(json), header);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fields;
  }
  throw new Error("expected a ValidationError");
}

function fields(json: JsonObject, header?: string): string[] {
  return problems(json, header).map((p) => p.field);
}

describe("validateSend: valid requests", () => {
  it("accepts a minimal subject + html request and returns the normalised form", () => {
    const out = validate(request({ ...MINIMAL }), undefined);
    expect(out).toEqual({
      to: { email: "ana@example.com" },
      subject: "Your receipt",
      html: "<p>Thanks</p>",
      variables: {},
      tags: {},
    });
  });

  it("accepts a minimal template request", () => {
    const out = validate(
      request({ to: "ana@example.com", templateId: "tpl_receipt", variables: { name: "Ana", total: 12.5, vip: true, nick: null } }),
      undefined,
    );
    expect(out).toEqual({
      to: { email: "ana@example.com" },
      templateId: "tpl_receipt",
      variables: { name: "Ana", total: 12.5, vip: true, nick: null },
      tags: {},
    });
  });

  it("accepts a full request and lower-cases only the domain of addresses", () => {
    const out = validate(
      request({
        to: { email: "Ana.Silva@EXAMPLE.COM", name: "Ana Silva" },
        subject: "Hi",
        html: "<p>x</p>",
        text: "x",
        senderId: "snd_1",
        replyTo: "Support@Shop.Example.com",
        tags: { order: "A-1001", flow: "receipt" },
        idempotencyKey: "order-1001",
      }),
      undefined,
    );
    expect(out).toEqual({
      to: { email: "Ana.Silva@example.com", name: "Ana Silva" },
      subject: "Hi",
      html: "<p>x</p>",
      text: "x",
      senderId: "snd_1",
      replyTo: "Support@shop.example.com",
      tags: { order: "A-1001", flow: "receipt" },
      idempotencyKey: "order-1001",
      variables: {},
    });
  });

  it("accepts the to object without a name, and drops an empty name", () => {
    expect(validate(request({ ...MINIMAL, to: { email: "a@example.com" } }), undefined).to).toEqual({
      email: "a@example.com",
    });
    expect(validate(request({ ...MINIMAL, to: { email: "a@example.com", name: "" } }), undefined).to).toEqual({
      email: "a@example.com",
    });
  });

  it("accepts values exactly at every limit, counting code points", () => {
    const out = validate(
      request({
        to: { email: "a@example.com", name: "n".repeat(120) },
        // 500 emoji are 1000 UTF-16 code units but 500 characters.
        subject: "😀".repeat(500),
        html: "h".repeat(400_000),
        text: "t".repeat(100_000),
        tags: { ["k".repeat(40)]: "v".repeat(120) },
        idempotencyKey: "i".repeat(160),
      }),
      "i".repeat(160),
    );
    expect(out.idempotencyKey).toBe("i".repeat(160));
  });

  it("also works on a request created in code (gRPC path)", () => {
    const req = create(SendMessageRequestSchema, {
      to: { kind: { case: "stringValue", value: "a@example.com" } },
      templateId: "tpl_1",
    });
    expect(validate(req, undefined).to.email).toBe("a@example.com");
  });
});

describe("validateSend: one error names every bad field", () => {
  it("lists four bad fields in one ValidationError", () => {
    let caught: unknown;
    try {
      validate(
        request({
          to: "not-an-address",
          subject: "x".repeat(501),
          html: "<p>ok</p>",
          replyTo: "also bad",
          tags: { ["k".repeat(41)]: "v" },
        }),
        undefined,
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.httpStatus).toBe(400);
    expect(error.fields.map((f) => f.field).sort()).toEqual(["replyTo", "subject", "tags.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", "to"].sort());
    // The message names each field, as the spec asks.
    for (const field of ["to:", "subject:", "replyTo:", "tags.k"]) expect(error.message).toContain(field);
  });

  it("collects problems across all groups at once", () => {
    expect(
      fields(
        {
          to: { email: "bad", nickname: "x" },
          variables: { order: { id: 1 } },
          senderId: "",
          idempotencyKey: "",
        },
        "h".repeat(201),
      ).sort(),
    ).toEqual(["Idempotency-Key", "html", "idempotencyKey", "senderId", "subject", "to.email", "to.nickname", "variables.order"].sort());
  });
});

describe("validateSend: to", () => {
  it("is required", () => {
    expect(fields({ subject: "s", html: "h" })).toEqual(["to"]);
    expect(fields({ to: null, subject: "s", html: "h" })).toEqual(["to"]);
  });

  it("must be a string or an object", () => {
    expect(fields({ ...MINIMAL, to: 42 })).toEqual(["to"]);
    expect(fields({ ...MINIMAL, to: ["a@example.com"] })).toEqual(["to"]);
    expect(fields({ ...MINIMAL, to: true })).toEqual(["to"]);
  });

  it("rejects an invalid address string", () => {
    expect(problems({ ...MINIMAL, to: "ana@@example.com" })).toEqual([
      { field: "to", problem: expect.stringContaining("valid email address") },
    ]);
  });

  it("requires email in the object form and names it", () => {
    expect(fields({ ...MINIMAL, to: { name: "Ana" } })).toEqual(["to.email"]);
    expect(fields({ ...MINIMAL, to: { email: 7 } })).toEqual(["to.email"]);
    expect(fields({ ...MINIMAL, to: { email: "nope" } })).toEqual(["to.email"]);
  });

  it("rejects unknown keys of the object form, each by name", () => {
    expect(fields({ ...MINIMAL, to: { email: "a@example.com", cc: "b@example.com", Name: "x" } }).sort()).toEqual([
      "to.Name",
      "to.cc",
    ]);
  });

  it("limits the name to 120 characters and a string", () => {
    expect(fields({ ...MINIMAL, to: { email: "a@example.com", name: "n".repeat(121) } })).toEqual(["to.name"]);
    expect(fields({ ...MINIMAL, to: { email: "a@example.com", name: 5 } })).toEqual(["to.name"]);
    expect(fields({ ...MINIMAL, to: { email: "a@example.com", name: null } })).toEqual(["to.name"]);
  });

  it("rejects CR or LF in the name (header injection)", () => {
    for (const name of ["Ana\r\nBcc: x@evil.example", "Ana\nX", "Ana\rX"]) {
      expect(problems({ ...MINIMAL, to: { email: "a@example.com", name } })).toEqual([
        { field: "to.name", problem: expect.stringContaining("line breaks") },
      ]);
    }
    expect(fields({ ...MINIMAL, to: { email: "a@example.com", name: "A\u0000na" } })).toEqual(["to.name"]);
  });
});

describe("validateSend: content", () => {
  it("requires subject and html without a templateId, naming each missing one", () => {
    expect(fields({ to: "a@example.com" })).toEqual(["subject", "html"]);
    expect(fields({ to: "a@example.com", subject: "s" })).toEqual(["html"]);
    expect(fields({ to: "a@example.com", html: "<p>h</p>" })).toEqual(["subject"]);
    expect(fields({ to: "a@example.com", subject: " ", html: "" })).toEqual(["subject", "html"]);
  });

  it("does not require subject or html with a templateId", () => {
    expect(() => validate(request({ to: "a@example.com", templateId: "t" }), undefined)).not.toThrow();
  });

  it("passes subject/html/text through next to a templateId", () => {
    const out = validate(request({ to: "a@example.com", templateId: "t", subject: "Override" }), undefined);
    expect(out.templateId).toBe("t");
    expect(out.subject).toBe("Override");
  });

  it("rejects an empty templateId", () => {
    expect(fields({ to: "a@example.com", templateId: "" })).toEqual(["templateId"]);
  });

  it("limits subject to 500, html to 400,000 and text to 100,000 characters", () => {
    expect(fields({ ...MINIMAL, subject: "s".repeat(501) })).toEqual(["subject"]);
    expect(fields({ ...MINIMAL, subject: "😀".repeat(501) })).toEqual(["subject"]);
    expect(fields({ ...MINIMAL, html: "h".repeat(400_001) })).toEqual(["html"]);
    expect(fields({ ...MINIMAL, text: "t".repeat(100_001) })).toEqual(["text"]);
  });

  it("rejects CR or LF in the subject (header injection)", () => {
    expect(problems({ ...MINIMAL, subject: "Hi\r\nBcc: x@evil.example" })).toEqual([
      { field: "subject", problem: expect.stringContaining("line breaks") },
    ]);
    expect(fields({ to: "a@example.com", templateId: "t", subject: "a\nb" })).toEqual(["subject"]);
  });
});

describe("validateSend: variables", () => {
  it("accepts strings, numbers, booleans and null", () => {
    const out = validate(
      request({ to: "a@example.com", templateId: "t", variables: { s: "x", n: -1.5, b: false, z: null } }),
      undefined,
    );
    expect(out.variables).toEqual({ s: "x", n: -1.5, b: false, z: null });
  });

  it("names each nested object or array value", () => {
    expect(
      fields({ to: "a@example.com", templateId: "t", variables: { ok: "x", order: { id: 1 }, items: [1, 2] } }).sort(),
    ).toEqual(["variables.items", "variables.order"]);
  });

  it("caps each string value at 10,000 characters (code points), naming the variable", () => {
    const atLimit = { plain: "a".repeat(10_000), emoji: "😀".repeat(10_000) };
    expect(validate(request({ to: "a@example.com", templateId: "t", variables: atLimit }), undefined).variables).toEqual(atLimit);
    expect(problems({ to: "a@example.com", templateId: "t", variables: { ok: "x", huge: "a".repeat(10_001) } })).toEqual([
      { field: "variables.huge", problem: "must be at most 10000 characters" },
    ]);
  });

  it("keeps a __proto__ key as plain data", () => {
    const req = request({ to: "a@example.com", templateId: "t" });
    req.variables = JSON.parse('{"__proto__": "x"}') as JsonObject;
    const out = validate(req, undefined);
    expect(Object.hasOwn(out.variables, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(out.variables)).toBe(Object.prototype);
  });
});

describe("validateSend: replyTo, senderId, tags", () => {
  it("requires a valid replyTo address", () => {
    expect(fields({ ...MINIMAL, replyTo: "support" })).toEqual(["replyTo"]);
    expect(fields({ ...MINIMAL, replyTo: "support@example.com\r\nBcc: x@y.z" })).toEqual(["replyTo"]);
  });

  it("requires a non-empty senderId when given", () => {
    expect(fields({ ...MINIMAL, senderId: "" })).toEqual(["senderId"]);
    expect(fields({ ...MINIMAL, senderId: "   " })).toEqual(["senderId"]);
  });

  it("limits tag keys to 1..40 and values to 120 characters, naming tags.<key>", () => {
    expect(fields({ ...MINIMAL, tags: { ["k".repeat(41)]: "v" } })).toEqual([`tags.${"k".repeat(41)}`]);
    expect(fields({ ...MINIMAL, tags: { flow: "v".repeat(121) } })).toEqual(["tags.flow"]);
    expect(fields({ ...MINIMAL, tags: { "": "v" } })).toEqual(["tags"]);
  });
});

describe("validateSend: idempotency keys", () => {
  it("takes the key from the body", () => {
    expect(validate(request({ ...MINIMAL, idempotencyKey: "body-key" }), undefined).idempotencyKey).toBe(
      "body-key",
    );
  });

  it("takes the key from the Idempotency-Key header", () => {
    expect(validate(request({ ...MINIMAL }), "header-key").idempotencyKey).toBe("header-key");
  });

  it("accepts the same key in both places", () => {
    expect(validate(request({ ...MINIMAL, idempotencyKey: "k1" }), "k1").idempotencyKey).toBe("k1");
  });

  it("rejects different keys in body and header, naming idempotencyKey", () => {
    expect(problems({ ...MINIMAL, idempotencyKey: "k1" }, "k2")).toEqual([
      { field: "idempotencyKey", problem: expect.stringContaining("Idempotency-Key") },
    ]);
  });

  it("has no key when neither is sent", () => {
    expect(validate(request({ ...MINIMAL }), undefined)).not.toHaveProperty("idempotencyKey");
  });

  it("limits the body key to 160 and the header key to 200 characters", () => {
    expect(fields({ ...MINIMAL, idempotencyKey: "k".repeat(161) })).toEqual(["idempotencyKey"]);
    expect(fields({ ...MINIMAL }, "k".repeat(201))).toEqual(["Idempotency-Key"]);
    expect(validate(request({ ...MINIMAL }), "k".repeat(200)).idempotencyKey).toBe("k".repeat(200));
  });

  it("rejects empty keys", () => {
    expect(fields({ ...MINIMAL, idempotencyKey: "" })).toEqual(["idempotencyKey"]);
    expect(fields({ ...MINIMAL }, "")).toEqual(["Idempotency-Key"]);
  });
});
