import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";

interface Served {
  openapi: string;
  paths: Record<string, Record<string, { description?: string; summary?: string; requestBody?: unknown }>>;
  components: { schemas: Record<string, { description?: string; properties?: Record<string, { description?: string }> }> };
}

describe("GET /mail/v1/openapi.json as served", () => {
  let h: ApiHarness;
  let doc: Served;

  beforeAll(async () => {
    h = await startApiHarness();
    const response = await h.fetch("/mail/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    doc = (await response.json()) as Served;
  });
  afterAll(async () => h?.close());

  it("is a valid OpenAPI 3.0 document", async () => {
    const result = await new Validator().validate(doc as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.0\./);
  });

  it("carries the proto comments as descriptions (the contract is the documentation)", () => {
    const send = doc.paths["/mail/v1/send"]?.post;
    expect(`${send?.summary ?? ""} ${send?.description ?? ""}`).toContain("Queue one email");
    const subject = doc.components.schemas.SendMessageRequest?.properties?.subject;
    expect(subject?.description).toContain("500 characters");
  });
});
