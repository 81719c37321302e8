import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

describe("unexpected failures", () => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret } = await h.newCompanyWithKey(["mail.events.read"]));
  });
  afterAll(async () => h?.close());

  it("answer 500 INTERNAL_ERROR with a generic message and the request id, never the detail", async () => {
    // The database goes away under the running service.
    await h.db.drop();
    const response = await h.fetch("/mail/v1/me", bearer(secret, { "x-request-id": "req-internal-0001" }));
    expect(response.status).toBe(500);
    expect(response.headers.get("x-request-id")).toBe("req-internal-0001");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("INTERNAL_ERROR");
    expect(body.error.message).toContain("req-internal-0001");
    expect(body.error.message).not.toMatch(/database|relation|pg|sql|terminat/i);
  });
});
