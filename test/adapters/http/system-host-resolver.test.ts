import { describe, expect, it } from "vitest";
import { systemHostResolver } from "../../../src/adapters/http/system-host-resolver.ts";

/** The production resolver on the system's getaddrinfo (hosts file first): no network needed. */
describe("system host resolver", () => {
  it("answers every address of a name with its family", async () => {
    const answers = await systemHostResolver().resolve("localhost");
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) {
      expect([4, 6]).toContain(answer.family);
      expect(answer.address === "127.0.0.1" || answer.address === "::1" || answer.address.startsWith("127.")).toBe(true);
    }
  });

  it("fails for a name that cannot exist (RFC 6761 .invalid)", async () => {
    await expect(systemHostResolver().resolve("no-such-host.invalid")).rejects.toThrow();
  });
});
