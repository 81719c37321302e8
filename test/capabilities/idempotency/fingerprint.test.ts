import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/contract/api-error.ts";
import { canonicalJson, parseIdempotencyKey, readSendKey, requestFingerprint } from "../../../src/capabilities/idempotency/index.ts";

describe("canonicalJson", () => {
  it("sorts object keys at every depth, keeps array order and writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x" } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    expect(canonicalJson([2, 1])).toBe("[2,1]");
    expect(canonicalJson("é\n")).toBe('"é\\n"');
    expect(canonicalJson(null)).toBe("null");
  });
});

describe("requestFingerprint", () => {
  it("is SHA-256 of the label, a line feed and the canonical JSON", () => {
    expect(requestFingerprint("op", { b: 1, a: "x" }).toString("hex")).toBe(createHash("sha256").update('op\n{"a":"x","b":1}').digest("hex"));
  });

  it("is the same whatever order the keys were written in, and differs for another label", () => {
    expect(requestFingerprint("op", { a: { d: 1, c: 2 }, b: [1, 2] })).toEqual(requestFingerprint("op", { b: [1, 2], a: { c: 2, d: 1 } }));
    expect(requestFingerprint("op", { a: 1 })).not.toEqual(requestFingerprint("other", { a: 1 }));
    expect(requestFingerprint("op", { b: [1, 2] })).not.toEqual(requestFingerprint("op", { b: [2, 1] }));
  });
});

describe("parseIdempotencyKey", () => {
  function problem(raw: string): string {
    try {
      parseIdempotencyKey(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe("VALIDATION_ERROR");
      return (error as ApiError).message;
    }
    throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  }

  it("is undefined when the header is absent", () => {
    expect(parseIdempotencyKey(null)).toBeUndefined();
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it("accepts 1 to 200 printable ASCII characters", () => {
    expect(parseIdempotencyKey("a")).toBe("a");
    expect(parseIdempotencyKey("order 42/retry:~!")).toBe("order 42/retry:~!");
    expect(parseIdempotencyKey("k".repeat(200))).toBe("k".repeat(200));
  });

  it("refuses an empty key, 201 characters and non-printable or non-ASCII characters, naming the header", () => {
    expect(problem("")).toMatch(/^Idempotency-Key: /);
    expect(problem("k".repeat(201))).toMatch(/^Idempotency-Key: .*200/);
    expect(problem("a\tb")).toMatch(/^Idempotency-Key: .*printable ASCII/);
    expect(problem("clé")).toMatch(/^Idempotency-Key: .*printable ASCII/);
  });
});

describe("readSendKey: a send's key, read once", () => {
  const problems = (header: string | null | undefined, bodyKey: string | undefined): string[] =>
    readSendKey(header, bodyKey).problems.map((p) => `${p.field}: ${p.problem}`);

  it("reads the header, the body key, or both when equal", () => {
    expect(readSendKey("order-1", undefined)).toEqual({ key: "order-1", problems: [] });
    expect(readSendKey(null, "order-1")).toEqual({ key: "order-1", problems: [] });
    expect(readSendKey("order-1", "order-1")).toEqual({ key: "order-1", problems: [] });
    expect(readSendKey(null, undefined)).toEqual({ problems: [] });
    expect(readSendKey(undefined, "é".repeat(160)).key).toBe("é".repeat(160));
  });

  it("a header and a body key that differ: no key, a problem naming idempotencyKey", () => {
    expect(readSendKey("order-1", "order-2").key).toBeUndefined();
    expect(problems("order-1", "order-2")).toEqual([expect.stringMatching(/^idempotencyKey: .*differs from the Idempotency-Key header/)]);
  });

  it("an invalid header or body key: no key, the problems for the send's one VALIDATION_ERROR", () => {
    expect(problems("k".repeat(201), undefined)).toEqual([expect.stringMatching(/^Idempotency-Key: .*200/)]);
    expect(problems("", undefined)).toEqual([expect.stringMatching(/^Idempotency-Key: /)]);
    expect(problems(undefined, "  ")).toEqual(["idempotencyKey: must not be empty"]);
    expect(problems(undefined, "k".repeat(161))).toEqual(["idempotencyKey: must be at most 160 characters"]);
    expect(problems(undefined, "k\u0000")).toEqual(["idempotencyKey: must not contain NUL characters"]);
    expect(problems("h".repeat(201), "")).toHaveLength(2);
    expect(readSendKey("k".repeat(201), "ok").key).toBeUndefined();
  });
});
