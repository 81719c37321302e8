import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentedRegistry } from "../../src/openapi/descriptor-set.ts";
import { generateOpenApi } from "../../src/openapi/document.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import type { paths } from "./fixtures/mail-api.ts";

/**
 * A client generated from the OpenAPI document by tools that know nothing of
 * the contract (openapi-typescript for the types, openapi-fetch for the
 * calls) can call the service. The types are committed, so `tsc` checks
 * this file against them; the first test keeps them equal to what the
 * generator makes of today's document (update: `npx vitest run
 * test/openapi/typed-client.test.ts -u`).
 */
const FIXTURE = "./fixtures/mail-api.ts";

describe("a typed client generated from the OpenAPI document", () => {
  it("has committed types that match the document as served", async () => {
    const document = generateOpenApi({ registry: documentedRegistry() });
    const types = astToString(await openapiTS(document as unknown as OpenAPI3));
    await expect(`${COMMENT_HEADER}${types}`).toMatchFileSnapshot(FIXTURE);
  });

  describe("against the running service", () => {
    // The sending harness: an accepted send starts its workflow, so Temporal is part of the service here.
    let h: SendingHarness;
    let client: ReturnType<typeof createClient<paths>>;
    let companyId: string;

    beforeAll(async () => {
      h = await startSendingHarness();
      const sender = await h.readySender({ credits: 5 });
      companyId = sender.companyId;
      client = createClient<paths>({ baseUrl: h.app.httpUrl, headers: { authorization: `Bearer ${sender.secret}` } });
    });
    afterAll(async () => h?.close());

    it("GET /mail/v1/me", async () => {
      const { data, error, response } = await client.GET("/mail/v1/me");
      expect(response.status).toBe(200);
      expect(error).toBeUndefined();
      expect(data?.organization?.id).toBe(companyId);
      expect(data?.key?.scopes).toEqual(["mail.transactional.send", "mail.events.read"]);
      expect(data?.apiVersion).toBe("v1");
    });

    it("POST /mail/v1/send, then reads the message back", async () => {
      const { data, response } = await client.POST("/mail/v1/send", {
        body: { to: { email: "ada@example.com", name: "Ada" }, subject: "Hello", html: "<p>Hello</p>", tags: { order: "42" } },
      });
      expect(response.status).toBe(202);
      expect(data?.status).toBe("queued");
      expect(data?.replayed).toBe(false);

      const read = await client.GET("/mail/v1/messages/{id}", { params: { path: { id: data?.id ?? "" } } });
      expect(read.data).toMatchObject({ id: data?.id, recipient: "ada@example.com", subject: "Hello", tags: { order: "42" } });
    });

    it("types the error answers, and `to` as required", async () => {
      // @ts-expect-error -- `to` is required in the document (field_behavior REQUIRED).
      const { error, response } = await client.POST("/mail/v1/send", { body: { subject: "Hello", html: "<p>Hello</p>" } });
      expect(response.status).toBe(400);
      expect(error?.error).toEqual({ code: "VALIDATION_ERROR", message: "to: is required" });
    });
  });
});
